"""The GPU page's benchmark beside other sessions: their edit latency, and turns shared.

Run: `.venv/bin/python -m bench.gpu_fairness [--shape BxSxF] [--dtype D] [--phase SECONDS]
[--before DIR]`. Serves the app (bench.browser.serve) and speaks Streamlit's websocket protocol
to it, as bench.sessions does (no browser):

- idle: EDITORS sessions on /step_through each type "1, 2, 3, 4, k" into the text box, again
  and again after a random pause of up to PAUSE_S, for the phase; an edit's latency is the
  time from the rerun request to script_finished (step 1's new mean checked);
- busy: the same, while two sessions on /gpu (visitors A and B) press Run the moment their
  last run's result arrives, on a CPU benchmark of 64 x 1024 x 32 bfloat16 (2^21 elements in
  2^16 rows: the largest the caps allowed before they were sized from the CPU's cache; the
  issue's 1024 x 1024 x 2 is over the row cap).

The phases alternate in ROUNDS parts each, so that load from elsewhere on a shared machine hits
both alike. Before them each benchmark visitor runs once (the first run starts the worker process).
With --before DIR, the same is measured first on the app in DIR, an older checkout (say
`git archive <commit> | tar -x -C DIR`), under the same load.
Target: the busy phase's edit p95 within 2x of the idle phase's, measured in the same run; A
and B served alternately. Prints a table and appends it to bench/results/gpu_fairness.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench.browser import Server, serve
from bench.report import load_average, record
from bench.sessions import cpu_s, open_session
from harness.sessions import LNLAB, ROOT, Run, Session
from harness.stats import percentile

EDITORS = 5
PAUSE_S = 1.0
PHASE_S = 45.0  # idle and busy each, in ROUNDS alternating parts
ROUNDS = 3
SEED = 1
RUN_TIMEOUT_S = 120.0
SHAPE = (64, 1024, 32)
DTYPE = "bfloat16"
RESULT = "Median over the samples"  # the result table's caption
TIMED = re.compile(r"(\d+\.\d) s in all with the warm-up")
REFUSED = re.compile(r"try again|did not finish|wait for it")
REFUSED_PAUSE_S = 1.0  # a refused visitor presses again after this long
PLACE = re.compile(r"You are (\d+)\w\w in line")
WAITED = re.compile(r"You waited (\d+\.\d) s in line")


@dataclass
class Visitor:
    """A benchmark visitor pressing Run back to back: what each press brought."""

    name: str
    runs: int = 0
    press_s: list[float] = field(default_factory=list)  # press to result on screen
    timed_s: list[float] = field(default_factory=list)  # the run itself, warm-up included
    waited_s: list[float] = field(default_factory=list)
    places: set[int] = field(default_factory=set)
    refused: list[str] = field(default_factory=list)


@dataclass
class Phase:
    name: str
    edit_ms: list[float] = field(default_factory=list)
    failed: int = 0
    cpu_s: float = 0.0  # the server process's (its worker is another process)
    visitors: list[Visitor] = field(default_factory=list)


async def press_run(session: Session, visitor: Visitor) -> Run:
    """Press Run and read until the page is done (it reruns itself to show the result)."""
    button = session.widgets["gpu_run"]
    start = time.perf_counter()
    async with asyncio.timeout(RUN_TIMEOUT_S):
        run = await session.rerun(
            [WidgetState(id=button.id, trigger_value=True)], session.fragments.get("gpu_run", "")
        )
    text = "\n".join(run.texts)
    visitor.places.update(int(p) for p in PLACE.findall(text))
    if REFUSED.search(text) or RESULT not in text:
        visitor.refused.append(next((t for t in run.texts if REFUSED.search(t)), text[:200]))
        await asyncio.sleep(REFUSED_PAUSE_S)
        return run
    visitor.runs += 1
    visitor.press_s.append(time.perf_counter() - start)
    visitor.timed_s.extend(float(t) for t in TIMED.findall(text))
    visitor.waited_s.extend(float(w) for w in WAITED.findall(text))
    return run


async def edit_until(session: Session, stop_at: float, phase: Phase, rng: random.Random) -> None:
    k = rng.randrange(10**6)
    while time.monotonic() < stop_at:
        await asyncio.sleep(rng.uniform(0, PAUSE_S))
        k += 1
        try:
            async with asyncio.timeout(30):
                run = await session.edit(k)
        except TimeoutError:
            phase.failed += 1
            return
        phase.edit_ms.append(run.finished_ms)


async def press_until(session: Session, stop_at: float, visitor: Visitor) -> None:
    while time.monotonic() < stop_at:
        await press_run(session, visitor)


async def run_phase(
    server: Server, editors: list[Session], phase: Phase, seconds: float, pressers: list, seed: int
) -> None:
    """Editors edit for `seconds` while `pressers` (session, Visitor) press Run; adds to
    `phase` what was measured."""
    rng = random.Random(seed)
    stop_at = time.monotonic() + seconds
    cpu_start = cpu_s(server)
    await asyncio.gather(
        *(edit_until(s, stop_at, phase, random.Random(rng.random())) for s in editors),
        *(press_until(s, stop_at, v) for s, v in pressers),
    )
    phase.cpu_s += cpu_s(server) - cpu_start
    phase.visitors = [v for _, v in pressers]


def _spread(ms: list[float]) -> str:
    if not ms:
        return "—"
    return " / ".join(f"{v:.0f}" for v in (percentile(ms, 0.5), percentile(ms, 0.95), max(ms)))


def _visitors(phase: Phase) -> str:
    if not phase.visitors:
        return "—"
    return "; ".join(
        f"{v.name}: {v.runs} runs, press to result p50 "
        f"{percentile(v.press_s, 0.5) if v.press_s else 0:.1f} s"
        + (f", timed max {max(v.timed_s):.1f} s" if v.timed_s else "")
        + f", places seen {sorted(v.places) or '—'}"
        + (f", {len(v.refused)} refused" if v.refused else "")
        for v in phase.visitors
    )


async def measure(
    query: str, seconds: float, root: Path, label: str
) -> tuple[list[tuple[str, ...]], list[str]]:
    """The idle and busy phases on the app in checkout `root`: table rows and notes."""
    notes: list[str] = []
    async with serve(LNLAB, root) as server, AsyncExitStack() as stack:
        editors = [
            (await open_session(stack, server))[0] for _ in range(EDITORS)
        ]  # one at a time: loading is not what this measures
        benchers = []
        for name in "AB":
            session, _ = await open_session(stack, server, "/gpu", "gpu_run", query, False)
            first = Visitor(name)
            start = time.perf_counter()
            await press_run(session, first)
            notes.append(
                f"{label}: visitor {name}'s first run (before the phases): "
                f"{time.perf_counter() - start:.1f} s press to result"
                + (
                    " (where there is a worker process, this run starts it: a fresh Python "
                    "importing torch)."
                    if name == "A"
                    else "."
                )
                + (f" Refused: {first.refused}" if first.refused else "")
            )
            benchers.append((session, Visitor(name)))
        idle, busy = Phase("idle: editors only"), Phase("busy: editors + A and B pressing Run")
        for i in range(ROUNDS):  # interleaved, so that load from elsewhere hits both alike
            await run_phase(server, editors, idle, seconds / ROUNDS, [], SEED + 2 * i)
            await run_phase(server, editors, busy, seconds / ROUNDS, benchers, SEED + 2 * i + 1)
        notes += [
            f"{label}: visitor {v.name} refused: {'; '.join(sorted(set(v.refused)))}"
            for _, v in benchers
            if v.refused
        ]
    rows: list[tuple[str, ...]] = []
    for phase in (idle, busy):
        rows.append(
            (
                f"{label}, {phase.name}",
                f"{len(phase.edit_ms)} ({phase.failed})",
                _spread(phase.edit_ms),
                f"{phase.cpu_s:.1f}",
                _visitors(phase),
            )
        )
    if idle.edit_ms and busy.edit_ms:
        ratio = percentile(busy.edit_ms, 0.95) / percentile(idle.edit_ms, 0.95)
        p50 = percentile(busy.edit_ms, 0.5) / percentile(idle.edit_ms, 0.5)
        rows.append(
            (f"{label}, busy / idle", "", f"p50 x{p50:.2f}, p95 x{ratio:.2f} (target ≤ 2)", "", "")
        )
    return rows, notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--shape", default="x".join(map(str, SHAPE)), help="batch x seq x feat")
    parser.add_argument("--dtype", default=DTYPE)
    parser.add_argument("--phase", type=float, default=PHASE_S, help="seconds of each phase")
    parser.add_argument("--before", type=Path, help="an older checkout to measure first")
    args = parser.parse_args()
    batch, seq, feat = args.shape.split("x")
    query = f"v=1&dev=cpu&dtype={args.dtype}&batch={batch}&seq={seq}&feat={feat}&s=4"
    load_before = os.getloadavg()
    start, cpu_start = time.monotonic(), time.process_time()
    rows: list[tuple[str, ...]] = [
        (
            "app, phase",
            "edits (failed)",
            "edit to finished p50 / p95 / max (ms)",
            "server CPU (s)",
            "benchmark visitors",
        )
    ]
    notes: list[str] = []
    apps = [(args.before, f"before ({args.before})")] if args.before else []
    for root, label in [*apps, (ROOT, "this checkout")]:
        app_rows, app_notes = asyncio.run(measure(query, args.phase, root, label))
        rows += app_rows
        notes += app_notes
    load_after = os.getloadavg()
    notes += [
        f"Benchmark link: /gpu?{query}. {EDITORS} editor sessions on /step_through, each edit "
        f"after a random 0-{PAUSE_S:g} s pause (seed {SEED}); {args.phase:g} s per phase, in "
        f"{ROUNDS} alternating parts. "
        "Edit latency: rerun request to script_finished, the new mean checked. Server CPU is "
        "the streamlit process's; this checkout's benchmark worker is a separate process "
        f"(nice +10). A refused visitor presses again after {REFUSED_PAUSE_S:g} s.",
        f"{load_average(load_before, load_after)} shared with other work. The client used "
        f"{time.process_time() - cpu_start:.0f} s of CPU on the same cores. Total "
        f"{time.monotonic() - start:.0f} s.",
    ]
    record(
        "gpu_fairness", "GPU page: edits beside benchmarks, turns shared", rows, "\n\n".join(notes)
    )


if __name__ == "__main__":
    main()
