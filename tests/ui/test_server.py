"""lnlab.ui.server: the app Streamlit finds in app.py, and its middleware (the page's HTML with
the app's CSS, presenter mode's, the referrer policy and the assist script, once; the scripts as
files; the headers on every answer)."""

from __future__ import annotations

import gzip
from pathlib import Path

import streamlit
from helpers import ROOT, run_coroutine
from streamlit.web.server.app_discovery import discover_asgi_app
from streamlit.web.server.starlette.starlette_routes import ROUTE_METRICS

from lnlab.ui.server import asgi, compress, headers, middleware, shell
from lnlab.ui.style import BASE_CSS, PRESENTER_CSS

STATIC = Path(streamlit.__file__).parent / "static"
INDEX = (STATIC / "index.html").read_bytes()


def test_streamlit_finds_the_app_in_app_py():
    """`streamlit run app.py` serves app.py's st.App (read from the file, not run): were it not
    found, Streamlit would run app.py as a page and serve none of the middleware."""
    found = discover_asgi_app(ROOT / "app.py")
    assert found.is_asgi_app and found.import_string == "app:app"
    assert [m.cls.__name__ for m in middleware()] == [
        "Deadline",
        "Headers",
        "Shell",
        "Compress",
        "PulseRoute",
        "AnswerRoute",
        "StepRoute",
    ]


def test_the_head_goes_after_the_title_before_streamlits_scripts_once():
    page = INDEX.decode()
    served = shell.with_head(page)
    assert served.count(shell.MARK) == 1 and shell.with_head(served) == served
    assert served.index("</title>") < served.index(shell.MARK) < served.index('type="module"')
    head = shell.head()
    assert shell._rules(BASE_CSS) in head
    assert "html.lnlab-present {\n" + shell._rules(PRESENTER_CSS) in head
    assert '<meta name="referrer" content="no-referrer" />' in head
    assert f'<script src="{shell.asset_url("lnlab-assist.js")}"></script>' in head  # a file
    assert shell.asset_url("lnlab-assist.js").startswith("./lnlab-assist.js?v=")
    assert "<script>" not in head


def test_a_page_with_a_lesson_in_the_browser_preloads_its_modules():
    modules = shell.lesson_modules("step_through")
    assert modules[0] == "step_through.mjs"
    assert {"live_lesson.mjs", "numbers.mjs", "latex.mjs"} <= set(modules)
    assert len(set(modules)) == len(modules)
    for name in modules:  # each there, and each of its imports among them
        text = (shell.LESSONS_DIR / name).read_text(encoding="utf-8")
        assert set(shell._IMPORTS.findall(text)) <= set(modules), name
    head = shell.head("step_through")
    for name in modules:
        assert f'<link rel="modulepreload" href="./app/static/lnlab/{name}" />' in head
    assert shell.lesson_modules("padding")[0] == "padding.mjs"
    for page in ("", "class", "transformer", "no-such-page"):
        assert shell.lesson_modules(page) == () and "modulepreload" not in shell.head(page)
    _, body = _get(shell.Shell(_streamlit), "/step_through")
    assert b"lnlab/step_through.mjs" in gzip.decompress(body)


def test_imports_are_followed_bare_ones_too_and_a_missing_file_is_passed_over(
    tmp_path, monkeypatch
):
    (tmp_path / "lesson.mjs").write_text(
        'import { a } from "./a.mjs";\nimport "./b.mjs";\n// see from "./gone.mjs"\n'
    )
    (tmp_path / "a.mjs").write_text('export { c } from "./c.mjs";\n')
    for name in ("b.mjs", "c.mjs"):
        (tmp_path / name).write_text("export const x = 1;\n")
    monkeypatch.setattr(shell, "LESSONS_DIR", tmp_path)
    for cached in (shell._lesson_pages, shell._imported, shell._head):
        cached.cache_clear()
    try:
        assert shell.lesson_modules("lesson") == ("lesson.mjs", "a.mjs", "b.mjs", "c.mjs")
    finally:
        for cached in (shell._lesson_pages, shell._imported, shell._head):
            cached.cache_clear()


async def _validated(scope, receive, send) -> None:
    """Streamlit's index.html as Starlette's static files answer it: an ETag of the file, and
    a 304 to a browser that names it."""
    etag = b'"index-etag"'
    headers = dict(scope["headers"])
    if headers.get(b"if-none-match") == etag:
        await send({"type": "http.response.start", "status": 304, "headers": [(b"etag", etag)]})
        await send({"type": "http.response.body", "body": b""})
        return
    start = [(b"content-type", b"text/html; charset=utf-8"), (b"etag", etag)]
    start += [(b"last-modified", b"Sun, 29 Nov 2026 00:00:00 GMT"), (b"vary", b"Cookie")]
    await send({"type": "http.response.start", "status": 200, "headers": start})
    await send({"type": "http.response.body", "body": INDEX})


def test_a_page_is_never_a_304_on_index_htmls_validators():
    """The shell's additions change with the app (its CSS, its scripts' versions), not with
    index.html: a browser naming index.html's ETag gets the whole page, with no validator."""
    sent: list[dict] = []

    async def record(message) -> None:
        sent.append(message)

    for gzipped in (True, False):
        sent.clear()
        asked = [(b"if-none-match", b'"index-etag"')]
        asked += [(b"accept-encoding", b"gzip")] if gzipped else []
        scope = {"type": "http", "method": "GET", "path": "/", "headers": asked}
        run_coroutine(shell.Shell(_validated)(scope, None, record))
        start, body = sent[0], b"".join(m.get("body", b"") for m in sent[1:])
        headers = dict(start["headers"])
        assert start["status"] == 200
        assert shell.MARK.encode() in (gzip.decompress(body) if gzipped else body)
        assert b"etag" not in headers and b"last-modified" not in headers
        assert headers[b"cache-control"] == b"no-cache"
        assert headers[b"vary"] == b"Cookie, Accept-Encoding"  # kept, and added to


def test_gzip_is_taken_only_where_the_browser_accepts_it():
    for value, taken in (
        (b"gzip", True),
        (b"br;q=1, gzip;q=0.8", True),
        (b"GZIP", True),
        (b"*", True),
        (b"gzip;q=0", False),
        (b"*;q=0", False),
        (b"identity", False),
        (b"br", False),
    ):
        assert asgi.accepts_gzip({"headers": [(b"accept-encoding", value)]}) is taken, value
    assert not asgi.accepts_gzip({"headers": []})


def test_the_class_check_reads_the_cookie_scripts_the_app_writes():
    """checks/live_class.py plays a browser: it must find the script lnlab.ui.claims writes."""
    from checks.live_class import SCRIPT_COOKIE

    url = shell.asset_url("lnlab-cookie.js")
    page = f'<div><script src="{url}" data-cookie="lnlab_browser=b1; Path=/"></script></div>'
    assert SCRIPT_COOKIE.findall(page) == ["lnlab_browser=b1; Path=/"]


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


def _get(
    app, path: str, method: str = "GET", *, query: str = "", gzipped: bool = True
) -> tuple[dict, bytes]:
    sent: list[dict] = []

    async def record(message) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path, "query_string": query.encode()}
    scope["headers"] = [(b"accept-encoding", b"gzip")] if gzipped else []
    run_coroutine(app(scope, None, record))
    return sent[0], b"".join(m.get("body", b"") for m in sent[1:])


def test_every_page_path_gets_the_shell_and_every_file_is_left_alone():
    app = shell.Shell(_streamlit)
    for page in ("/", "/step_through", "/padding"):
        start, body = _get(app, page)
        headers = dict(start["headers"])
        assert headers[b"content-encoding"] == b"gzip" and headers[b"vary"] == b"Accept-Encoding"
        assert shell.MARK.encode() in gzip.decompress(body), page
        assert headers[b"content-length"] == str(len(body)).encode()
        start, body = _get(app, page, gzipped=False)
        assert shell.MARK.encode() in body and b"content-encoding" not in dict(start["headers"])
    for path in ("/favicon.png", "/static/js/index.js", "/_stcore/health", "/_lnlab/pulse/X"):
        start, body = _get(app, path)
        assert shell.MARK.encode() not in body, path


def test_the_apps_scripts_are_gzipped_and_kept_a_year_at_their_versioned_address():
    app = shell.Shell(_streamlit)
    for name, path in shell.ASSETS.items():
        query = shell.asset_url(name).split("?", 1)[1]
        start, body = _get(app, f"/{name}", query=query)
        headers = dict(start["headers"])
        assert gzip.decompress(body) == path.read_bytes()
        assert headers[b"content-encoding"] == b"gzip"
        assert headers[b"content-type"].startswith(b"text/javascript")
        assert headers[b"cache-control"] == shell.IMMUTABLE
        start, body = _get(app, f"/{name}", query="v=old", gzipped=False)
        assert body == path.read_bytes() and dict(start["headers"])[b"cache-control"] == b"no-cache"
        assert dict(start["headers"])[b"vary"] == b"Accept-Encoding"


def test_every_answer_says_no_referrer_and_websockets_pass():
    """A teacher link's secret or a class code never leaves in a Referer."""
    start, body = _get(headers.Headers(_streamlit), "/favicon.png")
    assert (b"referrer-policy", b"no-referrer") in start["headers"] and body.startswith(b"file")
    seen: list[str] = []

    async def socket(scope, receive, send) -> None:
        seen.append(scope["type"])

    run_coroutine(headers.Headers(socket)({"type": "websocket"}, None, None))
    assert seen == ["websocket"]


def test_streamlits_metrics_are_answered_404_without_the_token(monkeypatch):
    """Issue 38: /_stcore/metrics told anyone the process's sessions, caches and memory. Not
    passed on unless the request carries $LNLAB_METRICS_TOKEN; every other path is."""
    passed: list[str] = []

    async def app(scope, receive, send) -> None:
        passed.append(scope["path"])
        await _streamlit(scope, receive, send)

    def ask(path: str, token: str | None = None) -> int:
        sent: list[dict] = []

        async def record(message) -> None:
            sent.append(message)

        auth = [(b"authorization", f"Bearer {token}".encode())] if token is not None else []
        scope = {"type": "http", "method": "GET", "path": path, "headers": auth}
        run_coroutine(headers.Headers(app)(scope, None, record))
        assert (b"referrer-policy", b"no-referrer") in sent[0]["headers"]
        return sent[0]["status"]

    assert (f"/{ROUTE_METRICS}",) == headers.PRIVATE  # where Streamlit serves them
    monkeypatch.delenv(headers.METRICS_TOKEN_ENV, raising=False)
    for path in ("/_stcore/metrics", "/course/_stcore/metrics", "/_stcore/metrics/"):
        assert ask(path) == 404 and ask(path, "") == 404
    assert passed == []
    assert ask("/_stcore/health") == 200 and ask("/metrics") == 200
    monkeypatch.setenv(headers.METRICS_TOKEN_ENV, "s3cret-token")
    assert ask("/_stcore/metrics") == 404 and ask("/_stcore/metrics", "wrong") == 404
    assert ask("/_stcore/metrics", "s3cret-token") == 200
    assert passed == ["/_stcore/health", "/metrics", "/_stcore/metrics"]


def _asked(app, path: str, method: str = "GET", gzip_ok: bool = True) -> tuple[dict, bytes]:
    sent: list[dict] = []

    async def record(message) -> None:
        sent.append(message)

    headers = [(b"accept-encoding", b"br;q=1, gzip;q=0.8")] if gzip_ok else []
    scope = {"type": "http", "method": method, "path": path, "headers": headers}
    run_coroutine(app(scope, None, record))
    return sent[0], b"".join(m.get("body", b"") for m in sent[1:])


def test_a_page_asked_by_head_gets_its_length_and_no_body():
    start, body = _asked(shell.Shell(_streamlit), "/padding", method="HEAD")
    assert start["status"] == 200 and body == b""
    got, whole = _asked(shell.Shell(_streamlit), "/padding")
    length = dict(start["headers"])[b"content-length"]
    assert length == dict(got["headers"])[b"content-length"] == str(len(whole)).encode()
    assert shell.MARK.encode() in gzip.decompress(whole)  # the shell's page, gzipped


def test_static_files_go_gzipped_once_and_everything_else_as_it_was():
    import gzip

    served: list[str] = []
    script = b"function f() { return 1; }\n" * 200

    async def files(scope, receive, send) -> None:
        served.append(scope["path"])
        kind = b"image/png" if scope["path"].endswith(".png") else b"text/javascript"
        body = script if b"tiny" not in scope["path"].encode() else b"x"
        headers = [(b"content-type", kind), (b"etag", b'"abc"')]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    app = compress.Compress(files)
    for path in ("/static/js/index.X.js", "/app/static/katex/katex.min.js"):
        start, body = _asked(app, path)
        headers = dict(start["headers"])
        assert gzip.decompress(body) == script and len(body) < len(script) / 10
        assert headers[b"content-encoding"] == b"gzip" and headers[b"vary"] == b"Accept-Encoding"
        assert headers[b"etag"] == b'W/"abc"'  # other bytes than the file's: a weak validator
        assert headers[b"content-length"] == str(len(body)).encode()
    assert app.kept.size > 0 and len(app.kept._kept) == 2
    again, body = _asked(app, "/static/js/index.X.js", method="HEAD")
    assert body == b"" and dict(again["headers"])[b"content-encoding"] == b"gzip"
    for path, gzip_ok in (
        ("/static/js/index.X.js", False),  # a browser that takes no gzip
        ("/static/media/logo.png", True),  # already compressed
        ("/static/js/tiny.js", True),  # too small to gain
        ("/_stcore/health", True),  # not a static file
    ):
        start, body = _asked(app, path, gzip_ok=gzip_ok)
        assert b"content-encoding" not in dict(start["headers"]), path


def test_a_browser_that_has_a_static_file_gets_304_and_no_body():
    async def file(scope, receive, send) -> None:
        headers = [(b"content-type", b"text/javascript"), (b"etag", b'"abc"')]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"x" * 5000})

    sent: list[dict] = []

    async def record(message) -> None:
        sent.append(message)

    for tag in (b'W/"abc"', b'"abc"', b'"old", W/"abc"'):
        sent.clear()
        headers = [(b"accept-encoding", b"gzip"), (b"if-none-match", tag)]
        scope = {"type": "http", "method": "GET", "path": "/app/static/x.js", "headers": headers}
        run_coroutine(compress.Compress(file)(scope, None, record))
        assert sent[0]["status"] == 304 and sent[1]["body"] == b"", tag
    start, body = _asked(compress.Compress(file), "/app/static/x.js")  # no validator: the file
    assert start["status"] == 200 and body


def test_the_cache_keeps_at_most_its_bytes():
    kept = compress.Compressed(limit=10)
    kept.put(("a", b""), b"12345")
    kept.put(("b", b""), b"12345")
    kept.get(("a", b""))  # a was sent last: b goes first
    kept.put(("c", b""), b"123")
    assert kept.get(("b", b"")) is None and kept.get(("a", b"")) == b"12345"
    assert kept.size == 8
