"""The heavy-work line, first come first, in SQLite and PostgreSQL, driven by threads as
Streamlit's sessions would and by a second process as another server of a cluster would."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import pytest
import sqlalchemy as sa
from helpers import ROOT

from lnlab.classroom.store import ClassStore
from lnlab.core.errors import BusyError
from lnlab.serving import heavy_work
from lnlab.serving.database import URL_ENV, database_url
from lnlab.serving.heavy_work import (
    HeavyWorkLine,
    TrainingLine,
    line_table,
    ordinal,
    seconds,
    waiting_text,
)


@pytest.fixture
def make(db_url: str):
    """HeavyWorkLine(db_url, **settings), closed at the end of the test."""
    lines: list[HeavyWorkLine] = []

    def make(**settings) -> HeavyWorkLine:
        lines.append(HeavyWorkLine(db_url, **settings))
        return lines[-1]

    yield make
    for line in lines:
        line.close()


def wait_until(condition, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def waiter(line: HeavyWorkLine, owner: str, log: list, **kwargs) -> threading.Thread:
    """A thread that reaches the front for `owner` and logs it, or logs why it did not."""

    def run() -> None:
        try:
            with line.front(owner, **kwargs):
                log.append(owner)
        except Exception as err:
            log.append(f"{owner}: {err}")

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_turns_are_first_come_and_places_are_shown(make) -> None:
    line, log, seen = make(heartbeat_s=10), [], {}
    with line.front("a"):
        assert line.place("a") == 0
        threads = []
        for name in "bcd":
            on_wait = lambda place, _, name=name: seen.setdefault(name, []).append(place)  # noqa: E731
            threads.append(waiter(line, name, log, on_wait=on_wait))
            wait_until(lambda name=name: line.place(name) is not None)
        assert [line.place(n) for n in "bcd"] == [1, 2, 3]
        wait_until(lambda: len(seen) == 3)
    for thread in threads:
        thread.join(10)
    assert log == ["b", "c", "d"]
    # Each waiter saw its place on joining, then every change it woke up for, counting down.
    assert {n: places[0] for n, places in seen.items()} == {"b": 1, "c": 2, "d": 3}
    assert all(places == sorted(set(places), reverse=True) for places in seen.values())
    assert line.place("a") is None and line.waiting() == 0


def test_a_second_visitor_is_served_between_two_runs_of_the_first(make) -> None:
    line, log = make(), []
    first = line.front("a")
    first.__enter__()
    second = waiter(line, "b", log)
    wait_until(lambda: line.place("b") == 1)
    first.__exit__(None, None, None)
    again = waiter(line, "a", log)  # 'a' presses Run again at once
    second.join(10)
    again.join(10)
    assert log == ["b", "a"]


def test_a_long_run_shares_the_front_between_its_pieces(make) -> None:
    """A run of three pieces: with nobody waiting it keeps the front; once 'b' waits, the next
    share sends 'a' to the back, 'b' runs, and 'a' gets the front back for its last piece."""
    line, log, seen = make(heartbeat_s=10), [], []
    with line.front("a", on_wait=lambda place, _: seen.append(place)) as turn:
        turn.share()  # nobody waits: the front stays
        assert turn.shared == 0 and line.place("a") == 0
        other = waiter(line, "b", log)
        wait_until(lambda: line.place("b") == 1)
        turn.share()  # 'b' goes first, then 'a' is back at the front
        log.append("a")
        assert turn.shared == 1 and line.place("a") == 0
    other.join(10)
    assert log == ["b", "a"]
    assert seen and set(seen) <= {1, 2}  # told its place behind 'b' (2nd until 'b' stepped up)


def test_a_visitor_holds_one_place_even_while_sharing(make) -> None:
    """While 'a' waits behind 'b' between two pieces, another tab of the same browser (the
    same owner) cannot join: its one place is taken."""
    line, log = make(heartbeat_s=10), []
    with line.front("b"):
        run = waiter(line, "a", log)
        wait_until(lambda: line.place("a") == 1)
        with pytest.raises(BusyError, match="another tab of this browser"), line.front("a"):
            pass
    run.join(10)
    assert log == ["a"]


def test_a_front_watching_the_line_is_told_once_someone_waits(make, monkeypatch) -> None:
    """Turn.yielding, around a training piece under way (issue 38: a bystander's benchmark
    waited for the whole piece): nothing while nobody waits; a visitor joining from this
    process is seen at once, without a poll (POLL_S made 30 s here); the watch tells until
    told back that it was heard (the piece's job may not be under way yet), then no more, and
    nothing after its body, even when someone joins later."""
    monkeypatch.setattr(heavy_work, "POLL_S", 30.0)
    line, log, told = make(heartbeat_s=10), [], []

    def tell(what: str, heard_at: int = 1):
        return lambda: told.append(what) or told.count(what) >= heard_at

    with line.front("a") as turn:
        with turn.yielding(tell("b waits")):
            time.sleep(0.3)
            assert told == []  # nobody waits: the piece goes on
            b = waiter(line, "b", log)
            wait_until(lambda: told == ["b waits"])
            time.sleep(0.3)
        with turn.yielding(tell("c", heard_at=3)):  # 'b' still waits: told at once, thrice
            wait_until(lambda: told == ["b waits", "c", "c", "c"])
            time.sleep(0.3)
    b.join(10)
    with line.front("d") as turn:
        with turn.yielding(tell("too late")):
            pass
        e = waiter(line, "e", log)
        wait_until(lambda: line.place("e") == 1)
        time.sleep(0.3)
    e.join(10)
    assert told == ["b waits", "c", "c", "c"] and log == ["b", "e"]


def test_a_waiter_of_another_process_is_seen_within_a_poll(make) -> None:
    """Another server process's visitor (another line on the same database: no notice from
    it) is read from the line within POLL_S."""
    line, there, log, told = make(heartbeat_s=10), make(heartbeat_s=10), [], threading.Event()
    with line.front("a") as turn, turn.yielding(lambda: told.set() or True):
        b = waiter(there, "b", log)
        wait_until(lambda: there.place("b") == 1)
        start = time.monotonic()
        assert told.wait(10)
        print(f"seen {time.monotonic() - start:.2f} s after it joined")
    b.join(10)
    assert log == ["b"]


def test_a_waiter_steps_up_when_this_process_frees_the_front(make, monkeypatch) -> None:
    """A front let go (a piece shared, a run ended) wakes this process's waiters at once: with
    POLL_S made 30 s they still step up within the test's 10 s."""
    monkeypatch.setattr(heavy_work, "POLL_S", 30.0)
    line, log = make(heartbeat_s=10), []
    with line.front("a") as turn:
        b = waiter(line, "b", log)
        wait_until(lambda: line.place("b") == 1)
        time.sleep(0.1)  # 'b' sleeps in its poll
        turn.share()  # 'b' goes first: woken by the requeue, it steps up
        log.append("a")
    b.join(10)
    assert log == ["b", "a"]


def test_the_wait_is_estimated_from_past_turns(make) -> None:
    """Before any turn has ended the line cannot tell; after turns of 0.2 s it expects about
    one turn for the waiter behind the front and two for the one after (less what the
    front has done: checked without a clock)."""
    line = make()
    rows = [SimpleNamespace(owner="x", started_at=100.0)]
    assert line.expected_s(rows, 1, 100.0) is None
    line._held(0.2)
    assert line.expected_s(rows, 1, 100.0) == pytest.approx(0.2)
    assert line.expected_s(rows, 2, 100.05) == pytest.approx(0.35)
    assert line.expected_s(rows, 1, 101.0) == 0.0  # the front is late: it could end any time
    assert waiting_text(2, 0.35).endswith("after the current run and 1 more), about 1 s to wait.")
    assert waiting_text(3, 12.4).endswith(", about 12 s to wait.")


def test_an_owner_cannot_queue_twice(make) -> None:
    line = make()
    twice = pytest.raises(BusyError, match="still running or waiting")
    with line.front("a"):
        with twice, line.front("a"):
            pass
        assert line.place("a") == 0  # the refusal left the running turn alone
    with line.front("a"):  # released: usable again
        pass


def test_a_full_line_refuses_at_once(make) -> None:
    line, log = make(max_waiting=2), []
    with line.front("a"):
        threads = [waiter(line, n, log) for n in "bc"]
        wait_until(lambda: line.waiting() == 2)
        with pytest.raises(BusyError, match="2 visitors are already waiting"), line.front("d"):
            pass
    for thread in threads:
        thread.join(10)
    assert sorted(log) == ["b", "c"]


def test_a_wait_past_the_limit_is_refused_and_leaves_the_line(make) -> None:
    line, log = make(heartbeat_s=0.01), []
    with line.front("a"):
        thread = waiter(line, "b", log, max_wait_s=0.05)
        thread.join(10)
        assert log and "Waited 0.05 s without reaching" in log[0] and "1st in line" in log[0]
        assert line.place("b") is None
    # Hold times are remembered: a line that would take longer than the limit is refused.
    line = make()
    with line.front("a"):
        time.sleep(0.2)
    refused = pytest.raises(BusyError, match="line for heavy work is about")
    with line.front("a"), refused, line.front("c", max_wait_s=0.1):
        pass


def test_an_abandoned_waiter_leaves_the_line(make) -> None:
    """on_wait raising (Streamlit stops a script whose visitor left) takes the waiter out."""
    line, log = make(heartbeat_s=0.01), []
    leave = threading.Event()

    def on_wait(place: int, expected_s: float | None) -> None:
        if leave.is_set():
            raise RuntimeError("visitor left")

    with line.front("a"):
        gone = waiter(line, "b", log, on_wait=on_wait)
        wait_until(lambda: line.place("b") == 1)
        after = waiter(line, "c", log)
        wait_until(lambda: line.place("c") == 2)
        leave.set()
        wait_until(lambda: line.place("c") == 1)
        assert line.place("b") is None
    gone.join(10)
    after.join(10)
    assert log == ["b: visitor left", "c"]


def test_no_deadlock_when_the_holder_raises(make) -> None:
    line, log = make(), []
    with pytest.raises(ZeroDivisionError), line.front("a"):
        thread = waiter(line, "b", log)
        wait_until(lambda: line.place("b") == 1)
        _ = 1 / 0
    thread.join(10)
    assert log == ["b"]
    assert line.place("a") is None


def test_a_database_that_does_not_answer_refuses_with_a_message(make) -> None:
    line = make()
    line._db.engine = sa.create_engine("postgresql+psycopg://nobody@127.0.0.1:9/none")
    with pytest.raises(BusyError, match="its database did not answer"), line.front("a"):
        pass


# --- several processes, and processes that died -----------------------------------------------

HOLDER = """
import sys
from lnlab.serving.heavy_work import HeavyWorkLine

with HeavyWorkLine(sys.argv[1], lease_s=1.0).front("visitor"):
    print("held", flush=True)
    sys.stdin.readline()
"""


@pytest.fixture
def other_process(db_url: str):
    """Another server process at the front for its visitor named "visitor" (the same
    session id as ours: owners are scoped to their process) until we write a line to it."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, db_url],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        yield holder
    finally:
        holder.kill()
        holder.wait(10)


def test_processes_sharing_a_database_share_the_line(make, other_process) -> None:
    line, places = make(lease_s=1.0), []

    def on_wait(place: int, expected_s: float | None) -> None:
        places.append(place)
        if len(places) == 3:  # waited a few polls: let the other process finish
            other_process.stdin.write("done\n")
            other_process.stdin.flush()

    with line.front("visitor", on_wait=on_wait):
        assert other_process.wait(10) == 0  # it had left the front before we got there
        assert line.place("visitor") == 0
    assert set(places) == {1}


def test_a_crashed_holder_stops_blocking_after_the_lease(db_url, make, other_process) -> None:
    """The dead holder's row is not released; the waiter gets in only once that row's last
    beat (as the database holds it) is a lease old. No bound on how long that took."""
    line, entered = make(lease_s=1.0), []

    def run() -> None:
        with line.front("visitor"):
            entered.append(time.time())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    # in line behind the holder; or already in, where the holder's beats had stopped a lease
    # before (a starved process: its row was no longer live)
    wait_until(lambda: line.place("visitor") == 1 or entered)
    other_process.kill()  # no release, no more beats: its row stays until the lease runs out
    other_process.wait(10)
    with sa.create_engine(db_url).begin() as conn:
        fronts = conn.execute(
            sa.select(line_table.c.beat_at).where(
                line_table.c.owner.startswith(f"{other_process.pid}.")
            )
        ).all()
    thread.join(10)
    assert len(entered) == 1
    if fronts:  # else the holder's beats had stopped a lease before the kill (a starved process)
        assert entered[0] - fronts[0].beat_at >= line.lease_s  # it waited for the lease


def test_rows_left_by_dead_processes_are_purged(db_url, make) -> None:
    """A holder and a waiter whose beats stopped (their process died): the line ignores them
    once their beat is older than the lease, and the next join or step up deletes them."""
    line, log, places = make(lease_s=0.5), [], []  # the line makes its table
    now, engine = time.time(), sa.create_engine(db_url)
    with engine.begin() as conn:
        conn.execute(
            line_table.insert(),
            [
                dict(ticket=1, owner="dead:holder", joined_at=now, started_at=now, beat_at=now),
                dict(ticket=2, owner="dead:waiter", joined_at=now, started_at=None, beat_at=now),
            ],
        )
    thread = waiter(line, "a", log, on_wait=lambda place, _: places.append(place))
    thread.join(10)
    assert log == ["a"]
    assert places[0] == 2  # behind the dead waiter until the lease ran out
    with engine.begin() as conn:
        assert conn.execute(line_table.select()).all() == []
    engine.dispose()


def test_the_line_has_its_own_table_beside_the_class_store(db_url: str) -> None:
    """The class store's migrations drop the table the line had there (schema version 2);
    the line makes its own, and the two share the database without sharing a table."""
    store = ClassStore(db_url)
    line = HeavyWorkLine(db_url)
    try:
        tables = set(sa.inspect(line._db.engine).get_table_names())
        assert "heavy_work_line" in tables and "heavy_line" not in tables
        assert {"classes", "students", "questions", "answers"} <= tables
    finally:
        line.close()
        store.close()


# --- the line to train --------------------------------------------------------------------------


@pytest.fixture
def make_training(db_url: str):
    """TrainingLine(db_url, **settings), closed at the end of the test."""
    lines: list[TrainingLine] = []

    def make(**settings) -> TrainingLine:
        lines.append(TrainingLine(db_url, **settings))
        return lines[-1]

    yield make
    for line in lines:
        line.close()


def test_a_run_in_line_is_told_the_runs_ahead_of_it(make_training) -> None:
    """The front's run expected 30 s when reckoned 10 s ago; two runs wait, of 12 s and 8 s: the
    one behind them waits about 20 + 12 + 8 s. A front past its estimate counts as ending now."""
    line = make_training()
    rows = [
        SimpleNamespace(owner="a", started_at=90.0, cost_s=30.0, costed_at=90.0),
        SimpleNamespace(owner="b", started_at=None, cost_s=12.0, costed_at=95.0),
        SimpleNamespace(owner="c", started_at=None, cost_s=8.0, costed_at=95.0),
    ]
    assert line.expected_s(rows, 1, 100.0) == pytest.approx(20.0)
    assert line.expected_s(rows, 3, 100.0) == pytest.approx(40.0)
    assert line.expected_s(rows, 2, 130.0) == pytest.approx(12.0)
    assert line.expected_s([], 1, 100.0) == 0.0


def test_the_estimates_in_the_training_line_are_kept_up_to_date(make_training) -> None:
    """A waiter's beat writes its run's cost as it is now (the pace measured meanwhile); the
    front's beat writes what its run has left: the waiter behind sees both."""
    line, seen, log = make_training(lease_s=1.0), [], []  # a beat every 0.1 s
    costs = {"b": 50.0, "c": 7.0}
    with line.front("a", cost=lambda: 100.0) as turn:
        b = waiter(line, "b", log, cost=lambda: costs["b"])
        wait_until(lambda: line.place("b") == 1 or log)
        assert not log
        c = waiter(line, "c", [], cost=lambda: costs["c"], on_wait=lambda p, s: seen.append(s))
        wait_until(lambda: line.place("c") == 2 and seen)  # told once its row is in
        assert seen[0] == pytest.approx(150.0, abs=1.0)
        turn.estimate(5.0)
        costs["b"] = 10.0
        wait_until(lambda: seen[-1] < 16.0)
        assert seen[-1] == pytest.approx(15.0, abs=1.0)
    b.join(10)
    c.join(10)


def test_the_training_line_refuses_past_its_cap_and_its_wait(make_training) -> None:
    line, log = make_training(max_waiting=2), []
    with line.front("a", cost=lambda: 100.0):
        threads = [waiter(line, n, log, cost=lambda: 90.0) for n in "bc"]
        wait_until(lambda: line.waiting() == 2)
        full = pytest.raises(BusyError, match=r"2 runs are already waiting to train.*280 s")
        with full, line.front("d", cost=lambda: 1.0):
            pass
    for thread in threads:
        thread.join(10)
    line = make_training()
    with line.front("a", cost=lambda: 200.0):
        long = pytest.raises(BusyError, match=r"line to train is about 200 s long, over the 150")
        with long, line.front("b", cost=lambda: 1.0, max_wait_s=150.0):
            pass
        one = pytest.raises(BusyError, match="one run at a time for each visitor")
        with one, line.front("a", cost=lambda: 1.0):
            pass


def test_the_training_line_has_its_own_table(make_training, make) -> None:
    """A run waiting to train is not in the heavy-work line: a benchmark there goes first."""
    training, heavy = make_training(), make()
    with training.front("a", cost=lambda: 1.0), heavy.front("a"):
        thread = waiter(training, "b", [], cost=lambda: 1.0)
        wait_until(lambda: training.place("b") == 1)
        assert heavy.waiting() == 0 and heavy.place("b") is None
    thread.join(10)


# --- the server's line and the texts -----------------------------------------------------------


def test_module_line_and_texts(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv(URL_ENV, f"sqlite:///{tmp_path / 'app.db'}")
    with heavy_work.front("page-test"):
        assert heavy_work.place("page-test") == 0
        assert heavy_work.line().url == database_url()  # the app's database
    assert heavy_work.place("page-test") is None
    heavy_work.line().close()
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"
    ]  # fmt: skip
    assert waiting_text(2).startswith("You are 2nd in line")
    assert [seconds(s) for s in (0.05, 2.5, 60.0, 100.4)] == ["0.05 s", "2.5 s", "60 s", "100 s"]
