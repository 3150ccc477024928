"""lnlab.serving.fair_share: turns to run, the least served first (real threads, a simulated
clock and processor time; no test depends on how fast anything runs)."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest

from lnlab.serving.fair_share import FairShare, Usage

DEADLINE_S = 30.0  # how long a test waits for a thread it started to get where it is going


class Clock:
    """A clock (and a processor-seconds counter) that moves only when told."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def share():
    clock, cpu = Clock(), Clock()
    return SimpleNamespace(
        turns=FairShare(at_once=1, hold_s=5.0, half_life_s=10.0, clock=clock, cpu=cpu),
        clock=clock,
        cpu=cpu,
    )


def _used(share, session, address, seconds: float) -> None:
    """One run of `session` from `address` that used `seconds` of the processor."""
    share.turns.take(session, address)
    share.cpu.now += seconds
    share.turns.give_back()


def _eventually(condition) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, "a thread never got there"
        time.sleep(0.001)


class Run:
    """A run in its own thread: waits for a turn (placed `later_s` later), notes `name` in
    `order`, holds the turn until `finish`."""

    def __init__(self, share, order, name, session, address, later_s=0.0, arrived=None) -> None:
        self.done = threading.Event()
        args = (share, order, name, session, address, later_s, arrived)
        self.thread = threading.Thread(target=self._run, args=args)
        self.thread.start()

    def _run(self, share, order, name, session, address, later_s, arrived) -> None:
        share.turns.take(session, address, later_s=later_s, arrived=arrived)
        order.append(name)
        self.done.wait(DEADLINE_S)
        share.turns.give_back()

    def finish(self) -> None:
        self.done.set()
        self.thread.join(DEADLINE_S)


def _turns_in_order(share, runs: list[tuple]) -> list[str]:
    """Start `runs` while this thread holds the only turn, each queued before the next starts;
    give the turn back, and let each run finish once it has its turn: the names in the order
    they got it. A run is (name, session, address) or (name, session, address, at, later_s):
    the clock moved to `at` before it comes."""
    order: list[str] = []
    share.turns.take("holder", "holder's address")
    started = {}
    for k, (name, session, address, *when) in enumerate(runs, 1):
        at, later_s = when or (share.clock.now, 0.0)
        share.clock.now = at
        started[name] = Run(share, order, name, session, address, later_s)
        _eventually(lambda k=k: share.turns.waiting() == k)
    share.turns.give_back()
    for k in range(len(runs)):
        _eventually(lambda k=k: len(order) > k)
        started[order[k]].finish()
    return order


def test_usage_halves_every_half_life():
    usage = Usage(half_life_s=10.0)
    usage.add(0.0, 1.0)
    assert [usage.at(t) for t in (0.0, 10.0, 20.0)] == pytest.approx([1.0, 0.5, 0.25])
    usage.add(10.0, 1.0)
    assert usage.at(10.0) == pytest.approx(1.5)


def test_a_run_is_charged_its_processor_time_to_its_address_and_its_session(share):
    _used(share, "s", "a", 0.3)
    assert share.turns.usage("s", "a") == pytest.approx((0.3, 0.3))  # session, address
    assert share.turns.usage("other session", "a") == pytest.approx((0.0, 0.3))
    share.clock.now += 10.0
    assert share.turns.usage("s", "a") == pytest.approx((0.15, 0.15))


def test_a_thread_holds_one_turn_and_gives_it_back_once(share):
    assert not share.turns.holding()
    share.turns.take("s", "a")
    assert share.turns.take("s", "a") == 0.0  # already its turn: a fragment inside a page run
    assert share.turns.holding()
    share.cpu.now += 0.1
    share.turns.give_back()
    share.turns.give_back()  # nothing held: nothing charged twice
    assert not share.turns.holding()
    assert share.turns.usage("s", "a") == pytest.approx((0.1, 0.1))


def test_a_new_visitor_goes_before_a_floods_next_run(share):
    for k in range(20):  # 20 sessions from one address, a run each
        _used(share, f"flooder {k}", "flood", 0.05)
    order = _turns_in_order(
        share, [("flood", "flooder 0", "flood"), ("another flooder", "flooder 1", "flood"),
                ("visitor", "visitor", "elsewhere")]
    )  # fmt: skip
    assert order[0] == "visitor"


def test_behind_one_router_a_classmate_goes_before_the_flooding_session(share):
    for _ in range(100):  # 5 s: over the allowance, as a session flooding at its pace is
        _used(share, "flooder", "school", 0.05)
    _used(share, "classmate", "school", 0.01)
    order = _turns_in_order(
        share, [("flooder", "flooder", "school"), ("classmate", "classmate", "school")]
    )
    assert order == ["classmate", "flooder"]


def test_sessions_within_the_allowance_keep_their_place_in_line(share):
    """A student stepping through a lesson is not put behind every device a question redrew."""
    for _ in range(30):
        _used(share, "busy student", "school", 0.05)  # 1.5 s: within the allowance
    for k in range(5):
        _used(share, f"device {k}", "school", 0.015)
    runs = [("busy student", "busy student", "school")]
    runs += [(f"device {k}", f"device {k}", "school") for k in range(5)]
    assert _turns_in_order(share, runs) == [name for name, _, _ in runs]


def test_a_flood_waits_only_as_long_as_it_used(share):
    """Usage places a run later, not last for good: a flood's run that has waited longer than
    its address used goes before a newer visitor's."""
    _used(share, "flooder", "flood", 1.0)  # its address: 1 s (its session: within the allowance)
    runs = [("flood", "flooder", "flood", 0.0, 0.0), ("visitor", "visitor", "elsewhere", 0.5, 0.0)]
    assert _turns_in_order(share, runs) == ["visitor", "flood"]
    share.clock.now = 0.0
    runs = [("flood", "flooder", "flood", 0.0, 0.0), ("visitor", "visitor", "elsewhere", 2.0, 0.0)]
    assert _turns_in_order(share, runs) == ["flood", "visitor"]


def test_a_class_redraw_goes_behind_the_clicks_of_the_last_few_seconds(share):
    redraw = ("device", "device", "school", 0.0, 3.0)
    assert _turns_in_order(share, [redraw, ("click", "student", "school", 1.0, 0.0)]) == [
        "click",
        "device",
    ]
    share.clock.now = 0.0
    assert _turns_in_order(share, [redraw, ("click", "student", "school", 4.0, 0.0)]) == [
        "device",
        "click",
    ]


def test_equals_take_turns_in_arrival_order(share):
    runs = [(f"student {k}", f"student {k}", "school") for k in range(6)]
    assert _turns_in_order(share, runs) == [name for name, _, _ in runs]


def test_usage_forgotten_with_time_puts_a_flood_back_in_line(share):
    _used(share, "flooder", "flood", 1.0)
    share.clock.now += 200.0  # twenty half-lives: a millionth of a second left
    _used(share, "visitor", "elsewhere", 0.001)
    order = _turns_in_order(
        share, [("flooder", "flooder", "flood"), ("visitor", "visitor", "elsewhere")]
    )
    assert order == ["flooder", "visitor"]


def test_a_turn_held_past_hold_s_lets_the_next_run_go(share):
    """A run waiting on something else (the database, heavy work) keeps nobody waiting long."""
    share.turns.take("slow", "a")
    order: list[str] = []
    waiting = Run(share, order, "next", "next", "b")
    _eventually(lambda: share.turns.waiting() == 1)
    assert order == []
    share.clock.now += 5.0  # hold_s: the held turn stops counting
    _eventually(lambda: order == ["next"])
    waiting.finish()
    share.turns.give_back()
    assert not share.turns.holding()


def test_at_once_runs_go_together(share):
    turns = FairShare(at_once=2, hold_s=5.0, clock=share.clock, cpu=share.cpu)
    both = SimpleNamespace(turns=turns)
    order: list[str] = []
    runs = [Run(both, order, name, name, "a") for name in ("first", "second")]
    _eventually(lambda: sorted(order) == ["first", "second"])
    for run in runs:
        run.finish()


def test_usage_of_those_long_gone_is_dropped(share):
    for k in range(300):
        _used(share, f"visitor {k}", f"address {k}", 0.001)
    share.clock.now += 1000.0
    _used(share, "last", "last address", 0.001)
    assert len(share.turns._usage) <= 2


def test_a_run_that_goes_on_from_an_earlier_one_keeps_its_place(share):
    """A rerun that ended a run (st.rerun, a click during it) queues where that run came."""
    order: list[str] = []
    share.turns.take("holder", "holder's address")
    share.clock.now = 1.0
    visitor = Run(share, order, "visitor", "visitor", "b")
    _eventually(lambda: share.turns.waiting() == 1)
    share.clock.now = 2.0
    goes_on = Run(share, order, "goes on", "student", "a", arrived=0.5)
    _eventually(lambda: share.turns.waiting() == 2)
    share.turns.give_back()
    _eventually(lambda: order == ["goes on"])
    goes_on.finish()
    _eventually(lambda: order == ["goes on", "visitor"])
    visitor.finish()


def test_a_lapsed_turn_is_not_polled(share):
    """Waiters behind a stalled run sleep until a turn that still counts lapses, not 1 ms."""
    share.turns.take("stalled", "a")
    share.clock.now += 6.0  # past hold_s (5 s): the turn no longer counts
    assert share.turns._until_a_turn_lapses() == pytest.approx(5.0)
    share.turns.give_back()
