"""Real-browser fixtures: the app on a free local port, started as `make run` starts it
(`streamlit run app.py`), driven by headless Chromium.

Every wait here is on a signal the app gives (the health endpoint, then the app root's
connection and script-run state), bounded by a deadline; none is a fixed sleep.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.async_api import BrowserContext as AsyncBrowserContext
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from harness import chromium
from lnlab import ui
from lnlab.classroom.store import URL_ENV
from lnlab.serving.cluster import free_port, healthy

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = ROOT / "test-output"
VIEWPORT = {"width": 1400, "height": 1000}
SERVER_START_TIMEOUT_S = 60.0
APP_TIMEOUT_MS = 60_000
CHART_TIMEOUT_MS = 30_000
# What an `expect` waits for before it fails, where the test names no time: Playwright's 5 s
# is a script run or two on two cores busy with the suite, Chromium and the server.
EXPECT_TIMEOUT_MS = 20_000
expect.set_options(timeout=EXPECT_TIMEOUT_MS)

# Selectors, checked against what Streamlit 1.67 renders.
EXCEPTION = '[data-testid="stException"]'
ERROR_ALERT = '[data-testid="stAlertContentError"]'  # st.error, and inside every exception
PROBLEM_BOXES = f"{EXCEPTION}, {ERROR_ALERT}"
PLOTLY_CHART = '[data-testid="stPlotlyChart"]'
FIGURE = "img.lnlab-figure"  # a lesson's chart as drawn: lnlab.ui.svg.picture
PLOTLY_SVG = ".main-svg"
SIDEBAR = '[data-testid="stSidebar"]'
MAIN = '[data-testid="stMain"]'
LIVE = ".lnlab-live"  # a lesson drawn in the page (lnlab.ui.live)
LIVE_FALLBACK = ".st-key-lnlab_live_fallback"  # Python's lesson, under it until it draws
LIVE_HEADING = f"{LIVE} .lnlab-live-title"
SHOWN = ":not(.lnlab-live-kept, .lnlab-live-kept *)"  # not a view kept hidden for later
TITLE = f"{MAIN} h1"
QUESTION = '[class*="st-key-question_"]'  # a question to answer before the result (ui.quiz)
# a student's phone as the page draws it (static/lnlab/phone.mjs): its options and its score
PHONE_OPTION = ".lnlab-phone-option"
PHONE_SCORE = ".lnlab-phone-score-value"

# The app root says whether the websocket is up and whether a script run is under way:
# data-test-connection-state is CONNECTED once connected, and data-test-script-state goes
# initial -> running -> notRunning (rerunRequested / stopRequested in between on a rerun,
# compilationError when the script cannot even be compiled). Charts, tables and other lazily
# loaded elements stand as [data-testid="stSkeleton"] until their code has arrived, which can
# be seconds after the run has finished.
APP_SETTLED_JS = """(drawn) => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app) return null;
    const connection = app.getAttribute('data-test-connection-state');
    const script = app.getAttribute('data-test-script-state');
    if (connection === 'DISCONNECTED_FOREVER') return {connection, script};
    if (connection !== 'CONNECTED') return null;
    if (script === 'compilationError') return {connection, script};
    if (script !== 'notRunning') return null;
    if (drawn && document.querySelector('[data-testid="stSkeleton"]')) return null;
    // and shown: lnlab's assist script hides the content until the first run is drawn
    // (lnlab-loading), and hidden text is neither read (innerText) nor clickable
    if (drawn && document.documentElement.classList.contains('lnlab-loading')) return null;
    return {connection, script};
}"""
SETTLED = {"connection": "CONNECTED", "script": "notRunning"}
# Poll on a timer, not on animation frames: with many pages open, software compositing falls
# behind and a page can go a minute without a frame while its app is long settled.
POLL_MS = 100

# Counts the script runs whose end the page has seen, for waiting on the rerun an action
# started. The DOM cannot tell: when the browser is busy the frontend handles a whole run's
# messages in one batch, and data-test-script-state never leaves "notRunning". So this listens
# to the app's own websocket for the server's ForwardMsg script_finished (its field number is
# read from Streamlit's protobuf descriptor) and counts the run two animation frames later,
# once the frontend has drawn what that message changed.
_SCRIPT_FINISHED_FIELD = ForwardMsg.DESCRIPTOR.fields_by_name["script_finished"].number
RUN_COUNTER_SCRIPT = """(() => {
    const SCRIPT_FINISHED = __SCRIPT_FINISHED__;
    window.__lnlabRunsFinished = 0;
    function varint(bytes, at) {
        let value = 0, shift = 0, byte;
        do {
            byte = bytes[at.i++];
            value += (byte & 0x7f) * 2 ** shift;
            shift += 7;
        } while (byte & 0x80);
        return value;
    }
    function isScriptFinished(bytes) {  // top-level fields of one ForwardMsg
        const at = {i: 0};
        while (at.i < bytes.length) {
            const tag = varint(bytes, at), field = Math.floor(tag / 8), wire = tag % 8;
            if (field === SCRIPT_FINISHED && wire === 0) return true;
            if (wire === 0) varint(bytes, at);
            else if (wire === 2) {
                const length = varint(bytes, at);
                at.i += length;
            }
            else if (wire === 1) at.i += 8;
            else if (wire === 5) at.i += 4;
            else return false;
        }
        return false;
    }
    const NativeWebSocket = window.WebSocket;
    // what a wait that timed out reports (expect_rerun): did the page ask, did the server answer
    window.__lnlabSocket = {sent: 0, received: 0, lastSent: null, lastReceived: null};
    window.WebSocket = class extends NativeWebSocket {
        send(data) {
            window.__lnlabSocket.sent += 1;
            window.__lnlabSocket.lastSent = Math.round(performance.now());
            return super.send(data);
        }
        constructor(...args) {
            super(...args);
            this.addEventListener('message', (event) => {
                window.__lnlabSocket.received += 1;
                window.__lnlabSocket.lastReceived = Math.round(performance.now());
                if (!(event.data instanceof ArrayBuffer)) return;
                if (!isScriptFinished(new Uint8Array(event.data))) return;
                requestAnimationFrame(() => requestAnimationFrame(() => {
                    window.__lnlabRunsFinished += 1;
                }));
            });
        }
    };
})();""".replace("__SCRIPT_FINISHED__", str(_SCRIPT_FINISHED_FIELD))


# Adds up the page's layout shifts as they happen (Chromium's Layout Instability API, which
# Lighthouse's CLS reads), leaving out those within 0.5 s of an input: the page's CLS so far.
LAYOUT_SHIFT_SCRIPT = """(() => {
    window.__lnlabLayoutShift = 0;
    new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) {
            if (!entry.hadRecentInput) window.__lnlabLayoutShift += entry.value;
        }
    }).observe({type: 'layout-shift', buffered: true});
})();"""


@dataclass(frozen=True)
class AppPage:
    """A page of the app as the browser addresses it."""

    name: str  # screenshot name and test id
    path: str  # URL path: "/" for home, else "/<file stem>"
    title: str  # its title in the navigation
    lesson: bool = False  # a lesson with slides (presenter mode)

    @property
    def document_title(self) -> re.Pattern[str]:
        """The browser tab's title while this page is shown ("<title> · lnlab")."""
        return re.compile(rf"^{re.escape(self.title)}\b")


HOME = AppPage("home", "/", "Home")
APP_PAGES: tuple[AppPage, ...] = (
    HOME,
    *(AppPage(Path(p.path).stem, f"/{Path(p.path).stem}", p.title, p.lesson) for p in ui.PAGES),
)


# --- Chromium -------------------------------------------------------------------------------


def require_chromium() -> str:
    """The Chromium executable; without one, skip locally and fail in CI."""
    path = chromium.EXECUTABLE
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    found = shutil.which(path)
    if found:
        return found
    reason = (
        f"no Chromium at {path!r} (run scripts/ensure-chromium or set LNLAB_CHROMIUM); "
        "the browser tests need it"
    )
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def launch_options() -> dict:
    """Keyword arguments for chromium.launch, shared by the sync and async tests."""
    return {"executable_path": require_chromium(), "headless": True, "args": chromium.ARGS}


# --- The Streamlit server -------------------------------------------------------------------


@dataclass
class StreamlitServer:
    """A server of the app (app.py, started as `start_server` says) and where it listens."""

    process: subprocess.Popen
    port: int
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def page_url(self, app_page: AppPage) -> str:
        return self.url + app_page.path

    def page_url_pattern(self, app_page: AppPage) -> re.Pattern[str]:
        """The page's URL with any query (pages keep their state in the query string)."""
        return re.compile(rf"^{re.escape(self.page_url(app_page))}(\?.*)?$")

    def log(self) -> str:
        """Everything the server printed so far."""
        return self.log_path.read_text(errors="replace")

    def log_tail(self, chars: int = 4000) -> str:
        return self.log()[-chars:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


# How the app is started: every way serves app.py's st.App (lnlab.ui.server)
LAUNCHERS = ("make run", "streamlit run", "uvicorn")


def launch_command(how: str, port: int) -> list[str]:
    """The command that serves the app on `port`: as `make run` does (the venv's streamlit,
    the port flag), as a Streamlit user types it (`streamlit run app.py`, nothing else but the
    port), or as an ASGI server serves it (`uvicorn app:app`)."""
    if how == "make run":
        return [*STREAMLIT, "--server.address", "127.0.0.1", "--server.port", str(port)]
    if how == "streamlit run":
        return [*STREAMLIT, "--server.port", str(port)]
    if how == "uvicorn":
        uvicorn = [sys.executable, "-m", "uvicorn", "app:app", "--lifespan", "on"]
        return [*uvicorn, "--host", "127.0.0.1", "--port", str(port)]
    raise ValueError(how)


STREAMLIT = [sys.executable, "-m", "streamlit", "run", "app.py"]


def start_server(
    log_dir: Path,
    port: int | None = None,
    env: dict[str, str] | None = None,
    how: str = "make run",
) -> StreamlitServer:
    """Start the app on `port` (a free one by default) the way `how` says (LAUNCHERS), with
    `env` added to its environment, and return once its health endpoint answers "ok". The same
    folder and port again: the same class database (a restart). No --browser.gatherUsageStats:
    the project's .streamlit/config.toml turns it off (on, every page would ask
    data.streamlit.io), and test_offline.py checks that it does."""
    port = port or free_port()
    log_path = log_dir / f"streamlit-{port}.log"
    command = launch_command(how, port)
    # the live classes go to a database of this server's own, not the repository's
    env = os.environ | {URL_ENV: f"sqlite:///{log_dir / f'classes-{port}.db'}"} | (env or {})
    with log_path.open("ab") as log:  # a restart adds to it
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    server = StreamlitServer(process, port, log_path)
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with {process.returncode}:\n{server.log_tail()}")
        if healthy(server.url):
            return server
        time.sleep(0.1)  # polling interval of a bounded loop, not a wait for readiness
    server.stop()
    raise RuntimeError(
        f"streamlit was not healthy after {SERVER_START_TIMEOUT_S:.0f}s:\n{server.log_tail()}"
    )


STACKS_WAIT_S = 5.0  # how long a failed test's report waits for the server's stacks


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """A failed test's report carries every thread's stack in the app's server (SIGUSR1,
    lnlab.ui.server) and the end of its log: what a run that never ended was waiting on."""
    outcome = yield
    report = outcome.get_result()
    server = getattr(item, "funcargs", {}).get("streamlit_server")
    if report.when != "call" or not report.failed or not isinstance(server, StreamlitServer):
        return
    if server.process.poll() is not None:
        return
    before = len(server.log())
    server.process.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + STACKS_WAIT_S
    while "Thread 0x" not in server.log()[before:] and time.monotonic() < deadline:
        time.sleep(0.1)  # a bounded wait for diagnostics; the test has already failed
    report.sections.append(("the app server's threads and log", server.log_tail(20000)))


@pytest.fixture(scope="session")
def streamlit_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StreamlitServer]:
    """One server shared by the tests that do not need a cold one."""
    require_chromium()  # skip before paying for a server nobody can visit
    server = start_server(tmp_path_factory.mktemp("streamlit"))
    yield server
    server.stop()


@pytest.fixture
def fresh_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[[], StreamlitServer]]:
    """A factory of new servers (nothing cached, no session yet; the launcher has imported the
    pages' modules, as in `make run`), stopped afterwards."""
    require_chromium()
    servers: list[StreamlitServer] = []

    def start() -> StreamlitServer:
        server = start_server(tmp_path_factory.mktemp("streamlit-fresh"))
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


# --- The browser ----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the synchronous tests."""
    options = launch_options()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(**options)
        yield launched
        launched.close()


# --- Nothing leaves the machine ---------------------------------------------------------------

# Schemes that never leave the browser.
LOCAL_SCHEMES = {"data", "blob", "about", "chrome", "chrome-extension", "devtools"}
# The servers of these tests (the app, a cluster's proxy) all listen on this machine.
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
OUTSIDE: list[str] = []  # "<how>: <url>" of this test's requests to other hosts, each once


def is_outside(url: str) -> bool:
    """Whether the browser would send this to a host other than this machine."""
    parts = urlsplit(url)
    return parts.scheme not in LOCAL_SCHEMES and parts.hostname not in LOOPBACK


def note_if_outside(how: str, url: str) -> None:
    entry = f"{how}: {url}"
    if is_outside(url) and entry not in OUTSIDE:
        OUTSIDE.append(entry)


def watch_requests(context: BrowserContext | AsyncBrowserContext) -> None:
    """Note every request and websocket of the context's pages that goes to another host."""
    context.on("request", lambda r: note_if_outside(f"request ({r.resource_type})", r.url))
    context.on("page", lambda p: p.on("websocket", lambda ws: note_if_outside("websocket", ws.url)))


@pytest.fixture(autouse=True)
def nothing_leaves_the_machine() -> Iterator[None]:
    """Every page of every browser test asks only this machine for anything (see
    test_offline.py): its requests are watched from the first to the last."""
    OUTSIDE.clear()
    yield
    assert not OUTSIDE, f"pages asked other hosts for {len(OUTSIDE)} thing(s):\n" + "\n".join(
        OUTSIDE
    )


# Every <link> whose href the browser may load by itself (icons, preloads, styles, manifest).
LINK_HREFS_JS = """() => Array.from(document.querySelectorAll('link[href]'))
    .map((link) => [link.rel, link.href])"""


def assert_links_stay_local(page: Page) -> None:
    """No <link> of the page points at another host, fetched yet or not."""
    links = page.evaluate(LINK_HREFS_JS)
    outside = [f'<link rel="{rel}">: {href}' for rel, href in links if is_outside(href)]
    assert not outside, f"{page.url} links to other hosts:\n" + "\n".join(outside)


def new_app_page(
    browser: Browser, viewport: dict[str, int] | None = None, *, dark: bool = False
) -> Page:
    """A page in a new browser context: its own cookies, so its own Streamlit session; its
    requests are watched (`nothing_leaves_the_machine`); `dark`: the system asks for a dark
    theme, which Streamlit follows.

    Close it with `page.context.close()`.
    """
    context = browser.new_context(
        viewport=viewport or VIEWPORT, color_scheme="dark" if dark else "light"
    )
    watch_requests(context)
    context.add_init_script(RUN_COUNTER_SCRIPT)
    context.add_init_script(LAYOUT_SHIFT_SCRIPT)
    context.set_default_timeout(APP_TIMEOUT_MS)
    return context.new_page()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh page in its own session."""
    page = new_app_page(browser)
    yield page
    page.context.close()


def wait_for_app(page: Page, timeout_ms: int = APP_TIMEOUT_MS, *, drawn: bool = True) -> None:
    """Wait until the app is connected, its script run has finished and (`drawn`) every element
    is on screen: none still stands as a loading skeleton (charts and tables load their code
    after the run) and the page is shown (lnlab/ui/assets/assist.js)."""
    state = page.wait_for_function(
        APP_SETTLED_JS, arg=drawn, polling=POLL_MS, timeout=timeout_ms
    ).json_value()
    assert state == SETTLED, f"the app did not settle: {state}"


def layout_shift(page: Page) -> float:
    """The page's cumulative layout shift so far (needs LAYOUT_SHIFT_SCRIPT, see new_app_page)."""
    return page.evaluate("window.__lnlabLayoutShift")


def runs_finished(page: Page) -> int:
    """How many script runs this page has seen end (needs RUN_COUNTER_SCRIPT, see new_app_page)."""
    return page.evaluate("window.__lnlabRunsFinished")


@contextmanager
def expect_rerun(page: Page, timeout_ms: int = APP_TIMEOUT_MS) -> Iterator[None]:
    """Wrap an action that reruns the script; return once that rerun has ended and is drawn."""
    before = runs_finished(page)
    yield
    try:
        page.wait_for_function(
            "n => window.__lnlabRunsFinished > n", arg=before, polling=POLL_MS, timeout=timeout_ms
        )
    except PlaywrightTimeoutError as timed_out:
        raise AssertionError(f"no run ended: {page.evaluate(PAGE_STATE_JS)}") from timed_out
    wait_for_app(page, timeout_ms)


# What a page was doing when a wait for a run timed out: where the focus was (a key typed
# into a box reaches no shortcut), the app's states, and its websocket's traffic (times in
# ms since the page opened: did the page send the action, did the server answer).
PAGE_STATE_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    const el = document.activeElement;
    return {
        now: Math.round(performance.now()),
        focus: el && (el.outerHTML || '').slice(0, 200),
        connection: app && app.getAttribute('data-test-connection-state'),
        script: app && app.getAttribute('data-test-script-state'),
        runs: window.__lnlabRunsFinished,
        socket: window.__lnlabSocket,
        loading: document.documentElement.classList.contains('lnlab-loading'),
    };
}"""


def rerun_page(page: Page) -> None:
    """Rerun the whole page as a visitor would (Streamlit's "r" shortcut, with focus off any
    input); return once that run has ended and is drawn."""
    with expect_rerun(page):
        page.evaluate("document.activeElement && document.activeElement.blur()")
        page.keyboard.press("r")


SLIDE_NUMBER = re.compile(r"Slide (\d+) of (\d+)")


def slide_number(page: Page) -> tuple[int, int]:
    """(k, count) of presenter mode's "Slide k of count"."""
    found = SLIDE_NUMBER.search(page.locator(MAIN).inner_text())
    assert found, "presenter mode shows no slide number"
    return int(found.group(1)), int(found.group(2))


def next_slide(page: Page, key: str, k: int, count: int) -> None:
    """Press `key` (a clicker's PageDown, say) and wait for slide k of count to be on screen.

    It waits for the slide's number, not for a script run: the step-through's first five
    slides are drawn in the page with no run at all (lnlab.ui.live), and a live class's
    polling fragments end runs of their own on a timer, which a count of runs would take for
    the one the key started."""
    page.keyboard.press(key)
    expect(page.locator(MAIN)).to_contain_text(f"Slide {k} of {count}")
    wait_for_app(page)


def slide_drawn(page: Page, k: int, count: int, timeout_ms: int = EXPECT_TIMEOUT_MS) -> None:
    """Wait for the whole of slide k of a lesson Python draws (a live class's, say): the
    lesson's words for the live region come last in its run, after the slide's Ask row, and
    the page draws a run's elements in order, so once they name slide k the rest of it is on
    the page too. The slide's number stands above the rest, and a busy browser can draw it a
    batch earlier than what follows. (Counted, not read as one element: until the run ends
    the last slide's words can stand beside the new ones, at another place.)"""
    said = page.locator('.lnlab-say[data-slot$="_lesson"]')
    now = said.filter(has_text=re.compile(rf"^Section {k} of {count}:"))
    expect(now).to_have_count(1, timeout=timeout_ms)


def nav_link(page: Page, app_page: AppPage) -> Locator:
    """The sidebar's link to a page, by its accessible name (the icon is aria-hidden)."""
    return page.locator(SIDEBAR).get_by_role("link", name=app_page.title, exact=True)


def screenshot_whole_page(page: Page, path: Path, max_height: int = 16_000) -> None:
    """Save the whole page: stMain scrolls inside a fixed viewport, so grow the viewport first."""
    height = page.evaluate(f"document.querySelector('{MAIN}').scrollHeight")
    page.set_viewport_size({"width": VIEWPORT["width"], "height": min(max_height, height)})
    wait_for_app(page)
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=path, full_page=True)
    page.set_viewport_size(VIEWPORT)


def problems_on(page: Page) -> list[str]:
    """Texts of the exception and error boxes on the page (empty when there are none)."""
    boxes = page.locator(PROBLEM_BOXES)
    return [boxes.nth(i).inner_text() for i in range(boxes.count())]


def assert_no_problems(page: Page) -> None:
    problems = problems_on(page)
    assert not problems, f"{page.url} shows {len(problems)} error box(es):\n" + "\n---\n".join(
        problems
    )


def assert_charts_drawn(page: Page, timeout_ms: int = CHART_TIMEOUT_MS) -> int:
    """Wait until every Plotly chart on the page has drawn its SVG; return how many there are."""
    charts = page.locator(PLOTLY_CHART)
    for i in range(charts.count()):
        svg = charts.nth(i).locator(PLOTLY_SVG).first
        svg.wait_for(state="attached", timeout=timeout_ms)
    return charts.count()
