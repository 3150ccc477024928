"""One app whichever way it is started: `make run`, a plain `streamlit run app.py`, `uvicorn
app:app` (lnlab.ui.server: app.py's st.App). On each, in Chromium: the page carries the app's
shell and headers, the step and pulse routes answer, and a class survives what a teacher and a
student do by accident: the teacher reloads and opens a new tab (the class is theirs again,
from the browser's claim cookie), the student reloads and rejoins (the same student).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from lnlab.ui.server.shell import MARK

from .conftest import (
    LAUNCHERS,
    MAIN,
    SIDEBAR,
    StreamlitServer,
    assert_no_problems,
    expect_rerun,
    new_app_page,
    start_server,
    wait_for_app,
)
from .test_phone import PHONE

pytestmark = pytest.mark.browser

SCRIPT_BYTES_JS = """() => performance.getEntriesByType('resource')
    .filter(r => new URL(r.name).pathname.endsWith('.js'))
    .reduce((sum, r) => [sum[0] + r.transferSize, sum[1] + r.encodedBodySize,
                         sum[2] + r.decodedBodySize], [0, 0, 0])"""
COLD_MS = 120_000  # the first page of a new server, on two cores shared with other work
LIVE_MS = 20_000


@pytest.fixture(scope="module", params=LAUNCHERS)
def served(request, tmp_path_factory) -> Iterator[StreamlitServer]:
    server = start_server(tmp_path_factory.mktemp("launcher"), how=request.param)
    yield server
    server.stop()


def test_every_way_of_starting_sends_scripts_gzipped_and_once(
    browser: Browser, served: StreamlitServer
):
    """The page's JavaScript goes gzipped, and a second visit sends none of it again: the
    framework's hashed bundles are cached for good, the app's own files answer 304."""
    viewer = new_app_page(browser)
    try:
        viewer.goto(served.url + "/step_through")
        wait_for_app(viewer, COLD_MS)
        sent, encoded, decoded = viewer.evaluate(SCRIPT_BYTES_JS)
        assert encoded < decoded / 2, "scripts went uncompressed"
        viewer.reload()
        wait_for_app(viewer)
        again, _, _ = viewer.evaluate(SCRIPT_BYTES_JS)
        assert again < sent / 20, f"a second visit fetched {again:,} bytes of scripts again"
        print(f"scripts: {decoded:,} bytes as {sent:,} sent; a second visit {again:,}")
    finally:
        viewer.context.close()


def test_every_way_of_starting_serves_the_same_app_and_class(
    browser: Browser, served: StreamlitServer
):
    teacher = new_app_page(browser)
    student = new_app_page(browser, PHONE)
    try:
        answer = teacher.request.get(served.url + "/step_through")
        assert MARK in answer.text() and answer.headers["referrer-policy"] == "no-referrer"
        step = teacher.request.post(served.url + "/_lnlab/step/nolane", data='{"rev":1,"step":1}')
        assert step.status == 404 and step.json()["error"]  # the route is there
        pulse = teacher.request.get(served.url + "/_lnlab/pulse/ABCDEFGHJ")
        assert pulse.status == 200 and pulse.json()["open"] is False

        teacher.goto(served.url + "/")
        wait_for_app(teacher, COLD_MS)
        assert teacher.evaluate("() => document.querySelector('script[src*=lnlab-assist]') != null")
        teacher.locator(SIDEBAR).get_by_role("button", name="Start a live class").click()
        expect(teacher).to_have_url(re.compile(r"/class$"))
        wait_for_app(teacher)
        join = teacher.locator(".lnlab-join")
        code = re.search(r"join=([2-9A-Z]{9})", join.inner_text()).group(1)

        teacher.reload()  # the teacher's accidents: a reload, a new tab
        wait_for_app(teacher)
        expect(teacher.locator(".lnlab-join")).to_contain_text(code, timeout=LIVE_MS)
        tab = teacher.context.new_page()
        tab.goto(served.url + "/class")
        wait_for_app(tab)
        expect(tab.locator(".lnlab-join")).to_contain_text(code, timeout=LIVE_MS)
        tab.close()

        student.goto(f"{served.url}/class?join={code}")
        wait_for_app(student)
        student.locator(".st-key-live_nickname input").fill("Ana")
        with expect_rerun(student):
            student.locator(".st-key-live_join button").click()
        expect(student.locator(MAIN)).to_contain_text("Waiting for the teacher", timeout=LIVE_MS)
        student.reload()  # the student's: a reload finds the same student
        wait_for_app(student)
        expect(student.locator(MAIN)).to_contain_text("Waiting for the teacher", timeout=LIVE_MS)
        expect(student.locator(".st-key-live_leave button")).to_be_visible()
        teacher.reload()  # one student, not two: the reload found the same one
        wait_for_app(teacher)
        expect(teacher.locator(".lnlab-roster")).to_contain_text("1 joined", timeout=LIVE_MS)
        expect(teacher.locator(".lnlab-roster")).to_contain_text("Ana")
        for page in (teacher, student):
            assert_no_problems(page)
    finally:
        for page in (teacher, student):
            page.context.close()
