"""The training lab in a real browser, in presenter mode: Train on the first slide, the
progress bar, then every slide with the run's charts and tables fits each projector size;
with predictions on (q=1), each question slide fits before and after its question is checked.
Two tabs of one browser share one place in the heavy-work line (the visitor cookie)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from lnlab.serving.heavy_work import HeavyWorkLine
from lnlab.ui.claims import BROWSER_COOKIE

from .conftest import (
    APP_PAGES,
    MAIN,
    OUTPUT,
    QUESTION,
    StreamlitServer,
    assert_charts_drawn,
    assert_no_problems,
    expect_rerun,
    new_app_page,
    wait_for_app,
)
from .slides import PROJECTORS, fit_on_projectors

pytestmark = pytest.mark.browser

TRAINING = next(p for p in APP_PAGES if p.name == "training")
TINY = "?v=1&present=1&var=pre,bn&layers=1&steps=20&seed=3"


def train_once(page: Page) -> None:
    """Train the configuration on screen, unless the server has it cached, and return once the
    trained lesson is drawn."""
    button = page.locator(".st-key-tr_run button")
    if button.is_enabled():
        button.click()
    expect(button).to_contain_text("Trained (cached)", timeout=180_000)
    wait_for_app(page)


@pytest.mark.parametrize("predict", ["", "&q=1"], ids=["plain", "q"])
def test_a_trained_lesson_fits_the_projector(
    browser: Browser, streamlit_server: StreamlitServer, predict: str
) -> None:
    """Trained once (the first test); the second finds the run in the server's cache. Each
    slide is measured at every projector size (tests/browser/slides.py)."""
    page = new_app_page(browser, PROJECTORS[0])
    try:
        page.goto(streamlit_server.page_url(TRAINING) + TINY + predict)
        wait_for_app(page)
        train_once(page)
        problems: dict = {}
        asked: list[int] = []
        for k in range(1, 8):
            assert_no_problems(page)
            if k > 1:
                assert_charts_drawn(page)
            name = f"training-trained-{k}{'-q' if predict else ''}"
            if fit := fit_on_projectors(page, screenshot=OUTPUT / "slides" / f"{name}.png"):
                problems[k] = fit
            question = page.locator(f"{MAIN} {QUESTION}")
            if predict and question.count():
                question.locator("[role='radiogroup'] label").nth(1).click()
                with expect_rerun(page):
                    question.get_by_role("button", name="Check").click()
                expect(page.locator(f"{MAIN} [data-testid='stAlert']")).to_have_count(1)
                assert_no_problems(page)
                checked = OUTPUT / "slides" / f"{name}-checked.png"
                if fit := fit_on_projectors(page, screenshot=checked):
                    problems[f"{k} checked"] = fit
                asked.append(k)
            if k < 7:
                with expect_rerun(page):
                    page.keyboard.press("PageDown")
        assert not problems, problems
        assert asked == ([4, 7] if predict else [])  # depth and gap: pre-LN and naive BN only
    finally:
        page.context.close()


def test_two_tabs_of_one_browser_hold_one_place_in_line(
    browser: Browser, streamlit_server: StreamlitServer
) -> None:
    """The first tab sets the visitor cookie; a second tab of the same browser sends it. While
    the first waits in line (this test holds the front, as another visitor would), the second
    is told that it has no second place; once the front is free, the first tab trains."""
    server = streamlit_server
    line = HeavyWorkLine(f"sqlite:///{server.log_path.parent / f'classes-{server.port}.db'}")
    first = new_app_page(browser)
    context = first.context
    try:
        first.goto(server.page_url(TRAINING) + "?v=1&var=pre&layers=1&steps=20&seed=21")
        wait_for_app(first)
        (cookie,) = [c for c in context.cookies() if c["name"] == BROWSER_COOKIE]
        assert re.fullmatch("[A-Za-z0-9_-]{24}", cookie["value"]) and cookie["sameSite"] == "Strict"
        with line.front("another visitor"):
            first.locator(".st-key-tr_run button").click()
            expect(first.get_by_text("You are 1st in line")).to_be_visible()
            second = context.new_page()
            second.goto(server.page_url(TRAINING) + "?v=1&var=pre&layers=1&steps=20&seed=22")
            wait_for_app(second)
            second.locator(".st-key-tr_run button").click()
            expect(second.get_by_text(re.compile("another tab of this browser"))).to_be_visible()
            assert_no_problems(second)
        expect(first.locator(".st-key-tr_run button")).to_contain_text(
            "Trained (cached)", timeout=180_000
        )
    finally:
        context.close()
        line.close()
