"""The framework's and the app's static files sent gzipped, each compressed once per process.

Streamlit's own gzip middleware leaves its static bundles (`static/...`, 2 to 8 MiB of
JavaScript a page) uncompressed on purpose: it would compress them again on every request
(starlette_gzip_middleware's comment), and expects a proxy in front to do it. Behind HAProxy
they are compressed; under `make run`, `streamlit run app.py`, uvicorn or a bare container they
went out whole, 30 times for a class of 30 on a school's Wi-Fi. `Compress` (one of the app's
middleware, lnlab.ui.server) gzips a static file the first time a browser that accepts gzip asks
for it, keeps the result (the files do not change while the process runs; the cache is bounded
by CACHE_BYTES) and sends it to every later browser with no work. Hashed bundles keep
Streamlit's `immutable` caching, so a browser fetches each once; the app's own files
(`app/static/`) keep their validators, and a browser asking again with the file's ETag gets a
304 with no body (Streamlit's own serving of app/static/ sends the whole file every time).
"""

from __future__ import annotations

import gzip
import threading
from collections import OrderedDict
from typing import Any

from starlette.concurrency import run_in_threadpool

from lnlab.ui.server.asgi import accepts_gzip, buffered, send_whole, with_headers

PREFIXES = ("static/", "app/static/")  # after the app's base path
KINDS = (b"text/", b"application/javascript", b"application/json", b"image/svg+xml")
MIN_BYTES = 1024  # smaller files gain less than the header costs
CACHE_BYTES = 64 * 1024 * 1024  # compressed bytes kept; the least recently sent go first
LEVEL = 6


class Compressed:
    """Compressed bodies by (path, validator), bounded by CACHE_BYTES; thread-safe."""

    def __init__(self, limit: int = CACHE_BYTES) -> None:
        self.limit, self.size = limit, 0
        self._kept: OrderedDict[tuple[str, bytes], bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, bytes]) -> bytes | None:
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
            return found

    def put(self, key: tuple[str, bytes], data: bytes) -> None:
        with self._lock:
            if key in self._kept or len(data) > self.limit:
                return
            self._kept[key] = data
            self.size += len(data)
            while self.size > self.limit:
                self.size -= len(self._kept.popitem(last=False)[1])


def _has(scope: dict[str, Any], header: bytes) -> bool:
    return any(name == header for name, _ in scope.get("headers", []))


def _static(path: str) -> bool:
    from lnlab.ui.served import base_path

    base = base_path()
    return path.startswith(base) and path[len(base) :].startswith(PREFIXES)


class Compress:
    """ASGI middleware: a GET of a static file answered 304 where the browser has it (its
    If-None-Match), else gzipped for a browser that accepts gzip (Content-Encoding, Vary, the
    validator made weak)."""

    def __init__(self, app: Any, kept: Compressed | None = None) -> None:
        self.app = app
        self.kept = kept or Compressed()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        plain = scope["type"] != "http" or scope.get("method") not in ("GET", "HEAD")
        asks = not plain and (accepts_gzip(scope) or _has(scope, b"if-none-match"))
        if not asks or not _static(scope.get("path", "")):
            await self.app(scope, receive, send)  # nothing to add: Streamlit answers as it does
            return
        start, body = await buffered(self.app, scope, receive)
        headers = dict(start.get("headers", []))
        etag = headers.get(b"etag", b"")
        if start.get("status") == 200 and etag and _matches(scope, etag):
            await _not_modified(send, start)
            return
        kind = headers.get(b"content-type", b"")
        whole = start.get("status") == 200 and b"content-encoding" not in headers
        if not (accepts_gzip(scope) and whole and kind.startswith(KINDS)) or len(body) < MIN_BYTES:
            await send_whole(send, scope, start, body)
            return
        key = (scope["path"], etag + headers.get(b"last-modified", b""))
        data = self.kept.get(key)
        if data is None:
            data = await run_in_threadpool(gzip.compress, body, LEVEL, mtime=0)
            self.kept.put(key, data)
        weak = () if not etag else ((b"etag", etag if etag.startswith(b"W/") else b"W/" + etag),)
        gzipped = with_headers(start, *weak, (b"content-encoding", b"gzip"))
        await send_whole(send, scope, gzipped, data)


def _matches(scope: dict[str, Any], etag: bytes) -> bool:
    """Whether the request's If-None-Match names `etag` (weakly: W/ set aside, as for a GET)."""
    bare = etag.removeprefix(b"W/")
    for name, value in scope.get("headers", []):
        if name == b"if-none-match":
            return any(t.strip().removeprefix(b"W/") in (bare, b"*") for t in value.split(b","))
    return False


async def _not_modified(send: Any, start: dict[str, Any]) -> None:
    """304: the browser's copy is the file; only the validators and caching go back."""
    keep = (b"etag", b"cache-control", b"last-modified", b"vary")
    headers = [(k, v) for k, v in start["headers"] if k in keep]
    await send({"type": "http.response.start", "status": 304, "headers": headers})
    await send({"type": "http.response.body", "body": b""})
