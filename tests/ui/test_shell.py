"""lnlab.ui.shell: the page's HTML carries the app's CSS, presenter mode's under
html.lnlab-present, the referrer policy and the assist script, once; the launcher's server
sends it, and the app's scripts as files."""

from __future__ import annotations

from pathlib import Path

import streamlit
from helpers import run_coroutine
from streamlit.web.server.starlette import starlette_static_routes as routes

from lnlab.ui import shell
from lnlab.ui.style import BASE_CSS, PRESENTER_CSS

STATIC = Path(streamlit.__file__).parent / "static"


def test_the_head_goes_after_the_title_before_streamlits_scripts_once():
    page = (STATIC / "index.html").read_text()
    served = shell.with_head(page)
    assert served.count(shell.MARK) == 1 and shell.with_head(served) == served
    assert served.index("</title>") < served.index(shell.MARK) < served.index('type="module"')
    head = shell.head()
    assert shell._rules(BASE_CSS) in head
    assert "html.lnlab-present {\n" + shell._rules(PRESENTER_CSS) in head
    assert '<meta name="referrer" content="no-referrer" />' in head
    assert '<script src="./lnlab-assist.js"></script>' in head  # a file: no inline script
    assert "<script>" not in head


def _get(handler, path: str):
    scope = {"type": "http", "method": "GET", "path": path, "headers": [], "root_path": ""}
    return run_coroutine(handler.get_response(path.lstrip("/"), scope))


def test_the_server_sends_the_page_with_the_head_and_every_other_file_as_it_is():
    original = routes.create_streamlit_static_handler
    try:
        shell.install()
        shell.install()  # twice: still one wrapper
        assert routes.create_streamlit_static_handler.lnlab_shell
        handler = routes.create_streamlit_static_handler(str(STATIC), None)
        for page in ("/", "/step_through"):  # a page's path falls back to index.html
            response = _get(handler, page)
            assert shell.MARK in response.body.decode()
            assert response.headers["cache-control"] == "no-cache"
        for name, path in shell.ASSETS.items():
            script = _get(handler, f"/{name}")
            assert script.body == path.read_bytes()
            assert script.headers["content-type"].startswith("text/javascript")
        icon = _get(handler, "/favicon.png")
        assert Path(icon.path) == STATIC / "favicon.png"
    finally:
        routes.create_streamlit_static_handler = original
