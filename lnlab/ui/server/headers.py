"""Headers every answer of the app's server carries, whoever serves it (`make run`, `streamlit
run app.py`, uvicorn, Docker; HAProxy adds the rest of the security headers in front), and
Streamlit's routes that are not for visitors."""

from __future__ import annotations

import hmac
import os
from typing import Any

HEADERS = ((b"referrer-policy", b"no-referrer"),)
METRICS_TOKEN_ENV = "LNLAB_METRICS_TOKEN"  # a scraper sends it: Authorization: Bearer <token>
PRIVATE = ("/_stcore/metrics",)  # under any base path
_NOT_FOUND = b"Not found."


def allowed(scope: dict[str, Any]) -> bool:
    """Whether a request may reach Streamlit's route at its path: any but `PRIVATE`, which
    (issue 38) told anyone the process's sessions, caches and memory. Those only with the
    token that $LNLAB_METRICS_TOKEN holds (none set: never)."""
    if not scope.get("path", "").rstrip("/").endswith(PRIVATE):
        return True
    token = os.environ.get(METRICS_TOKEN_ENV, "")
    sent = dict(scope.get("headers", [])).get(b"authorization", b"")
    return bool(token) and hmac.compare_digest(sent, f"Bearer {token}".encode())


class Headers:
    """ASGI middleware: every HTTP response says `Referrer-Policy: no-referrer`, so no request
    a page makes carries its address (a teacher link's secret, a class code) to anyone, from
    the first script the page loads; a private route (`allowed`) is answered 404."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                kept = [h for h in message.get("headers", []) if h[0] not in dict(HEADERS)]
                message = {**message, "headers": [*kept, *HEADERS]}
            await send(message)

        if not allowed(scope):
            start = [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(_NOT_FOUND))]
            await sending({"type": "http.response.start", "status": 404, "headers": start})
            await sending({"type": "http.response.body", "body": _NOT_FOUND})
            return
        await self.app(scope, receive, sending)
