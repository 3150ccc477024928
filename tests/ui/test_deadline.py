"""lnlab.ui.server.deadline: every request's body within a deadline, Streamlit's uploads too
(issue 38, "connections held open"); the app's own routes' deadline: tests/ui/test_step_route.py.

No test measures time to pass: a stalled body waits on an event that never fires, and the
deadline (50 ms here, a second served) only has to pass."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

import uvicorn
from helpers import run_coroutine
from starlette.applications import Starlette
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.web.server.starlette.starlette_app import create_streamlit_middleware
from streamlit.web.server.starlette.starlette_app_utils import generate_xsrf_token_string
from streamlit.web.server.starlette.starlette_routes import create_upload_routes
from streamlit.web.server.starlette.starlette_server_config import XSRF_COOKIE_NAME

from lnlab.ui.server import deadline, middleware
from lnlab.ui.server.deadline import Deadline, allowed_s, has_body

SHORT_S = 0.05
CLOSE = (b"connection", b"close")


def stalled(*pieces: bytes):
    """A client's `receive`: `pieces` (more promised), then nothing ever again."""
    left = list(pieces)

    async def receive() -> dict:
        if left:
            return {"type": "http.request", "body": left.pop(0), "more_body": True}
        await asyncio.Event().wait()  # the rest never comes
        raise AssertionError

    return receive


def whole(*pieces: bytes):
    """A client's `receive`: `pieces`, the last ending the body."""
    left = list(pieces)

    async def receive() -> dict:
        piece = left.pop(0)
        return {"type": "http.request", "body": piece, "more_body": bool(left)}

    return receive


class Reader:
    """An app that reads the whole body (what Streamlit's upload does), then answers 200
    with it; what it received is kept."""

    def __init__(self, raises: bool = False) -> None:
        self.received: list[dict] = []
        self.raises = raises

    async def __call__(self, scope, receive, send) -> None:
        body = b""
        while True:
            message = await receive()
            self.received.append(message)
            if message["type"] == "http.disconnect":
                if self.raises:  # Starlette's ClientDisconnect
                    raise OSError("client gone")
                break
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": body})


def served(app, scope: dict, receive, **given) -> list[dict]:
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    run_coroutine(Deadline(app, **given)({"type": "http", **scope}, receive, send))
    return sent


def posting(length: bytes = b"1000") -> dict:
    return {
        "method": "PUT",
        "path": "/_stcore/upload_file/s/f",
        "headers": [(b"content-length", length)],
    }


def test_a_body_that_stops_coming_gets_408_the_connection_closed_and_the_app_a_disconnect():
    """Issue 38's client: 1 byte sent of 1,000 promised, then nothing."""
    for raises in (False, True):  # the app's exception once told the client left is answered
        app = Reader(raises)
        sent = served(app, posting(), stalled(b"-"), grace_s=SHORT_S)
        assert sent[0]["status"] == 408 and CLOSE in sent[0]["headers"]
        assert (b"referrer-policy", b"no-referrer") in sent[0]["headers"]
        assert json.loads(sent[1]["body"]) == {"error": "the request's body did not come in time"}
        assert len(sent) == 2  # the app's own answer after the disconnect goes nowhere
        assert app.received[0]["body"] == b"-" and app.received[-1] == {"type": "http.disconnect"}


def test_a_chunked_body_that_stops_gets_408_too():
    scope = {"method": "POST", "path": "/", "headers": [(b"transfer-encoding", b"chunked")]}
    assert served(Reader(), scope, stalled(), grace_s=SHORT_S)[0]["status"] == 408


def test_a_body_that_comes_passes_byte_exact_and_keeps_its_connection():
    data = bytes(range(256)) * 40
    pieces = [data[:1], data[1:5000], data[5000:], b""]
    app = Reader()
    sent = served(app, posting(str(len(data)).encode()), whole(*pieces), grace_s=SHORT_S)
    assert sent == [
        {"type": "http.response.start", "status": 200, "headers": []},
        {"type": "http.response.body", "body": data},
    ]
    assert [m["body"] for m in app.received] == pieces


def test_an_answer_before_the_body_is_read_closes_the_connection():
    """A 405 or 413 that reads nothing: uvicorn would otherwise wait for the rest as long as it
    trickles in (each byte restarts its keep-alive timer)."""

    async def refuses(scope, receive, send) -> None:
        start = [(b"content-length", b"0"), (b"connection", b"keep-alive")]
        await send({"type": "http.response.start", "status": 405, "headers": start})
        await send({"type": "http.response.body", "body": b""})

    sent = served(refuses, posting(), stalled(b"-"), grace_s=SHORT_S)
    assert sent[0]["status"] == 405 and sent[0]["headers"] == [(b"content-length", b"0"), CLOSE]


def test_an_answer_under_way_when_the_body_stops_goes_on_and_closes_the_connection():
    async def streams(scope, receive, send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        assert await receive() == {"type": "http.request", "body": b"-", "more_body": True}
        assert await receive() == {"type": "http.disconnect"}
        assert await receive() == {"type": "http.disconnect"}
        await send({"type": "http.response.body", "body": b"done"})

    sent = served(streams, posting(), stalled(b"-"), grace_s=SHORT_S)
    assert [m.get("status") for m in sent] == [200, None]
    assert sent[0]["headers"] == [CLOSE] and sent[1]["body"] == b"done"


def test_requests_without_a_body_and_websockets_pass_untouched():
    seen: list[tuple] = []

    async def app(scope, receive, send) -> None:
        seen.append((scope["type"], receive, send))

    async def receive() -> dict:
        raise AssertionError

    async def send(message: dict) -> None:
        raise AssertionError

    scopes = [
        {"type": "http", "method": "GET", "path": "/", "headers": [(b"accept", b"*/*")]},
        {"type": "http", "method": "POST", "path": "/", "headers": [(b"content-length", b"0")]},
        {"type": "websocket", "path": "/_stcore/stream", "headers": [(b"content-length", b"9")]},
        {"type": "lifespan"},
    ]
    for scope in scopes:
        run_coroutine(Deadline(app, grace_s=SHORT_S, most=1)(scope, receive, send))
    assert seen == [(s["type"], receive, send) for s in scopes]  # the same receive and send


def test_a_body_has_the_grace_then_a_second_per_rate_bytes_up_to_the_largest_upload():
    assert has_body({"headers": [(b"content-length", b" 12 ")]})
    assert not has_body({"headers": [(b"content-length", b"0")]}) and not has_body({})
    assert allowed_s(0, 3.0, 4096, 10**6) == 3.0
    assert allowed_s(40960, 3.0, 4096, 10**6) == 13.0
    assert allowed_s(10**9, 3.0, 1000, 10**6) == allowed_s(10**6, 3.0, 1000, 10**6) == 1003.0
    assert deadline.largest_body() == 200 * 1024 * 1024 + deadline.FRAMING  # Streamlit's 200 MB


class Runtime:
    """Streamlit's runtime as the upload route asks it: every session is active."""

    def is_active_session(self, session_id: str) -> bool:
        return True


def test_a_stalled_upload_over_http_is_answered_408_and_closed_and_a_whole_one_stored(
    monkeypatch,
):
    """Streamlit's own upload route (PUT .../_stcore/upload_file/<session>/<file>) behind the
    app's middleware and Streamlit's, served by uvicorn as the app is. Issue 38's client (1
    byte sent of 1,000 promised) gets 408 after the deadline and its connection closed; a POST
    there (405, its body never read) is closed at once; a whole upload is stored byte-exact and
    its connection kept."""
    monkeypatch.setattr(deadline, "GRACE_S", 1.0)
    uploads = MemoryUploadedFileManager("/_stcore/upload_file")
    routes = create_upload_routes(Runtime(), uploads, None)
    app = Starlette(routes=routes, middleware=[*middleware(), *create_streamlit_middleware()])
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    token = generate_xsrf_token_string()
    boundary = b"lnlab-boundary"
    data = bytes(range(256)) * 20
    body = (
        b"--%s\r\nContent-Disposition: form-data; name=file; filename=x.bin\r\n"
        b"Content-Type: application/octet-stream\r\n\r\n%s\r\n--%s--\r\n"
        % (boundary, data, boundary)
    )
    head = (
        b"%s /_stcore/upload_file/session-1/%s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n"
        b"Content-Type: multipart/form-data; boundary=" + boundary + b"\r\n"
        b"X-Xsrftoken: " + token.encode() + b"\r\n"
        b"Cookie: " + XSRF_COOKIE_NAME.encode() + b"=" + token.encode() + b"\r\n\r\n"
    )

    async def attack() -> dict[str, tuple[bytes, bool]]:
        serving = asyncio.ensure_future(server.serve())
        while not server.started:
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]

        async def client(method: bytes, file: bytes, length: int, sent: bytes, closes: bool):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(head % (method, file, length) + sent)
            await writer.drain()
            if closes:  # read to the end: the server closes (a bound, not a measure)
                answer = await asyncio.wait_for(reader.read(), 20)
            else:
                answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 20)
                await asyncio.sleep(0.2)  # the server would close now if it were to
            closed = reader.at_eof()
            writer.close()
            return answer, closed

        answers = await asyncio.gather(
            client(b"PUT", b"stalled", 1000, b"-", True),
            client(b"POST", b"posted", 1000, b"-", True),
            client(b"PUT", b"whole", len(body), body, False),
        )
        server.should_exit = True
        await serving
        return dict(zip(("stalled", "posted", "whole"), answers, strict=True))

    with ThreadPoolExecutor(1) as thread:
        answers = thread.submit(asyncio.run, attack()).result(60)
    (stalled_answer, stalled_closed), (posted, posted_closed), (stored, kept) = answers.values()
    assert stalled_answer.startswith(b"HTTP/1.1 408") and stalled_closed
    assert b"connection: close" in stalled_answer.lower()
    assert b"the request's body did not come in time" in stalled_answer
    assert posted.startswith(b"HTTP/1.1 405") and posted_closed
    assert stored.startswith(b"HTTP/1.1 204") and b"connection: close" not in stored.lower()
    assert not kept  # the connection stays open for the next request
    files = uploads.get_files("session-1", ["whole", "stalled"])
    assert [(f.file_id, f.data) for f in files] == [("whole", data)]
