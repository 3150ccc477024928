"""A class answering at once: the class store under 60 and 300 simultaneous answers.

Run: `.venv/bin/python -m bench.classroom`. For SQLite (a file in a temporary folder) and for
PostgreSQL (a throwaway cluster from tests/db.py, fsync on, as a real server would run), it
opens a class, joins N students, poses a question, then N threads (one per student, one
process, like one server) answer at the same moment after a barrier. It prints answers per
second (N over the time from the barrier to the last answer), each answer's latency p50/p95,
and checks that the tally counted every answer exactly once. The floor is a single thread
committing one INSERT per transaction into the same database, in the same run: the cost of a
durable commit, which no answer can beat.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import sqlalchemy as sa

from bench.report import load_average, record
from lnlab.classroom.live import LiveOption, LiveQuestion
from lnlab.classroom.store import ClassStore, Limits
from lnlab.serving.database import create_engine
from tests.db import postgres_bin, postgres_cluster

CLASS_SIZES = (60, 300)
FLOOR_INSERTS = 300
QUESTION = LiveQuestion(
    qid="bench",
    page="bench",
    prompt="What is the mean of 2, 4, 6, 8?",
    options=(LiveOption("5", "right"), LiveOption("4", "n-1"), LiveOption("20", "sum")),
)


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def floor(url: str) -> float:
    """Single-row INSERT transactions per second from one thread (one connection), on an
    engine set up as the store's (for SQLite: WAL, synchronous=NORMAL, BEGIN IMMEDIATE)."""
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("CREATE TABLE floor (n INTEGER, v TEXT)")
        table = sa.table("floor", sa.column("n"), sa.column("v"))
        with engine.connect() as conn:
            start = time.perf_counter()
            conn.execution_options(lnlab_write=True)
            for n in range(FLOOR_INSERTS):
                with conn.begin():
                    conn.execute(table.insert().values(n=n, v="5"))
            return FLOOR_INSERTS / (time.perf_counter() - start)
    finally:
        engine.dispose()


def class_answers(url: str, students: int) -> tuple[float, list[float], bool]:
    """(answers per second, latencies in seconds, counted == sent) for one class at once."""
    store = ClassStore(url, limits=Limits(students=students))
    try:
        new = store.open_class()
        store.pose(new.code, new.teacher_secret, QUESTION)
        ids = [store.join(new.code) for _ in range(students)]
        barrier = threading.Barrier(students + 1)
        latencies: list[float] = []
        accepted: list[bool] = []
        options = [option.text for option in QUESTION.options]

        def student(i: int) -> None:
            barrier.wait()
            start = time.perf_counter()
            accepted.append(store.answer(new.code, ids[i], QUESTION.qid, options[i % 3]))
            latencies.append(time.perf_counter() - start)

        threads = [threading.Thread(target=student, args=(i,)) for i in range(students)]
        for thread in threads:
            thread.start()
        barrier.wait()
        start = time.perf_counter()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - start
        tally = store.tally(new.code, new.teacher_secret, QUESTION.qid)
        counted = all(accepted) and tally.answered == students == len(accepted)
        return students / wall, latencies, counted
    finally:
        store.close()


@contextmanager
def databases() -> Iterator[list[tuple[str, str]]]:
    """(name, URL) for SQLite and, where it is installed, PostgreSQL."""
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        found = [("SQLite (file, WAL)", f"sqlite:///{folder / 'bench.db'}")]
        if postgres_bin() is not None:
            url = stack.enter_context(postgres_cluster(durable=True))
            found.append(("PostgreSQL 15 (local, fsync on)", url))
        yield found


def main() -> None:
    load_before = os.getloadavg()
    rows = [
        [
            "database",
            "floor: 1-row INSERT commits/s (1 thread)",
            "students",
            "answers/s",
            "latency p50 / p95 / max (ms)",
            "counted == sent",
        ]
    ]
    with databases() as found:
        for name, url in found:
            insert_rate = floor(url)
            for students in CLASS_SIZES:
                rate, latencies, counted = class_answers(url, students)
                ms = [1000 * s for s in latencies]
                rows.append(
                    [
                        name,
                        f"{insert_rate:.0f}",
                        str(students),
                        f"{rate:.0f}",
                        f"{percentile(ms, 50):.0f} / {percentile(ms, 95):.0f} / {max(ms):.0f}",
                        "yes" if counted else "NO",
                    ]
                )
    load_after = os.getloadavg()
    record(
        "classroom",
        "Class store: a class answering at once",
        rows,
        notes=(
            "Each student is a thread of one process (one server), all released by one barrier; "
            "answers/s = students / (barrier to last answer). An answer is one transaction: "
            "check the class, the student and the question, count the student's answers (cap), "
            "insert with ON CONFLICT DO NOTHING. SQLite takes its write lock at BEGIN, so "
            "answers commit one at a time; PostgreSQL commits them in parallel (one pool of up "
            "to 30 connections). The 300-student run raises the per-class cap (200) for the "
            "measurement. "
            f"{load_average(load_before, load_after)} shared with other work, so "
            "treat the numbers as a lower bound."
        ),
    )


if __name__ == "__main__":
    main()
