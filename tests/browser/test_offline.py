"""Every page asks only its own server for anything: no font host, no CDN, no tracker.

A classroom behind a firewall, or offline, must get the whole page (icons included), and no
visitor's address may go to a third party. Each page is opened in normal and presenter mode
while the browser context records every request (documents, scripts, styles, fonts, images,
the favicon, fetches, workers) and every websocket. Requests to any other host are recorded and
aborted, never sent: the test needs no network and its result does not depend on one.

The page's <link> elements are checked in the DOM too, in case the browser does not fetch one
(a favicon, a preload) while the test looks. What this catches: `st.set_page_config(page_icon=
":material/...")`, whose favicon Streamlit's frontend loads from fonts.gstatic.com (lnlab/icons.py
has the local replacement), and `browser.gatherUsageStats`, on by Streamlit's default, which
makes every page ask data.streamlit.io (.streamlit/config.toml turns it off; the server here
runs with the project's config, not a command-line override).
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, Route

from .conftest import APP_PAGES, AppPage, StreamlitServer, wait_for_app

pytestmark = pytest.mark.browser

MODES = {"normal": "", "presenter": "?v=1&present=1"}
# Schemes that never leave the browser.
LOCAL_SCHEMES = {"data", "blob", "about", "chrome", "chrome-extension", "devtools"}
# Every <link> whose href the browser may load by itself (icons, preloads, styles, manifest).
LINK_HREFS_JS = """() => Array.from(document.querySelectorAll('link[href]'))
    .map((link) => [link.rel, link.href])"""


def _own_origins(server: StreamlitServer) -> set[tuple[str, str]]:
    """(scheme, host:port) pairs of the app's own server, for HTTP and its websocket."""
    hosts = {f"127.0.0.1:{server.port}", f"localhost:{server.port}"}
    return {(scheme, host) for scheme in ("http", "ws") for host in hosts}


def _is_outside(url: str, own: set[tuple[str, str]]) -> bool:
    parts = urlsplit(url)
    if parts.scheme in LOCAL_SCHEMES:
        return False
    return (parts.scheme, parts.netloc) not in own


@pytest.mark.parametrize("mode", MODES, ids=str)
@pytest.mark.parametrize("app_page", APP_PAGES, ids=lambda p: p.name)
def test_page_requests_only_its_own_server(
    page: Page, streamlit_server: StreamlitServer, app_page: AppPage, mode: str
):
    own = _own_origins(streamlit_server)
    outside: list[str] = []  # "<how>: <url>", each once

    def record(how: str, url: str) -> None:
        entry = f"{how}: {url}"
        if _is_outside(url, own) and entry not in outside:
            outside.append(entry)

    def refuse_outside(route: Route) -> None:
        if _is_outside(route.request.url, own):
            record(f"request ({route.request.resource_type})", route.request.url)
            route.abort("blockedbyclient")
        else:
            route.continue_()

    context = page.context
    context.route("**/*", refuse_outside)
    context.on("request", lambda r: record(f"request ({r.resource_type})", r.url))
    page.on("websocket", lambda ws: record("websocket", ws.url))

    url = streamlit_server.page_url(app_page) + MODES[mode]
    page.goto(url)
    # The page config (and with it the favicon) arrives before the run ends; the favicon's
    # own fetch, and any lazily loaded code, may come after: wait for the network to go quiet.
    wait_for_app(page)
    page.wait_for_load_state("networkidle")

    for rel, href in page.evaluate(LINK_HREFS_JS):
        record(f'<link rel="{rel}">', href)
    assert not outside, (
        f"{url} asks hosts other than its own server for {len(outside)} thing(s):\n"
        + "\n".join(outside)
    )
