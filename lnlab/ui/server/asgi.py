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
