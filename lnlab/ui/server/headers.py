"""Headers every answer of the app's server carries, whoever serves it (`make run`, `streamlit
run app.py`, uvicorn, Docker; HAProxy adds the rest of the security headers in front)."""

from __future__ import annotations

from typing import Any

HEADERS = ((b"referrer-policy", b"no-referrer"),)


class Headers:
    """ASGI middleware: every HTTP response says `Referrer-Policy: no-referrer`, so no request
    a page makes carries its address (a teacher link's secret, a class code) to anyone, from
    the first script the page loads."""

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

        await self.app(scope, receive, sending)
