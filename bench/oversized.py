"""Oversized values over the websocket: what the server keeps of them.

Run: `.venv/bin/python -m bench.oversized`. Serves the app (bench.browser.serve) twice: with
Streamlit's default server.maxMessageSize (200 MB) and as .streamlit/config.toml sets it. On
each, SESSIONS sessions open /conventions (bench.sessions: Streamlit's websocket protocol, no
browser) and each sends ROUNDS rerun requests whose text box and three more widget states
hold VALUE_MB each (a crafted client; a browser stops at the box's max_chars), then a normal
edit. This happens WAVES times. Reported: the server's RSS before and one second after each wave
(its sessions closed), and how many sessions the server cut off (closing the websocket of a
message over the limit). Appends to
bench/results/oversized.md.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack

from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.exceptions import ConnectionClosed

from bench.browser import serve
from bench.report import load_average, record
from bench.sessions import page_session
from harness.sessions import LNLAB as APP

SESSIONS = 8
WAVES = 3  # the sessions come, send and close this many times
ROUNDS = 3
PAGE = "/conventions"
BOX = "cv_text"
SERVERS = (  # (name, value MB, Streamlit options)
    (
        "maxMessageSize 200 (Streamlit's default), 4 MB values",
        4.0,
        ("--server.maxMessageSize", "200"),
    ),
    ("as configured (2 MB), 4 MB values", 4.0, ()),
    ("as configured (2 MB), 0.45 MB values", 0.45, ()),
    ("as configured (2 MB), 100-byte values (the floor: sessions alone)", 0.0001, ()),
)


async def crafted(server, value_mb: float, k: int) -> bool:
    """One session sending ROUNDS oversized requests, then a normal edit; False if the server
    closed its websocket."""
    async with AsyncExitStack() as stack:
        session, _ = await page_session(stack, server, PAGE)
        box = session.widgets[BOX].id
        size = int(value_mb * 1e6)
        try:
            for r in range(ROUNDS):
                value = f"{k}{r}, " * (size // 4)
                states = [WidgetState(id=box, string_value=value)]
                states += [WidgetState(id=f"{box}-{i}", string_value=value) for i in range(3)]
                await session.rerun(states)
            await session.rerun([WidgetState(id=box, string_value="1, 2, 3")])
        except ConnectionClosed:
            return False
    return True


async def measure_one(value_mb: float, options: Sequence[str]) -> tuple[str, ...]:
    async with serve(APP, options=options) as server:
        async with AsyncExitStack() as stack:  # the page once: its modules and caches there
            await page_session(stack, server, PAGE)
        rss = [server.rss_mib()]
        cut = 0
        for _ in range(WAVES):
            kept = await asyncio.gather(*(crafted(server, value_mb, k) for k in range(SESSIONS)))
            cut += SESSIONS - sum(kept)
            await asyncio.sleep(1.0)
            rss.append(server.rss_mib())
        return (" / ".join(f"{v:.0f}" for v in rss), f"{cut} of {WAVES * SESSIONS}")


async def measure() -> list[tuple[str, ...]]:
    return [(name, *await measure_one(mb, options)) for name, mb, options in SERVERS]


def main() -> None:
    load = os.getloadavg()
    start = time.perf_counter()
    rows = asyncio.run(measure())
    table = [
        (
            "server, values sent",
            f"RSS before, then after each of {WAVES} waves (MiB)",
            "sessions cut off",
        ),
        *rows,
    ]
    notes = (
        f"{WAVES} waves of {SESSIONS} sessions at once, each {ROUNDS} rerun requests with the "
        f"text box {BOX} and three made-up widgets holding the value, then a normal edit; RSS one "
        "second after the sessions have closed. "
        f"{load_average(load, os.getloadavg())} shared with other work. "
        f"Total {time.perf_counter() - start:.0f} s."
    )
    print(record("oversized", "Oversized values over the websocket", table, notes))


if __name__ == "__main__":
    main()
