"""What the app's own routes share: a JSON answer (a class's pulse, lnlab.ui.server.pulse, and a
lesson's step, lnlab.ui.server.steps), and a request's body read within a deadline.

A client that promises a body and sends it a byte at a time held the connection (and, through
HAProxy, one of its `maxconn`) for as long as it liked: uvicorn sets no deadline on a body
(issue 38: 60 s each, HAProxy's `timeout server`). `read_body` takes at most BODY_S and the
route's own size limit, and the answer to a body refused (408, 413) closes the connection, so
that what the client still sends is never read.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

Send = Callable[[dict[str, Any]], Any]
BODY_S = 3.0  # a route's whole body (under 200 bytes) comes in one packet; a slow client gets 408


class BodyRefused(Exception):
    """A request's body not read: `status` 408 (not sent within BODY_S), 413 (over the
    route's limit, as promised by Content-Length or as sent), 400 (a Content-Length that is
    not a length); the message says which."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Disconnected(Exception):
    """The client went away before its body came: nothing to answer."""


async def read_body(
    scope: dict[str, Any], receive: Any, limit: int, within_s: float | None = None
) -> bytes:
    """The request's whole body, at most `limit` bytes, read within `within_s` (BODY_S);
    BodyRefused otherwise, before reading anything past `limit`."""
    promised = dict(scope.get("headers", [])).get(b"content-length")
    if promised is not None:
        if not promised.strip().isdigit():
            raise BodyRefused(400, "Content-Length is not a length")
        if int(promised) > limit:
            raise BodyRefused(413, f"the body is at most {limit} bytes")
    body = bytearray()
    try:
        async with asyncio.timeout(BODY_S if within_s is None else within_s):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise Disconnected
                body += message.get("body", b"")
                if len(body) > limit:
                    raise BodyRefused(413, f"the body is at most {limit} bytes")
                if not message.get("more_body"):
                    return bytes(body)
    except TimeoutError:
        raise BodyRefused(408, "the body did not come in time") from None


async def posted(
    scope: dict[str, Any], receive: Any, send: Send, limit: int, what: str
) -> bytes | None:
    """A route's POST body (`read_body`: within BODY_S, at most `limit` bytes), or None once
    the request has been answered: 405 for another method ("`what` is posted"), the refusal
    of a slow or long body (its connection closed, what is left unread), nothing for a client
    gone."""
    if scope.get("method") != "POST":
        await send_json(send, 405, {"error": f"{what} is posted (POST)"})
        return None
    try:
        return await read_body(scope, receive, limit)
    except BodyRefused as err:
        await send_json(send, err.status, {"error": str(err)}, close=True)
    except Disconnected:
        pass
    return None


async def send_json(send: Send, status: int, body: Any, *, close: bool = False) -> None:
    """Answer with `body` as JSON (bytes: already JSON, made once for many devices), never
    cached or sniffed; `close`: the connection closes after it (a request whose body was not
    read)."""
    data = body if isinstance(body, bytes) else json.dumps(body, separators=(",", ":")).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(data)).encode()),
        (b"cache-control", b"no-store"),
        (b"x-content-type-options", b"nosniff"),
        *([(b"connection", b"close")] if close else []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def accepts_gzip(scope: dict[str, Any]) -> bool:
    """Whether the request's Accept-Encoding takes gzip (named, or as *, with q above 0)."""
    for name, value in scope.get("headers", []):
        if name == b"accept-encoding":
            return any(_takes(p, (b"gzip", b"*")) for p in value.split(b","))
    return False


def _takes(part: bytes, codings: tuple[bytes, ...]) -> bool:
    """Whether one Accept-Encoding item ("gzip;q=0.8") names one of `codings` with q > 0."""
    coding, *params = (p.strip() for p in part.split(b";"))
    if coding.lower() not in codings:
        return False
    for param in params:
        key, _, q = param.partition(b"=")
        if key.strip().lower() == b"q":
            try:
                return float(q) > 0
            except ValueError:
                return False
    return True


def with_headers(start: dict[str, Any], *added: tuple[bytes, bytes]) -> dict[str, Any]:
    """`start` with `added` headers, and Accept-Encoding added to its Vary (the body depends
    on it, gzipped or not), for the caches between the app and a browser."""
    names = {b"vary", *(k for k, _ in added)}
    headers = start.get("headers", [])
    kept = [(k, v) for k, v in headers if k not in names]
    vary = [p.strip() for k, v in headers if k == b"vary" for p in v.split(b",") if p.strip()]
    if b"accept-encoding" not in (p.lower() for p in vary):
        vary.append(b"Accept-Encoding")
    return {**start, "headers": [*kept, *added, (b"vary", b", ".join(vary))]}


async def buffered(app: Any, scope: dict[str, Any], receive: Any) -> tuple[dict[str, Any], bytes]:
    """What `app` answers a GET of `scope` (a HEAD asked as a GET, so that its length is the
    body's), uncompressed (no Accept-Encoding passed on): its start message and whole body."""
    headers = [(k, v) for k, v in scope.get("headers", []) if k != b"accept-encoding"]
    start: dict[str, Any] = {}
    body: list[bytes] = []

    async def keep(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            start.update(message)
        elif message["type"] == "http.response.body":
            body.append(message.get("body", b""))

    await app({**scope, "method": "GET", "headers": headers}, receive, keep)
    return start, b"".join(body)


async def send_whole(send: Send, scope: dict[str, Any], start: dict[str, Any], body: bytes) -> None:
    """Send `start` and `body` (none for a HEAD), the length set to the body's."""
    headers = [(k, v) for k, v in start.get("headers", []) if k != b"content-length"]
    headers.append((b"content-length", str(len(body)).encode()))
    await send({**start, "headers": headers})
    head = scope.get("method") == "HEAD"
    await send({"type": "http.response.body", "body": b"" if head else body})
