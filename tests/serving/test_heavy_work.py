"""The heavy-work slot's first-come queue, in SQLite and PostgreSQL, driven by threads as
Streamlit's sessions would and by a second process as another server of a cluster would."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest
import sqlalchemy as sa
from helpers import ROOT

from lnlab.classroom import store as store_module
from lnlab.classroom.store import ClassStore, heavy_line
from lnlab.labs.gpu.benchmark import BusyError
from lnlab.serving import heavy_work as fair_queue
from lnlab.serving.heavy_work import FairQueue, ordinal, seconds, waiting_text


@pytest.fixture
def store(db_url: str):
    store = ClassStore(db_url)
    yield store
    store.close()


@pytest.fixture
def make(store):
    """FairQueue(store, **settings), closed at the end of the test."""
    queues: list[FairQueue] = []

    def make(**settings) -> FairQueue:
        queues.append(FairQueue(store, **settings))
        return queues[-1]

    yield make
    for queue in queues:
        queue.close()


def wait_until(condition, timeout_s: float = 10.0) -> None:
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


def test_turns_are_first_come_and_places_are_shown(make) -> None:
    queue, log, seen = make(heartbeat_s=10), [], {}
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
        thread.join(10)
    assert log == ["b", "c", "d"]
    # Each waiter saw its place on joining, then every change it woke up for, counting down.
    assert {n: places[0] for n, places in seen.items()} == {"b": 1, "c": 2, "d": 3}
    assert all(places == sorted(set(places), reverse=True) for places in seen.values())
    assert queue.place("a") is None and queue.waiting() == 0


def test_a_second_visitor_is_served_between_two_runs_of_the_first(make) -> None:
    queue, log = make(), []
    first = queue.turn("a")
    first.__enter__()
    second = waiter(queue, "b", log)
    wait_until(lambda: queue.place("b") == 1)
    first.__exit__(None, None, None)
    again = waiter(queue, "a", log)  # 'a' presses Run again at once
    second.join(10)
    again.join(10)
    assert log == ["b", "a"]


def test_an_owner_cannot_queue_twice(make) -> None:
    queue = make()
    twice = pytest.raises(BusyError, match="still running or waiting")
    with queue.turn("a"):
        with twice, queue.turn("a"):
            pass
        assert queue.place("a") == 0  # the refusal left the running turn alone
    with queue.turn("a"):  # released: usable again
        pass


def test_a_full_line_refuses_at_once(make) -> None:
    queue, log = make(max_waiting=2), []
    with queue.turn("a"):
        threads = [waiter(queue, n, log) for n in "bc"]
        wait_until(lambda: queue.waiting() == 2)
        with pytest.raises(BusyError, match="2 visitors are already waiting"), queue.turn("d"):
            pass
    for thread in threads:
        thread.join(10)
    assert sorted(log) == ["b", "c"]


def test_a_wait_past_the_limit_is_refused_and_leaves_the_line(make) -> None:
    queue, log = make(heartbeat_s=0.01), []
    with queue.turn("a"):
        thread = waiter(queue, "b", log, max_wait_s=0.05)
        thread.join(10)
        assert log and "Waited 0.05 s without reaching" in log[0] and "1st in line" in log[0]
        assert queue.place("b") is None
    # Hold times are remembered: a line that would take longer than the limit is refused.
    queue = make()
    with queue.turn("a"):
        time.sleep(0.2)
    refused = pytest.raises(BusyError, match="line for the benchmark slot is about")
    with queue.turn("a"), refused, queue.turn("c", max_wait_s=0.1):
        pass


def test_an_abandoned_waiter_leaves_the_line(make) -> None:
    """on_wait raising (Streamlit stops a script whose visitor left) takes the waiter out."""
    queue, log = make(heartbeat_s=0.01), []
    leave = threading.Event()

    def on_wait(place: int) -> None:
        if leave.is_set():
            raise RuntimeError("visitor left")

    with queue.turn("a"):
        gone = waiter(queue, "b", log, on_wait=on_wait)
        wait_until(lambda: queue.place("b") == 1)
        after = waiter(queue, "c", log)
        wait_until(lambda: queue.place("c") == 2)
        leave.set()
        wait_until(lambda: queue.place("c") == 1)
        assert queue.place("b") is None
    gone.join(10)
    after.join(10)
    assert log == ["b: visitor left", "c"]


def test_no_deadlock_when_the_holder_raises(make) -> None:
    queue, log = make(), []
    with pytest.raises(ZeroDivisionError), queue.turn("a"):
        thread = waiter(queue, "b", log)
        wait_until(lambda: queue.place("b") == 1)
        _ = 1 / 0
    thread.join(10)
    assert log == ["b"]
    assert queue.place("a") is None


def test_a_database_that_does_not_answer_refuses_with_a_message(make) -> None:
    queue = make()
    queue._db.engine = sa.create_engine("postgresql+psycopg://nobody@127.0.0.1:9/none")
    with pytest.raises(BusyError, match="its database did not answer"), queue.turn("a"):
        pass


# --- several processes, and processes that died -----------------------------------------------

HOLDER = """
import sys
from lnlab.classroom.store import ClassStore
from lnlab.serving.heavy_work import FairQueue

with FairQueue(ClassStore(sys.argv[1]), lease_s=1.0).turn("visitor"):
    print("held", flush=True)
    sys.stdin.readline()
"""


@pytest.fixture
def other_process(db_url: str):
    """Another server process holding the slot for its visitor named "visitor" (the same
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


def test_processes_sharing_a_database_share_the_slot(make, other_process) -> None:
    queue, places = make(lease_s=1.0), []

    def on_wait(place: int) -> None:
        places.append(place)
        if len(places) == 3:  # waited a few polls: let the other process finish
            other_process.stdin.write("done\n")
            other_process.stdin.flush()

    with queue.turn("visitor", on_wait=on_wait):
        assert other_process.wait(10) == 0  # it had released the slot before we got it
        assert queue.place("visitor") == 0
    assert set(places) == {1}


def test_a_crashed_holder_stops_blocking_after_the_lease(make, other_process) -> None:
    queue, log = make(lease_s=1.0), []
    thread = waiter(queue, "visitor", log)
    wait_until(lambda: queue.place("visitor") == 1)
    other_process.kill()  # no release, no more beats: its row stays until the lease runs out
    start = time.monotonic()
    thread.join(10)
    assert log == ["visitor"]
    assert time.monotonic() - start > 0.5  # it waited for the lease


def test_rows_left_by_dead_processes_are_purged(db_url, make) -> None:
    """A holder and a waiter whose beats stopped (their process died): the line ignores them
    once their beat is older than the lease, and the next join or claim deletes them."""
    now, engine = time.time(), sa.create_engine(db_url)
    with engine.begin() as conn:
        conn.execute(
            heavy_line.insert(),
            [
                dict(ticket=1, owner="dead:holder", joined_at=now, started_at=now, beat_at=now),
                dict(ticket=2, owner="dead:waiter", joined_at=now, started_at=None, beat_at=now),
            ],
        )
    queue, log, places = make(lease_s=0.5), [], []
    thread = waiter(queue, "a", log, on_wait=places.append)
    thread.join(10)
    assert log == ["a"]
    assert places[0] == 2  # behind the dead waiter until the lease ran out
    with engine.begin() as conn:
        assert conn.execute(heavy_line.select()).all() == []
    engine.dispose()


# --- the server's slot and the texts -----------------------------------------------------------


def test_module_slot_and_texts(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv(store_module.URL_ENV, f"sqlite:///{tmp_path / 'app.db'}")
    monkeypatch.setattr(store_module, "_default", None)
    with fair_queue.turn("page-test"):
        assert fair_queue.place("page-test") == 0
        assert fair_queue.slot().store is store_module.default_store()
    assert fair_queue.place("page-test") is None
    store_module.default_store().close()
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"
    ]  # fmt: skip
    assert waiting_text(2).startswith("You are 2nd in line")
    assert [seconds(s) for s in (0.05, 2.5, 60.0, 100.4)] == ["0.05 s", "2.5 s", "60 s", "100 s"]
