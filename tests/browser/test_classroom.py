"""A classroom at once: many students open a cold server in the same second.

A fresh server has imported nothing and cached nothing, so the first script runs race each
other through the heavy imports (numpy, pandas, plotly, torch) and the caches; that race is
what this test is for. Twenty students open the app's pages at the same moment, each page
two or three of them. One browser, many
contexts (each its own Streamlit session), driven with Playwright's async API: its sync API
must not be shared across threads.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest
from helpers import run_coroutine
from playwright.async_api import Browser as AsyncBrowser
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page as AsyncPage
from playwright.async_api import TimeoutError as PlaywrightTimeoutError
from playwright.async_api import async_playwright
from playwright.sync_api import Browser, Page

from .conftest import (
    APP_PAGES,
    APP_SETTLED_JS,
    MAIN,
    POLL_MS,
    PROBLEM_BOXES,
    SETTLED,
    TITLE,
    VIEWPORT,
    AppPage,
    StreamlitServer,
    assert_no_problems,
    expect_rerun,
    launch_options,
    new_app_page,
    rerun_page,
    wait_for_app,
    watch_requests,
)

pytestmark = pytest.mark.browser

STUDENTS = 20
# Generous: twenty cold sessions share two cores; the classroom is about errors, not speed.
VISIT_TIMEOUT_MS = 120_000
# Each student opens one page, a different one per seat: all twenty contexts hit the cold
# server at the same moment and every page is opened by several students. A second page each
# (as this test once did) met a warm server and took the test from 50 s to 80 s on two cores.
PAGES_PER_STUDENT = 1
APP_STATE_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return {
        url: location.href,
        connection: app && app.getAttribute('data-test-connection-state'),
        script: app && app.getAttribute('data-test-script-state'),
    };
}"""
STEP_THROUGH = next(p for p in APP_PAGES if p.name == "step_through")
STEP_TEXT = ".st-key-st_text textarea"  # the step-through page's embeddings (key "st_text")


async def _visit(page: AsyncPage, server: StreamlitServer, app_page: AppPage) -> str | None:
    """Open one page by its URL and say what is wrong with it, or None when it rendered cleanly.

    By URL, not by the sidebar: a click waits until the renderer has drawn the last page's
    charts (minutes, with twenty renderers on two busy cores), a navigation can start afresh.
    """
    await page.goto(server.page_url(app_page), wait_until="commit")
    # An exception box is there once the run has finished; no need to wait for the charts.
    handle = await page.wait_for_function(APP_SETTLED_JS, arg=False, polling=POLL_MS)
    state = await handle.json_value()
    if state != SETTLED:
        return f"app state {state}"
    boxes = page.locator(PROBLEM_BOXES)
    texts = [await boxes.nth(i).inner_text() for i in range(await boxes.count())]
    if texts:
        return "error box(es):\n" + "\n---\n".join(texts)
    shown = await page.title()
    if not app_page.document_title.search(shown):
        return f"the browser tab says {shown!r}"
    # the page shows its content once drawn (lnlab/ui/assets/assist.js), at most 30 s after
    await page.wait_for_function(
        "() => !document.documentElement.classList.contains('lnlab-loading')",
        polling=POLL_MS,
        timeout=60_000,
    )
    if not (await page.locator(TITLE).first.inner_text()).strip():
        return "no title"
    return None


async def _state(page: AsyncPage) -> dict[str, str] | str:
    """Where a page is stuck: its URL and the app's states (if the page answers at all)."""
    try:
        return await asyncio.wait_for(page.evaluate(APP_STATE_JS), timeout=10)
    except (TimeoutError, PlaywrightError) as err:
        return f"unknown ({type(err).__name__})"


async def _student(
    browser: AsyncBrowser, server: StreamlitServer, seat: int, bell: asyncio.Barrier
) -> list[str]:
    """One student: their own context; PAGES_PER_STUDENT pages, from a different one per seat."""
    context = await browser.new_context(viewport=VIEWPORT)
    watch_requests(context)
    context.set_default_timeout(VISIT_TIMEOUT_MS)
    try:
        page = await context.new_page()
        async with asyncio.timeout(VISIT_TIMEOUT_MS / 1000):
            await bell.wait()  # every student has a page open: all start at the same moment
        failures = []
        for k in range(PAGES_PER_STUDENT):
            app_page = APP_PAGES[(seat + k) % len(APP_PAGES)]
            try:
                problem = await _visit(page, server, app_page)
            except PlaywrightTimeoutError as err:  # stuck: the next visit would wait as long
                where = await _state(page)
                failures.append(f"student {seat}, {app_page.path}: timed out at {where}: {err}")
                break
            if problem:
                failures.append(f"student {seat}, {app_page.path}: {problem}")
        return failures
    except BaseException:
        await bell.abort()  # nobody waits for a student who will never arrive
        raise
    finally:
        await context.close()


async def _classroom(server: StreamlitServer, students: int) -> list[str]:
    """Every student's failures, after all of them have opened every page."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(**launch_options())
        bell = asyncio.Barrier(students)
        results = await asyncio.gather(
            *(_student(browser, server, seat, bell) for seat in range(students))
        )
        await browser.close()
    return [failure for failures in results for failure in failures]


def test_classroom_on_a_cold_server(fresh_server: Callable[[], StreamlitServer]):
    server = fresh_server()
    began = time.monotonic()
    failures = run_coroutine(_classroom(server, STUDENTS))
    elapsed = time.monotonic() - began
    log = server.log()

    assert not failures, (
        f"{len(failures)} of {STUDENTS * PAGES_PER_STUDENT} page loads failed in {elapsed:.0f}s:\n"
        + "\n\n".join(failures)
        + f"\n\nend of the server log:\n{log[-20_000:]}"
    )
    assert "Traceback" not in log, f"the server logged an error:\n{log[log.index('Traceback') :]}"


def _open_step_through(browser: Browser, server: StreamlitServer) -> Page:
    page = new_app_page(browser)
    page.goto(server.page_url(STEP_THROUGH))
    wait_for_app(page)
    return page


def _type_embeddings(page: Page, text: str) -> None:
    with expect_rerun(page):
        page.locator(STEP_TEXT).fill(text)
        page.locator(STEP_TEXT).press("Control+Enter")  # commits the text area


def test_sessions_do_not_see_each_others_input(browser: Browser, streamlit_server: StreamlitServer):
    alice = _open_step_through(browser, streamlit_server)
    bob = _open_step_through(browser, streamlit_server)
    try:
        if alice.locator(STEP_TEXT).count() == 0:
            pytest.skip("the step-through page has no embeddings text area (key st_text) yet")
        seed_text = alice.locator(MAIN).inner_text()
        _type_embeddings(alice, "1, 2, 3, 4")
        _type_embeddings(bob, "5, -1, 0, 2")
        rerun_page(alice)  # after Bob's edit: Alice's run must still use Alice's numbers
        rerun_page(bob)

        assert alice.locator(STEP_TEXT).input_value() == "1, 2, 3, 4"
        assert bob.locator(STEP_TEXT).input_value() == "5, -1, 0, 2"
        for student in (alice, bob):
            assert_no_problems(student)
        alice_sees = alice.locator(MAIN).inner_text()
        bob_sees = bob.locator(MAIN).inner_text()
        assert alice_sees != seed_text, "Alice's edit did not change her results"
        assert alice_sees != bob_sees, "Alice and Bob see the same results for different inputs"
    finally:
        alice.context.close()
        bob.context.close()
