"""Phones and a teacher's count in a live class, as the server sees them over HTTP: no browser,
no rendering, no websocket (issue 39).

A `Phone` does what static/lnlab/phone.mjs does once its page is drawn: it reads the class's
board from the pulse route (`?question=1`), then asks the server to hold each read until the
question asked, its reveal or the class's end differ from what it drew (`watch=qid,revealed,
open&since=...`), waits `every_ms` (with the module's jitter) after a read that came back within
half the hold, and posts a tap to the answer route. With `hold=False` it reads the board every
`every_ms` instead, each read answered at once from the route's cache (a short poll: what a
held read is measured against). A `TeacherCount` holds reads of the pulse
for the teacher's fields (lnlab.ui.pulse.COUNTS), as static/lnlab/pulse.mjs does on the Class
page, and notes each count it reads (the teacher's screen redraws after that: a script run the
count does not include).

Each device is a browser of its own (`Agent`): its cookies (HAProxy's SERVERID pins it to one
process, as with a page), keep-alive HTTP/1.1 connections (a held read takes one, so a tap goes
on a second, as a browser opens one), Accept-Encoding: gzip (behind HAProxy the board comes
gzipped, as to a browser), and a request that failed on a kept connection before any answer
sent once more on a new one, as Chromium does. Written on asyncio's Protocol (not streams), so
that thousands fit in one client process.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

WATCH = ("qid", "revealed", "open")  # static/lnlab/phone.mjs's WATCH
COUNTS = (*WATCH, "answered", "joined")  # lnlab.ui.pulse.COUNTS: the teacher's count
HOLD_MS = 20_000
READ_TIMEOUT_MS = 10_000
MAX_WAIT_MS = 10_000
FAILURES = 5


class Closed(ConnectionError):
    """The connection closed before the whole answer came."""


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    cookies: list[str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Connection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection: one request at a time, its answer parsed as bytes
    come (Content-Length or chunked; gzip undone)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.waiter: asyncio.Future | None = None
        self.closed = False
        self.used = 0  # requests answered on it

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(Closed("the server closed the connection"))

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.waiter is not None and not self.waiter.done():
            try:
                parsed = self._parse()
            except Exception as err:  # a malformed answer fails this request
                self.waiter.set_exception(err)
                self.close()
                return
            if parsed is not None:
                self.waiter.set_result(parsed)

    def _parse(self) -> Response | None:
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return None
        head = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
        status = int(head[0].split(" ", 2)[1])
        headers: dict[str, str] = {}
        cookies: list[str] = []
        for line in head[1:]:
            name, _, value = line.partition(":")
            name, value = name.strip().lower(), value.strip()
            if name == "set-cookie":
                cookies.append(value)
            headers[name] = value
        start = end + 4
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = bytearray()
            at = start
            while True:
                line_end = self.buffer.find(b"\r\n", at)
                if line_end < 0:
                    return None
                size = int(bytes(self.buffer[at:line_end]).split(b";")[0], 16)
                if size == 0:
                    trailer_end = self.buffer.find(b"\r\n\r\n", line_end)
                    if trailer_end < 0:
                        return None
                    used = trailer_end + 4
                    break
                if len(self.buffer) < line_end + 2 + size + 2:
                    return None
                body += self.buffer[line_end + 2 : line_end + 2 + size]
                at = line_end + 2 + size + 2
            raw = bytes(body)
        else:
            length = int(headers.get("content-length", "0"))
            if len(self.buffer) < start + length:
                return None
            raw = bytes(self.buffer[start : start + length])
            used = start + length
        del self.buffer[:used]
        coding = headers.get("content-encoding", "").lower()
        if coding == "gzip":
            raw = zlib.decompress(raw, 16 + zlib.MAX_WBITS)
        elif coding == "deflate":
            raw = zlib.decompress(raw)
        return Response(status, headers, cookies, raw)

    async def request(self, data: bytes, timeout_s: float) -> Response:
        assert self.transport is not None
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(data)
        try:
            response = await asyncio.wait_for(self.waiter, timeout_s)
        finally:
            self.waiter = None
        self.used += 1
        return response

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


@dataclass
class Counters:
    """What every agent did, all together."""

    connections: int = 0  # opened
    retried: int = 0  # requests sent again after a kept connection closed under them
    closed_new: int = 0  # requests whose new connection closed before any answer
    requests: int = 0


class Agent:
    """One browser's HTTP side toward `host:port`: its cookies and its keep-alive connections
    (a free one is reused, else a new one opened)."""

    def __init__(self, host: str, port: int, counters: Counters) -> None:
        self.host, self.port, self.counters = host, port, counters
        self.cookies: dict[str, str] = {}
        self.idle: list[Connection] = []
        self.open: set[Connection] = set()
        self.closing = False  # closed by its owner: a request it cuts is not sent again

    async def _connection(self, fresh: bool = False) -> tuple[Connection, bool]:
        while self.idle and not fresh:
            conn = self.idle.pop()
            if not conn.closed:
                return conn, True
            self.open.discard(conn)
        loop = asyncio.get_running_loop()
        _, conn = await loop.create_connection(Connection, self.host, self.port)
        self.counters.connections += 1
        self.open.add(conn)
        return conn, False

    def _bytes(self, method: str, path: str, body: bytes | None) -> bytes:
        lines = [
            f"{method} {path} HTTP/1.1",
            f"Host: {self.host}:{self.port}",
            "Accept: */*",
            "Accept-Encoding: gzip, deflate",
            "Cache-Control: no-cache",
        ]
        if self.cookies:
            lines.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        if body is not None:
            lines += [
                f"Origin: http://{self.host}:{self.port}",
                "Content-Type: application/json",
                f"Content-Length: {len(body)}",
            ]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")

    async def fetch(
        self, method: str, path: str, body: bytes | None = None, timeout_s: float = 30.0
    ) -> Response:
        data = self._bytes(method, path, body)
        self.counters.requests += 1
        conn, reused = await self._connection()
        try:
            response = await conn.request(data, timeout_s)
        except Closed:
            self.open.discard(conn)
            if not reused or self.closing:
                self.counters.closed_new += not self.closing
                raise
            # the server closed a kept connection (its keep-alive timeout; this client may see
            # the close late, its loop busy): sent again on a new one, as Chromium does
            self.counters.retried += 1
            conn, _ = await self._connection(fresh=True)
            try:
                response = await conn.request(data, timeout_s)
            except BaseException as err:
                self.counters.closed_new += isinstance(err, Closed) and not self.closing
                conn.close()
                self.open.discard(conn)
                raise
        except BaseException:
            conn.close()  # a timeout or a cancel: the answer would come on a reused connection
            self.open.discard(conn)
            raise
        for cookie in response.cookies:
            name, _, value = cookie.split(";", 1)[0].partition("=")
            self.cookies[name.strip()] = value.strip()
        if response.headers.get("connection", "").lower() == "close" or conn.closed:
            conn.close()
            self.open.discard(conn)
        else:
            self.idle.append(conn)
        return response

    def close(self) -> None:
        self.closing = True
        for conn in list(self.open):
            conn.close()
        self.open.clear()
        self.idle.clear()


def since(values: Sequence[Any]) -> str:
    """`encodeURIComponent(JSON.stringify(values))`, as the page writes a held read's stamp."""
    text = json.dumps(list(values), separators=(",", ":"), ensure_ascii=False)
    return quote(text, safe="-_.!~*'()")


@dataclass
class Tap:
    qid: str
    sent: float  # time.time() when sent (the click)
    ms: float  # until the answer came
    status: int  # 0: no answer (a connection error or a timeout)
    stored: bool | None


@dataclass
class Phone:
    """A student's phone with its page drawn (static/lnlab/phone.mjs): `follow` reads the
    board as the page does, `tap` posts an option. `shown[(qid, "asked" | "revealed")]`: the
    time.time() when it first read that."""

    agent: Agent
    code: str
    me: str
    every_ms: float = 1000.0
    hold: bool = True  # False: every read answered at once, one each every_ms (a short poll)
    base: str = ""
    question: dict | None = None
    mine: str | None = None
    score: dict = field(default_factory=lambda: {"right": 0, "answered": 0})
    pending: dict | None = None
    told: str = ""  # "ready" once its first read came (Python then draws it "ready")
    tapping: bool = False
    stopped: bool = False
    failures: int = 0
    errors: list[str] = field(default_factory=list)
    reads: int = 0
    shown: dict[tuple[str, str], float] = field(default_factory=dict)
    taps: list[Tap] = field(default_factory=list)
    _refreshing: asyncio.Future | None = None

    @property
    def url(self) -> str:
        return f"{self.base}/_lnlab/pulse/{self.code}"

    @property
    def answer_url(self) -> str:
        return f"{self.base}/_lnlab/answer/{self.code}"

    async def follow(self, until: asyncio.Event) -> None:
        """phone.mjs's tick, until `until` is set or the class has closed."""
        while not (until.is_set() or self.stopped):
            wait = await self._tick()
            if until.is_set() or self.stopped:
                return
            with _suppressed():
                await asyncio.wait_for(until.wait(), wait * (0.8 + 0.4 * random.random()) / 1e3)

    async def _tick(self) -> float:
        q = self.question or {}
        seen = {"qid": q.get("qid"), "revealed": q.get("revealed", False), "open": True}
        hold = self.hold and self.told == "ready"
        url = f"{self.url}?question=1"
        if hold:
            url += f"&watch={','.join(WATCH)}&since={since([seen[n] for n in WATCH])}"
        began = time.perf_counter()
        wait = 0.0
        try:
            timeout = (READ_TIMEOUT_MS + (HOLD_MS if hold else 0)) / 1e3
            reply = await self.agent.fetch("GET", url, timeout_s=timeout)
            if reply.status != 200:
                raise RuntimeError(f"the server answered {reply.status}")
            board = reply.json()
            self.reads += 1
            self.failures = 0
            self.told = "ready"
            self._heard(board)
            same = (board.get("question") or {}).get("qid") == (self.question or {}).get("qid")
            quick = hold and (time.perf_counter() - began) * 1e3 < HOLD_MS / 2 and same
            if quick or not self.hold:  # a poll waits after every read
                wait = self.every_ms
        except Exception as err:  # the page counts every failure alike
            self.failures += 1
            self.errors.append(f"read: {err!r}"[:200])
            wait = min(self.every_ms * 2**self.failures, MAX_WAIT_MS)
        return wait

    def _heard(self, board: dict) -> None:
        now = time.time()
        if not board.get("open"):
            self.stopped = True
            return
        following, before = board.get("question"), self.question
        if (
            following
            and before
            and following["qid"] != before["qid"]
            and self.pending
            and self.pending["qid"] == before["qid"]
        ):  # this phone's answer was revealed between two reads: ask for the score
            self._refreshing = asyncio.ensure_future(self._refresh())
        counted = _scored(self.score, self.pending, following)
        if counted:
            self.score, self.pending = counted, None
        if not following or not before or following["qid"] != before["qid"]:
            self.mine = None
        self.question = following
        if following:
            self.shown.setdefault((following["qid"], "asked"), now)
            if following.get("revealed"):
                self.shown.setdefault((following["qid"], "revealed"), now)

    async def _post(self, body: dict) -> tuple[int, dict]:
        data = json.dumps({"me": self.me, **body}, separators=(",", ":")).encode()
        reply = await self.agent.fetch(
            "POST", self.answer_url, data, timeout_s=READ_TIMEOUT_MS / 1e3
        )
        try:
            answer = reply.json()
        except ValueError:
            answer = {}
        return reply.status, answer

    def _took(self, answer: dict) -> None:
        if answer.get("qid") != (self.question or {}).get("qid"):
            return
        self.mine = answer.get("mine")
        self.score = {"right": answer.get("right"), "answered": answer.get("answered")}
        q = self.question
        self.pending = (
            {"qid": q["qid"], "mine": self.mine}
            if q and not q.get("revealed") and self.mine is not None
            else None
        )

    async def tap(self, k: int) -> Tap | None:
        """Tap option `k` of the question shown (None: none shown, or a tap under way)."""
        if self.tapping or not self.question:
            return None
        qid = self.question["qid"]
        self.tapping = True
        sent = time.time()
        began = time.perf_counter()
        status, stored = 0, None
        try:
            status, answer = await self._post({"qid": qid, "option": k})
            if status == 200:
                stored = answer.get("stored")
                self._took(answer)
            else:
                self.errors.append(f"tap: {status} {answer.get('error', '')}"[:200])
        except Exception as err:  # the page falls back to Python: counted
            self.errors.append(f"tap: {err!r}"[:200])
        finally:
            self.tapping = False
        done = Tap(qid, sent, (time.perf_counter() - began) * 1e3, status, stored)
        self.taps.append(done)
        return done

    async def _refresh(self) -> None:
        try:
            status, answer = await self._post({})
            if status == 200 and not self.stopped:
                self._took(answer)
        except Exception:  # the next draw by Python sets the score right
            pass


def _scored(score: dict, pending: dict | None, question: dict | None) -> dict | None:
    if not pending or not question or not question.get("revealed"):
        return None
    if pending["qid"] != question["qid"]:
        return None
    options = question["options"]
    picked = options.index(pending["mine"]) if pending["mine"] in options else -1
    right = picked >= 0 and picked in question.get("right", [])
    return {"right": score["right"] + int(right), "answered": score["answered"] + 1}


@dataclass
class TeacherCount:
    """The Class page's count: the teacher's pulse (COUNTS) read held until it changes, each
    answer noted as (time.time(), qid, answered). The page would rerun its fragment after each
    change and read again for the new drawing; this one holds again at once with what it read."""

    agent: Agent
    code: str
    every_ms: float = 1000.0
    base: str = ""
    seen: dict | None = None
    heard: list[tuple[float, str | None, int]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    async def follow(self, until: asyncio.Event) -> None:
        url = f"{self.base}/_lnlab/pulse/{self.code}"
        while not until.is_set():
            wait = 0.0
            held = url
            if self.seen is not None:
                held += f"?watch={','.join(COUNTS)}&since={since([self.seen[n] for n in COUNTS])}"
            began = time.perf_counter()
            try:
                timeout = (READ_TIMEOUT_MS + (HOLD_MS if self.seen else 0)) / 1e3
                reply = await self.agent.fetch("GET", held, timeout_s=timeout)
                if reply.status != 200:
                    raise RuntimeError(f"the server answered {reply.status}")
                pulse = reply.json()
                changed = self.seen is None or any(pulse[n] != self.seen[n] for n in COUNTS)
                if changed:
                    self.heard.append((time.time(), pulse["qid"], pulse["answered"]))
                elif (time.perf_counter() - began) * 1e3 < HOLD_MS / 2:
                    wait = self.every_ms  # answered at once with nothing new
                self.seen = pulse
            except Exception as err:
                self.errors.append(repr(err)[:200])
                wait = 1000.0
            if wait:
                with _suppressed():
                    await asyncio.wait_for(until.wait(), wait / 1e3)

    def counted(self, qid: str, answered: int, after: float) -> float | None:
        """When this count first read `answered` (or more) for `qid` at or after `after`."""
        for when, at, count in self.heard:
            if at == qid and count >= answered and when >= after:
                return when
        return None


class _suppressed:
    """`with _suppressed(): await asyncio.wait_for(...)`: a timeout is the point."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, *_: object) -> bool:
        return kind is not None and issubclass(kind, TimeoutError)


# ------------------------------------------------------------------ processes' CPU and memory


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def descendants(root: int) -> list[int]:
    """`root` and every process under it (found through /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(int(entry))) is not None:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def tree_cpu(root: int) -> float:
    """CPU seconds used by `root` and the processes under it: each live one's own and that of
    its children it has reaped (so every CPU second counts once)."""
    total = 0
    for pid in descendants(root):
        if (fields := _stat(pid)) is not None:
            total += sum(int(v) for v in fields[11:15])
    return total / os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float:
    """CPU seconds of process `pid` itself (every thread), and of its children it reaped."""
    fields = _stat(pid)
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK") if fields else 0.0


def tree_rss_mib(root: int) -> float:
    """Resident memory of `root` and the processes under it, MiB (shared pages count in each)."""
    total = 0
    for pid in descendants(root):
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


class LoopLag:
    """How late this process's event loop wakes a 10 ms sleep: a busy client delays what it
    notes (its own CPU is part of every time it measures)."""

    def __init__(self) -> None:
        self.lags_ms: list[float] = []
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while True:
            began = time.perf_counter()
            await asyncio.sleep(0.01)
            self.lags_ms.append((time.perf_counter() - began) * 1e3 - 10)

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
