"""What the database-backed heavy-work line (lnlab.serving.heavy_work) costs.

Run: `.venv/bin/python -m bench.heavy_work`. For SQLite (a file) and PostgreSQL (a throwaway
cluster, fsync on), it times: reaching and leaving the front of an empty line (`with
line.front(...)`: one locked join that inserts the row, one delete, and the front's beat
thread); one poll (what a waiter reads every POLL_S, the same query as `place`); and the
hand-off, from the front leaving to the next waiter (another thread) reaching it, which is
bounded by POLL_S.
Each also gets this process's CPU time. The floor is bench.classroom's: one 1-row INSERT
commit on the same database, same run.
"""

from __future__ import annotations

import os
import random
import threading
import time

from bench.classroom import databases, floor, percentile
from bench.report import load_average, record
from lnlab.serving.heavy_work import POLL_S, HeavyWorkLine

TAKES = 200
POLLS = 500
HANDOFFS = 30


def ms(values: list[float]) -> str:
    """p50 / p95 in milliseconds."""
    return f"{1000 * percentile(values, 50):.2f} / {1000 * percentile(values, 95):.2f}"


def timed(action, times: int) -> tuple[list[float], float]:
    """Each call's wall time, and this process's CPU time per call (all threads)."""
    spent, cpu = [], time.process_time()
    for _ in range(times):
        start = time.perf_counter()
        action()
        spent.append(time.perf_counter() - start)
    return spent, (time.process_time() - cpu) / times


def front_of_empty_line(line: HeavyWorkLine) -> None:
    with line.front("bench"):
        pass


def handoffs(line: HeavyWorkLine) -> list[float]:
    """Seconds from the front leaving to the waiting thread's reaching it."""
    spent: list[float] = []
    released_at = [0.0]

    def wait() -> None:
        with line.front("waiter"):
            spent.append(time.perf_counter() - released_at[0])

    for _ in range(HANDOFFS):
        with line.front("front"):
            thread = threading.Thread(target=wait)
            thread.start()
            while line.place("waiter") != 1:
                time.sleep(0.01)
            time.sleep(random.uniform(0, POLL_S))  # release at a random moment of its poll
            released_at[0] = time.perf_counter()
        thread.join(10)
    return spent


def main() -> None:
    load_before = os.getloadavg()
    rows = [
        [
            "database",
            "floor: 1-row INSERT commit (ms)",
            "reach + leave the front of an empty line p50 / p95 (ms)",
            "its CPU (ms)",
            "one poll p50 / p95 (ms)",
            "its CPU (ms)",
            "hand-off to the next waiter p50 / p95 (ms)",
        ]
    ]
    with databases() as found:
        for name, url in found:
            commit_ms = 1000 / floor(url)
            line = HeavyWorkLine(url)
            try:
                front_of_empty_line(line)  # warm the pool
                takes, take_cpu = timed(lambda q=line: front_of_empty_line(q), TAKES)
                with line.front("front"):
                    polls, poll_cpu = timed(lambda q=line: q.place("nobody"), POLLS)
                rows.append(
                    [
                        name,
                        f"{commit_ms:.2f}",
                        ms(takes),
                        f"{1000 * take_cpu:.2f}",
                        ms(polls),
                        f"{1000 * poll_cpu:.2f}",
                        ms(handoffs(line)),
                    ]
                )
            finally:
                line.close()
    load_after = os.getloadavg()
    record(
        "heavy_work",
        "The heavy-work line in the database: overhead",
        rows,
        notes=(
            f"{TAKES} takes, {POLLS} polls (with one visitor at the front), {HANDOFFS} hand-offs; "
            f"waiters poll every {POLL_S:.1f} s and the front leaves at a random moment, so "
            "a hand-off waits half of that on average. CPU is this process's (PostgreSQL's "
            "server work is not in it). "
            f"{load_average(load_before, load_after)} shared with other work, so "
            "treat the numbers as an upper bound."
        ),
    )


if __name__ == "__main__":
    main()
