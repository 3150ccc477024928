"""A class on the local cluster: many students through HAProxy, on 1 and on 2 processes.

Run: `.venv/bin/python -m bench.load` (`--short` for 30 and 120 students and fewer clicks;
`--students 30,120,300 --processes 1,2` to choose). Needs HAProxy (scripts/ensure-haproxy). For each
number of processes and of students, a fresh lnlab.serving.cluster on free local ports; each student
is a websocket speaking Streamlit's protocol (harness.students.Student, no browser) through HAProxy,
with its SERVERID cookie as a browser keeps it:

- arrival: the students open /step_through at random moments over ARRIVAL_S;
- example: each types its own numbers "1, 2, 3, 4, k" (a whole-page run; the URL now holds
  them), checked on step 1's metric;
- lesson: each presses Next CLICKS times, reading each slide for a random PAUSE_S first;
  every click is checked (the next section's title);
- burst: everyone presses Next in the same instant, BURST_ROUNDS times.

Reported per phase: latency p50/p95/max (request sent to the run's script_finished), errors,
the app processes' CPU per click (all processes together), and the RSS the sessions added per
student. Then the fault run: FAULT_STUDENTS students on 2 processes go through the lesson and
one process is killed (SIGKILL) halfway: its students reconnect through HAProxy, which sends
them to the other process, and must find their example (their numbers, on the section they
were on) from the URL alone; the other students must see no error. HAProxy's view of the
killed process is polled until it is DOWN. Appends the tables to bench/results/load.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

from websockets.exceptions import ConnectionClosed, InvalidStatus

from bench.browser import rss_of
from bench.report import load_average, record
from harness.sessions import WrongPage, cpu_of
from harness.stats import percentile
from harness.students import STEP_TIMEOUT_S, Student
from lnlab.serving import haproxy
from lnlab.serving.cluster import Cluster, free_port

STUDENT_COUNTS = (30, 120, 300)
PROCESS_COUNTS = (1, 2)
CLICKS = 6
SHORT_CLICKS = 3
PAUSE_S = (2.0, 8.0)  # reading one slide: a brisk class (a real one reads longer)
ARRIVAL_S = 20.0
BURST_ROUNDS = 3
FAULT_STUDENTS = 60
FAULT_PROCESSES = 2
SEED = 1
# Every simulated student comes from 127.0.0.1, as a class behind one NAT address would:
# HAProxy's per-address limits are raised out of the way (tests/serving/test_cluster.py tests them).
UNLIMITED = haproxy.UNLIMITED
ERRORS = (WrongPage, ConnectionClosed, InvalidStatus, TimeoutError, OSError)


@dataclass
class Phase:
    processes: int
    students: int
    clicks: int
    open_ms: list[float] = field(default_factory=list)
    example_ms: list[float] = field(default_factory=list)
    click_ms: list[float] = field(default_factory=list)
    burst_ms: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    cpu_s: float = 0.0  # app processes, over the lesson and the burst
    proxy_cpu_s: float = 0.0
    idle_rss_mib: float = 0.0  # one app process, before the first student
    rss_added_mib: float = 0.0  # app processes, with every student connected, over idle
    servers: dict[str, int] = field(default_factory=dict)  # students per process

    def error(self, err: BaseException) -> None:
        note(self.errors, err)


def note(errors: dict[str, int], err: BaseException) -> None:
    """Count `err` by its kind (an HTTP answer by its status)."""
    name = type(err).__name__
    if isinstance(err, InvalidStatus):
        name = f"HTTP {err.response.status_code}"
    errors[name] = errors.get(name, 0) + 1


def app_pids(cluster: Cluster) -> list[int]:
    return [app.process.pid for app in cluster.apps if app.process is not None]


async def run_phase(cluster: Cluster, phase: Phase) -> None:
    rng = random.Random(SEED)
    students = [Student(cluster.url, 1000 + i) for i in range(phase.students)]
    arrivals = sorted(rng.uniform(0, ARRIVAL_S) for _ in students)
    pauses = [[rng.uniform(*PAUSE_S) for _ in range(phase.clicks)] for _ in students]
    idle_rss = sum(rss_of(pid) for pid in app_pids(cluster))
    phase.idle_rss_mib = idle_rss / phase.processes
    alive: list[Student] = []
    async with AsyncExitStack() as stack:

        async def arrive(student: Student, at_s: float) -> None:
            await asyncio.sleep(at_s)
            try:
                async with asyncio.timeout(STEP_TIMEOUT_S):
                    start = time.perf_counter()
                    await student.connect(stack)
                    phase.open_ms.append((time.perf_counter() - start) * 1e3)
                    phase.example_ms.append((await student.type_example()).finished_ms)
                alive.append(student)
            except ERRORS as err:
                phase.error(err)

        await asyncio.gather(*(arrive(s, t) for s, t in zip(students, arrivals, strict=True)))
        phase.rss_added_mib = sum(rss_of(pid) for pid in app_pids(cluster)) - idle_rss
        for s in alive:
            phase.servers[s.server] = phase.servers.get(s.server, 0) + 1
        cpu_start = sum(cpu_of(pid) for pid in app_pids(cluster))
        proxy_start = cpu_of(cluster.proxy.pid)

        async def lesson(i: int, student: Student) -> bool:
            for pause in pauses[i]:
                await asyncio.sleep(pause)
                try:
                    async with asyncio.timeout(STEP_TIMEOUT_S):
                        phase.click_ms.append(await student.next())
                except ERRORS as err:
                    phase.error(err)
                    return False
            return True

        ok = await asyncio.gather(*(lesson(i, s) for i, s in enumerate(alive)))
        alive = [s for s, fine in zip(alive, ok, strict=True) if fine]
        for _ in range(BURST_ROUNDS):
            results = await asyncio.gather(
                *(asyncio.wait_for(s.next(), STEP_TIMEOUT_S) for s in alive),
                return_exceptions=True,
            )
            for r in results:
                if isinstance(r, BaseException):
                    phase.error(r)
                else:
                    phase.burst_ms.append(r)
        phase.cpu_s = sum(cpu_of(pid) for pid in app_pids(cluster)) - cpu_start
        phase.proxy_cpu_s = cpu_of(cluster.proxy.pid) - proxy_start


@dataclass
class Fault:
    students: int
    on_killed: int = 0
    reconnected: int = 0  # and found their example
    reconnect_ms: list[float] = field(default_factory=list)
    done_before_kill: int = 0  # on the killed process, but through the lesson before it
    killed_errors: dict[str, int] = field(default_factory=dict)
    other_errors: dict[str, int] = field(default_factory=dict)
    other_clicks: int = 0  # answered to the students never on the killed process
    down_after_s: float | None = None  # kill to HAProxy's DOWN
    back_after_s: float | None = None  # kill to UP again (the cluster restarts the process)


async def run_fault(cluster: Cluster, fault: Fault, clicks: int) -> None:
    """`fault.students` go through the lesson; halfway one process is killed."""
    rng = random.Random(SEED)
    students = [Student(cluster.url, 2000 + i) for i in range(fault.students)]
    arrivals = sorted(rng.uniform(0, ARRIVAL_S / 2) for _ in students)
    pauses = [[rng.uniform(*PAUSE_S) for _ in range(clicks)] for _ in students]
    victim = cluster.apps[0]
    killed = asyncio.Event()

    async with AsyncExitStack() as stack:

        async def student_life(i: int, s: Student) -> None:
            await asyncio.sleep(arrivals[i])
            try:
                async with asyncio.timeout(STEP_TIMEOUT_S):
                    await s.connect(stack)
                    await s.type_example()
            except ERRORS as err:
                note(fault.other_errors, err)
                return
            mine = first = s.server == victim.name
            fault.on_killed += mine
            for pause in pauses[i]:
                await asyncio.sleep(pause)
                try:
                    async with asyncio.timeout(STEP_TIMEOUT_S):
                        await s.next()
                    fault.other_clicks += not first
                except ConnectionClosed as err:
                    if not (mine and killed.is_set()):
                        note(fault.other_errors, err)
                        return
                    start = time.perf_counter()
                    try:
                        async with asyncio.timeout(STEP_TIMEOUT_S):
                            await s.reconnect(stack)
                    except ERRORS as err2:
                        note(fault.killed_errors, err2)
                        return
                    fault.reconnect_ms.append((time.perf_counter() - start) * 1e3)
                    fault.reconnected += 1
                    mine = False  # now on the other process
                except ERRORS as err:
                    note(fault.killed_errors if mine else fault.other_errors, err)
                    return
            fault.done_before_kill += mine  # its last click came before the kill

        async def kill_halfway() -> None:
            await asyncio.sleep(ARRIVAL_S / 2 + sum(PAUSE_S) / 2 * clicks / 2)
            start = time.monotonic()
            cluster.kill(victim.index, signal.SIGKILL)
            killed.set()
            while fault.down_after_s is None or fault.back_after_s is None:
                status = cluster.stats()[victim.name].status
                if fault.down_after_s is None and status.startswith(("DOWN", "MAINT")):
                    fault.down_after_s = time.monotonic() - start
                if fault.down_after_s is not None and status.startswith("UP"):
                    fault.back_after_s = time.monotonic() - start
                if time.monotonic() - start > STEP_TIMEOUT_S:
                    return
                await asyncio.sleep(0.05)

        await asyncio.gather(kill_halfway(), *(student_life(i, s) for i, s in enumerate(students)))


def _spread(samples: Sequence[float]) -> str:
    if not samples:
        return "—"
    return " / ".join(
        f"{v:.0f}" for v in (percentile(samples, 0.5), percentile(samples, 0.95), max(samples))
    )


def _errors(errors: dict[str, int]) -> str:
    return ", ".join(f"{n} {name}" for name, n in sorted(errors.items())) or "0"


def phase_row(p: Phase) -> tuple[str, ...]:
    clicks = len(p.click_ms) + len(p.burst_ms)
    spread = ", ".join(f"{n} on {name}" for name, n in sorted(p.servers.items()))
    return (
        str(p.processes),
        str(p.students),
        _spread(p.open_ms),
        _spread(p.example_ms),
        _spread(p.click_ms),
        _spread(p.burst_ms),
        _errors(p.errors),
        f"{p.cpu_s / clicks * 1e3:.1f}" if clicks else "—",
        f"{p.proxy_cpu_s / clicks * 1e3:.2f}" if clicks else "—",
        f"{p.idle_rss_mib:.0f}",
        f"{p.rss_added_mib / max(1, sum(p.servers.values())):.2f}",
        spread,
    )


HEADER = (
    "processes",
    "students",
    "open page p50 / p95 / max (ms)",
    "type example p50 / p95 / max (ms)",
    "Next, reading pauses p50 / p95 / max (ms)",
    "everyone presses Next p50 / p95 / max (ms)",
    "errors",
    "app CPU per click (ms)",
    "HAProxy CPU per click (ms)",
    "idle RSS per process (MiB)",
    "RSS per student (MiB)",
    "students per process",
)


def _cluster(processes: int, run_dir: str) -> Cluster:
    return Cluster(
        processes,
        free_port(),
        "127.0.0.1",
        app_ports=[free_port() for _ in range(processes)],
        limits=UNLIMITED,
        run_dir=Path(run_dir),
    )


def main(argv: Sequence[str] | None = None) -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the clusters on the way out
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__)
    parser.add_argument("--short", action="store_true", help="30 and 120 students, 3 clicks")
    parser.add_argument("--students", help="comma-separated (30,120,300)")
    parser.add_argument("--processes", help="comma-separated (1,2)")
    parser.add_argument("--no-fault", action="store_true", help="skip the fault run")
    parser.add_argument("--fault-only", action="store_true", help="only the fault run")
    parser.add_argument("--fault-students", type=int, default=FAULT_STUDENTS)
    args = parser.parse_args(argv)
    counts = STUDENT_COUNTS[:2] if args.short else STUDENT_COUNTS
    if args.students:
        counts = tuple(int(n) for n in args.students.split(","))
    processes = PROCESS_COUNTS
    if args.processes:
        processes = tuple(int(n) for n in args.processes.split(","))
    clicks = SHORT_CLICKS if args.short else CLICKS

    load_before = os.getloadavg()
    start, client_cpu = time.monotonic(), time.process_time()
    rows: list[tuple[str, ...]] = [HEADER]
    if args.fault_only:
        processes = ()
    fault = Fault(args.fault_students)
    with tempfile.TemporaryDirectory(prefix="lnlab-load-") as run_dir:
        for n in processes:
            for students in counts:
                phase = Phase(n, students, clicks)
                with _cluster(n, run_dir) as cluster:
                    asyncio.run(run_phase(cluster, phase))
                rows.append(phase_row(phase))
                print(" | ".join(rows[-1]), flush=True)
        if not args.no_fault:
            with _cluster(FAULT_PROCESSES, run_dir) as cluster:
                asyncio.run(run_fault(cluster, fault, max(clicks, 4)))
    load_after = os.getloadavg()
    notes = [
        f"Students arrive over {ARRIVAL_S:.0f} s, type their example (a whole-page run), then "
        f"press Next {clicks} times after reading pauses of {PAUSE_S[0]:.0f}-{PAUSE_S[1]:.0f} s "
        f"(seed {SEED}), then all press Next together {BURST_ROUNDS} times. Every answer is "
        "checked (the new mean on step 1, the next section's title). Latency: request sent to "
        "the run's script_finished, through HAProxy. App CPU per click: every app process's "
        "CPU over the lesson and the bursts divided by the clicks. RSS per student: the app "
        "processes' resident memory with every student connected, minus before the first "
        "arrived, divided by the students. Each row is a fresh cluster (no sessions left over).",
    ]
    if not args.no_fault:
        notes.append(
            f"Fault run: {fault.students} students on {FAULT_PROCESSES} processes, "
            f"{max(clicks, 4)} clicks each; app1 killed with SIGKILL halfway. "
            f"On app1: {fault.on_killed}; reconnected through HAProxy to the other process "
            f"with their example (same numbers in the URL, same section): {fault.reconnected}; "
            f"reconnect p50 / p95 / max {_spread(fault.reconnect_ms)} ms; through the lesson "
            f"before the kill: {fault.done_before_kill}; their errors: "
            f"{_errors(fault.killed_errors)}. The other students: {fault.other_clicks} clicks "
            "answered, "
            f"errors: {_errors(fault.other_errors)}. HAProxy marked app1 DOWN "
            + (f"{fault.down_after_s:.2f} s" if fault.down_after_s is not None else "never")
            + " after the kill; the cluster restarted it and HAProxy had it UP again after "
            + (f"{fault.back_after_s:.1f} s." if fault.back_after_s is not None else "— (not).")
        )
    notes.append(
        f"{load_average(load_before, load_after)} shared with other work (other sessions' "
        "builds and tests ran meanwhile). The client (every "
        f"student, one Python process) used {time.process_time() - client_cpu:.0f} s of CPU on "
        f"the same cores. Total {time.monotonic() - start:.0f} s."
    )
    record(
        "load",
        "A class on the local cluster (HAProxy, 1 and 2 processes)",
        rows,
        "\n\n".join(notes),
    )


if __name__ == "__main__":
    main()
