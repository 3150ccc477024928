"""GET .../_lnlab/pulse/<code>: a class's board for its devices, answered with no script run.

`PulseRoute` is one of the app's middleware (lnlab.ui.server): it answers from a cache, one
database read per class at most every CACHE_S, in a worker thread, so the event loop (every
visitor's websocket) never waits for the database. The page's side is lnlab.ui.pulse (a
device that reruns its fragment when the class changes) and lnlab.ui.classroom.phone (a phone
that draws the question itself, `?question=1`: lnlab.ui.server.board).

A device that has drawn the class as it is asks to wait for a change (`?watch=qid,revealed,open
&since=<stamp>`, lnlab.ui.server.board.stamp): the route holds the request, holding no thread,
until the watched fields differ from `since` or HOLD_S has passed (lnlab.ui.server.waiting). A
change this process stores is heard at once (the store's listeners); another process's within
WATCH_S. Issue 39: every phone read its class's pulse once a second, and the question reached
a class of 12 in 0.76 s (median), 1.23 s (p95).

Codes that no open class answered here lately (`Pulses.known`: random ones, a closed class's)
never take the reads a real class needs: they have their own UNKNOWN_READERS, an address may
have at most UNKNOWN_PER_10S of them read (then 429), a closed or unknown class's answer is
kept CLOSED_S, and no request for them is held. Issue 38: a flood of random codes held every
reader, and 27-38 % of a real class's pulse reads failed with 503.
"""

from __future__ import annotations

import asyncio
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import parse_qs

from lnlab.classroom.store import (
    Board,
    ClassError,
    StoreDown,
    default_store,
    normalize_code,
)
from lnlab.core.errors import InputError
from lnlab.serving.networks import visitor
from lnlab.ui.server import board as boards
from lnlab.ui.server.asgi import send_json
from lnlab.ui.server.waiting import Waiting

PATH = "_lnlab/pulse/"
CACHE_S = 0.25  # the route reads one class's board from the database at most 4 times a second
CLOSED_S = 10.0  # a closed or unknown class's board is read again only after this
CACHE_CLASSES = 1000  # boards kept at most (a server has at most 200 classes open)
READERS = 8  # reads at once for known classes (Streamlit's thread pool has 28 threads)
UNKNOWN_READERS = 2  # reads at once for codes not known here (`Pulses.known`)
UNKNOWN_PER_10S = 30  # reads of codes not known here per address in 10 s (a class's devices
# ask for one code, known after its first read; a teacher opens a few classes)
KNOWN_S = 3600.0  # a code is known this long after a read found its class open
MAX_STAMP = 300  # characters of `since`: a qid (at most 100) and a few numbers
_ROUTE = re.compile(rf"(?:/[^?#]*)?/{PATH}([^/?#]{{1,100}})")


@dataclass
class Kept:
    """A board as read at `at` (time.monotonic), or why it could not be, and its JSON bodies
    once made (without and with the phone's question), shared by every device that asks."""

    at: float
    board: Board | StoreDown
    bodies: dict[bool, bytes] = field(default_factory=dict)

    def body(self, question: bool) -> bytes:
        assert isinstance(self.board, Board)
        if question not in self.bodies:
            self.bodies[question] = boards.body(self.board, question=question)
        return self.bodies[question]


class Pulses:
    """The class store's boards, each read from the database at most once per CACHE_S, one
    read at a time per class (all of a class's devices ask; one read answers them). A
    database that does not answer is kept as such for CACHE_S too."""

    def __init__(self, read: Callable[[str], Board] | None = None) -> None:
        self._read = read or (lambda code: default_store().board(code))
        self._kept: dict[str, Kept] = {}
        self._reading: dict[str, threading.Lock] = {}  # per class: one read at a time
        self._open: dict[str, float] = {}  # when a read last found each class open
        self._lock = threading.Lock()

    def fresh(self, code: str, max_age_s: float = CACHE_S) -> Kept | None:
        """What was last read for `code`, if younger than `max_age_s` (CLOSED_S: a class
        closed or unknown)."""
        with self._lock:
            kept = self._kept.get(code)
        if kept is None:
            return None
        closed = isinstance(kept.board, Board) and not kept.board.pulse.open
        return kept if time.monotonic() - kept.at < (CLOSED_S if closed else max_age_s) else None

    def forget(self, code: str) -> None:
        """`code`'s class has changed: the next read goes to the database."""
        with self._lock:
            self._kept.pop(code, None)

    def known(self, code: str) -> bool:
        """Whether a read found `code`'s class open within KNOWN_S."""
        with self._lock:
            seen = self._open.get(code)
        return seen is not None and time.monotonic() - seen < KNOWN_S

    def read(self, code: str, max_age_s: float = CACHE_S) -> Kept:
        """The board of `code`, read now unless another read has just kept it (StoreDown if
        the database does not answer)."""
        with self._lock:
            if len(self._reading) >= CACHE_CLASSES:
                self._reading.clear()  # a reader holding an old lock finishes all the same
            reading = self._reading.setdefault(code, threading.Lock())
        with reading:
            kept = self.fresh(code, max_age_s)
            if kept is None:
                try:
                    kept = Kept(time.monotonic(), self._read(code))
                except StoreDown as err:
                    kept = Kept(time.monotonic(), err)
                self._keep(code, kept)
        if isinstance(kept.board, StoreDown):
            raise kept.board
        return kept

    def _keep(self, code: str, kept: Kept) -> None:
        now = time.monotonic()
        with self._lock:
            if len(self._kept) >= CACHE_CLASSES:
                self._kept = {c: k for c, k in self._kept.items() if now - k.at < CACHE_S}
                if len(self._kept) >= CACHE_CLASSES:
                    self._kept.clear()
            self._kept[code] = kept
            if isinstance(kept.board, Board) and kept.board.pulse.open:
                if code not in self._open and len(self._open) >= CACHE_CLASSES:
                    self._open = {c: t for c, t in self._open.items() if now - t < KNOWN_S}
                    while len(self._open) >= CACHE_CLASSES:  # the longest unseen go first
                        del self._open[min(self._open, key=self._open.__getitem__)]
                self._open[code] = now


class PerAddress:
    """How many reads of unknown codes each address had in the current 10 s (a fixed window):
    `take` says whether one more is allowed. Bounded: at most CACHE_CLASSES * 10 addresses."""

    def __init__(self, per_10s: int = UNKNOWN_PER_10S, clock: Callable[[], float] = time.monotonic):
        self.per_10s, self._clock = per_10s, clock
        self._counts: dict[str, tuple[float, int]] = {}

    def spent(self, address: str) -> bool:
        """Whether `address` has used its count in the current 10 s (nothing is counted)."""
        start, count = self._counts.get(address, (0.0, 0))
        return self._clock() - start < 10.0 and count >= self.per_10s

    def take(self, address: str) -> bool:
        now = self._clock()
        start, count = self._counts.get(address, (now, 0))
        if now - start >= 10.0:
            start, count = now, 0
        if count >= self.per_10s:
            return False
        if address not in self._counts and len(self._counts) >= CACHE_CLASSES * 10:
            self._counts = {a: c for a, c in self._counts.items() if now - c[0] < 10.0}
            if len(self._counts) >= CACHE_CLASSES * 10:
                self._counts.clear()
        self._counts[address] = (start, count + 1)
        return True


def client_address(scope: dict[str, Any]) -> str:
    """The visitor's network as the per-address limits count it (lnlab.serving.networks: the
    connection's, or behind a trusted proxy the last X-Forwarded-For entry; an IPv6 visitor's
    /64), as lnlab.ui.claims reads it for a script run."""
    direct = (scope.get("client") or ("", 0))[0] or ""
    forwarded = dict(scope.get("headers", [])).get(b"x-forwarded-for", b"").decode("latin-1")
    return visitor(direct, forwarded)


@dataclass(frozen=True)
class Asked:
    """A pulse request: the class, whether the phone's question goes with the pulse, and what
    the device waits for (`watch`: fields; `since`: their stamp as it drew them; none: it
    waits for nothing)."""

    code: str
    question: bool = False
    watch: tuple[str, ...] = ()
    since: str | None = None


def asked(path: str, query: bytes | str = b"") -> Asked | tuple[int, dict[str, Any]] | None:
    """The request `path` and `query` make, a refusal (404, 400) with its reason, or None if
    `path` is not a pulse's."""
    found = _ROUTE.fullmatch(path)
    if found is None:
        return None
    try:
        code = normalize_code(found.group(1))
    except ClassError as err:
        return 404, {"error": str(err)}
    text = query.decode("latin-1") if isinstance(query, bytes) else query
    params = parse_qs(text[:1000])
    watch = tuple(filter(None, (params.get("watch") or [""])[0].split(",")))
    since = (params.get("since") or [None])[0]
    if len(watch) > len(boards.FIELDS) or not set(watch) <= set(boards.FIELDS):
        return 400, {"error": f"watch names some of {', '.join(boards.FIELDS)}"}
    if since is not None and len(since) > MAX_STAMP:
        return 400, {"error": f"since is at most {MAX_STAMP} characters"}
    question = (params.get("question") or ["0"])[0] == "1"
    return Asked(code, question, watch, since if watch else None)


def answer(pulses: Pulses, path: str, query: bytes | str = b"") -> tuple[int, Any] | None:
    """The status and body for a pulse request, or None if `path` is not one (the fast part:
    a kept board, or 0 and the request to read). Reading is `respond`'s."""
    request = asked(path, query)
    if request is None or isinstance(request, tuple):
        return request
    return kept_answer(pulses, request)


def kept_answer(pulses: Pulses, request: Asked) -> tuple[int, Any]:
    """`answer` for a request read already."""
    kept = pulses.fresh(request.code)
    if kept is not None and isinstance(kept.board, StoreDown):
        return 503, {"error": str(kept.board)}
    return (200, kept.body(request.question)) if kept else (0, request)


def read(pulses: Pulses, code: str, max_age_s: float = CACHE_S) -> tuple[int, Any]:
    """200 and the board of `code` as kept (`Kept`, at most `max_age_s` old), or the refusal:
    503 for a database that does not answer, 404 for a code no class can have."""
    try:
        return 200, pulses.read(code, max_age_s)
    except StoreDown as err:
        return 503, {"error": str(err)}
    except InputError as err:
        return 404, {"error": str(err)}


def respond(pulses: Pulses, path: str, query: bytes | str = b"") -> tuple[int, Any] | None:
    """`answer`, reading the database when the kept board is stale (in a worker thread)."""
    found = answer(pulses, path, query)
    if found is None or found[0]:
        return found
    request: Asked = found[1]
    status, got = read(pulses, request.code)
    return (status, got.body(request.question)) if status == 200 else (status, got)


class PulseRoute:
    """ASGI middleware: GET .../_lnlab/pulse/<code> is answered here, before Streamlit's own
    routes; everything else goes on. The database is read in a worker thread, so the event
    loop (every visitor's websocket) never waits for it, one read per class at a time (the
    devices that ask meanwhile wait for it, holding no thread), at most READERS reads at once
    for classes known here and UNKNOWN_READERS for other codes: a request past them gets 503
    at once (the page asks again later). So a database that hangs holds a few of the threads
    Streamlit also serves its files with, not all of them, and codes that are no open class
    here never take a known class's reads. An address past UNKNOWN_PER_10S reads of unknown
    codes gets 429. A device waiting for a change of a known, open class is held
    (lnlab.ui.server.waiting)."""

    def __init__(self, app, pulses: Pulses | None = None) -> None:
        self.app = app
        self.pulses = pulses or Pulses()
        self.waiting = Waiting(
            partial(read, self.pulses),
            self.pulses.forget,
            None if pulses else (lambda heard: default_store().listen(heard)),
        )
        self.reading = 0  # reads under way of known classes (the event loop's own count)
        self.reading_unknown = 0  # ... of codes not known here
        self.strangers = PerAddress()
        self._running: dict[str, asyncio.Future] = {}  # the reads under way, by code

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or PATH not in scope.get("path", ""):
            await self.app(scope, receive, send)
            return
        request = asked(scope["path"], scope.get("query_string", b""))
        if request is None:
            await self.app(scope, receive, send)
            return
        found = request if isinstance(request, tuple) else kept_answer(self.pulses, request)
        if scope.get("method", "GET") not in ("GET", "HEAD"):
            found = 405, {"error": "a pulse is only read (GET)"}
        elif not found[0]:  # to be read
            reading = self._reading(scope, found[1].code)
            got = reading if isinstance(reading, tuple) else await asyncio.shield(reading)
            found = (200, got[1].body(found[1].question)) if got[0] == 200 else got
        if found[0] == 200 and isinstance(request, Asked) and request.since is not None:
            kept = self.pulses.fresh(request.code, math.inf)
            if (
                kept is not None
                and isinstance(kept.board, Board)
                and self.pulses.known(request.code)
            ):
                found = await self.waiting.hold(
                    request.code, request.watch, request.since, request.question, kept, receive
                )
        await send_json(send, *found)

    def _reading(self, scope, code: str) -> asyncio.Future | tuple[int, Any]:
        """The read of `code` under way (one read answers every device that asks meanwhile),
        a new one, or the answer that refuses it: 503 with the readers all taken, 429 for an
        address past its reads of unknown codes."""
        if (running := self._running.get(code)) is not None:
            return running
        known = self.pulses.known(code)
        if self.reading >= READERS if known else self.reading_unknown >= UNKNOWN_READERS:
            return 503, {"error": "busy: ask again in a moment"}
        if not known and not self.strangers.take(client_address(scope)):
            return 429, {"error": "too many class codes asked from your address: wait"}
        from starlette.concurrency import run_in_threadpool

        if known:
            self.reading += 1
        else:
            self.reading_unknown += 1
        running = asyncio.ensure_future(run_in_threadpool(read, self.pulses, code))
        self._running[code] = running

        def done(_: asyncio.Future) -> None:
            del self._running[code]
            if known:
                self.reading -= 1
            else:
                self.reading_unknown -= 1

        running.add_done_callback(done)
        return running
