"""A lesson as a student and a teacher click through it: steps, edits, links, presenter mode."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from lnlab.teach.steps import STEPS

from .conftest import (
    APP_PAGES,
    APP_TIMEOUT_MS,
    LIVE,
    MAIN,
    StreamlitServer,
    assert_no_problems,
    expect_rerun,
    wait_for_app,
)

pytestmark = pytest.mark.browser

STEP_THROUGH = next(p for p in APP_PAGES if p.name == "step_through")
PADDING = next(p for p in APP_PAGES if p.name == "padding")
STEP_TITLES = tuple(s.title for s in STEPS)


def _open(page: Page, server: StreamlitServer, url: str) -> None:
    page.goto(url)
    wait_for_app(page)
    assert_no_problems(page)


def _step_heading(page: Page, k: int) -> None:
    """Step k on screen: drawn by the page's lesson, which mounts anew after a section Python
    drew (under the whole suite and two busy loops that took over 5 s once)."""
    expect(page.locator(MAIN)).to_contain_text(f"{k}. {STEP_TITLES[k - 1]}", timeout=APP_TIMEOUT_MS)


def test_step_through_from_first_to_last_step(page: Page, streamlit_server: StreamlitServer):
    """The five steps are drawn in the page (test_live_steps.py); the sixth comes from Python."""
    _open(page, streamlit_server, streamlit_server.page_url(STEP_THROUGH))
    _step_heading(page, 1)
    expect(page.locator(MAIN)).to_contain_text("= 5")  # mean of 2, 4, 6, 8: 20 / 4
    for k in range(2, 6):
        page.locator(f"{LIVE} button[data-go='1']").click()
        _step_heading(page, k)
        assert_no_problems(page)
    with expect_rerun(page):
        page.locator(f"{LIVE} button[data-go='1']").click()
    expect(page.locator(MAIN)).to_contain_text("6. The check")


def test_an_edit_in_the_text_area_updates_the_numbers(
    page: Page, streamlit_server: StreamlitServer
):
    _open(page, streamlit_server, streamlit_server.page_url(STEP_THROUGH))
    box = page.locator(".st-key-st_text textarea")
    with expect_rerun(page):
        box.fill("1, 2, 3, 10")
        box.press("Control+Enter")
    expect(page.locator(MAIN)).to_contain_text("x = (1, 2, 3, 10)")
    expect(page.locator(MAIN)).to_contain_text("μ = 4")  # (1 + 2 + 3 + 10) / 4
    assert_no_problems(page)
    with expect_rerun(page):
        box.fill("1, 2, x")
        box.press("Control+Enter")
    expect(page.locator('[data-testid="stAlertContentError"]')).to_contain_text('"x"')
    expect(page.locator(MAIN)).to_contain_text("x = (1, 2, 3, 10)")  # the last good numbers stay


def test_a_shared_link_opens_the_same_example(page: Page, streamlit_server: StreamlitServer):
    url = streamlit_server.page_url(STEP_THROUGH) + "?v=1&x=1,2,3,4;10,20,30,40&tok=2&step=2"
    _open(page, streamlit_server, url)
    _step_heading(page, 2)
    expect(page.locator(MAIN)).to_contain_text("= 25")  # token 2's mean: 100 / 4
    expect(page.locator(".st-key-st_text textarea")).to_have_value("1, 2, 3, 4\n10, 20, 30, 40")


def test_a_bad_link_opens_the_default_with_a_notice(page: Page, streamlit_server: StreamlitServer):
    page.goto(streamlit_server.page_url(STEP_THROUGH) + "?v=1&x=1,nan")
    wait_for_app(page)
    expect(page.locator('[data-testid="stAlertContentWarning"]')).to_contain_text("default example")
    _step_heading(page, 1)
    expect(page.locator(MAIN)).to_contain_text("= 5")


def test_presenter_mode_steps_with_the_keyboard(page: Page, streamlit_server: StreamlitServer):
    """Within the five steps the keys are answered in the page; past them, by Python."""
    _open(page, streamlit_server, streamlit_server.page_url(STEP_THROUGH) + "?present=1&step=4")
    expect(page.locator('[data-testid="stSidebar"]')).to_be_hidden()
    _step_heading(page, 4)
    page.locator(MAIN).click(position={"x": 5, "y": 5})  # focus the page, not a text box
    page.keyboard.press("ArrowRight")
    _step_heading(page, 5)
    with expect_rerun(page):
        page.keyboard.press("PageDown")  # what a presentation clicker sends
    expect(page.locator(MAIN)).to_contain_text("6. The check")
    page.keyboard.press("PageUp")  # answered in the page again: no run to wait for
    _step_heading(page, 5)
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("PageUp")
    _step_heading(page, 3)


def test_padding_sentences_edit_reaches_the_link(page: Page, streamlit_server: StreamlitServer):
    _open(page, streamlit_server, streamlit_server.page_url(PADDING))
    box = page.locator(".st-key-pad_sentences textarea")
    with expect_rerun(page):
        box.fill("Hi there\nHow are you today friend")
        box.press("Control+Enter")
    assert_no_problems(page)
    expect(page).to_have_url(re.compile(r"[?&]s=Hi(\+|%20)there"))
