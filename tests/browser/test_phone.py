"""Every page on a phone (390 x 844, an iPhone 12 to 15 held upright) in the dark theme: nothing
wider than the screen, so no sideways scrolling, every button and link within reach, no layout
shift, and no serious or critical axe violation.

Tables scroll sideways inside their own box (.lnlab-table-wrap) by design; the page does not.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser

from .axe import MAX_LAYOUT_SHIFT, assert_accessible
from .conftest import (
    APP_PAGES,
    OUTPUT,
    AppPage,
    StreamlitServer,
    assert_no_problems,
    layout_shift,
    new_app_page,
    wait_for_app,
)

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
# the app's background is dark: the sum of its red, green and blue under 150 (light: 765)
DARK_JS = """() => {
    const rgb = getComputedStyle(document.querySelector('[data-testid="stApp"]')).backgroundColor;
    return rgb.match(/\\d+/g).slice(0, 3).reduce((sum, v) => sum + Number(v), 0) < 150;
}"""

# How wide the page is, and what sticks out past the screen's right or left edge: buttons
# and links by their text, other elements by their test id (innermost first).
MEASURE_JS = """() => {
    const width = document.documentElement.clientWidth;
    const main = document.querySelector('[data-testid="stMain"]');
    const scroll = Math.max(document.documentElement.scrollWidth, main.scrollWidth);
    const out = [];
    const inScroller = (el) => el.closest('.lnlab-table-wrap, .js-plotly-plot');
    for (const el of main.querySelectorAll('button, a[href], input, textarea, [data-testid]')) {
        const r = el.getBoundingClientRect();
        if (r.width === 0 || r.height === 0 || inScroller(el)) continue;
        if (r.left < -1 || r.right > width + 1) {
            const name = el.getAttribute('data-testid') || el.tagName.toLowerCase();
            const text = (el.innerText || '').trim().slice(0, 40);
            out.push(`${name} "${text}" ${r.left | 0}..${r.right | 0}`);
        }
    }
    return {width, scroll, out: out.slice(0, 12)};
}"""


def phone_problems(page) -> list[str]:
    """What on the page does not fit a phone's width (empty when everything does)."""
    fit = page.evaluate(MEASURE_JS)
    problems = [f"past the edge: {o}" for o in fit["out"]]
    if fit["scroll"] > fit["width"] + 1:
        problems.insert(0, f"the page is {fit['scroll']} px wide on a {fit['width']} px screen")
    return problems


@pytest.mark.parametrize("app_page", APP_PAGES, ids=lambda p: p.name)
def test_page_fits_a_phone(browser: Browser, streamlit_server: StreamlitServer, app_page: AppPage):
    """In the dark theme (a phone set to dark, which Streamlit follows): the light one is
    test_pages' and the slides'. No layout shift, no serious or critical axe violation."""
    page = new_app_page(browser, PHONE, dark=True)
    try:
        page.goto(streamlit_server.page_url(app_page))
        wait_for_app(page)
        assert_no_problems(page)
        problems = phone_problems(page)
        page.screenshot(path=OUTPUT / "phone" / f"{app_page.name}.png")
        assert not problems, f"{app_page.path} at 390 x 844: {problems}"
        assert layout_shift(page) <= MAX_LAYOUT_SHIFT, f"CLS {layout_shift(page):.3f}"
        assert page.evaluate(DARK_JS), "the page is not in Streamlit's dark theme"
        assert_accessible(page, f"{app_page.name} at 390 x 844, dark")
    finally:
        page.context.close()
