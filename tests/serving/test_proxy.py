"""HAProxy as deploy/haproxy.cfg makes it, in front of a stand-in app process (the app's own
step route and headers around a page that answers at once, served by uvicorn in this process):
what a slow or malformed client gets, and what a bystander from another address gets meanwhile.
No Streamlit process, so a few seconds each (the slow body waits out `timeout http-request`).

Issue 38: a body promised and sent a byte at a time held each connection 60 s, and 4,500 of
them from 5 addresses kept a bystander's page 55.9 s (measured on the old config with a
stand-in app: 52.3 s; with this one, under 1 s: bench numbers in the issue's closing note).
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import uvicorn

from lnlab.serving import haproxy
from lnlab.serving.cluster import free_port
from lnlab.ui.server.headers import Headers
from lnlab.ui.server.steps import StepRoute

pytestmark = pytest.mark.services

HAPROXY = os.environ.get("LNLAB_HAPROXY", "/usr/sbin/haproxy")
MAX_OPEN = 40  # per address, low so that the test reaches it quickly
SLOW_FROM, BYSTANDER_FROM = "127.0.0.5", "127.0.0.6"
SECURITY_HEADERS = {name.lower() for name, _ in haproxy.security_headers()}
LIMITS = haproxy.Limits(max_open_per_client=MAX_OPEN)


@dataclass
class Proxy:
    port: int
    app_port: int = 0  # the stand-in app's, for another proxy in front of it
    seen: list[str] = field(default_factory=list)  # the paths the app was asked


async def _page(scope, receive, send) -> None:
    if scope["type"] == "websocket":  # accepted, then open until the client closes it
        await receive()
        await send({"type": "websocket.accept"})
        while (await receive())["type"] != "websocket.disconnect":
            pass
        return
    body = b"ok" if scope["path"].endswith("/health") else b"<html>a page</html>"
    headers = [(b"content-type", b"text/html"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _started(process: subprocess.Popen, port: int, what: str, timeout_s: float = 20) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"{what} did not start")
            time.sleep(0.05)


def _haproxy(
    tmp_path: Path,
    port: int,
    app_port: int,
    limits: haproxy.Limits = LIMITS,
    bind_options: str = "",
) -> subprocess.Popen:
    config = haproxy.render(
        bind=f"127.0.0.1:{port}{bind_options}",
        socket_path=str(tmp_path / "haproxy.sock"),
        servers=haproxy.local_servers([app_port]),
        limits=limits,
    )
    (tmp_path / "haproxy.cfg").write_text(config)
    log = (tmp_path / "haproxy.log").open("wb")
    process = subprocess.Popen(
        [HAPROXY, "-f", str(tmp_path / "haproxy.cfg")], stdout=log, stderr=subprocess.STDOUT
    )
    _started(process, port, "HAProxy")
    return process


@pytest.fixture(scope="module")
def proxy(tmp_path_factory) -> Iterator[Proxy]:
    if not Path(HAPROXY).exists():
        pytest.fail(f"{HAPROXY} is missing: `make test` installs it (scripts/ensure-haproxy)")
    made = Proxy(free_port())

    async def app(scope, receive, send) -> None:
        if scope["type"] == "http":
            made.seen.append(scope["path"])
        await Headers(StepRoute(_page))(scope, receive, send)

    app_port = made.app_port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=app_port, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    process = _haproxy(tmp_path_factory.mktemp("proxy"), made.port, app_port)
    try:
        deadline = time.monotonic() + 10
        while _get(made.port, "/", BYSTANDER_FROM)[0] != 200:  # the health check is up
            assert time.monotonic() < deadline, "the stand-in app never came up"
            time.sleep(0.1)
        yield made
    finally:
        process.terminate()
        process.wait(10)
        server.should_exit = True
        thread.join(10)


def _raw(port: int, request: bytes, source: str, timeout_s: float = 30) -> tuple[bytes, float]:
    """Send `request` from `source` and read until the proxy closes: the answer and the time."""
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout_s, (source, 0)) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer, time.monotonic() - start


def _get(port: int, path: str, source: str) -> tuple[int, dict[str, str], float]:
    request = f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
    answer, took = _raw(port, request, source)
    head = answer.split(b"\r\n\r\n", 1)[0].decode().split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in head[1:])
    return int(head[0].split()[1]), headers, took


CLIENT_TIMEOUT_S = float(re.search(r"timeout client (\d+)s", haproxy.TEMPLATE.read_text())[1])
SLOW_BODY = b"POST /_lnlab/step/abc HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n{"


def test_a_slow_body_is_closed_within_the_request_timeout_and_never_reaches_the_app(proxy):
    """1 byte of a promised body: the proxy waits for the whole body (http-buffer-request)
    `timeout http-request`, then closes the connection without an answer (its 408 could not
    carry the security headers); the app never sees the request. A bystander meanwhile is
    answered at once."""
    limit_s = float(haproxy.HTTP_REQUEST_TIMEOUT.removesuffix("s"))
    slow: list[tuple[bytes, float]] = []
    for length in (1000, 30):  # issue 38's, and one the step route itself would take
        waiting = threading.Thread(
            target=lambda n=length: slow.append(_raw(proxy.port, SLOW_BODY % n, SLOW_FROM))
        )
        waiting.start()
        time.sleep(0.2)
        status, _, _ = _get(proxy.port, "/page", BYSTANDER_FROM)
        assert status == 200 and waiting.is_alive()  # answered while the slow body is held
        waiting.join(30)
    print(f"slow bodies held {[round(s, 2) for _, s in slow]} s (60 s before issue 38)")
    for answer, held_s in slow:
        assert answer == b""
        # closed by the request timeout: not before it, nor by the client timeout (60 s)
        assert limit_s - 0.5 <= held_s < CLIENT_TIMEOUT_S
    assert not [p for p in proxy.seen if "_lnlab/step" in p]


def test_slow_connections_from_one_address_stop_at_its_cap_and_a_bystander_gets_in(proxy):
    """Past `max_open_per_client` open connections, the address's next ones are closed at
    once; another address is not affected."""

    async def hold() -> tuple[list[float], float]:
        loop = asyncio.get_running_loop()

        async def one() -> float:
            """How long the connection was held (refused: reset at once)."""
            start = loop.time()
            try:
                reader, writer = await asyncio.open_connection(
                    "127.0.0.1", proxy.port, local_addr=(SLOW_FROM, 0)
                )
                writer.write(SLOW_BODY % 1000)
                await reader.read()
                writer.close()
            except ConnectionResetError:
                pass
            return loop.time() - start

        holding = [asyncio.ensure_future(one()) for _ in range(MAX_OPEN)]
        await asyncio.sleep(0.5)  # all of them open
        extra = await asyncio.gather(*(one() for _ in range(10)))
        status, _, _ = await asyncio.to_thread(_get, proxy.port, "/page", BYSTANDER_FROM)
        held = not any(task.done() for task in holding)  # the bystander got in beside them
        for task in holding:
            task.cancel()
        return extra, status, held

    extra, status, held = asyncio.run(hold())
    limit_s = float(haproxy.HTTP_REQUEST_TIMEOUT.removesuffix("s"))
    assert max(extra) < limit_s  # refused, not held until the request timeout closed them
    assert status == 200 and held


def test_the_proxys_own_answers_carry_the_security_headers_or_are_none(proxy, tmp_path):
    """A request HAProxy cannot read is closed unanswered; Streamlit's metrics are not passed
    on (404); when no app process answers, the 503 is HAProxy's, with every header too."""
    answer, _ = _raw(
        proxy.port, b"GET / HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n", "127.0.0.7"
    )
    assert answer == b""
    for path in ("/_stcore/metrics", "/course/_stcore/metrics"):
        status, headers, _ = _get(proxy.port, path, "127.0.0.7")
        assert status == 404 and set(headers) >= SECURITY_HEADERS
    assert "/_stcore/metrics" not in proxy.seen
    nobody = free_port()  # a proxy whose one app process is not there
    port = free_port()
    process = _haproxy(tmp_path, port, nobody)
    try:
        status, headers, _ = _get(port, "/", "127.0.0.7")
    finally:
        process.terminate()
        process.wait(10)
    assert status == 503 and set(headers) >= SECURITY_HEADERS
    assert headers["content-type"].startswith("text/plain")


# ---------------------------------------------------------------- sessions (websockets)


def _browser_cookie(port: int, source: str) -> str:
    """A new browser's first page: the cookie the proxy gives it (and keeps out of caches)."""
    status, headers, _ = _get(port, "/page", source)
    assert status == 200 and headers["cache-control"] == "private, no-cache"
    cookie = headers["set-cookie"].split(";")[0]
    assert re.fullmatch(r"lnlab_client=[0-9a-f-]{36}", cookie)
    return cookie


def _handshakes(
    port: int, source: str, cookie: str | None, count: int, proxied_from: str = ""
) -> list[int]:
    """`count` websocket openings from `source`, each closed at once: their statuses.
    `proxied_from`: the client address a PROXY protocol header gives HAProxy instead (an
    IPv6 one: this machine has only ::1)."""
    header = f"Cookie: {cookie}\r\n" if cookie else ""
    request = (
        "GET /_stcore/stream HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        f"Sec-WebSocket-Version: 13\r\n{header}\r\n"
    ).encode()
    if proxied_from:
        request = f"PROXY TCP6 {proxied_from} ::1 40000 80\r\n".encode() + request
    statuses = []
    for _ in range(count):
        with socket.create_connection(("127.0.0.1", port), 10, (source, 0)) as sock:
            sock.sendall(request)
            head = b""
            while b"\r\n\r\n" not in head:
                head += sock.recv(4096)
        statuses.append(int(head.split()[1]))
    return statuses


def test_a_browser_reconnecting_in_a_loop_is_refused_alone_and_its_classmates_get_in(proxy):
    """Issue 38: 15 websocket openings a second from one student's browser, each closed at
    once, got 14 of 20 classmates behind the same address refused (429) for 40 s. Now that
    browser is refused past its own limit, and only what it had let through counts for the
    address: 60 classmates then all open their sessions and all reconnect (120), and a script
    without the browser cookie, refused past the address's cookieless share, takes nothing
    from them either."""
    limits, school = haproxy.Limits(), "127.0.0.8"
    looping = _handshakes(proxy.port, school, _browser_cookie(proxy.port, school), 150)
    assert looping == [101] * limits.websockets_per_browser_10s + [429] * (
        150 - limits.websockets_per_browser_10s
    )
    script = _handshakes(proxy.port, school, None, limits.websockets_per_10s + 10)
    assert script.count(101) == limits.websockets_per_10s and script[-10:] == [429] * 10
    classmates = [_browser_cookie(proxy.port, school) for _ in range(60)]
    statuses = [s for c in classmates for s in _handshakes(proxy.port, school, c, 2)]
    assert statuses == [101] * 120


def test_an_ipv6_visitor_counts_as_its_64(proxy, tmp_path):
    """A phone's privacy addresses change within its /64, and a script may use any of its
    2^64: the limits count the /64 (as the app does: lnlab.serving.networks). The client
    addresses come in PROXY protocol headers (a load balancer's), to a proxy that takes them."""
    limits = haproxy.Limits(websockets_per_10s=5)
    port = free_port()
    process = _haproxy(tmp_path, port, proxy.app_port, limits, " accept-proxy")
    try:
        same = [
            s
            for k in range(1, 8)
            for s in _handshakes(port, "127.0.0.9", None, 1, f"2001:db8:1:2::{k:x}")
        ]
        other = _handshakes(port, "127.0.0.9", None, 1, "2001:db8:1:3::1")
    finally:
        process.terminate()
        process.wait(10)
    assert same == [101] * 5 + [429] * 2  # seven addresses, one /64: one count
    assert other == [101]  # the next /64 is another visitor
