"""lnlab.ui.server: the app Streamlit finds in app.py, and its middleware (the page's HTML with
the app's CSS, presenter mode's, the referrer policy and the assist script, once; the scripts as
files; the headers on every answer)."""

from __future__ import annotations

from pathlib import Path

import streamlit
from helpers import ROOT, run_coroutine
from streamlit.web.server.app_discovery import discover_asgi_app

from lnlab.ui.server import headers, middleware, shell
from lnlab.ui.style import BASE_CSS, PRESENTER_CSS

STATIC = Path(streamlit.__file__).parent / "static"
INDEX = (STATIC / "index.html").read_bytes()


def test_streamlit_finds_the_app_in_app_py():
    """`streamlit run app.py` serves app.py's st.App (read from the file, not run): were it not
    found, Streamlit would run app.py as a page and serve none of the middleware."""
    found = discover_asgi_app(ROOT / "app.py")
    assert found.is_asgi_app and found.import_string == "app:app"
    assert [m.cls.__name__ for m in middleware()] == ["Headers", "Shell", "PulseRoute", "StepRoute"]


def test_the_head_goes_after_the_title_before_streamlits_scripts_once():
    page = INDEX.decode()
    served = shell.with_head(page)
    assert served.count(shell.MARK) == 1 and shell.with_head(served) == served
    assert served.index("</title>") < served.index(shell.MARK) < served.index('type="module"')
    head = shell.head()
    assert shell._rules(BASE_CSS) in head
    assert "html.lnlab-present {\n" + shell._rules(PRESENTER_CSS) in head
    assert '<meta name="referrer" content="no-referrer" />' in head
    assert '<script src="./lnlab-assist.js"></script>' in head  # a file: no inline script
    assert "<script>" not in head


async def _streamlit(scope, receive, send) -> None:
    """Streamlit's server as the middleware sees it: index.html for a page's path (gzipped if
    the request allows it, as Streamlit's own middleware does), a file for anything else."""
    path = scope["path"]
    if "." in path.rsplit("/", 1)[-1]:
        body, kind = b"file " + path.encode(), b"image/png"
    else:
        body, kind = INDEX, b"text/html; charset=utf-8"
        if any(k == b"accept-encoding" for k, _ in scope["headers"]):
            body, kind = b"gzipped", b"text/html; charset=utf-8"
    start = [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": start})
    await send({"type": "http.response.body", "body": body})


def _get(app, path: str, method: str = "GET") -> tuple[dict, bytes]:
    sent: list[dict] = []

    async def record(message) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path}
    scope["headers"] = [(b"accept-encoding", b"gzip")]
    run_coroutine(app(scope, None, record))
    return sent[0], b"".join(m.get("body", b"") for m in sent[1:])


def test_every_page_path_gets_the_shell_and_every_file_is_left_alone():
    app = shell.Shell(_streamlit)
    for page in ("/", "/step_through", "/padding"):
        start, body = _get(app, page)
        assert shell.MARK.encode() in body, page
        assert dict(start["headers"])[b"content-length"] == str(len(body)).encode()
    for path in ("/favicon.png", "/static/js/index.js", "/_stcore/health", "/_lnlab/pulse/X"):
        start, body = _get(app, path)
        assert shell.MARK.encode() not in body, path
    for name, path in shell.ASSETS.items():
        start, body = _get(app, f"/{name}")
        assert body == path.read_bytes()
        assert dict(start["headers"])[b"content-type"].startswith(b"text/javascript")


def test_every_answer_says_no_referrer_and_websockets_pass():
    """A teacher link's secret or a class code never leaves in a Referer."""
    start, body = _get(headers.Headers(_streamlit), "/favicon.png")
    assert (b"referrer-policy", b"no-referrer") in start["headers"] and body.startswith(b"file")
    seen: list[str] = []

    async def socket(scope, receive, send) -> None:
        seen.append(scope["type"])

    run_coroutine(headers.Headers(socket)({"type": "websocket"}, None, None))
    assert seen == ["websocket"]
