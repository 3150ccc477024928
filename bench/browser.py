"""The app in a real browser: cold start, edit-to-update, many sessions, server memory.

Run: `.venv/bin/python -m bench.browser`. Starts its own `streamlit run` servers (the app and
bench/minimal_app.py, the framework's floor) on free local ports and drives Debian's Chromium
with playwright. Every wait is on a signal the page gives (health endpoint, the app root's
connection and script-run state, the expected number on screen), bounded by a timeout.
Prints a table and appends it to bench/results/browser.md.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Coroutine, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from playwright.async_api import Browser, Page, async_playwright
from playwright.async_api import Error as PlaywrightError

from bench.report import load_average, record
from harness import chromium
from harness.sessions import LNLAB, ROOT, Target
from harness.stats import percentile
from lnlab.core.numbers import fmt
from lnlab.serving.cluster import free_port, healthy
from tests.browser.conftest import SHOWN

VIEWPORT = {"width": 1400, "height": 1000}
COLD_STARTS = 3
EDITS = 20
SESSION_EDITS = 5
SESSION_COUNTS = (10, 30)
SERVER_START_S = 90.0
LOAD_TIMEOUT_MS = 90_000
EDIT_TIMEOUT_MS = 30_000
SESSIONS_BUDGET_S = 150.0  # each many-sessions phase, loading included
COLD_START_BUDGET_S = 60.0
TOTAL_S = 320.0  # every phase together, so that the run ends within about 6 minutes

# The app root is connected and no script run is under way.
SETTLED_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return !!app && app.getAttribute('data-test-connection-state') === 'CONNECTED'
        && app.getAttribute('data-test-script-state') === 'notRunning';
}"""
# The first metric on the page (step 1's mean, drawn by Streamlit or by the page's own lesson,
# lnlab.ui.live; the minimal app's sum) shows `expected`.
METRIC_JS = f"""(expected) => {{
    const value = document.querySelector(
        '[data-testid="stMetricValue"], .lnlab-live-metric-value{SHOWN}');
    return !!value && value.textContent.trim() === expected;
}}"""
TITLE = '[data-testid="stMain"] h1'
NEXT_FRAME_JS = "() => new Promise(done => requestAnimationFrame(() => done()))"


MINIMAL = Target("minimal", "bench/minimal_app.py", "/", "mini_text", lambda k: fmt(10 + k))


@dataclass
class Server:
    process: subprocess.Popen
    url: str

    def rss_mib(self) -> float:
        """Resident memory of the streamlit process."""
        return rss_of(self.process.pid)


def rss_of(pid: int) -> float:
    """Resident memory of process `pid` (VmRSS), MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def run_command(script: str, launcher: bool = True) -> list[str]:
    """How to serve `script` with `streamlit run`: the app (app.py's st.App, which imports torch
    and the pages' modules before the first visitor) or, with `launcher` False, its home page
    alone as a plain Streamlit script (no lnlab server: no routes, no warm-up)."""
    if script == LNLAB.script and not launcher:
        script = "home.py"
    return [sys.executable, "-m", "streamlit", "run", script]


@asynccontextmanager
async def serve(
    target: Target,
    root: Path = ROOT,
    launcher: bool = True,
    options: Sequence[str] = (),
) -> AsyncIterator[Server]:
    """Serve the target from checkout `root` on a free port until healthy (see run_command),
    with Streamlit's command-line `options` ("--runner.fastReruns", "true"); stopped on exit."""
    port = free_port()
    command = [*run_command(target.script, launcher), *options]
    command += ["--server.port", str(port), "--server.headless", "true"]
    command += ["--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, cwd=root, stdout=log, stderr=subprocess.STDOUT)
        server = Server(process, f"http://127.0.0.1:{port}")
        try:
            deadline = time.monotonic() + SERVER_START_S
            while not await asyncio.to_thread(healthy, server.url):
                if process.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    tail = log.read().decode(errors="replace")[-2000:]
                    raise RuntimeError(f"{target.script} did not start:\n{tail}")
                await asyncio.sleep(0.05)
            yield server
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def settled(page: Page, timeout_ms: float = LOAD_TIMEOUT_MS) -> None:
    await page.wait_for_function(SETTLED_JS, timeout=timeout_ms)


async def open_page(page: Page, server: Server, target: Target) -> None:
    """Open the target's page and wait until it has rendered (settled, title visible)."""
    await page.goto(server.url + target.path, timeout=LOAD_TIMEOUT_MS)
    await settled(page)
    await page.locator(TITLE).first.wait_for(state="visible", timeout=LOAD_TIMEOUT_MS)


async def edit(page: Page, target: Target, k: int) -> tuple[float, float]:
    """Type "1, 2, 3, 4, k", apply it with Ctrl+Enter. Milliseconds until the new number is on
    screen, and until the run has finished and the next frame is drawn (the whole page)."""
    box = page.locator(f'[class*="st-key-{target.text_key}"] textarea')
    await box.fill(f"1, 2, 3, 4, {k}")
    start = time.perf_counter()
    await box.press("Control+Enter")
    await page.wait_for_function(METRIC_JS, arg=target.shown(k), timeout=EDIT_TIMEOUT_MS)
    number = (time.perf_counter() - start) * 1e3
    await settled(page, EDIT_TIMEOUT_MS)  # the rest of the run, so edits do not overlap
    await page.evaluate(NEXT_FRAME_JS)
    return number, (time.perf_counter() - start) * 1e3


# --------------------------------------------------------------------------- the phases


async def cold_start(browser: Browser, target: Target, keep: list) -> float:
    """Seconds from the server process's start to its page rendered in a fresh context.

    With `keep` given, the server stays up (appended as (exit stack, server, page))."""
    context = await browser.new_context(viewport=VIEWPORT)
    start = time.perf_counter()
    manager = serve(target)
    server = await manager.__aenter__()
    try:
        page = await context.new_page()
        await open_page(page, server, target)
        elapsed = time.perf_counter() - start
    except BaseException:
        await manager.__aexit__(*sys.exc_info())
        await context.close()
        raise
    keep.append((manager, server, page, context))
    return elapsed


@dataclass
class SessionRun:
    """What a many-sessions phase measured so far (kept when its budget runs out)."""

    load_s: float | None = None  # every context's page rendered
    rss_mib: float | None = None  # with every context open
    latencies: list[float] = field(default_factory=list)
    failed: int = 0


async def sessions(browser: Browser, server: Server, count: int, run: SessionRun) -> None:
    """`count` contexts open the step-through page at once, then each makes SESSION_EDITS
    edits at the same time; fills `run` as it goes."""
    contexts = [await browser.new_context(viewport=VIEWPORT) for _ in range(count)]
    try:
        pages = [await c.new_page() for c in contexts]
        start = time.perf_counter()
        await asyncio.gather(*(open_page(p, server, LNLAB) for p in pages))
        run.load_s = time.perf_counter() - start
        run.rss_mib = server.rss_mib()

        async def work(i: int, page: Page) -> None:
            for j in range(SESSION_EDITS):
                try:
                    run.latencies.append((await edit(page, LNLAB, 1000 * (i + 1) + j))[0])
                except PlaywrightError:
                    run.failed += 1

        await asyncio.gather(*(work(i, p) for i, p in enumerate(pages)))
    finally:
        for c in contexts:
            await c.close()


async def measure() -> tuple[list[tuple[str, ...]], list[str]]:
    rows: list[tuple[str, ...]] = [("metric", "lnlab", "minimal app", "ratio / notes")]
    notes: list[str] = []

    def add(metric: str, ours: float | None, floor: float | None, unit: str, extra: str = ""):
        def show(v: float | None) -> str:
            return "—" if v is None else f"{v:.0f} {unit}" if v >= 100 else f"{v:.2f} {unit}"

        ratio = f"{ours / floor:.2f}x" if ours is not None and floor else ""
        rows.append((metric, show(ours), show(floor), "; ".join(x for x in (ratio, extra) if x)))

    deadline = time.monotonic() + TOTAL_S

    async def phase(name: str, work: Coroutine, budget_s: float):
        """Run one phase within its budget and the run's; on failure note why, return None."""
        budget_s = min(budget_s, deadline - time.monotonic())
        if budget_s < 5:
            work.close()
            notes.append(f"{name} skipped: the run's {TOTAL_S:.0f} s were spent")
            return None
        try:
            return await asyncio.wait_for(work, budget_s)
        except Exception as err:  # a benchmark reports a failed phase, it does not crash
            notes.append(f"{name} failed: {type(err).__name__}: {str(err)[:300]}")
            return None

    kept: list = []
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=chromium.EXECUTABLE, headless=True, args=chromium.ARGS
        )
        try:
            # 1. Cold start, alternating the apps; the last server of each stays up.
            starts: dict[str, list[float]] = {LNLAB.name: [], MINIMAL.name: []}
            for rep in range(COLD_STARTS):
                for target in (LNLAB, MINIMAL):
                    holder: list = []
                    took = await phase(
                        f"cold start {target.name}",
                        cold_start(browser, target, holder),
                        COLD_START_BUDGET_S,
                    )
                    if took is not None:
                        starts[target.name].append(took)
                    if holder and rep == COLD_STARTS - 1:
                        kept.append((target, *holder[0]))
                    elif holder:
                        manager, _, _, context = holder[0]
                        await context.close()
                        await manager.__aexit__(None, None, None)
            cold = {k: statistics.median(v) if v else None for k, v in starts.items()}
            add(
                "cold start to first render (s, median of 3)",
                cold["lnlab"],
                cold["minimal"],
                "s",
                "process start to /step_through rendered",
            )
            live = {t.name: (server, page) for t, _, server, page, _ in kept}

            # 4a. Idle memory after the first load.
            rss = {name: server.rss_mib() for name, (server, _) in live.items()}
            add(
                "server RSS idle after first load (MiB)",
                rss.get("lnlab"),
                rss.get("minimal"),
                "MiB",
            )

            # 2. Edit-to-update, one session each.
            edit_ms: dict[str, list[tuple[float, float]]] = {}
            for target in (LNLAB, MINIMAL):
                if target.name not in live:
                    continue
                page = live[target.name][1]

                async def edits(page: Page = page, target: Target = target) -> list:
                    return [await edit(page, target, 100 + i) for i in range(EDITS)]

                edit_ms[target.name] = await phase(f"edits {target.name}", edits(), 90) or []
            for label, q, which, note in (
                ("median", 0.5, 0, "target: within 1.5x"),
                ("p95", 0.95, 0, ""),
                ("to run finished, median", 0.5, 1, "the whole page redrawn"),
            ):
                values = {
                    name: percentile([t[which] for t in v], q) if v else None
                    for name, v in edit_ms.items()
                }
                add(
                    f"edit-to-update {label} (ms, {EDITS} edits)",
                    values.get("lnlab"),
                    values.get("minimal"),
                    "ms",
                    note,
                )

            # 3 and 4b. Many sessions on the step-through page.
            if "lnlab" in live:
                server = live["lnlab"][0]
                for count in SESSION_COUNTS:
                    run = SessionRun()
                    await phase(
                        f"{count} sessions",
                        sessions(browser, server, count, run),
                        SESSIONS_BUDGET_S,
                    )
                    done, planned = len(run.latencies), count * SESSION_EDITS
                    cut = planned - done - run.failed  # not begun when the phase's budget ran out
                    ok = f"{done}/{planned} edits done ({run.failed} timed out, {cut} cut off)"
                    loaded = (
                        "" if run.load_s is None else f"all pages rendered in {run.load_s:.0f} s"
                    )
                    for label, q in (("p50", 0.5), ("p95", 0.95)):
                        value = percentile(run.latencies, q) if done else None
                        extra = ok if q == 0.5 else ("target: under 1000 ms" if count == 30 else "")
                        add(
                            f"{count} sessions edit-to-update {label} (ms)",
                            value,
                            None,
                            "ms",
                            extra,
                        )
                    add(
                        f"server RSS with {count} sessions open (MiB)",
                        run.rss_mib,
                        None,
                        "MiB",
                        loaded,
                    )
        finally:
            for _, manager, _, _, context in kept:
                await context.close()
                await manager.__aexit__(None, None, None)
            await browser.close()
    return rows, notes


def main() -> None:
    load_before = os.getloadavg()
    start = time.monotonic()
    rows, notes = asyncio.run(measure())
    load_after = os.getloadavg()
    notes.append(
        f"{load_average(load_before, load_after)} "
        "(shared with other work; the browser runs on the same cores). "
        f"Total {time.monotonic() - start:.0f} s. Edit = type '1, 2, 3, 4, k' in the text "
        "box, Ctrl+Enter, until the new mean (sum) is on screen."
    )
    record(
        "browser",
        "In the browser: cold start, edit-to-update, sessions, memory",
        rows,
        "\n\n".join(notes),
    )


if __name__ == "__main__":
    main()
