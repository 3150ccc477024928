"""The heavy-work slot's first-come queue, driven by threads as Streamlit's sessions would."""

from __future__ import annotations

import threading
import time

import pytest

from lnlab import fair_queue
from lnlab.benchmark import BusyError
from lnlab.fair_queue import FairQueue, ordinal, seconds, waiting_text


def wait_until(condition, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def waiter(queue: FairQueue, owner: str, log: list, **kwargs) -> threading.Thread:
    """A thread that takes `owner`'s turn and logs it, or logs why it did not."""

    def run() -> None:
        try:
            with queue.turn(owner, **kwargs):
                log.append(owner)
        except Exception as err:
            log.append(f"{owner}: {err}")

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_turns_are_first_come_and_places_are_shown() -> None:
    queue, log, seen = FairQueue(heartbeat_s=10), [], {}
    with queue.turn("a"):
        assert queue.place("a") == 0
        threads = []
        for name in "bcd":
            on_wait = lambda place, name=name: seen.setdefault(name, []).append(place)  # noqa: E731
            threads.append(waiter(queue, name, log, on_wait=on_wait))
            wait_until(lambda name=name: queue.place(name) is not None)
        assert [queue.place(n) for n in "bcd"] == [1, 2, 3]
        wait_until(lambda: len(seen) == 3)
    for thread in threads:
        thread.join(5)
    assert log == ["b", "c", "d"]
    # Each waiter saw its place on joining, then every change it woke up for, counting down.
    assert {n: places[0] for n, places in seen.items()} == {"b": 1, "c": 2, "d": 3}
    assert all(places == sorted(set(places), reverse=True) for places in seen.values())
    assert queue.place("a") is None and queue.waiting() == 0


def test_a_second_visitor_is_served_between_two_runs_of_the_first() -> None:
    queue, log = FairQueue(), []
    first = queue.turn("a")
    first.__enter__()
    second = waiter(queue, "b", log)
    wait_until(lambda: queue.place("b") == 1)
    first.__exit__(None, None, None)
    again = waiter(queue, "a", log)  # 'a' presses Run again at once
    second.join(5)
    again.join(5)
    assert log == ["b", "a"]


def test_an_owner_cannot_queue_twice() -> None:
    queue = FairQueue()
    twice = pytest.raises(BusyError, match="still running or waiting")
    with queue.turn("a"), twice, queue.turn("a"):
        pass
    with queue.turn("a"):  # released: usable again
        pass


def test_a_full_line_refuses_at_once() -> None:
    queue, log = FairQueue(max_waiting=2), []
    with queue.turn("a"):
        threads = [waiter(queue, n, log) for n in "bc"]
        wait_until(lambda: queue.waiting() == 2)
        with pytest.raises(BusyError, match="2 visitors are already waiting"), queue.turn("d"):
            pass
    for thread in threads:
        thread.join(5)
    assert log == ["b", "c"]


def test_a_wait_past_the_limit_is_refused_and_leaves_the_line() -> None:
    queue, log = FairQueue(heartbeat_s=0.01), []
    with queue.turn("a"):
        thread = waiter(queue, "b", log, max_wait_s=0.05)
        thread.join(5)
        assert log and "Waited 0.05 s without reaching" in log[0] and "1st in line" in log[0]
        assert queue.place("b") is None
    # Hold times are remembered: a line that would take longer than the limit is refused.
    queue = FairQueue()
    with queue.turn("a"):
        time.sleep(0.2)
    refused = pytest.raises(BusyError, match="line for the benchmark slot is about")
    with queue.turn("a"), refused, queue.turn("c", max_wait_s=0.1):
        pass


def test_an_abandoned_waiter_leaves_the_line() -> None:
    """on_wait raising (Streamlit stops a script whose visitor left) takes the waiter out."""
    queue, log = FairQueue(heartbeat_s=0.01), []
    leave = threading.Event()

    def on_wait(place: int) -> None:
        if leave.is_set():
            raise RuntimeError("visitor left")

    with queue.turn("a"):
        gone = waiter(queue, "b", log, on_wait=on_wait)
        after = waiter(queue, "c", log)
        wait_until(lambda: queue.place("c") == 2)
        leave.set()
        wait_until(lambda: queue.place("c") == 1)
        assert queue.place("b") is None
    gone.join(5)
    after.join(5)
    assert log == ["b: visitor left", "c"]


def test_no_deadlock_when_the_holder_raises() -> None:
    queue, log = FairQueue(), []
    with pytest.raises(ZeroDivisionError), queue.turn("a"):
        thread = waiter(queue, "b", log)
        wait_until(lambda: queue.place("b") == 1)
        _ = 1 / 0
    thread.join(5)
    assert log == ["b"]
    assert queue.place("a") is None


def test_module_slot_and_texts() -> None:
    with fair_queue.turn("page-test"):
        assert fair_queue.place("page-test") == 0
    assert fair_queue.place("page-test") is None
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"
    ]  # fmt: skip
    assert waiting_text(2).startswith("You are 2nd in line")
    assert [seconds(s) for s in (0.05, 2.5, 60.0, 100.4)] == ["0.05 s", "2.5 s", "60 s", "100 s"]
