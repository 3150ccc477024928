"""Many sessions against the server alone: Streamlit's websocket protocol, no browser.

Run: `.venv/bin/python -m bench.sessions`. Starts the app with bench.browser.serve and opens
1, 10 and 30 sessions on /step_through, each a websocket speaking Streamlit's protobufs as the
browser does (harness.sessions.Session: rerun requests with widget states, the ForwardMsg
cache), with no rendering. Each
session types "1, 2, 3, 4, k" into the text box five times; an edit's latency is the time from
sending the rerun request to receiving step 1's metric with the new mean (checked), and to
the run's script_finished. Prints a table and appends it to bench/results/sessions.md.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Coroutine, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field

from websockets.exceptions import ConnectionClosed

from bench.browser import Server, serve
from bench.report import load_average, record
from harness.sessions import LNLAB, Run, Session, WrongPage, cpu_of, stream
from harness.stats import percentile

SESSION_COUNTS = (1, 10, 30)
CLASSROOM = 30  # sessions in the classroom phase
EDITS = 5
CLASSROOM_PAUSE_S = 3.0  # the classroom phase waits 0 to this long before each edit
SEED = 1
LOAD_TIMEOUT_S = 60.0
EDIT_TIMEOUT_S = 30.0
PHASE_BUDGET_S = 60.0
TOTAL_S = 170.0  # every phase together, so that the run ends within about 3 minutes


def cpu_s(server: Server) -> float:
    """CPU seconds the streamlit process has used so far."""
    return cpu_of(server.process.pid)


async def page_session(
    stack: AsyncExitStack,
    server: Server,
    path: str,
    kind: type[Session] = Session,
    query: str = "",
) -> tuple[Session, Run]:
    """A new session (a `kind`) on the page at `path`, opened from a link with `query`, after
    its first run (closed with `stack`), and that run."""
    ws = await stack.enter_async_context(stream(server.url))
    session = kind(ws, server.url + path)
    session.query_string = query
    return session, await session.rerun()


async def open_session(
    stack: AsyncExitStack,
    server: Server,
    path: str = LNLAB.path,
    needs: str = LNLAB.text_key,
    query: str = "",
    metric: bool = True,
) -> tuple[Session, float]:
    """Connect and load the page at `path` from a link with `query` (closed with `stack`),
    which must draw widget `needs` (and a metric, if `metric`); ms from connecting to
    script_finished."""
    start = time.perf_counter()
    session, run = await page_session(stack, server, path, query=query)
    if needs not in session.widgets:  # a widget of Python's lesson, not the page's own
        run = await session.python_lesson(run)
    if needs not in session.widgets or (metric and run.metric is None):
        raise WrongPage(f"{path} has no widget {needs!r} or no metric")
    return session, (time.perf_counter() - start) * 1e3


@dataclass
class Phase:
    """A phase and what it measured so far (kept when its budget runs out)."""

    name: str
    count: int
    pause_s: float = 0.0
    load_ms: list[float] = field(default_factory=list)
    metric_ms: list[float] = field(default_factory=list)
    finished_ms: list[float] = field(default_factory=list)
    failed: int = 0
    rss_mib: float | None = None  # with every session loaded
    cpu_s: float | None = None  # the server's, over the edits


async def run_phase(server: Server, phase: Phase) -> None:
    """`phase.count` sessions open the page at once, then each makes EDITS edits back to back,
    each after a random pause of up to `phase.pause_s`; fills `phase` as it goes."""
    rng = random.Random(SEED)
    pauses = [[rng.uniform(0, phase.pause_s) for _ in range(EDITS)] for _ in range(phase.count)]
    async with AsyncExitStack() as stack:
        async with asyncio.timeout(LOAD_TIMEOUT_S):
            opened = await asyncio.gather(
                *(open_session(stack, server) for _ in range(phase.count))
            )
        phase.load_ms = [ms for _, ms in opened]
        phase.rss_mib = server.rss_mib()

        async def work(i: int, session: Session) -> None:
            for j in range(EDITS):
                await asyncio.sleep(pauses[i][j])
                try:
                    async with asyncio.timeout(EDIT_TIMEOUT_S):
                        run = await session.edit(1000 * (i + 1) + j)
                except (TimeoutError, ConnectionClosed):
                    phase.failed += EDITS - j  # the session's state is unknown from here on
                    return
                phase.metric_ms.append(run.metric_ms)
                phase.finished_ms.append(run.finished_ms)

        cpu_start = cpu_s(server)
        await asyncio.gather(*(work(i, s) for i, (s, _) in enumerate(opened)))
        phase.cpu_s = cpu_s(server) - cpu_start


def _spread(samples: Sequence[float], scale: float = 1.0, digits: int = 0) -> str:
    """p50 / p95 / max of the samples (divided by `scale`), or a dash without samples."""
    if not samples:
        return "—"
    values = (percentile(samples, 0.5), percentile(samples, 0.95), max(samples))
    return " / ".join(f"{v / scale:.{digits}f}" for v in values)


def row(phase: Phase) -> tuple[str, ...]:
    """The phase's line of the table."""
    done = len(phase.metric_ms)
    load = _spread(phase.load_ms, 1e3, 1)
    rss = "—" if phase.rss_mib is None else f"{phase.rss_mib:.0f}"
    cpu = "—" if phase.cpu_s is None or not done else f"{phase.cpu_s / done * 1e3:.0f}"
    return (
        phase.name,
        f"{done}/{phase.count * EDITS} ({phase.failed} failed)",
        load,
        _spread(phase.metric_ms),
        _spread(phase.finished_ms),
        cpu,
        rss,
    )


async def measure() -> tuple[list[tuple[str, ...]], list[str]]:
    rows: list[tuple[str, ...]] = [
        (
            "phase",
            "edits done",
            "load p50 / p95 / max (s)",
            "edit to metric p50 / p95 / max (ms)",
            "edit to finished p50 / p95 / max (ms)",
            "server CPU per edit (ms)",
            "server RSS (MiB)",
        )
    ]
    notes: list[str] = []
    deadline = time.monotonic() + TOTAL_S

    async def budgeted(name: str, work: Coroutine) -> None:
        """Run one phase within its budget and the run's; on failure note why."""
        budget_s = min(PHASE_BUDGET_S, deadline - time.monotonic())
        if budget_s < 5:
            work.close()
            notes.append(f"{name} skipped: the run's {TOTAL_S:.0f} s were spent")
            return
        try:
            await asyncio.wait_for(work, budget_s)
        except TimeoutError:
            notes.append(
                f"{name} timed out: loading took over {LOAD_TIMEOUT_S:.0f} s or the phase "
                f"over its {budget_s:.0f} s"
            )
        except Exception as err:  # a benchmark reports a failed phase, it does not crash
            notes.append(f"{name} failed: {type(err).__name__}: {str(err)[:300]}")

    phases = [Phase(f"{n} session{'s' * (n > 1)}", n) for n in SESSION_COUNTS]
    pauses = f"0-{CLASSROOM_PAUSE_S:.0f} s pauses"
    phases.append(
        Phase(f"{CLASSROOM} sessions, classroom ({pauses})", CLASSROOM, CLASSROOM_PAUSE_S)
    )
    async with serve(LNLAB) as server:
        for phase in phases:
            await budgeted(phase.name, run_phase(server, phase))
            rows.append(row(phase))
            if phase is phases[0]:
                rss = f"{server.rss_mib():.0f}"
                rows.append((f"idle, after the {phase.name} phase", *["—"] * 5, rss))
    return rows, notes


def main() -> None:
    load_before = os.getloadavg()
    start, cpu_start = time.monotonic(), time.process_time()
    rows, notes = asyncio.run(measure())
    load_after = os.getloadavg()
    notes.append(
        "This measures the server alone: each session is a websocket speaking Streamlit's "
        "protocol with no rendering, so a browser adds its own rendering time to these numbers "
        "(bench.browser measures that for one session). Edit = send the text box's new value "
        "'1, 2, 3, 4, k' in a rerun request; 'metric' is when step 1's mean arrives with the "
        "new value (checked), 'finished' when the run's script_finished does. An edit sends "
        "only the text box's state; the page's other inputs are checked to come back "
        "unchanged. Target: p95 "
        f"under 1000 ms with 30 sessions. Sessions of a phase load at once; then each makes "
        f"{EDITS} edits back to back, the classroom phase after a random pause (seed {SEED}). "
        "Server CPU per edit is the streamlit process's CPU time over a phase's edits divided "
        "by the edits: script runs share one Python interpreter (its GIL), so N edits at once "
        "take roughly N times that, however many cores there are."
    )
    notes.append(
        f"{load_average(load_before, load_after)} (shared with other work). The client used "
        f"{time.process_time() - cpu_start:.0f} s of CPU on the same cores. "
        f"Total {time.monotonic() - start:.0f} s. Closed sessions "
        "stay in the server for server.disconnectedSessionTTL (120 s), so a phase's RSS "
        "includes the sessions of the phases before it."
    )
    record("sessions", "Server-side sessions: edit-to-update and memory", rows, "\n\n".join(notes))


if __name__ == "__main__":
    main()
