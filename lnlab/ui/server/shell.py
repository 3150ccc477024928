"""The page's HTML as the app serves it: Streamlit's index.html with the app's CSS and
the assist script in its <head>.

Streamlit's page is an empty shell that its JavaScript fills once the first script run has
answered; the app's CSS (lnlab.ui.style) came with that run, so everything it sizes or hides
moved when it arrived: the sidebar's space, presenter mode's hidden sidebar and bigger type
(layout shifts of 0.23 to 0.63 on load, bench/results/lighthouse.md). In the HTML, they hold
from the first paint. The assist script (assets/assist.js, lnlab.ui.assist) gives keyboards
and screen readers the live region, the focus handling and the charts' names.

The scripts are files the page loads from the app itself (`ASSETS`), never inline: a content
security policy of 'self' (HAProxy's, lnlab.serving.haproxy) lets them run. The head also says
`<meta name="referrer" content="no-referrer">`, as the Referrer-Policy header does
(lnlab.ui.server.headers).

`Shell` is one of the app's middleware (lnlab.ui.server): a GET of a page's address (no file
extension, outside Streamlit's own routes) whose answer is HTML, Streamlit's index.html, is
served with these added; `ASSETS` are served at the app's root. Nothing else changes.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from lnlab.ui.server.asgi import accepts_gzip, buffered, send_whole, with_headers
from lnlab.ui.style import BASE_CSS, PRESENTER_CSS

ASSETS_DIR = Path(__file__).parents[1] / "assets"
ASSIST_JS = ASSETS_DIR / "assist.js"
COOKIE_JS = ASSETS_DIR / "cookie.js"
COPY_JS = ASSETS_DIR / "copy.js"
# Served at the app's root; pages load them by relative address, as Streamlit's own files, so
# they work under any base path.
ASSETS = {"lnlab-assist.js": ASSIST_JS, "lnlab-cookie.js": COOKIE_JS, "lnlab-copy.js": COPY_JS}
MARK = "<!-- lnlab shell -->"
LESSONS_DIR = Path(__file__).parents[3] / "static" / "lnlab"  # the browser's lessons
# a lesson's static imports: `import { a } from "./x.mjs"`, `export ... from`, `import "./x.mjs"`
_IMPORTS = re.compile(r"""\b(?:from|import)\s+["']\./([\w.-]+\.mjs)["']""")
_CONDITIONAL = (b"if-none-match", b"if-modified-since", b"if-range", b"range")
_VALIDATORS = (b"etag", b"last-modified", b"cache-control", b"accept-ranges")
IMMUTABLE = b"public, max-age=31536000, immutable"  # a versioned address never changes


@cache
def _asset(name: str) -> tuple[bytes, bytes, str]:
    """Asset `name`: the file, gzipped, and its version (12 hex digits of its SHA-256)."""
    data = ASSETS[name].read_bytes()
    return data, gzip.compress(data, 9, mtime=0), hashlib.sha256(data).hexdigest()[:12]


def asset_url(name: str) -> str:
    """The address a page loads asset `name` by: relative, as Streamlit's own files (so under
    any base path), and versioned by its content, so a browser keeps it for a year."""
    return f"./{name}?v={_asset(name)[2]}"


@lru_cache(maxsize=32)
def _gzipped(page: bytes) -> bytes:
    """A page's HTML gzipped, compressed once per process (one HTML per page)."""
    return gzip.compress(page, 9, mtime=0)


def _rules(css: str) -> str:
    """The CSS inside a <style> block."""
    return re.sub(r"</?style>", "", css).strip()


def head(page: str = "") -> str:
    """What goes into the <head> of page `page` ("" for home, "padding"): the app's CSS,
    presenter mode's under html.lnlab-present (CSS nesting: the assist script sets the class
    from `present=1`), the assist script, and a modulepreload of each module of the page's
    browser lesson (lesson_modules)."""
    return _head(lesson_modules(page))


@cache  # one per page with a lesson in the browser, one for the others
def _head(modules: tuple[str, ...]) -> str:
    css = f"{_rules(BASE_CSS)}\nhtml.lnlab-present {{\n{_rules(PRESENTER_CSS)}\n}}"
    preloads = "".join(
        f'<link rel="modulepreload" href="./app/static/lnlab/{m}" />\n' for m in modules
    )
    return (
        f'{MARK}\n<meta name="referrer" content="no-referrer" />\n<style>\n{css}\n</style>\n'
        f'<script src="{asset_url("lnlab-assist.js")}"></script>\n{preloads}'
    )


def lesson_modules(page: str) -> tuple[str, ...]:
    """The module of `page`'s browser lesson (static/lnlab/<page>.mjs, lnlab.ui.live) and every
    module it imports, each once; () for a page without one.

    The lesson loads them when its component mounts, after the first run, and each import is
    found only once the module that imports it has arrived: three round trips in a row before
    the lesson can draw (in the step-through's Lighthouse trace the last arrived at 3.36 s and
    the largest paint came at 3.38 s, against the one-widget floor's 2.28). Named in the
    page's HTML, they load beside Streamlit's own scripts."""
    return _imported(f"{page}.mjs") if page in _lesson_pages() else ()


@cache
def _lesson_pages() -> frozenset[str]:
    return frozenset(p.stem for p in LESSONS_DIR.glob("*.mjs"))


@cache  # one per module in static/lnlab, never one per address asked
def _imported(first: str) -> tuple[str, ...]:
    found: list[str] = []
    todo = [first]
    while todo:
        name = todo.pop(0)
        if name in found:
            continue
        try:
            text = (LESSONS_DIR / name).read_text(encoding="utf-8")
        except OSError:  # named in a comment, say: the page goes on without preloading it
            continue
        found.append(name)
        todo += _IMPORTS.findall(text)
    return tuple(found)


def with_head(page: str, path: str = "") -> str:
    """Streamlit's index.html with page `path`'s `head()` right after its <title>, before its
    own scripts."""
    if MARK in page:
        return page
    at = page.index("</title>") + len("</title>")
    return f"{page[:at]}\n{head(path)}{page[at:]}"


# Streamlit's own routes and files: never a page's address
_NOT_PAGES = ("_stcore/", "static/", "app/static/", "component/", "media/", "_lnlab/")


def _page_path(path: str) -> str | None:
    """The part of `path` after the app's root if it can be a page's address ("" for the
    home page, "padding"), else None."""
    from lnlab.ui.served import base_path

    base = base_path()
    if not path.startswith(base) and path != base.rstrip("/"):
        return None
    rest = path[len(base) :]
    if rest.startswith(_NOT_PAGES) or "." in rest.rsplit("/", 1)[-1]:
        return None
    return rest


class Shell:
    """ASGI middleware: Streamlit's page (index.html, for the home page and every page path)
    with `head()` in it, and `ASSETS` at the app's root."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        name = path.rsplit("/", 1)[-1]
        if name in ASSETS:
            await _send_asset(send, scope, name)
            return
        page = _page_path(path)
        if page is None:
            await self.app(scope, receive, send)
            return
        # the whole page, never a 304: Streamlit's validators are index.html's, which the
        # shell's additions (CSS, script versions, preloads) change without changing them
        asked = [(k, v) for k, v in scope.get("headers", []) if k not in _CONDITIONAL]
        start, data = await buffered(self.app, {**scope, "headers": asked}, receive)
        kind = dict(start.get("headers", [])).get(b"content-type", b"")
        if start.get("status") == 200 and kind.startswith(b"text/html") and data:
            data = with_head(data.decode("utf-8"), page.strip("/")).encode("utf-8")
            plain = [(k, v) for k, v in start["headers"] if k not in _VALIDATORS]
            start = {**start, "headers": [*plain, (b"cache-control", b"no-cache")]}
            if accepts_gzip(scope):
                data, start = _gzipped(data), with_headers(start, (b"content-encoding", b"gzip"))
            else:
                start = with_headers(start)
        await send_whole(send, scope, start, data)


async def _send_asset(send: Any, scope: dict[str, Any], name: str) -> None:
    """Asset `name`, gzipped where the browser takes it; kept for a year at its versioned
    address (asset_url), asked again each time at any other."""
    data, packed, version = _asset(name)
    versioned = f"v={version}".encode() in scope.get("query_string", b"").split(b"&")
    start = {
        "type": "http.response.start",
        "status": 200,
        "headers": [
            (b"content-type", b"text/javascript; charset=utf-8"),
            (b"cache-control", IMMUTABLE if versioned else b"no-cache"),
        ],
    }
    if accepts_gzip(scope):
        data, start = packed, with_headers(start, (b"content-encoding", b"gzip"))
    else:
        start = with_headers(start)
    await send_whole(send, scope, start, data)
