"""What the app's own routes share: a JSON answer (a class's pulse, lnlab.ui.server.pulse, and a
lesson's step, lnlab.ui.server.steps)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Send = Callable[[dict[str, Any]], Any]


async def send_json(send: Send, status: int, body: Any) -> None:
    """Answer with `body` as JSON, never cached or sniffed."""
    data = json.dumps(body, separators=(",", ":")).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(data)).encode()),
        (b"cache-control", b"no-store"),
        (b"x-content-type-options", b"nosniff"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


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
