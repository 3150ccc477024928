"""In Chromium, through the local cluster: a student's process is killed mid-lesson; the
browser reconnects by itself and HAProxy sends it to the other process. Streamlit's browser
asks for no run on reconnecting: the student's next click on Next runs the whole page there
(lnlab.ui.failover), which reopens the link: the same example on the same section, no error
box; the click after that moves on. About 15 s (two servers start)."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from lnlab.serving.cluster import Cluster, free_port

from .conftest import assert_no_problems, expect_rerun, new_app_page, wait_for_app

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
        section = page.locator("h3").first.inner_text()
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
        assert page.locator("h3").first.inner_text() == section
        assert page.locator('[class*="st-key-st_text"] textarea').input_value() == EXAMPLE
        assert_no_problems(page)
        with expect_rerun(page):
            next_button.click()
        assert page.locator("h3").first.inner_text().startswith("8. ")
        assert_no_problems(page)
    finally:
        page.context.close()
