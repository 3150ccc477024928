"""Every request's body within a deadline, whoever reads it (issue 38, "connections held open").

The app's own routes read their bodies with `asgi.read_body` (BODY_S, a size limit); behind
HAProxy, `timeout http-request` bounds every body. Served without it (`make run`, `streamlit run
app.py`, `uvicorn app:app`), Streamlit's routes that read a body (a file upload, PUT
.../_stcore/upload_file/...) had no deadline: a client that promised 1,000 bytes and sent 1 held
a connection and a task as long as it liked, and uvicorn waits for a body as long as bytes
trickle in, even after the answer (each byte restarts its keep-alive timer).

`Deadline` (the outermost of the app's middleware) lets a body come at MIN_RATE after GRACE_S: by
GRACE_S plus one second per MIN_RATE bytes received, the next bytes are there or the request is
answered 408 (with no answer started) and the app reads the client as gone. A body of n bytes has
GRACE_S + n / MIN_RATE in all, at most that of the largest upload Streamlit takes
(server.maxUploadSize); a client must keep sending to keep its connection. An answer that starts
before the body has all been read (the 408, or an app's answer to a body it did not read) closes
the connection, so that what the client still sends is never waited for. Requests without a body
and websockets pass untouched.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lnlab.ui.server.asgi import BODY_S, send_json
from lnlab.ui.server.headers import HEADERS

GRACE_S = BODY_S  # a small body's whole time, as for the app's own routes (one packet, 3 s)
# After GRACE_S, a body comes at least this fast: a class of 30 uploading at once through a
# 1 Mbit/s uplink gets about 4 KiB/s each; a client that holds a connection pays as much.
MIN_RATE = 4 * 1024  # bytes a second
FRAMING = 1024 * 1024  # a multipart body's part headers around its file (Streamlit's margin)
_CLOSE = (b"connection", b"close")
_LOG = logging.getLogger(__name__)


def has_body(scope: dict[str, Any]) -> bool:
    """Whether the request says a body follows: a Content-Length other than 0, or a transfer
    coding (chunked)."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length" and value.strip() != b"0":
            return True
        if name == b"transfer-encoding":
            return True
    return False


def largest_body() -> int:
    """The longest body whose time counts (`allowed_s`): Streamlit's server.maxUploadSize (MB)
    and a multipart body's framing."""
    from streamlit import config

    return int(config.get_option("server.maxUploadSize")) * 1024 * 1024 + FRAMING


def allowed_s(received: int, grace_s: float, rate: float, most: int) -> float:
    """Seconds from the app's first read by which a body's bytes after the first `received` must
    come: `grace_s`, and a second per `rate` bytes received, counted up to `most`."""
    return grace_s + min(received, most) / rate


class Deadline:
    """ASGI middleware: a request's body comes at MIN_RATE after GRACE_S (`allowed_s`), or the
    request is answered 408 and its connection closed; any answer that starts before its body
    was read closes the connection. `grace_s`, `rate`, `most`: the module's values (read at each
    request) and Streamlit's upload limit unless given."""

    def __init__(
        self,
        app: Any,
        grace_s: float | None = None,
        rate: float | None = None,
        most: int | None = None,
    ) -> None:
        self.app = app
        self.grace_s, self.rate, self.most = grace_s, rate, most

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not has_body(scope):
            await self.app(scope, receive, send)
            return
        grace_s = GRACE_S if self.grace_s is None else self.grace_s
        rate = MIN_RATE if self.rate is None else self.rate
        most = largest_body() if self.most is None else self.most
        loop = asyncio.get_running_loop()
        start: float | None = None  # the app's first read: what it does before is not the client's
        received, read, started, late, refused = 0, False, False, False, False

        async def receiving() -> dict[str, Any]:
            nonlocal start, received, read, late, refused
            if start is None:  # uvicorn sends "100 Continue" now, where the client waits for it
                start = loop.time()
            if late:
                return {"type": "http.disconnect"}
            if read:  # the whole body came: what follows is the client leaving
                return await receive()
            try:
                async with asyncio.timeout_at(start + allowed_s(received, grace_s, rate, most)):
                    message = await receive()
            except TimeoutError:
                late = True
                if not started:  # else the answer under way closes the connection (`sending`)
                    refused = True
                    await _too_late(send)
                return {"type": "http.disconnect"}
            received += len(message.get("body", b""))
            read = message["type"] != "http.request" or not message.get("more_body", False)
            return message

        async def sending(message: dict[str, Any]) -> None:
            nonlocal started
            if refused:
                return  # the client had its 408: the app's own answer goes nowhere
            if message["type"] == "http.response.start":
                started = True
                if not read:  # the rest of the body is never read: no next request to wait for
                    kept = [h for h in message.get("headers", []) if h[0] != b"connection"]
                    message = {**message, "headers": [*kept, _CLOSE]}
            await send(message)

        try:
            await self.app(scope, receiving, sending)
        except Exception:
            if not refused:
                raise
            # the client had its 408 and the app was told it left: what it raises then is noted
            _LOG.debug("after a 408 for a late body, the app raised", exc_info=True)


async def _too_late(send: Any) -> None:
    """408 as the app's routes answer it (`asgi.send_json`, the connection closed), with the
    headers every answer carries (Deadline is outside `headers.Headers`)."""

    async def sending(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message["headers"], *HEADERS]}
        await send(message)

    await send_json(sending, 408, {"error": "the request's body did not come in time"}, close=True)
