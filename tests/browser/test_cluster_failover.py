"""In Chromium, through the local cluster: a student's process is killed mid-lesson; the
browser reconnects by itself and HAProxy sends it to the other process. Streamlit's browser
asks for no run on reconnecting: the student's next click on Next runs the whole page there
(lnlab.ui.runtime.failover), which reopens the link: the same example on the same section, no error
box; the click after that moves on. A teacher's process killed with a question asked: the
class comes back by itself. About 15 s each (two servers start)."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from lnlab.classroom.store import ClassStore
from lnlab.serving.cluster import Cluster, free_port
from lnlab.ui.server.pulse import PATH as PULSE

from .conftest import (
    assert_no_problems,
    expect_rerun,
    new_app_page,
    rerun_page,
    runs_finished,
    wait_for_app,
)

pytestmark = pytest.mark.browser

HAPROXY = Path("/usr/sbin/haproxy")
EXAMPLE = "1, 2, 3, 4, 77"
# the example on its seventh section: one Python draws (the first five are drawn in the page,
# lnlab.ui.live, and a click there asks nothing of the server)
LINK = "/step_through?v=1&x=1,2,3,4,77&step=7"
RECONNECT_S = 30.0


@pytest.fixture
def cluster(tmp_path) -> Iterator[Cluster]:
    if not HAPROXY.exists():
        pytest.fail(f"{HAPROXY} is missing: `make test` installs it (scripts/ensure-haproxy)")
    ports = [free_port(), free_port()]
    with Cluster(2, free_port(), "127.0.0.1", ports, run_dir=tmp_path, supervise=False) as c:
        yield c


def _server(page) -> str:
    (cookie,) = [c["value"] for c in page.context.cookies() if c["name"] == "SERVERID"]
    return cookie


def test_killed_process_the_browser_reconnects_with_its_example(browser: Browser, cluster):
    page = new_app_page(browser)
    try:
        page.goto(cluster.url + LINK)
        wait_for_app(page)
        section = page.locator("h2").first.inner_text()
        assert section.startswith("7. ")
        before = _server(page)
        cluster.kill(int(before.removeprefix("app")), signal.SIGKILL)
        deadline = time.monotonic() + RECONNECT_S
        while _server(page) == before:  # HAProxy gives the reconnecting browser a new cookie
            assert time.monotonic() < deadline, "the browser did not reconnect"
            page.wait_for_timeout(100)
        wait_for_app(page)
        next_button = page.locator(".st-key-step_through_next button")
        with expect_rerun(page):
            next_button.click()
        assert page.locator("h2").first.inner_text() == section
        assert page.locator('[class*="st-key-st_text"] textarea').input_value() == EXAMPLE
        assert_no_problems(page)
        with expect_rerun(page):
            next_button.click()
        assert page.locator("h2").first.inner_text().startswith("8. ")
        assert_no_problems(page)
    finally:
        page.context.close()


def test_killed_teacher_process_the_class_comes_back_as_it_was(browser: Browser, cluster):
    """The teacher's process dies with a question asked: the browser reconnects to the other
    process and asks it for a run; the browser's claim (a cookie) brings the teacher back into
    the same class, on the same question, with the count intact, with no click."""
    page = new_app_page(browser, {"width": 1024, "height": 768})
    pulses: list[str] = []  # the class's pulses the page read
    page.on("requestfinished", lambda r: pulses.append(r.url) if PULSE in r.url else None)
    classes = ClassStore()  # the database every process of the cluster shares
    try:
        page.goto(cluster.url + "/class")
        wait_for_app(page, 120_000)  # a new process's first page, on two busy cores
        with expect_rerun(page):
            page.locator(".st-key-live_start button").click()
        code = page.locator(".lnlab-code").inner_text().replace("-", "")
        with expect_rerun(page):
            page.get_by_role("button", name="Step through one token").click()
        with expect_rerun(page):
            page.locator('[class*="st-key-live_ask_"] button').click()
        # the run that ended may be a class redraw's, not Ask's (two busy cores): the question
        # is posed once the projector shows it
        expect(page.locator(".lnlab-live-prompt")).to_be_visible(timeout=15_000)
        posed = classes.current(code)
        student = classes.join(code, browser="a-phone-in-the-room")
        classes.answer(code, student, posed.question.qid, posed.question.options[0].text)
        expect(page.locator(".lnlab-live-count")).to_contain_text("1 of 1", timeout=15_000)
        # the last run before the kill a whole page's (Streamlit's R), not a fragment's, in a
        # page that reads the class's pulse (else its views would be on their short timers):
        # the browser asks the new process for a run only because the views keep a timer
        assert pulses, "the teacher's page read no pulse"
        rerun_page(page)
        before = _server(page)
        killed = time.monotonic()
        cluster.kill(int(before.removeprefix("app")), signal.SIGKILL)
        deadline = time.monotonic() + RECONNECT_S
        while _server(page) == before:
            assert time.monotonic() < deadline, "the browser did not reconnect"
            page.wait_for_timeout(100)
        # no click: the page runs on the new process (a run ends: the old is dead)
        ran = runs_finished(page)
        page.wait_for_function("n => window.__lnlabRunsFinished > n", arg=ran, polling=100)
        wait_for_app(page)
        expect(page.locator(".lnlab-live-prompt")).to_have_text(posed.question.prompt)
        expect(page.locator(".lnlab-live-count")).to_contain_text("1 of 1", timeout=15_000)
        # a measurement, not a check: README's "Live class"
        print(f"the teacher's page ran on the other process {time.monotonic() - killed:.1f} s")
        expect(page.locator("[data-testid='stMain']")).to_contain_text(
            f"code {code[:3]}-{code[3:6]}-{code[6:]}"
        )
        page.locator('[class*="st-key-live_reveal_"] button').click()
        expect(page.locator("[role='dialog']")).to_be_visible(timeout=15_000)
        assert classes.current(code).revealed
        assert_no_problems(page)
    finally:
        classes.close()
        page.context.close()
