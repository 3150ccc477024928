"""The page's HTML as the launcher serves it: Streamlit's index.html with the app's CSS and
the assist script in its <head>.

Streamlit's page is an empty shell that its JavaScript fills once the first script run has
answered; the app's CSS (lnlab.ui.style) came with that run, so everything it sizes or hides
moved when it arrived: the sidebar's space, presenter mode's hidden sidebar and bigger type
(layout shifts of 0.23 to 0.63 on load, bench/results/lighthouse.md). In the HTML, they hold
from the first paint. The assist script (assets/assist.js, lnlab.ui.assist) gives keyboards
and screen readers the live region, the focus handling and the charts' names.

The scripts are files the page loads from the app itself (`ASSETS`), never inline: a content
security policy of 'self' (HAProxy's, lnlab.serving.haproxy) lets them run. The head also says
`<meta name="referrer" content="no-referrer">`, as the launcher's header does.

`install()` (the launcher calls it, before Streamlit starts) wraps Streamlit's static file
handler so that index.html, and every page path that falls back to it, is served with these
added, and `ASSETS` at the app's root; nothing else Streamlit serves changes.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

from lnlab.ui.style import BASE_CSS, PRESENTER_CSS

ASSIST_JS = Path(__file__).parent / "assets" / "assist.js"
COOKIE_JS = Path(__file__).parent / "assets" / "cookie.js"
COPY_JS = Path(__file__).parent / "assets" / "copy.js"
# Served at the app's root; pages load them by relative address, as Streamlit's own files, so
# they work under any base path.
ASSETS = {"lnlab-assist.js": ASSIST_JS, "lnlab-cookie.js": COOKIE_JS, "lnlab-copy.js": COPY_JS}
MARK = "<!-- lnlab shell -->"


def _rules(css: str) -> str:
    """The CSS inside a <style> block."""
    return re.sub(r"</?style>", "", css).strip()


@cache
def head() -> str:
    """What goes into the page's <head>: the app's CSS, presenter mode's under
    html.lnlab-present (CSS nesting: the assist script sets the class from `present=1`), and
    the assist script."""
    css = f"{_rules(BASE_CSS)}\nhtml.lnlab-present {{\n{_rules(PRESENTER_CSS)}\n}}"
    return (
        f'{MARK}\n<meta name="referrer" content="no-referrer" />\n<style>\n{css}\n</style>\n'
        '<script src="./lnlab-assist.js"></script>\n'
    )


def with_head(page: str) -> str:
    """Streamlit's index.html with `head()` right after its <title>, before its own scripts."""
    if MARK in page:
        return page
    at = page.index("</title>") + len("</title>")
    return f"{page[:at]}\n{head()}{page[at:]}"


def install() -> None:
    """Make Streamlit's server send index.html with `head()` in it (idempotent)."""
    from starlette.responses import FileResponse, HTMLResponse, Response
    from streamlit.web.server.starlette import starlette_static_routes as routes

    original = routes.create_streamlit_static_handler
    if getattr(original, "lnlab_shell", False):
        return

    def create(directory: str, base_url: str | None) -> Any:
        handler = original(directory, base_url)
        index = Path(directory) / "index.html"
        page = with_head(index.read_text(encoding="utf-8"))
        get_response = handler.get_response

        async def get_page(path: str, scope: Any) -> Any:
            if path in ASSETS:
                return Response(
                    ASSETS[path].read_bytes(),
                    media_type="text/javascript; charset=utf-8",
                    headers={"Cache-Control": "no-cache"},
                )
            response = await get_response(path, scope)
            if isinstance(response, FileResponse) and Path(response.path) == index:
                headers = {"Cache-Control": response.headers.get("Cache-Control", "no-cache")}
                return HTMLResponse(page, headers=headers)
            return response

        handler.get_response = get_page
        return handler

    create.lnlab_shell = True  # type: ignore[attr-defined]
    routes.create_streamlit_static_handler = create
