"""The launcher's own routes, answered before Streamlit's (ASGI middleware on its Starlette app):
a class's pulse (lnlab.ui.pulse) and a lesson's step (lnlab.ui.step_route)."""

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


def add_middleware(route: type, flag: str) -> None:
    """Put `route` first in Streamlit's middleware (Starlette, in Streamlit 1.67), once per
    process (`flag` marks it done); the routes added before stay."""
    from starlette.middleware import Middleware
    from streamlit.web.server.starlette import starlette_app

    original = starlette_app.create_streamlit_middleware
    if getattr(original, flag, False):
        return

    def middleware() -> list[Middleware]:
        return [Middleware(route), *original()]

    middleware.__dict__.update(original.__dict__)  # the flags of the routes added before
    setattr(middleware, flag, True)
    starlette_app.create_streamlit_middleware = middleware
