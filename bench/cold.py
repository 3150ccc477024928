"""A cold server: what the first visitor of the GPU page costs a session already editing.

Run: `.venv/bin/python -m bench.cold`. Starts a new server ROUNDS times each way: as `make run` does
(app.py's st.App, whose lifespan imports torch and every module the pages import first) and with the
home page alone as a plain script (`streamlit run home.py`). On each, a victim session opens
/step_through and edits its text box back to back (bench.sessions: Streamlit's websocket protocol,
no browser); then the first visitor opens /gpu, the page that needs torch. Reported: the victim's
slowest edit while the GPU page loads, the GPU page's first load, and the server's memory after.
Appends to bench/results/cold.md.
"""

from __future__ import annotations

import asyncio
import os
import time
from contextlib import AsyncExitStack

from bench.browser import serve
from bench.report import load_average, record
from bench.sessions import open_session, page_session
from harness.sessions import LNLAB as APP
from harness.stats import percentile

ROUNDS = 3
AFTER_S = 0.5  # the victim goes on editing this long after the GPU page has loaded


async def first_visit(server, path: str) -> float:
    """Open `path` in a new session; ms to its first run's end."""
    async with AsyncExitStack() as stack:
        _, run = await page_session(stack, server, path)
        return run.finished_ms


async def one_round(launcher: bool) -> tuple[float, list[float], float, float]:
    """(victim's quiet median, victim's edits while /gpu loads, /gpu's first load, RSS MiB)."""
    async with serve(APP, launcher=launcher) as server, AsyncExitStack() as stack:
        victim, _ = await open_session(stack, server)
        quiet = [(await victim.edit(k + 1)).finished_ms for k in range(5)]
        gpu = asyncio.create_task(first_visit(server, "/gpu"))
        during: list[float] = []
        k = 0
        loaded_at = None
        while loaded_at is None or time.perf_counter() < loaded_at + AFTER_S:
            k = k % 50 + 1
            during.append((await victim.edit(k)).finished_ms)
            if loaded_at is None and gpu.done():
                loaded_at = time.perf_counter()
        return percentile(quiet, 0.5), during, await gpu, server.rss_mib()


async def measure() -> list[tuple[str, ...]]:
    rows = []
    ways = ((True, "streamlit run app.py (make run)"), (False, "streamlit run home.py (bare)"))
    for launcher, name in ways:
        quiet, slowest, loads, rss = [], [], [], []
        for _ in range(ROUNDS):
            q, during, load, mib = await one_round(launcher)
            quiet.append(q)
            slowest.append(max(during))
            loads.append(load)
            rss.append(mib)
        rows.append(
            (
                name,
                f"{percentile(quiet, 0.5):.0f}",
                " / ".join(f"{v:.0f}" for v in sorted(slowest)),
                " / ".join(f"{v:.0f}" for v in sorted(loads)),
                f"{max(rss):.0f}",
            )
        )
    return rows


def main() -> None:
    load = os.getloadavg()
    start = time.perf_counter()
    rows = asyncio.run(measure())
    after = os.getloadavg()
    table = [
        (
            "server started with",
            "victim's edit, quiet: median (ms)",
            f"victim's slowest edit while /gpu first loads, {ROUNDS} servers (ms)",
            f"/gpu's first load, {ROUNDS} servers (ms)",
            "RSS after (MiB)",
        ),
        *rows,
    ]
    notes = (
        "Each server new; the victim opens /step_through and edits, then the first visitor "
        "opens /gpu (which needs torch) while the victim goes on editing. "
        f"{load_average(load, after)} shared with other work. "
        f"Total {time.perf_counter() - start:.0f} s."
    )
    print(
        record(
            "cold", "A cold server: the GPU page's first visitor and another session", table, notes
        )
    )


if __name__ == "__main__":
    main()
