"""Every page, opened by its URL in a real browser: it loads, shows no error, draws its charts,
asks no other host for anything, does not move once drawn and passes axe (tests/browser/axe.py)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from .axe import MAX_LAYOUT_SHIFT, STUDENT, assert_accessible
from .conftest import (
    APP_PAGES,
    HOME,
    OUTPUT,
    TITLE,
    AppPage,
    StreamlitServer,
    assert_charts_drawn,
    assert_links_stay_local,
    assert_no_problems,
    expect_rerun,
    layout_shift,
    nav_link,
    new_app_page,
    screenshot_whole_page,
    wait_for_app,
)

pytestmark = pytest.mark.browser

SCREENSHOTS = OUTPUT / "screenshots"
# Code a first view never needs (issue 40): the grid's (its popover), Plotly's (the
# "Interactive chart" popover), the code highlighter's (the script's popover), the parser of
# Markdown with HTML of its own (none is drawn), a formula library (formulas are MathML:
# lnlab.teach.mathml) and the select box's (choices are lnlab.ui.inputs.menu or radios)
ON_REQUEST = (
    "DataFrame.",
    "PlotlyChart.",
    "StreamlitSyntaxHighlighter.",
    "rehype-raw.",
    "rehype-katex.",
    "/katex/katex.min.js",
    "Selectbox.",
)


@pytest.mark.parametrize("app_page", APP_PAGES, ids=lambda p: p.name)
def test_page_loads_clean(browser: Browser, streamlit_server: StreamlitServer, app_page: AppPage):
    """As a student's laptop (1366 x 768) opens it: no error, charts drawn, nothing moving
    once drawn (CLS), no serious or critical axe violation."""
    page = new_app_page(browser, STUDENT)
    try:
        errors: list[str] = []
        page.on("pageerror", lambda err: errors.append(str(err)))
        scripts: list[str] = []
        page.on("request", lambda r: scripts.append(r.url) if r.resource_type == "script" else None)

        page.goto(streamlit_server.page_url(app_page))
        wait_for_app(page)

        assert_no_problems(page)
        expect(page.locator(TITLE).first).not_to_be_empty()
        expect(page).to_have_title(app_page.document_title)
        assert_charts_drawn(page)
        assert not errors, f"uncaught JavaScript errors on {app_page.path}: {errors}"
        assert_links_stay_local(page)  # and nothing_leaves_the_machine checks the requests
        assert layout_shift(page) <= MAX_LAYOUT_SHIFT, f"CLS {layout_shift(page):.3f}"
        early = [u for u in scripts if any(name in u for name in ON_REQUEST)]
        assert not early, f"{app_page.name} loads code it shows nothing with: {early}"
        assert_accessible(page, f"{app_page.name} at 1366 x 768")
        screenshot_whole_page(page, SCREENSHOTS / f"{app_page.name}.png")
    finally:
        page.context.close()


def test_sidebar_navigation_and_back(page: Page, streamlit_server: StreamlitServer):
    target = APP_PAGES[1]
    page.goto(streamlit_server.page_url(HOME))
    wait_for_app(page)
    home_heading = page.locator(TITLE).first.inner_text()

    with expect_rerun(page):
        nav_link(page, target).click()
    expect(page).to_have_url(streamlit_server.page_url_pattern(target))
    expect(page).to_have_title(target.document_title)
    assert_no_problems(page)

    with expect_rerun(page):
        page.go_back()
    back_home = expect(page, "one press of Back should return to the page the link was clicked on")
    back_home.to_have_url(streamlit_server.page_url_pattern(HOME))
    expect(page).to_have_title(HOME.document_title)
    expect(page.locator(TITLE).first).to_have_text(home_heading)
    assert_no_problems(page)
