"""Presenter mode as a projector shows it: every slide of every lesson fits the screen.

Each slide is reached with the keys a presentation clicker sends, then measured in the DOM at
1024 x 768, 1280 x 720 and 1920 x 1080 by resizing the window (tests/browser/slides.py):
nothing below the screen, nothing cut or past the right edge, text, table cells and heatmap
numbers at least 16 px, chart text at least 12 px; at the first size (1024 x 768) every slide,
with and without its question, passes axe (no serious or critical violation), and the first
one opens without a layout shift.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from .axe import MAX_LAYOUT_SHIFT, assert_accessible, serious_problems
from .conftest import (
    APP_PAGES,
    MAIN,
    OUTPUT,
    QUESTION,
    StreamlitServer,
    assert_charts_drawn,
    assert_no_problems,
    expect_rerun,
    layout_shift,
    new_app_page,
    next_slide,
    slide_number,
    wait_for_app,
)
from .slides import PROJECTORS, fit_on_projectors, measure

pytestmark = pytest.mark.browser

LESSONS = [p for p in APP_PAGES if p.lesson]


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.name)
def test_every_slide_fits_the_projector(
    browser: Browser, streamlit_server: StreamlitServer, lesson
):
    _walk_the_slides(browser, streamlit_server, lesson, PROJECTORS, "")


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.name)
def test_every_question_fits_on_its_slide(
    browser: Browser, streamlit_server: StreamlitServer, lesson
):
    """With predictions on (q=1), a slide shows its question before the result: that fits too.
    A slide with no question is the slide test_every_slide_fits_the_projector measured."""
    measured = _walk_the_slides(
        browser, streamlit_server, lesson, PROJECTORS[:1], "&q=1", only=QUESTION
    )
    if lesson.name != "training":  # its questions are about a run: test_training measures them
        assert measured, f"{lesson.name}: no slide asked a question with predictions on"


def _walk_the_slides(
    browser: Browser,
    streamlit_server: StreamlitServer,
    lesson,
    sizes: tuple[dict[str, int], ...],
    query: str,
    only: str = "",
) -> int:
    """Step through every slide, each measured at every size in `sizes` (the first is the one
    the page opens at, and the one of the screenshots), or (`only`) each that shows an element
    `only` selects; return how many were measured."""
    page = new_app_page(browser, sizes[0])
    try:
        page.goto(streamlit_server.page_url(lesson) + "?v=1&present=1" + query)
        wait_for_app(page)
        assert layout_shift(page) <= MAX_LAYOUT_SHIFT, f"CLS {layout_shift(page):.3f}"
        at, count = slide_number(page)
        assert at == 1
        problems = {}
        measured = 0
        for k in range(1, count + 1):
            assert slide_number(page) == (k, count)
            assert_no_problems(page)
            assert_charts_drawn(page)
            name = f"{lesson.name}-{k}{'-q' if query else ''}.png"
            if not only or page.locator(f"{MAIN} {only}").count():
                measured += 1
                shot = OUTPUT / "slides" / name
                if fit := fit_on_projectors(page, sizes, shot, serious_problems):
                    problems[k] = fit
            if k < count:
                next_slide(page, "PageDown" if k % 2 else "ArrowRight", k + 1, count)
        assert not problems, f"{lesson.name}{query}: {problems}"
        expect(page.locator(f".st-key-{lesson.name}_next button")).to_be_disabled()
    finally:
        page.context.close()
    return measured


def test_a_link_opens_the_slide_on_screen(page: Page, streamlit_server: StreamlitServer):
    lesson = next(p for p in LESSONS if p.name == "step_through")
    page.goto(streamlit_server.page_url(lesson) + "?v=1&present=1")
    wait_for_app(page)
    for k in (2, 3):
        next_slide(page, "PageDown", k, 15)
    expect(page).to_have_url(re.compile(r"[?&]step=3"))
    page.goto(page.url)  # the link a teacher copies from the address bar
    wait_for_app(page)
    assert slide_number(page)[0] == 3


@pytest.mark.parametrize(
    ("name", "query"),
    [("step_through", "step=4"), ("padding", "section=6"), ("transformer", "s=1")],
)
def test_a_checked_question_and_its_feedback_fit_the_slide(
    browser: Browser, streamlit_server: StreamlitServer, name: str, query: str
):
    """After a pick on a slide: the feedback and the revealed result fit 1024 x 768 together."""
    lesson = next(p for p in LESSONS if p.name == name)
    page = new_app_page(browser, PROJECTORS[0])
    try:
        page.goto(streamlit_server.page_url(lesson) + f"?v=1&present=1&q=1&{query}")
        wait_for_app(page)
        question = page.locator(f"{MAIN} {QUESTION}")
        question.locator("[role='radiogroup'] label").nth(1).click()
        with expect_rerun(page):
            question.get_by_role("button", name="Check").click()
        expect(page.locator(f"{MAIN} [data-testid='stAlert']")).to_have_count(1)
        page.screenshot(path=OUTPUT / "slides" / f"{name}-checked.png")
        assert_no_problems(page)
        assert not measure(page).problems()
        assert_accessible(page, f"{name}, checked")
    finally:
        page.context.close()
