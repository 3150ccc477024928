"""The GPU page's benchmark slide in a real browser, in presenter mode: before and after a run
(the sizes' memory level, the button that sizes them past the cache, the timings' chart and
what memory they describe) it fits each projector size."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from .conftest import (
    APP_PAGES,
    FIGURE,
    OUTPUT,
    StreamlitServer,
    assert_no_problems,
    new_app_page,
    wait_for_app,
)
from .slides import PROJECTORS, fit_on_projectors

pytestmark = pytest.mark.browser

GPU = next(p for p in APP_PAGES if p.name == "gpu")
# sizes in the cache, so the page offers to size them past it: the slide's most crowded state
SMALL = "?v=1&present=1&s=4&dev=cpu&dtype=float32&batch=2&seq=8&feat=16"


def test_the_benchmark_slide_fits_before_and_after_a_run(
    browser: Browser, streamlit_server: StreamlitServer
) -> None:
    page = new_app_page(browser, PROJECTORS[0])
    try:
        page.goto(streamlit_server.page_url(GPU) + SMALL)
        wait_for_app(page)
        expect(page.locator(".st-key-gpu_fit button").first).to_be_visible()
        problems = {}
        if fit := fit_on_projectors(page, screenshot=OUTPUT / "slides" / "gpu-benchmark.png"):
            problems["before"] = fit
        page.locator(".st-key-gpu_run button").first.click()
        expect(page.locator(FIGURE).first).to_be_visible(timeout=120_000)  # the run's chart
        wait_for_app(page)
        assert_no_problems(page)
        expect(page.get_by_text("timings are the cache's").first).to_be_visible()
        if fit := fit_on_projectors(page, screenshot=OUTPUT / "slides" / "gpu-benchmark-run.png"):
            problems["after"] = fit
        assert not problems, problems
    finally:
        page.context.close()
