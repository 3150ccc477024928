"""The padding lesson's statistic picked in the page, before and after, against the framework's
floor, in Chromium, in one run.

Run: `.venv/bin/python -m bench.live_padding`. Serves, on free local ports, this checkout's
padding page twice: after, its first two sections drawn by the page (lnlab.labs.padding.live);
before, the same with the page's lesson modules refused, so that it falls back to the server's
lesson (as it does when they fail, and as it was); and the floor, bench/minimal_next.py (a
click that reruns a one-widget app). Timed in the page as bench.live times the step-through:
from the input event's timestamp to the first frame after the answer is in the DOM.

- picking another statistic (naive column, masked column, token row, and back): after, the
  arrow keys in the page's list; before, an option clicked in Streamlit's radio buttons; the
  answer is the figure's caption naming how many cells are outlined;
- picking another token row by clicking a cell of the batch (after only);
- server CPU per pick, each pick followed by a pause until its state has run.
"""

from __future__ import annotations

import asyncio
import os
import time
from contextlib import AsyncExitStack

from playwright.async_api import Browser, Page, async_playwright

from bench.browser import LOAD_TIMEOUT_MS, Server, serve, settled
from bench.live import (
    FLOOR_NEXT,
    _cpu_ms,
    _idle,
    _page,
    _spread,
    _timed,
    floor_clicks,
)
from bench.report import load_average, record
from harness import chromium
from harness.sessions import Target
from harness.stats import percentile
from lnlab.labs.padding import batch as pad
from tests.browser.conftest import SHOWN

PADDING = Target("padding", "app.py", "/padding?v=1&section=2", "pad_sentences", str)
PICKS = 24
CELL_CLICKS = 16
PACED = 9
# The default batch ("Hi Nitish" / "How are you today": 8 rows, 2 of them PAD): how many cells
# each statistic outlines, in the order of the page's list, and that order walked back and forth.
OUTLINED = {pad.PICK_NAIVE: 8, pad.PICK_MASKED: 6, pad.PICK_TOKEN: 3}
ORDER = list(pad.PICKS)
CAPTION_JS = (
    "[...document.querySelectorAll('figcaption, [data-testid=\"stCaptionContainer\"]')]"
    ".some(c => c.offsetParent !== null && c.textContent.includes('The {n} outlined cells'))"
)
FORMULA_JS = (
    f"[...document.querySelectorAll('.lnlab-live-statistic .lnlab-math{SHOWN}')]"
    ".some(a => a.dataset.tex.startsWith('\\\\mu_{{\\\\text{{token {k}}}}}'))"
)


def _walk(count: int, at: int) -> list[tuple[int, str]]:
    """(direction, statistic reached) for `count` moves from ORDER[at], bouncing through the
    list."""
    moves, step = [], 1
    for _ in range(count):
        step = -1 if at == len(ORDER) - 1 else 1 if at == 0 else step
        at += step
        moves.append((step, ORDER[at]))
    return moves


async def _ready(page: Page, live: bool) -> None:
    """Section 2 on screen with the first statistic, drawn by the page (live) or by Python."""
    await page.wait_for_function(CAPTION_JS.format(n=8), timeout=LOAD_TIMEOUT_MS)
    if live:
        await page.wait_for_function(
            "!document.querySelector('.st-key-lnlab_live_fallback')", timeout=LOAD_TIMEOUT_MS
        )
    await settled(page)


async def picks(page: Page, live: bool, count: int) -> list[float]:
    """Another statistic, `count` times: ms from the input to the caption naming its cells."""
    times = []
    if live:
        await page.locator(".lnlab-live-pick").focus()
        at = ORDER.index(await page.locator(".lnlab-live-pick").input_value())
    else:
        picked = page.locator(".st-key-pad_pick").get_by_role("radio", checked=True)
        label = await picked.evaluate("e => e.closest('label').innerText.trim()")
        at = list(pad.PICKS.values()).index(label)
    for step, pick in _walk(count, at):
        done = CAPTION_JS.format(n=OUTLINED[pick])
        if live:
            act = page.keyboard.press("ArrowDown" if step > 0 else "ArrowUp")
        else:
            option = page.locator(".st-key-pad_pick").get_by_role("radio", name=pad.PICKS[pick])
            act = option.click(force=True)
        times.append(await _timed(page, act, done))
        if not live:
            await settled(page)
    await _idle(page, live)
    return times


async def cell_clicks(page: Page, count: int) -> list[float]:
    """On the token row statistic, a cell of another row clicked: ms to its formula."""
    await page.locator(".lnlab-live-pick").select_option(pad.PICK_TOKEN)
    await _idle(page, True)
    times = []
    for i in range(count):
        row = (i + 1) % 8
        cell = page.locator(f".lnlab-live svg rect[data-row='{row}'][data-col='1']")
        times.append(await _timed(page, cell.click(), FORMULA_JS.format(k=row + 1)))
    await _idle(page, True)
    await page.locator(".lnlab-live-pick").select_option(pad.PICK_NAIVE)
    await _idle(page, True)
    return times


async def cpu_per_pick(page: Page, server: Server, live: bool) -> float:
    async def paced() -> None:
        for _ in range(PACED // 3):
            await picks(page, live, 3)  # picks() waits for each state to run

    return await _cpu_ms(server, paced(), PACED)


async def measure() -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = [
        ("metric", "after: in the page", "before: the server", "floor", "note")
    ]
    async with async_playwright() as pw, AsyncExitStack() as stack:
        browser: Browser = await pw.chromium.launch(
            executable_path=chromium.EXECUTABLE, headless=True, args=chromium.ARGS
        )
        stack.push_async_callback(browser.close)
        after = await stack.enter_async_context(serve(PADDING))
        before = await stack.enter_async_context(serve(PADDING))
        floor = await stack.enter_async_context(serve(FLOOR_NEXT))
        live_page = await _page(browser, after, PADDING, False)
        await _ready(live_page, True)
        server_page = await _page(browser, before, PADDING, True)
        await _ready(server_page, False)
        floor_page = await _page(browser, floor, FLOOR_NEXT, False)

        await picks(live_page, True, 6)  # warm-up
        await picks(server_page, False, 6)
        await floor_clicks(floor_page, 6)
        pick_after = await picks(live_page, True, PICKS)
        pick_before = await picks(server_page, False, PICKS)
        clicks_floor = await floor_clicks(floor_page, PICKS)
        cells_after = await cell_clicks(live_page, CELL_CLICKS)
        cpu_after = await cpu_per_pick(live_page, after, True)
        cpu_before = await cpu_per_pick(server_page, before, False)
        cpu_floor = await _cpu_ms(floor, floor_clicks(floor_page, PACED), PACED)

    ratio = percentile(pick_before, 0.5) / percentile(clicks_floor, 0.5)
    rows.append(
        (
            "another statistic to painted, p50 / p95 (ms)",
            _spread(pick_after),
            _spread(pick_before),
            _spread(clicks_floor),
            f"{PICKS} picks; after: the arrow keys in the page's list; before: an option "
            f"clicked in Streamlit's radio buttons ({ratio:.1f}x the floor's click)",
        )
    )
    rows.append(
        (
            "a cell clicked: its token row to painted, p50 / p95 (ms)",
            _spread(cells_after),
            "—",
            "—",
            f"{CELL_CLICKS} clicks (the server's lesson has no clickable cells)",
        )
    )
    rows.append(
        (
            "server CPU per pick (ms)",
            f"{cpu_after:.1f}",
            f"{cpu_before:.1f}",
            f"{cpu_floor:.1f}",
            f"{PACED} picks, each followed by a pause until its state has run; the server's "
            "idle CPU over the same time left out",
        )
    )
    return rows


def main() -> None:
    load_before = os.getloadavg()
    start = time.monotonic()
    rows = asyncio.run(measure())
    notes = (
        f"{load_average(load_before, os.getloadavg())} (the browser and the servers share them). "
        f"Total {time.monotonic() - start:.0f} s. Chromium {chromium.EXECUTABLE}, headless. "
        "Before: this checkout with the page's lesson modules refused (the server's lesson)."
    )
    record("live_padding", "The padding lesson's statistic picked in the page", rows, notes)


if __name__ == "__main__":
    main()
