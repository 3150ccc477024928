"""The largest websocket messages the app needs, for server.maxMessageSize.

Run: `.venv/bin/python -m bench.messages`. Serves the app (bench.browser.serve) and opens each
page over Streamlit's websocket protocol (bench.sessions), then fills its largest text box with
the largest input it takes (a 64 x 64 matrix of full-precision numbers) and steps through
every section of its lesson: the largest ForwardMsg the server sent (a page delta: a figure,
a table) and the largest BackMsg sent (a rerun request with the box's text and the page's
link, which then holds the matrix). Appends to bench/results/messages.md.
"""

from __future__ import annotations

import asyncio
import os
import time
from contextlib import AsyncExitStack

import numpy as np
from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench.browser import serve
from bench.report import load_average, record
from bench.sessions import page_session
from harness.sessions import LNLAB as APP
from harness.sessions import Session
from lnlab.core.parse import MAX_CHARS, MAX_TOKENS, format_embeddings

# page, its biggest text box, the box's Next button
PAGES = (
    ("/step_through", "st_text", "step_through_next"),
    ("/conventions", "cv_text", "conventions_next"),
    ("/gpu", "gpu_text", "gpu_next"),
)
SECTIONS = 9


def largest_matrix() -> str:
    """A 64 x 64 matrix of full-precision floats (86,495 characters, under MAX_CHARS)."""
    rng = np.random.default_rng(0)
    text = format_embeddings(rng.standard_normal((MAX_TOKENS, MAX_TOKENS)) / 3)
    assert len(text) < MAX_CHARS, len(text)
    return text


class Measuring(Session):
    """A session that remembers its largest message each way."""

    largest_in = 0  # the server's messages (ForwardMsg)
    largest_out = 0  # this session's (BackMsg)

    async def _receive(self):
        msg = await super()._receive()
        self.largest_in = max(self.largest_in, msg.ByteSize())
        return msg

    def rerun_request(self, states=(), fragment_id: str = "") -> bytes:
        data = super().rerun_request(states, fragment_id)
        self.largest_out = max(self.largest_out, len(data))
        return data


async def measure() -> list[tuple[str, ...]]:
    rows = []
    text = largest_matrix()
    async with serve(APP) as server:
        for path, box, next_key in PAGES:
            async with AsyncExitStack() as stack:
                session, run = await page_session(stack, server, path, Measuring)
                await session.python_lesson(run)  # whose Next is clicked below
                states = [WidgetState(id=session.widgets[box].id, string_value=text)]
                await session.rerun(states)
                for _ in range(SECTIONS):
                    if next_key not in session.widgets:
                        break
                    button = session.widgets[next_key]
                    await session.rerun(
                        [WidgetState(id=button.id, trigger_value=True)],
                        session.fragments.get(next_key, ""),
                    )
                rows.append(
                    (
                        path,
                        f"{len(text):,}",
                        f"{session.largest_in / 1e6:.3f}",
                        f"{session.largest_out / 1e6:.3f}",
                        f"{len(session.query_string):,}",
                    )
                )
    return rows


def main() -> None:
    load = os.getloadavg()
    start = time.perf_counter()
    rows = asyncio.run(measure())
    table = [
        (
            "page",
            "box text (characters)",
            "largest ForwardMsg (MB)",
            "largest BackMsg (MB)",
            "page's link (characters)",
        ),
        *rows,
    ]
    notes = (
        "Each page with its biggest text box holding a 64 x 64 matrix of full-precision "
        f"numbers, then Next through its lesson. {load_average(load, os.getloadavg())}. "
        f"Total {time.perf_counter() - start:.0f} s."
    )
    print(record("messages", "The largest websocket messages", table, notes))


if __name__ == "__main__":
    main()
