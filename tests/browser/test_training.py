"""The training lab in a real browser, in presenter mode: Train on the first slide, the
progress bar, then every slide with the run's charts and tables fits each projector size."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from .conftest import (
    APP_PAGES,
    OUTPUT,
    StreamlitServer,
    assert_charts_drawn,
    assert_no_problems,
    expect_rerun,
    new_app_page,
    wait_for_app,
)
from .slides import PROJECTORS, measure

pytestmark = pytest.mark.browser

TRAINING = next(p for p in APP_PAGES if p.name == "training")
TINY = "?v=1&present=1&var=pre,bn&layers=1&steps=20&seed=3"


@pytest.mark.parametrize("size", PROJECTORS, ids=lambda s: f"{s['width']}x{s['height']}")
def test_a_trained_lesson_fits_the_projector(
    browser: Browser, streamlit_server: StreamlitServer, size: dict[str, int]
) -> None:
    """Trained once (the first size); the other sizes find the run in the server's cache."""
    page = new_app_page(browser, size)
    try:
        page.goto(streamlit_server.page_url(TRAINING) + TINY)
        wait_for_app(page)
        button = page.locator(".st-key-tr_run button")
        if button.is_enabled():
            button.click()
        expect(page.locator(".st-key-tr_run button")).to_contain_text(
            "Trained (cached)", timeout=180_000
        )
        problems = {}
        for k in range(1, 8):
            assert_no_problems(page)
            if k > 1:
                assert_charts_drawn(page)
            if fit := measure(page).problems():
                problems[k] = fit
            if size == PROJECTORS[0]:
                page.screenshot(path=OUTPUT / "slides" / f"training-trained-{k}.png")
            if k < 7:
                with expect_rerun(page):
                    page.keyboard.press("PageDown")
        assert not problems, problems
    finally:
        page.context.close()
