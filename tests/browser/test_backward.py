"""The step-through lesson's backward slides in a real browser: the dy box on its slide, and
slides that still fit a projector when the token is wide.

With dy = (0, 1, 0, 0) on the default token (2, 4, 6, 8): dgamma = dy * x_hat = (0, -1, 0, 0)
/ sqrt(5.00001) = (0, -0.4472, 0, 0), so dgamma's row reads "0 -0.4472 0 0".
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from .conftest import (
    APP_PAGES,
    ERROR_ALERT,
    MAIN,
    StreamlitServer,
    assert_no_problems,
    expect_rerun,
    new_app_page,
    next_slide,
    slide_number,
    wait_for_app,
)
from .slides import PROJECTORS, fit_on_projectors

pytestmark = pytest.mark.browser

STEP_THROUGH = next(p for p in APP_PAGES if p.name == "step_through")
DY_BOX = ".st-key-st_dy input"


def test_a_typed_dy_reaches_the_slides_and_the_link(page: Page, streamlit_server: StreamlitServer):
    page.goto(streamlit_server.page_url(STEP_THROUGH) + "?v=1&step=10")
    wait_for_app(page)
    expect(page.locator(MAIN)).to_contain_text("10. Backward: the upstream gradient dy")
    box = page.locator(DY_BOX)
    expect(box).to_have_attribute("placeholder", "1, -2, 0.5, 3")
    box.fill("0, 1, 0, 0")
    box.press("Enter")
    expect(page).to_have_url(re.compile(r"[?&]dy=0%2C1%2C0%2C0"))
    assert_no_problems(page)
    with expect_rerun(page):
        page.locator(".st-key-step_through_next button").click()
    row = page.locator(".lnlab-table tr", has_text="dγ")
    expect(row).to_have_text(re.compile(r"dγ\s*0\s*-0\.4472\s*0\s*0"))

    with expect_rerun(page):
        page.locator(".st-key-step_through_prev button").click()
    box = page.locator(DY_BOX)
    box.fill("1, 2")
    box.press("Enter")
    expect(page.locator(ERROR_ALERT)).to_contain_text("dy has 2 values")
    expect(page).to_have_url(re.compile(r"[?&]dy=0%2C1%2C0%2C0"))  # the last good dy stays


def test_the_backward_slides_fit_with_a_wide_token(
    browser: Browser, streamlit_server: StreamlitServer
):
    """16 features: formulas elided to 8 entries and wrapped, tables cut to 8 columns; each
    slide measured at every projector size."""
    page = new_app_page(browser, PROJECTORS[0])
    x = ",".join(str(1.5 * k - 7) for k in range(16))
    try:
        page.goto(streamlit_server.page_url(STEP_THROUGH) + f"?v=1&present=1&step=10&x={x}")
        wait_for_app(page)
        problems = {}
        for k in range(10, 16):
            assert slide_number(page) == (k, 15)
            assert_no_problems(page)
            if fit := fit_on_projectors(page):
                problems[k] = fit
            if k < 15:
                next_slide(page, "PageDown", k + 1, 15)
        assert not problems, problems
    finally:
        page.context.close()
