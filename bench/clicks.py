"""What a click costs: Next and Previous on the step-through lesson against a floor app.

Run: `.venv/bin/python -m bench.clicks`. Serves, in turn, the step-through page and
bench/minimal_next.py (Previous and Next buttons and a counter: Streamlit's floor) and speaks
Streamlit's websocket protocol to each, as bench.sessions does (no browser):

- one session clicks Next to the last section and Previous back, CLICKS times at a person's
  pace (CLICK_GAP_S apart): the server's CPU per click and the click's latency (rerun request
  sent to script_finished). On the lesson a click reruns only the lesson's fragment (the
  browser sends the fragment's id);
- the same session asks for FULL_RERUNS whole-page reruns: the server's CPU per full run;
- BURST sessions press Next in the same instant, BURST_ROUNDS times: latency p50/p95/max;
- in headless Chromium, BROWSER_CLICKS clicks on Next and Previous: the time from the click to
  the new step on screen, the run finished and the next frame drawn (the page settled).

Every click is checked: the lesson must show the next section's title, the floor app its next
count. Prints a table and appends it to bench/results/clicks.md.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field

from playwright.async_api import async_playwright
from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench.browser import (
    EDIT_TIMEOUT_MS,
    NEXT_FRAME_JS,
    VIEWPORT,
    Server,
    open_page,
    serve,
    settled,
)
from bench.report import load_average, record
from bench.sessions import cpu_s, open_session
from harness import chromium
from harness.sessions import Run, Session, Target, WrongPage
from harness.stats import percentile
from harness.students import NEXT, PREV, SECTIONS, section_number

CLICKS = 40
# A person's pace, seven clicks a second: back to back, clicks would measure the app's pacing
# of a session's runs (lnlab.serving.pace: ten a second after a burst), not what one click costs.
CLICK_GAP_S = 1 / 7
BROWSER_CLICKS = 24
FULL_RERUNS = 20
BURST = 30
BURST_ROUNDS = 5
TIMEOUT_S = 60.0
LIVE_MODULES = "**/app/static/lnlab/**"


def _counter(run: Run) -> int:
    return int(run.metric or 0)


@dataclass(frozen=True)
class App:
    """An app with Previous and Next: where they are and how to tell which step is shown."""

    target: Target
    count: int  # steps
    prev: str  # widget keys
    next: str
    shows: Callable[[Run], int]  # the 1-based step a run shows
    on_screen: str  # JS (step) => whether the browser shows that step


LESSON = App(
    Target("lnlab step-through", "app.py", "/step_through", NEXT, str),
    SECTIONS,
    PREV,
    NEXT,
    section_number,
    "(n) => [...document.querySelectorAll('h2')].some(h => h.textContent.startsWith(`${n}. `))",
)
FLOOR = App(
    Target("minimal: Previous, Next, counter", "bench/minimal_next.py", "/", "mini_next", str),
    9,
    "mini_prev",
    "mini_next",
    _counter,
    """(n) => [...document.querySelectorAll('[data-testid="stMetricValue"]')]
        .some(v => v.textContent.trim() === String(n))""",
)


@dataclass
class Measured:
    name: str
    click_ms: list[float] = field(default_factory=list)
    click_cpu_ms: float = 0.0
    full_ms: list[float] = field(default_factory=list)
    full_cpu_ms: float = 0.0
    burst_ms: list[float] = field(default_factory=list)
    rss_mib: float = 0.0
    browser_ms: list[float] = field(default_factory=list)


async def click(app: App, session: Session, key: str, expected: int) -> float:
    """Press the button `key` and check the step shown; the latency in ms."""
    button = session.widgets[key]
    run = await session.rerun(
        [WidgetState(id=button.id, trigger_value=True)], session.fragments.get(key, "")
    )
    shown = app.shows(run)
    if shown != expected:
        raise WrongPage(f"{app.target.name}: step {shown} after {key}, not {expected}")
    return run.finished_ms


async def walk(app: App, session: Session, clicks: int) -> list[float]:
    """Next to the last step, Previous to the first, and again, `clicks` times in all, one
    click every CLICK_GAP_S at most."""
    times, at, step = [], 1, 1
    for _ in range(clicks):
        await asyncio.sleep(CLICK_GAP_S)
        if at == app.count:
            step = -1
        elif at == 1:
            step = 1
        at += step
        times.append(await click(app, session, app.next if step > 0 else app.prev, at))
    return times


async def measure_app(app: App) -> Measured:
    out = Measured(app.target.name)
    async with serve(app.target) as server, AsyncExitStack() as stack:
        session, _ = await open_session(stack, server, app.target.path, app.next)
        await walk(app, session, 2 * (app.count - 1))  # warm: every step drawn, back at 1
        out.click_ms, out.click_cpu_ms = await _timed(server, walk(app, session, CLICKS), CLICKS)

        async def full_runs() -> list[float]:
            return [(await session.rerun()).finished_ms for _ in range(FULL_RERUNS)]

        out.full_ms, out.full_cpu_ms = await _timed(server, full_runs(), FULL_RERUNS)
        out.burst_ms = await _burst(app, server, stack)
        out.rss_mib = server.rss_mib()
        out.browser_ms = await _browser_clicks(app, server)
    return out


async def _browser_clicks(app: App, server: Server) -> list[float]:
    """Click Next to the end and Previous back in Chromium: ms from the click to the page
    settled with the new step on screen (run finished, next frame drawn)."""
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=chromium.EXECUTABLE, headless=True, args=chromium.ARGS
        )
        page = await browser.new_page(viewport=VIEWPORT)
        # the step-through's first five sections are answered in the page (bench.live times
        # them): refusing its modules keeps every click here a round trip to the server
        await page.route(LIVE_MODULES, lambda route: route.abort("failed"))
        await open_page(page, server, app.target)
        times, at, step = [], 1, 1
        for k in range(BROWSER_CLICKS + app.count):  # the first pass there and back warms up
            step = -1 if at == app.count else 1 if at == 1 else step
            at += step
            button = page.locator(f".st-key-{app.next if step > 0 else app.prev} button")
            start = time.perf_counter()
            await button.click()
            await page.wait_for_function(app.on_screen, arg=at, timeout=EDIT_TIMEOUT_MS)
            await settled(page, EDIT_TIMEOUT_MS)
            await page.evaluate(NEXT_FRAME_JS)
            if k >= app.count:
                times.append((time.perf_counter() - start) * 1e3)
        await browser.close()
    return times


async def _timed(server: Server, work, count: int) -> tuple[list[float], float]:
    """Run `work`; its result and the server's CPU ms per one of its `count` steps."""
    start = cpu_s(server)
    async with asyncio.timeout(TIMEOUT_S):
        result = await work
    return result, (cpu_s(server) - start) / count * 1e3


async def _burst(app: App, server: Server, stack: AsyncExitStack) -> list[float]:
    """BURST sessions, each on step 1, press Next together BURST_ROUNDS times."""
    async with asyncio.timeout(TIMEOUT_S):
        opened = await asyncio.gather(
            *(open_session(stack, server, app.target.path, app.next) for _ in range(BURST))
        )
    times: list[float] = []
    for round_ in range(BURST_ROUNDS):
        async with asyncio.timeout(TIMEOUT_S):
            times += await asyncio.gather(
                *(click(app, session, app.next, round_ + 2) for session, _ in opened)
            )
    return times


def _spread(samples: list[float]) -> str:
    values = (percentile(samples, 0.5), percentile(samples, 0.95), max(samples))
    return " / ".join(f"{v:.0f}" for v in values)


def main() -> None:
    load_before = os.getloadavg()
    start = time.monotonic()
    results = [asyncio.run(measure_app(app)) for app in (FLOOR, LESSON)]
    rows = [
        (
            "app",
            "click: server CPU (ms)",
            "click latency p50 / p95 / max (ms)",
            "full rerun: server CPU (ms)",
            f"{BURST} press Next at once: p50 / p95 / max (ms)",
            "Chromium: click to settled p50 / p95 / max (ms)",
            "RSS (MiB)",
        )
    ]
    for m in results:
        rows.append(
            (
                m.name,
                f"{m.click_cpu_ms:.1f}",
                _spread(m.click_ms),
                f"{m.full_cpu_ms:.1f}",
                _spread(m.burst_ms),
                _spread(m.browser_ms),
                f"{m.rss_mib:.0f}",
            )
        )
    floor, lesson = results
    rows.append(
        (
            "lesson minus floor",
            f"{lesson.click_cpu_ms - floor.click_cpu_ms:+.1f}",
            "",
            f"{lesson.full_cpu_ms - floor.full_cpu_ms:+.1f}",
            "",
            f"{percentile(lesson.browser_ms, 0.5) / percentile(floor.browser_ms, 0.5):.2f}x",
            "",
        )
    )
    load_after = os.getloadavg()
    notes = (
        f"{CLICKS} clicks (Next to the end and Previous back) in one session after a warm-up, "
        f"{FULL_RERUNS} whole-page reruns, then {BURST} sessions pressing Next in the same "
        f"instant {BURST_ROUNDS} times. On the lesson a click reruns the lesson's fragment only, "
        "as the browser asks; the floor app has no fragment (its whole script is the "
        "buttons and the counter). Targets (issue: lessons as slides): click CPU within 15 ms "
        "of the floor's; full rerun within 50 ms of CPU above it; the burst's p95 under "
        "500 ms; in Chromium, click to settled within 2x of the floor's (median). In "
        f"Chromium, {BROWSER_CLICKS} clicks after a warm-up pass, one page at a time. "
        f"{load_average(load_before, load_after)}. Total "
        f"{time.monotonic() - start:.0f} s."
    )
    record("clicks", "What a click costs: lesson against a Previous/Next floor", rows, notes)
    print(f"lesson click latencies in Chromium (ms): {[round(t) for t in lesson.browser_ms]}")


if __name__ == "__main__":
    main()
