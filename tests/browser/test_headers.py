"""In Chromium, through HAProxy (the cluster's config, in front of the browser tests' shared
server): every page runs under the proxy's content security policy with no violation
reported, its charts drawn; a presenter's slides, a chart's PNG download, an export, a class's
QR code and its Copy the teacher link too. The proxy's headers reach the browser on every
answer, and the app's JavaScript comes gzipped. About 40 s."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from lnlab.serving import haproxy
from lnlab.serving.cluster import free_port, healthy

from .conftest import (
    APP_PAGES,
    PLOTLY_CHART,
    StreamlitServer,
    assert_charts_drawn,
    assert_no_problems,
    expect_rerun,
    new_app_page,
    next_slide,
    slide_number,
    wait_for_app,
)

pytestmark = pytest.mark.browser

HAPROXY = Path("/usr/sbin/haproxy")
# Every violation of the page's policy, as the browser reports it to the page.
VIOLATIONS_SCRIPT = """window.__lnlabCsp = [];
document.addEventListener('securitypolicyviolation',
    (e) => window.__lnlabCsp.push(`${e.violatedDirective} ${e.blockedURI}`));"""
HEADERS = {
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
}


@pytest.fixture(scope="module")
def proxied(streamlit_server: StreamlitServer, tmp_path_factory) -> Iterator[str]:
    """HAProxy with the cluster's config in front of the shared server; its URL."""
    if not HAPROXY.exists():
        pytest.fail(f"{HAPROXY} is missing: `make test` installs it (scripts/ensure-haproxy)")
    run_dir = tmp_path_factory.mktemp("proxied")
    port = free_port()
    config = run_dir / "haproxy.cfg"
    config.write_text(
        haproxy.render(
            bind=f"127.0.0.1:{port}",
            socket_path=str(run_dir / "haproxy.sock"),
            servers=haproxy.local_servers([streamlit_server.port]),
        )
    )
    with (run_dir / "haproxy.log").open("wb") as log:
        proxy = subprocess.Popen([str(HAPROXY), "-db", "-f", str(config)], stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while not healthy(url):
            assert proxy.poll() is None and time.monotonic() < deadline, "HAProxy did not start"
            time.sleep(0.1)  # polling interval of a bounded loop
        yield url
    finally:
        proxy.terminate()
        proxy.wait(10)


def _page(browser: Browser) -> Page:
    page = new_app_page(browser)
    page.context.add_init_script(VIOLATIONS_SCRIPT)
    return page


def _violations(page: Page) -> list[str]:
    return page.evaluate("window.__lnlabCsp")


def test_every_page_runs_under_the_policy_with_the_headers(browser: Browser, proxied: str):
    page = _page(browser)
    scripts: dict[str, str | None] = {}
    page.on(
        "response",
        lambda r: (
            scripts.setdefault(r.url, r.headers.get("content-encoding"))
            if r.url.endswith(".js")
            else None
        ),
    )
    try:
        for app_page in APP_PAGES:
            response = page.goto(proxied + app_page.path)
            wait_for_app(page)
            headers = response.headers
            assert {k: headers.get(k) for k in HEADERS} == HEADERS, app_page.path
            assert headers["content-security-policy"] == haproxy.content_security_policy()
            assert_charts_drawn(page)  # a chart the policy broke would not draw
            assert_no_problems(page)
            assert _violations(page) == [], app_page.path
        assert scripts and set(scripts.values()) == {"gzip"}
    finally:
        page.context.close()


def test_slides_downloads_and_a_class_run_under_the_policy(browser: Browser, proxied: str):
    page = _page(browser)
    try:
        page.goto(proxied + "/padding?v=1&section=5")  # a Plotly chart (the first two: the page's)
        wait_for_app(page)
        page.get_by_role("button", name="Interactive chart").first.click()  # Plotly loads now
        page.locator(PLOTLY_CHART).first.wait_for(timeout=60_000)
        assert_charts_drawn(page)
        page.locator(PLOTLY_CHART).first.hover()
        with page.expect_download() as chart:  # Plotly draws the PNG through data: and blob:
            page.locator('.modebar-btn[data-title^="Download"]').first.click()
        assert chart.value.suggested_filename.endswith(".png")
        with page.expect_download() as export:
            page.locator('[data-testid="stDownloadButton"] button').first.click()
        assert export.value.suggested_filename
        assert _violations(page) == []
        page.goto(proxied + "/padding?present=1")
        wait_for_app(page)
        at, count = slide_number(page)
        for k in range(at + 1, at + 4):  # the first in the page, the rest by Python
            next_slide(page, "ArrowRight", k, count)
        page.goto(proxied + "/step_through?present=1")  # computed in the page (lnlab.ui.live)
        wait_for_app(page)
        title = page.locator(".lnlab-live-title")
        expect(title).to_have_text(re.compile(r"^1\. "))
        for step in (2, 3, 4):
            page.keyboard.press("ArrowRight")
            expect(title).to_have_text(re.compile(rf"^{step}\. "))
        assert _violations(page) == []
        page.goto(proxied + "/class")
        wait_for_app(page)
        with expect_rerun(page):
            page.locator(".st-key-live_start button").click()
        assert page.locator(".lnlab-qr").count() == 1
        page.context.grant_permissions(["clipboard-read", "clipboard-write"])
        copy = page.locator("#lnlab-copy-teacher")
        copy.click()  # its script is a file the launcher serves (lnlab/ui/assets/copy.js)
        expect(page.locator("#lnlab-copy-status")).to_contain_text("Copied.")
        assert page.evaluate("navigator.clipboard.readText()") == copy.get_attribute("data-link")
        assert _violations(page) == []
        assert_no_problems(page)
    finally:
        page.context.close()
