"""Every page asks only its own server for anything: no font host, no CDN, no tracker.

A classroom behind a firewall, or offline, must get the whole page (icons included), and no
visitor's address may go to a third party. Every browser test watches its pages' requests
(documents, scripts, styles, fonts, images, the favicon, fetches, workers) and websockets, and
fails on any to another host (`nothing_leaves_the_machine` in conftest.py): every page in
normal mode (test_pages.py), every lesson in presenter mode (test_presenter.py), phones, the
live class and the cluster. This file adds the pages no other test presents, with requests
to other hosts aborted, never sent: the test needs no network and its result does not depend
on one.

The page's <link> elements are checked in the DOM too (`assert_links_stay_local`, also in
test_pages.py), in case the browser does not fetch one (a favicon, a preload) while the test
looks. What this catches: `st.set_page_config(page_icon=":material/...")`, whose favicon
Streamlit's frontend loads from fonts.gstatic.com (lnlab/ui/icons.py has the local replacement),
and `browser.gatherUsageStats`, on by Streamlit's default, which makes every page ask
data.streamlit.io (.streamlit/config.toml turns it off; the server here runs with the
project's config, not a command-line override).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, Route

from .axe import MAX_LAYOUT_SHIFT, assert_accessible
from .conftest import (
    APP_PAGES,
    OUTSIDE,
    AppPage,
    StreamlitServer,
    assert_links_stay_local,
    is_outside,
    layout_shift,
    new_app_page,
    note_if_outside,
    wait_for_app,
)
from .slides import PROJECTORS

pytestmark = pytest.mark.browser

PRESENTER = "?v=1&present=1"


def _refuse_outside(route: Route) -> None:
    if is_outside(route.request.url):
        note_if_outside(f"request ({route.request.resource_type})", route.request.url)
        route.abort("blockedbyclient")
    else:
        route.continue_()


@pytest.mark.parametrize("app_page", [p for p in APP_PAGES if not p.lesson], ids=lambda p: p.name)
def test_a_page_in_presenter_mode_asks_only_its_own_server(
    browser: Browser, streamlit_server: StreamlitServer, app_page: AppPage
):
    """On a projector (1024 x 768); it also opens without a layout shift and passes axe (the
    lessons' slides do in test_presenter.py)."""
    page = new_app_page(browser, PROJECTORS[0])
    try:
        page.context.route("**/*", _refuse_outside)
        page.goto(streamlit_server.page_url(app_page) + PRESENTER)
        # The page config (and with it the favicon) arrives before the run ends; the favicon's
        # own fetch, and any lazily loaded code, may come after: wait for the network to go
        # quiet.
        wait_for_app(page)
        page.wait_for_load_state("networkidle")
        assert_links_stay_local(page)  # and nothing_leaves_the_machine checks the requests
        assert layout_shift(page) <= MAX_LAYOUT_SHIFT, f"CLS {layout_shift(page):.3f}"
        assert_accessible(page, f"{app_page.name}, presenter mode at 1024 x 768")
    finally:
        page.context.close()


def test_a_request_to_another_host_is_noticed(page: Page, streamlit_server: StreamlitServer):
    """The watch itself: a page that fetches from another host is caught (then forgiven)."""
    page.context.route("**/*", _refuse_outside)
    page.goto(streamlit_server.url + "/_stcore/health")
    page.evaluate("fetch('https://fonts.gstatic.com/x.woff2').catch(() => null)")
    page.wait_for_load_state("networkidle")
    assert OUTSIDE == ["request (fetch): https://fonts.gstatic.com/x.woff2"]
    OUTSIDE.clear()
