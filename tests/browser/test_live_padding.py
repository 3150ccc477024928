"""The padding lesson's batch and its statistics drawn in the page (lnlab.labs.padding.live,
static/lnlab/padding.mjs), in Chromium.

What only a browser shows: picking a statistic (from its list, by a cell of the batch, from the
row or column list, with the arrow keys in a list) outlines its cells and writes its formulas as
lnlab does (expected values from lnlab.labs.padding.lesson, computed here) with no script run,
the pick reaching the link once made, axe's checks, and today's lesson when the component
cannot load. Nothing here waits a fixed time: a pick drawn "with no run" is read in the same
task as the click, before any message could arrive.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from lnlab.labs.padding import batch as pad
from lnlab.labs.padding.lesson import statistic_latex

from .axe import assert_accessible
from .conftest import (
    APP_PAGES,
    LIVE,
    LIVE_FALLBACK,
    LIVE_HEADING,
    MAIN,
    SHOWN,
    StreamlitServer,
    assert_no_problems,
    expect_rerun,
    runs_finished,
    wait_for_app,
)

pytestmark = pytest.mark.browser

PADDING = next(p for p in APP_PAGES if p.name == "padding")
FORMULAS = f"{LIVE} .lnlab-live-statistic .lnlab-math{SHOWN}"  # data-tex: the LaTeX
OUTLINED = f"{LIVE} svg rect.outlined"
LAB = pad.padding_lab(pad.parse_sentences("Hi Nitish\nHow are you today"), "hi-nitish")
# Do something in the page and read what it drew in the same task, with the script runs
# finished meanwhile (none can have: no message from the server can arrive within a task).
ACT_AND_READ_JS = """([act, outlined]) => {
    const before = window.__lnlabRunsFinished;
    eval(act);
    return [document.querySelectorAll(outlined).length, window.__lnlabRunsFinished - before];
}"""


PICK_JS = (
    f"const s = document.querySelector('{LIVE} .lnlab-live-pick'); s.value = '{{pick}}'; "
    "s.dispatchEvent(new Event('change', {{bubbles: true}}))"
)


def _open_cells(page: Page, server: StreamlitServer) -> None:
    """The page, drawn by the browser alone, at its second section (the statistic picked)."""
    page.goto(server.page_url(PADDING))
    wait_for_app(page)
    expect(page.locator(LIVE)).to_be_visible()
    expect(page.locator(LIVE_FALLBACK)).to_have_count(0)
    expect(page.locator(OUTLINED)).to_have_count(0)  # the batch alone: nothing outlined
    page.locator(f'{LIVE} button[data-go="1"]').click()
    expect(page.locator(LIVE_HEADING)).to_have_text("2. Which cells feed a statistic")
    assert_no_problems(page)


def test_a_section_step_reaches_the_link_by_the_route_with_no_run(
    page: Page, streamlit_server: StreamlitServer
):
    _open_cells(page, streamlit_server)
    runs = runs_finished(page)
    expect(page).to_have_url(re.compile(r"[?&]section=2(&|$)"))  # by the step route
    expect(page.locator(f"{LIVE}[data-synced='true']")).to_have_count(1)
    assert runs_finished(page) == runs
    assert "slide=" not in page.url  # old links' parameter: never written


def _check(page: Page, pick: str, index: int) -> None:
    mean, short, _long = statistic_latex(LAB, pick, index)
    expect(page.locator(FORMULAS).nth(0)).to_have_attribute("data-tex", mean)
    expect(page.locator(FORMULAS).nth(1)).to_have_attribute("data-tex", short)
    cells = int(pad.highlight_mask(LAB, pick, index).sum())
    expect(page.locator(OUTLINED)).to_have_count(cells)


def test_a_picked_statistic_is_outlined_and_written_out_with_no_round_trip(
    page: Page, streamlit_server: StreamlitServer
):
    _open_cells(page, streamlit_server)
    _check(page, pad.PICK_NAIVE, 0)  # f1 down all 8 rows: 22 / 8 = 2.75
    expect(page.locator(FORMULAS).nth(0)).to_have_attribute("data-tex", re.compile(r"= 2\.75$"))
    steps = [
        (PICK_JS.format(pick="masked"), pad.PICK_MASKED, 0),
        (
            f'document.querySelector(\'{LIVE} rect[data-row="3"][data-col="2"]\')'
            ".dispatchEvent(new MouseEvent('click', {bubbles: true}))",
            pad.PICK_MASKED,
            2,
        ),
        (PICK_JS.format(pick="token"), pad.PICK_TOKEN, 0),
        (
            f'document.querySelector(\'{LIVE} rect[data-row="5"][data-col="0"]\')'
            ".dispatchEvent(new MouseEvent('click', {bubbles: true}))",
            pad.PICK_TOKEN,
            5,
        ),
    ]
    for act, pick, index in steps:
        outlined, runs = page.evaluate(ACT_AND_READ_JS, [act, OUTLINED])
        assert (outlined, runs) == (int(pad.highlight_mask(LAB, pick, index).sum()), 0)
        _check(page, pick, index)
    # "are": (1 + 8 + 3) / 3
    expect(page.locator(FORMULAS).nth(0)).to_have_attribute("data-tex", re.compile(r"= 4$"))
    expect(page).to_have_url(re.compile(r"[?&]stat=token(&|$)"))  # once the pick was sent
    expect(page).to_have_url(re.compile(r"[?&]tok=6(&|$)"))
    page.locator(f"{LIVE} .lnlab-live-index select").nth(1).select_option("2")
    _check(page, pad.PICK_TOKEN, 2)  # a PAD row: three zeros
    expect(page).to_have_url(re.compile(r"[?&]tok=3(&|$)"))
    assert_accessible(page, "padding, a statistic picked in the page")
    assert_no_problems(page)


def test_the_keyboard_picks_and_the_arrows_stay_in_the_list(
    page: Page, streamlit_server: StreamlitServer
):
    _open_cells(page, streamlit_server)
    page.locator(f"{LIVE} .lnlab-live-pick").focus()
    page.keyboard.press("ArrowDown")  # the list's own key: the next statistic
    expect(page.locator(f"{LIVE} .lnlab-live-pick")).to_have_value("masked")
    expect(page.locator(LIVE_HEADING)).to_have_text("2. Which cells feed a statistic")
    _check(page, pad.PICK_MASKED, 0)
    expect(page.locator(f"{LIVE} [aria-live]")).to_contain_text("real tokens only: 6 cells")
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("ArrowLeft")  # elsewhere the arrows move the sections
    expect(page.locator(LIVE_HEADING)).to_have_text("1. The batch")
    expect(page).to_have_url(re.compile(r"[?&]stat=masked(&|$)"))


def test_a_word_edited_reaches_the_lists_and_the_figure(
    page: Page, streamlit_server: StreamlitServer
):
    _open_cells(page, streamlit_server)
    page.locator(f"{LIVE} .lnlab-live-pick").select_option(pad.PICK_TOKEN)
    box = page.locator(".st-key-pad_sentences textarea")
    with expect_rerun(page):  # the same 8 rows, one word changed
        box.fill("Hi Nitish\nHow are we today")
        box.press("Control+Enter")
    rows = page.locator(f"{LIVE} .lnlab-live-index select").nth(1)
    expect(rows.locator("option").nth(6)).to_have_text("2.3 we")
    expect(page.locator(f"{LIVE} svg")).to_contain_text("2.3 we")
    assert_no_problems(page)


def test_without_the_browsers_lesson_todays_padding_lesson_works(
    page: Page, streamlit_server: StreamlitServer
):
    page.route("**/app/static/lnlab/padding.mjs", lambda route: route.abort("failed"))
    page.goto(streamlit_server.page_url(PADDING) + "?v=1&section=2")
    wait_for_app(page)
    expect(page.locator(MAIN)).to_contain_text("computed on the server")
    expect(page.locator(LIVE)).to_have_count(0)
    expect(page.locator(MAIN)).to_contain_text("2. Which cells feed a statistic")
    with expect_rerun(page):
        page.locator(".st-key-padding_next button").click()
    expect(page.locator(MAIN)).to_contain_text("3. Batch Norm's statistics")
    assert_no_problems(page)
