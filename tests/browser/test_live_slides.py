"""Every question slide of every lesson, as the teacher of a live class presents it, fits a
1024 x 768 projector with text of 16 px or more (tests/browser/slides.py): before Ask (the
value asked for held as "?"), while the class answers (the question and its numbered options,
projector-sized), and after Reveal (the result, with the class's answer under it).

The teacher's browser carries the class's claim (the cookie the app sets when a class
starts), so every page it opens is the teacher's.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from lnlab.classroom.store import ClassStore

from .conftest import (
    APP_PAGES,
    MAIN,
    OUTPUT,
    StreamlitServer,
    assert_charts_drawn,
    assert_no_problems,
    expect_rerun,
    new_app_page,
    next_slide,
    slide_drawn,
    slide_number,
    wait_for_app,
)
from .slides import PROJECTORS, measure
from .test_training import TINY, train_once

pytestmark = pytest.mark.browser

LESSONS = [p for p in APP_PAGES if p.lesson]
ASK = '[class*="st-key-live_ask_"] button'
REVEAL = '[class*="st-key-live_reveal_"] button'
SLIDE_MS = 30_000


def _teacher(browser: Browser, server: StreamlitServer) -> Page:
    """A projector-sized page whose browser teaches a new class of the server's."""
    folder = server.log_path.parent
    store = ClassStore(f"sqlite:///{folder / f'classes-{server.port}.db'}")
    try:
        new = store.open_class()
    finally:
        store.close()
    page = new_app_page(browser, PROJECTORS[0])
    page.context.add_cookies(
        [{"name": "lnlab_teacher", "value": f"{new.code}.{new.teacher_secret}", "url": server.url}]
    )
    return page


def _measured(page: Page, name: str, problems: dict, what: str) -> None:
    assert_no_problems(page)
    assert_charts_drawn(page)
    page.screenshot(path=OUTPUT / "live-slides" / f"{name}-{what}.png")
    if fit := measure(page).problems():
        problems[f"{name} {what}"] = fit


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.name)
def test_every_question_slide_fits_asked_and_revealed(
    browser: Browser, streamlit_server: StreamlitServer, lesson
) -> None:
    page = _teacher(browser, streamlit_server)
    try:
        query = TINY if lesson.name == "training" else "?v=1&present=1"
        page.goto(streamlit_server.page_url(lesson) + query)
        wait_for_app(page)
        expect(page.locator(MAIN)).to_contain_text("Join at")  # the teacher's claim held
        if lesson.name == "training":  # the lab's questions are about a run: train it first
            train_once(page)
        problems: dict = {}
        asked = 0
        at, count = slide_number(page)
        assert at == 1
        for k in range(1, count + 1):
            if page.locator(ASK).count():
                name = f"{lesson.name}-{k}"
                _measured(page, name, problems, "before")
                with expect_rerun(page):
                    page.locator(ASK).click()
                expect(page.locator(".lnlab-live-prompt")).to_be_visible()
                _measured(page, name, problems, "asked")
                page.locator(REVEAL).click()
                expect(page.locator('[role="dialog"]')).to_be_visible(timeout=SLIDE_MS)
                page.keyboard.press("Escape")
                expect(page.locator('[role="dialog"]')).to_have_count(0)
                expect(page.locator(MAIN)).to_contain_text("Answer:")
                _measured(page, name, problems, "revealed")
                asked += 1
            if k < count:
                next_slide(page, "PageDown", k + 1, count)
                slide_drawn(page, k + 1, count, SLIDE_MS)
        assert asked, f"{lesson.name}: no slide had a question the class can answer by tapping"
        print(f"{lesson.name}: {asked} question slides measured before Ask, asked and revealed")
        assert not problems, problems
    finally:
        page.context.close()
