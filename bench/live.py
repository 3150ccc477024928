"""The step-through's five steps computed in the page, before and after, against the framework's
floor, in Chromium, in one run.

Run: `.venv/bin/python -m bench.live [--before DIR]`. Serves, on free local ports:

- after: this checkout's step-through, whose five steps the page computes (lnlab.ui.live);
- before: the lesson as the server draws it. By default this checkout with the page's lesson
  refused (its modules' requests aborted, so the page falls back to the server's lesson, as it
  would if they failed); with `--before DIR`, the checkout in DIR (say, `git worktree add
  /tmp/before <commit>`), served as it is;
- floor: bench/minimal_next.py (Previous, Next and a counter) and bench/minimal_slider.py (one
  st.slider and a number computed from it), the framework's own cost of a click and a slider.

Everything is timed in the page, the same way for each: from the input event's timestamp (a
capturing listener records it) to the first frame after the answer is in the DOM (a watch
armed before the input checks on every DOM change; then requestAnimationFrame, then a message
posted from it, which runs once that frame has been produced). The component also leaves its own
performance measures ("lnlab:input-to-frame"), read for the drag. Server CPU comes from /proc
for the server process. Prints a table and appends it to bench/results/live.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections.abc import Awaitable
from contextlib import AsyncExitStack
from pathlib import Path

from playwright.async_api import Browser, Page, async_playwright

from bench.browser import LOAD_TIMEOUT_MS, VIEWPORT, Server, serve, settled
from bench.report import load_average, record
from bench.sessions import cpu_s
from harness import chromium
from harness.sessions import ROOT, Target
from harness.stats import percentile
from lnlab.teach.steps import STEPS
from tests.browser.conftest import SHOWN

STEP_PAGE = Target("step-through", "app.py", "/step_through", "st_text", str)
FLOOR_NEXT = Target("minimal: Previous, Next", "bench/minimal_next.py", "/", "mini_next", str)
FLOOR_SLIDER = Target("minimal: st.slider", "bench/minimal_slider.py", "/", "mini_slider", str)
CLICKS = 24  # Next to step 5 and Previous back, three times
KEYS = 16
SLIDES = 12  # epsilon or gamma changes
DRAG_FRAMES = 120  # two seconds at 60 frames a second
PACED_STEPS = 24  # one step, then a pause until it has reached the server (12 were within
# the noise of an idle server's CPU, 30 ms a second on some machines)
LOADS = 5
TIMEOUT_MS = 30_000
BLOCKED = "**/app/static/lnlab/**"  # the page's lesson modules: refused for "before"
TITLES = [s.title for s in STEPS]

# The page's clock for each measurement: the last input event's timestamp, and the first frame
# after `done` (a JS expression) holds.
HARNESS = """
window.__lnlabInput = null;
for (const type of ['click', 'keydown']) {
  window.addEventListener(type, (e) => { window.__lnlabInput = e.timeStamp; }, true);
}
window.__lnlabPainted = (done, timeoutMs) => new Promise((resolve, reject) => {
  const check = new Function(`return (${done});`);
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    observer.disconnect();
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => resolve(performance.now() - window.__lnlabInput);
      channel.port2.postMessage(null);
    });
  };
  const observer = new MutationObserver(() => { if (check()) finish(); });
  const all = {subtree: true, childList: true, characterData: true, attributes: true};
  observer.observe(document, all);
  if (check()) finish();
  setTimeout(() => {
    if (finished) return;
    observer.disconnect();
    reject(new Error('timed out: ' + done));
  }, timeoutMs);
});
"""


def _heading(k: int, live: bool) -> str:
    """JS: step k's heading is on screen, in the page's lesson or in Python's (h2; h3 before
    the headings were put in order)."""
    text = f"{k}. {TITLES[k - 1]}"
    if live:
        return f"document.querySelector('.lnlab-live-title')?.textContent === {text!r}"
    return (
        "[...document.querySelectorAll('h2, h3')].some(h => h.offsetParent !== null && "
        f"h.textContent.startsWith({text!r}))"
    )


def _metric(value: str) -> str:
    return (
        '[...document.querySelectorAll(\'[data-testid="stMetricValue"], '
        f".lnlab-live-metric-value{SHOWN}')]"
        f".some(m => m.textContent.trim() === {value!r})"
    )


async def _painted(page: Page, done: str) -> float:
    """Wait for `done` and the frame after it; ms from the last input."""
    return await page.evaluate(
        "([done, timeout]) => window.__lnlabPainted(done, timeout)", [done, TIMEOUT_MS]
    )


async def _timed(page: Page, act: Awaitable[None], done: str) -> float:
    """Ms from the input `act` makes to the frame that shows `done`: the watch starts in the
    page before the input, so the test process's own delays are not counted."""
    await page.evaluate(
        "([done, timeout]) => { window.__lnlabWait = window.__lnlabPainted(done, timeout); }",
        [done, TIMEOUT_MS],
    )
    await act
    return await page.evaluate("window.__lnlabWait")


async def _page(browser: Browser, server: Server, target: Target, refuse: bool) -> Page:
    context = await browser.new_context(viewport=VIEWPORT)
    await context.add_init_script(HARNESS)
    if refuse:
        await context.route(BLOCKED, lambda route: route.abort("failed"))
    page = await context.new_page()
    await page.goto(server.url + target.path, timeout=LOAD_TIMEOUT_MS)
    await settled(page)
    return page


async def _ready(page: Page, live: bool) -> None:
    """The lesson on its first step, drawn by the page (live) or by Python."""
    await page.wait_for_function(_heading(1, live), timeout=LOAD_TIMEOUT_MS)
    if live:  # and Python has heard that it works: today's lesson is no longer drawn
        await page.wait_for_function(
            "!document.querySelector('.st-key-lnlab_live_fallback')", timeout=LOAD_TIMEOUT_MS
        )
    await settled(page)


def _next_button(live: bool, forward: bool) -> str:
    if live:
        return f".lnlab-live button[data-go='{1 if forward else -1}']"
    return f".st-key-step_through_{'next' if forward else 'prev'} button"


async def _at(page: Page, live: bool) -> int:
    """The step on screen (1..5)."""
    selector = ".lnlab-live-title" if live else "h2, h3"
    titles = await page.locator(selector).all_inner_texts()
    return next(int(t.split(".")[0]) for t in titles if t[:1].isdigit())


def _walk(at: int, count: int) -> list[tuple[int, int]]:
    """(direction, step reached) for `count` moves from step `at`, bouncing between 1 and 5."""
    moves, step = [], 1 if at < len(TITLES) else -1
    for _ in range(count):
        step = -1 if at == len(TITLES) else 1 if at == 1 else step
        at += step
        moves.append((step, at))
    return moves


async def lesson_clicks(page: Page, live: bool, keys: bool, count: int) -> list[float]:
    """Next to step 5 and Previous back (or the arrow keys), `count` times: ms to painted."""
    times = []
    if keys:
        await page.evaluate("document.activeElement && document.activeElement.blur()")
    for step, at in _walk(await _at(page, live), count):
        if keys:
            act = page.keyboard.press("ArrowRight" if step > 0 else "ArrowLeft")
        else:
            act = page.locator(_next_button(live, step > 0)).click()
        times.append(await _timed(page, act, _heading(at, live)))
        if not live:
            await settled(page)
    await _idle(page, live)
    return times


async def floor_clicks(page: Page, count: int) -> list[float]:
    """The floor's Next and Previous between 1 and 5, as on the lesson: ms to painted."""
    times = []
    shown = await page.locator("[data-testid='stMetricValue']").inner_text()
    for step, at in _walk(int(shown), count):
        button = page.locator(f".st-key-mini_{'next' if step > 0 else 'prev'} button")
        times.append(await _timed(page, button.click(), _metric(str(at))))
        await settled(page)
    return times


async def _idle(page: Page, live: bool) -> None:
    """Wait until what the last steps sent has been run (the page says so: data-synced)."""
    if live:
        await page.wait_for_selector(".lnlab-live[data-synced='true']", timeout=TIMEOUT_MS)
    await settled(page)


# the formulas on screen by their LaTeX (lnlab.teach.mathml's data-tex; not the hidden ones the
# page's lesson keeps to take Python's MathML from)
FORMULAS_JS = (
    "[...document.querySelectorAll('.lnlab-math[data-tex]')].filter(a => a.closest('.lnlab-live, "
    f"[data-testid=\"stMain\"]') && !a.closest('[hidden]') && a.matches('{SHOWN}') "
    "&& a.dataset.tex.includes('\\\\sigma_\\\\epsilon = \\\\sqrt{'))"
    ".map(a => a.dataset.tex).join('|')"
)


async def epsilon_changes(page: Page, live: bool, count: int) -> list[float]:
    """On step 3 (sigma_eps): epsilon one stop up or down, `count` times: ms until the step's
    formula with the new epsilon is painted. Live: the slider's keys; before: the number
    box's + and - buttons."""
    times = []
    for i in range(count):
        before = await page.evaluate(FORMULAS_JS)
        up = i % 2 == 0
        if live:
            await page.locator(".lnlab-live-slider input").first.focus()
            act = page.keyboard.press("ArrowRight" if up else "ArrowLeft")
        else:
            name = "stNumberInputStepUp" if up else "stNumberInputStepDown"
            act = page.locator(f".st-key-st_eps [data-testid='{name}']").click()
        times.append(await _timed(page, act, f"({FORMULAS_JS}) !== {before!r}"))
        await _idle(page, live)
    return times


async def floor_slider(page: Page, count: int) -> list[float]:
    times = []
    thumb = page.get_by_role("slider").first
    for i in range(count):
        before = await page.locator("[data-testid='stMetricValue']").inner_text()
        await thumb.focus()
        act = page.keyboard.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
        value = "document.querySelector('[data-testid=\"stMetricValue\"]').textContent.trim()"
        times.append(await _timed(page, act, f"{value} !== {before.strip()!r}"))
        await settled(page)
    return times


async def drag(page: Page) -> dict[str, list[float]]:
    """gamma's slider moved once a frame for DRAG_FRAMES frames (input events, as a drag sends
    them): the work in each event, the frame intervals, and input to painted per event."""
    await page.evaluate("performance.clearMeasures('lnlab:input-to-frame')")
    out = await page.evaluate(
        """async (frames) => {
            const input = document.querySelectorAll('.lnlab-live-slider input')[1];
            const work = [], stamps = [];
            for (let i = 0; i < frames; i++) {
                stamps.push(await new Promise((r) => requestAnimationFrame(r)));
                input.value = String(-2 + 4 * (i % 40) / 39);
                const start = performance.now();
                input.dispatchEvent(new Event('input', {bubbles: true}));
                work.push(performance.now() - start);
            }
            await new Promise((r) => setTimeout(r, 100));
            const painted = performance.getEntriesByName('lnlab:input-to-frame')
                .map(e => e.duration);
            const gaps = stamps.slice(1).map((t, i) => t - stamps[i]);
            input.dispatchEvent(new Event('change', {bubbles: true}));
            return {work, gaps, painted};
        }""",
        DRAG_FRAMES,
    )
    return out


async def mouse_drag(page: Page) -> list[float]:
    """The same slider dragged with the mouse (CDP input events): the component's own
    input-to-frame measures."""
    await page.evaluate("performance.clearMeasures('lnlab:input-to-frame')")
    box = await page.locator(".lnlab-live-slider input").nth(2).bounding_box()
    assert box is not None
    y = box["y"] + box["height"] / 2
    await page.mouse.move(box["x"] + 2, y)
    await page.mouse.down()
    for i in range(60):
        await page.mouse.move(box["x"] + 2 + (box["width"] - 4) * i / 59, y)
    await page.mouse.up()
    await asyncio.sleep(0.2)
    return await page.evaluate(
        "performance.getEntriesByName('lnlab:input-to-frame').map(e => e.duration)"
    )


IDLE_S = 6.0  # how long a server's idle CPU is measured for, before each CPU phase


async def _idle_rate(server: Server, idle_s: float = IDLE_S) -> float:
    """The server's CPU seconds per second with nothing asked of it (its event loop's own
    housekeeping: 4-6 ms a second on the machine of the first runs, about 30 on another):
    subtracted from each phase's CPU, since the phases take different times."""
    start, t0 = cpu_s(server), time.monotonic()
    await asyncio.sleep(idle_s)
    return (cpu_s(server) - start) / (time.monotonic() - t0)


async def _cpu_ms(
    server: Server, work: Awaitable[object], count: int, idle_s: float = IDLE_S
) -> float:
    """Server CPU ms per one of `count` steps of `work`, its idle CPU meanwhile left out: the
    idle rate measured for `idle_s` before and after, averaged (it drifts, and a phase of few
    sends was left at 0 when the rate before it was high)."""
    before = await _idle_rate(server, idle_s)
    start, t0 = cpu_s(server), time.monotonic()
    await work
    used, took = cpu_s(server) - start, time.monotonic() - t0
    rate = (before + await _idle_rate(server, idle_s)) / 2
    return max(0.0, used - rate * took) / count * 1e3


async def cpu_per_step(page: Page, server: Server, live: bool, burst: int) -> float:
    """Server CPU ms per step over PACED_STEPS steps: `burst` steps in a row, then a pause until
    the server has them (live: the step route's answer to the post after the pause, no script
    run; before: each click's own run)."""

    async def steps() -> None:
        moves = _walk(await _at(page, live), PACED_STEPS)
        for group in range(PACED_STEPS // burst):
            for step, at in moves[group * burst : (group + 1) * burst]:
                await page.locator(_next_button(live, step > 0)).click()
                await _painted(page, _heading(at, live))
                if not live:
                    await settled(page)
            await _idle(page, live)

    return await _cpu_ms(server, steps(), PACED_STEPS)


async def floor_cpu(page: Page, server: Server) -> float:
    return await _cpu_ms(server, floor_clicks(page, PACED_STEPS), PACED_STEPS)


FIRST_LOAD_JS = """([lesson, drawn, timeout]) => new Promise((resolve, reject) => {
    const out = {};
    const check = () => {
        const now = performance.now();
        if (out.lesson === undefined && (new Function(`return (${lesson});`))()) out.lesson = now;
        if (out.drawn === undefined && (new Function(`return (${drawn});`))()) out.drawn = now;
        if (out.lesson !== undefined && out.drawn !== undefined) resolve(out);
        else requestAnimationFrame(check);
    };
    check();
    setTimeout(() => reject(new Error('no lesson')), timeout);
})"""


async def first_load(browser: Browser, server: Server, live: bool, refuse: bool) -> dict:
    """A new visitor, in ms from navigation: step 1's heading on screen (either lesson), and
    step 1 whole: the page's own lesson (live) or Python's with its chart drawn."""
    context = await browser.new_context(viewport=VIEWPORT)
    if refuse:
        await context.route(BLOCKED, lambda route: route.abort("failed"))
    page = await context.new_page()
    await page.goto(server.url + STEP_PAGE.path, timeout=LOAD_TIMEOUT_MS)
    either = f"({_heading(1, True)}) || ({_heading(1, False)})"
    # its figure: a picture (lnlab.ui.figures), or a Plotly chart where one is drawn
    chart = "!!document.querySelector('[data-testid=\"stMain\"] :is(img.lnlab-figure, .main-svg)')"
    own = "!!document.querySelector('.lnlab-live:not([hidden])')"
    whole = own if live else f"({_heading(1, False)}) && {chart}"
    shown = await page.evaluate(FIRST_LOAD_JS, [either, whole, LOAD_TIMEOUT_MS])
    await context.close()
    return shown


def _spread(samples: list[float]) -> str:
    if not samples:
        return "—"
    return f"{percentile(samples, 0.5):.0f} / {percentile(samples, 0.95):.0f}"


async def measure(before_root: Path | None) -> tuple[list[tuple[str, ...]], list[str]]:
    refuse_before = before_root is None
    rows: list[tuple[str, ...]] = [
        ("metric", "after: in the page", "before: the server", "floor", "note")
    ]
    notes: list[str] = []
    async with async_playwright() as pw, AsyncExitStack() as stack:
        browser = await pw.chromium.launch(
            executable_path=chromium.EXECUTABLE, headless=True, args=chromium.ARGS
        )
        stack.push_async_callback(browser.close)
        after = await stack.enter_async_context(serve(STEP_PAGE))
        before = await stack.enter_async_context(serve(STEP_PAGE, root=before_root or ROOT))
        floor_next = await stack.enter_async_context(serve(FLOOR_NEXT))
        floor_slider_server = await stack.enter_async_context(serve(FLOOR_SLIDER))

        # first loads, alternating, each in a new context on a server that has served one
        warm = [
            await _page(browser, s, STEP_PAGE, r)
            for s, r in ((after, False), (before, refuse_before))
        ]
        for p in warm:
            await p.context.close()
        loads: dict[str, list[dict]] = {"after": [], "before": []}
        for _ in range(LOADS):
            loads["after"].append(await first_load(browser, after, True, False))
            loads["before"].append(await first_load(browser, before, False, refuse_before))

        live_page = await _page(browser, after, STEP_PAGE, False)
        await _ready(live_page, True)
        server_page = await _page(browser, before, STEP_PAGE, refuse_before)
        await _ready(server_page, False)
        floor_page = await _page(browser, floor_next, FLOOR_NEXT, False)
        slider_page = await _page(browser, floor_slider_server, FLOOR_SLIDER, False)

        # warm-up: one pass each
        await lesson_clicks(live_page, True, False, 8)
        await lesson_clicks(server_page, False, False, 8)
        await floor_clicks(floor_page, 8)

        next_after = await lesson_clicks(live_page, True, False, CLICKS)
        next_before = await lesson_clicks(server_page, False, False, CLICKS)
        next_floor = await floor_clicks(floor_page, CLICKS)
        keys_after = await lesson_clicks(live_page, True, True, KEYS)
        keys_before = await lesson_clicks(server_page, False, True, KEYS)

        cpu_after_paced = await cpu_per_step(live_page, after, True, 1)
        cpu_after_burst = await cpu_per_step(live_page, after, True, 4)
        cpu_before = await cpu_per_step(server_page, before, False, 1)
        cpu_floor = await floor_cpu(floor_page, floor_next)

        for page, live in ((live_page, True), (server_page, False)):  # to step 3: sigma_eps
            while (at := await _at(page, live)) != 3:
                await page.locator(_next_button(live, at < 3)).click()
                await _painted(page, _heading(at + (1 if at < 3 else -1), live))
                await settled(page)
            await _idle(page, live)
        eps_after = await epsilon_changes(live_page, True, SLIDES)
        await _idle(live_page, True)
        eps_before = await epsilon_changes(server_page, False, SLIDES)
        eps_floor = await floor_slider(slider_page, SLIDES)

        dragged = await drag(live_page)
        mouse = await mouse_drag(live_page)

    def add(metric: str, a: str, b: str, f: str, note: str = "") -> None:
        rows.append((metric, a, b, f, note))

    ratio = percentile(next_before, 0.5) / percentile(next_floor, 0.5)
    add(
        "Next/Previous click to painted, p50 / p95 (ms)",
        _spread(next_after),
        _spread(next_before),
        _spread(next_floor),
        f"{CLICKS} clicks; before is {ratio:.1f}x the floor, after "
        f"{percentile(next_after, 0.5) / percentile(next_floor, 0.5):.2f}x",
    )
    add(
        "arrow key to painted, p50 / p95 (ms)",
        _spread(keys_after),
        _spread(keys_before),
        "—",
        f"{KEYS} keys",
    )
    add(
        "epsilon one stop to painted, p50 / p95 (ms)",
        _spread(eps_after),
        _spread(eps_before),
        _spread(eps_floor),
        "after: the slider's keys; before: the number box's +/-; floor: st.slider's keys",
    )
    gaps, work, painted = dragged["gaps"], dragged["work"], dragged["painted"]
    slow = sum(g > 1.5 * 1000 / 60 for g in gaps)
    add(
        f"drag, {DRAG_FRAMES} frames: frame interval p50 / p95 (ms)",
        _spread(gaps),
        "—",
        "—",
        f"{slow} of {len(gaps)} frames over 25 ms; work per input event p50 "
        f"{statistics.median(work):.1f} ms, p95 {percentile(work, 0.95):.1f} ms",
    )
    add(
        "drag: input to painted, p50 / p95 (ms)",
        _spread(painted),
        "—",
        "—",
        "one input event a frame, sent from a frame callback: its answer shows a frame later",
    )
    add("mouse drag (60 moves): input to painted, p50 / p95 (ms)", _spread(mouse), "—", "—", "")
    add(
        "server CPU per step (ms)",
        f"{cpu_after_paced:.1f}; {cpu_after_burst:.1f} in runs of 4",
        f"{cpu_before:.1f}",
        f"{cpu_floor:.1f}",
        f"{PACED_STEPS} steps, each followed by a pause until the server has it (after: one "
        "post to the step route per pause, no script run); the server's idle CPU over the same "
        "time left out",
    )

    def load(which: str, part: str) -> str:
        return f"{statistics.median(x[part] for x in loads[which]):.0f}"

    add(
        "first load: step 1's heading / step 1 whole, p50 (ms)",
        f"{load('after', 'lesson')} / {load('after', 'drawn')}",
        f"{load('before', 'lesson')} / {load('before', 'drawn')}",
        "—",
        f"{LOADS} new visitors each, alternating, warm servers; whole: after, the page's lesson "
        "on screen; before, Python's with its chart drawn",
    )
    if before_root:
        notes.append(f"before: the checkout at {before_root}, served as it is.")
    else:
        notes.append(
            "before: this checkout with the page's lesson modules refused, so that it falls back "
            "to the server's lesson (its first load is then not today's: give --before DIR)."
        )
    return rows, notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="a checkout to serve as 'before'")
    args = parser.parse_args()
    load_before = os.getloadavg()
    start = time.monotonic()
    rows, notes = asyncio.run(measure(args.before))
    notes.append(
        f"{load_average(load_before, os.getloadavg())} (the browser and the servers share them). "
        f"Total {time.monotonic() - start:.0f} s. Chromium {chromium.EXECUTABLE}, headless."
    )
    record(
        "live", "The step-through computed in the page: before and after", rows, "\n\n".join(notes)
    )


if __name__ == "__main__":
    main()
