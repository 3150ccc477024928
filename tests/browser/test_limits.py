"""Links the server cannot take, in a real browser, on a server started as `make run` does."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from lnlab.serving.cluster import healthy

from .conftest import MAIN, StreamlitServer, assert_no_problems, wait_for_app

pytestmark = pytest.mark.browser

NOTICE = '[data-testid="stAlertContentWarning"]'


def test_a_link_of_1200_parameters_gets_the_notice_and_a_clean_address(
    page: Page, streamlit_server: StreamlitServer
):
    """Streamlit drops a query of over 1,000 parameters; the page says so and the address
    bar then holds the page's own link, not the dropped one."""
    query = "&".join(f"p{i}=1" for i in range(1200))
    page.goto(f"{streamlit_server.url}/conventions?{query}")
    wait_for_app(page)
    notice = page.locator(f"{MAIN} {NOTICE}")
    expect(notice).to_contain_text("too long for the server")
    expect(notice).to_contain_text("1,200 parameters")
    assert "p0=" not in page.url and "dropped" not in page.url
    assert_no_problems(page)


def test_a_600_kib_link_is_refused_by_the_server_which_stays_up(
    page: Page, streamlit_server: StreamlitServer
):
    """The server's HTTP parser refuses a request line this long (over about 128 KiB) before
    any page runs: the browser gets a 400 (Chromium shows its own error page), and everyone
    else the app as before."""
    response = page.request.get(f"{streamlit_server.url}/conventions?x={'1' * 600 * 1024}")
    status = response.status
    assert status == 400, status
    assert healthy(streamlit_server.url)
    page.goto(f"{streamlit_server.url}/conventions")
    wait_for_app(page)
    assert_no_problems(page)
