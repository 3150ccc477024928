"""GET .../_lnlab/pulse/<code>: a class's pulse for its devices, answered with no script run.

`PulseRoute` is one of the app's middleware (lnlab.ui.server): it answers from a cache, one
database read per class at most every CACHE_S, in a worker thread, so the event loop (every
visitor's websocket) never waits for the database. The page's side is lnlab.ui.pulse.

Codes that no open class answered here lately (`Pulses.known`: random ones, a closed class's)
never take the reads a real class needs: they have their own UNKNOWN_READERS, an address may
have at most UNKNOWN_PER_10S of them read (then 429), and a closed or unknown class's answer is
kept CLOSED_S. Issue 38: a flood of random codes held every reader, and 27-38 % of a real
class's pulse reads failed with 503.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from lnlab.classroom.store import ClassError, Pulse, StoreDown, default_store, normalize_code
from lnlab.core.errors import InputError
from lnlab.ui.claims import TRUSTED_PROXIES_ENV
from lnlab.ui.server.asgi import send_json

PATH = "_lnlab/pulse/"
CACHE_S = 0.25  # the route reads one class's pulse from the database at most 4 times a second
CLOSED_S = 10.0  # a closed or unknown class's pulse is read again only after this
CACHE_CLASSES = 1000  # pulses kept at most (a server has at most 200 classes open)
READERS = 8  # reads at once for known classes (Streamlit's thread pool has 28 threads)
UNKNOWN_READERS = 2  # reads at once for codes not known here (`Pulses.known`)
UNKNOWN_PER_10S = 30  # reads of codes not known here per address in 10 s (a class's devices
# ask for one code, known after its first read; a teacher opens a few classes)
KNOWN_S = 3600.0  # a code is known this long after a read found its class open
_ROUTE = re.compile(rf"(?:/[^?#]*)?/{PATH}([^/?#]{{1,100}})")


class Pulses:
    """The class store's pulses, each read from the database at most once per CACHE_S, one
    read at a time per class (all of a class's devices ask; one read answers them). A
    database that does not answer is kept as such for CACHE_S too."""

    def __init__(self, read: Callable[[str], Pulse] | None = None) -> None:
        self._read = read or (lambda code: default_store().pulse(code))
        self._kept: dict[str, tuple[float, Pulse | StoreDown]] = {}
        self._reading: dict[str, threading.Lock] = {}  # per class: one read at a time
        self._open: dict[str, float] = {}  # when a read last found each class open
        self._lock = threading.Lock()

    def fresh(self, code: str) -> Pulse | StoreDown | None:
        """What was last read for `code`, if younger than CACHE_S (CLOSED_S: a class closed
        or unknown)."""
        with self._lock:
            kept = self._kept.get(code)
        if kept is None:
            return None
        closed = isinstance(kept[1], Pulse) and not kept[1].open
        return kept[1] if time.monotonic() - kept[0] < (CLOSED_S if closed else CACHE_S) else None

    def known(self, code: str) -> bool:
        """Whether a read found `code`'s class open within KNOWN_S."""
        with self._lock:
            seen = self._open.get(code)
        return seen is not None and time.monotonic() - seen < KNOWN_S

    def read(self, code: str) -> Pulse:
        """The pulse of `code`, read now unless another read has just kept it (StoreDown if
        the database does not answer)."""
        with self._lock:
            if len(self._reading) >= CACHE_CLASSES:
                self._reading.clear()  # a reader holding an old lock finishes all the same
            reading = self._reading.setdefault(code, threading.Lock())
        with reading:
            kept = self.fresh(code)
            if kept is None:
                try:
                    kept = self._read(code)
                except StoreDown as err:
                    kept = err
                self._keep(code, kept)
        if isinstance(kept, StoreDown):
            raise kept
        return kept

    def _keep(self, code: str, kept: Pulse | StoreDown) -> None:
        now = time.monotonic()
        with self._lock:
            if len(self._kept) >= CACHE_CLASSES:
                self._kept = {c: k for c, k in self._kept.items() if now - k[0] < CACHE_S}
                if len(self._kept) >= CACHE_CLASSES:
                    self._kept.clear()
            self._kept[code] = (now, kept)
            if isinstance(kept, Pulse) and kept.open:
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
    """The visitor's address: the connection's, or behind a proxy on this machine (or one
    named in $LNLAB_TRUSTED_PROXIES) the last X-Forwarded-For entry (lnlab.ui.claims does
    the same for a script run)."""
    direct = (scope.get("client") or ("", 0))[0] or ""
    forwarded = dict(scope.get("headers", [])).get(b"x-forwarded-for", b"").decode("latin-1")
    trusted = {a.strip() for a in os.environ.get(TRUSTED_PROXIES_ENV, "").split(",") if a.strip()}
    try:
        loopback = not direct or ipaddress.ip_address(direct).is_loopback
    except ValueError:
        loopback = False
    if forwarded and (loopback or direct in trusted):
        return forwarded.split(",")[-1].strip()[:64]
    return direct[:64]


def answer(pulses: Pulses, path: str) -> tuple[int, dict[str, Any]] | None:
    """The status and JSON for a pulse request's path, or None if `path` is not one (the fast
    part: a cached pulse, or what to read). Reading is `respond`'s."""
    found = _ROUTE.fullmatch(path)
    if found is None:
        return None
    try:
        code = normalize_code(found.group(1))
    except ClassError as err:
        return 404, {"error": str(err)}
    kept = pulses.fresh(code)
    if isinstance(kept, StoreDown):
        return 503, {"error": str(kept)}
    return (200, asdict(kept)) if kept else (0, {"code": code})


def respond(pulses: Pulses, path: str) -> tuple[int, dict[str, Any]] | None:
    """`answer`, reading the database when the kept pulse is stale (in a worker thread)."""
    found = answer(pulses, path)
    if found is None or found[0]:
        return found
    try:
        return 200, asdict(pulses.read(found[1]["code"]))
    except StoreDown as err:
        return 503, {"error": str(err)}
    except InputError as err:
        return 404, {"error": str(err)}


class PulseRoute:
    """ASGI middleware: GET .../_lnlab/pulse/<code> is answered here, before Streamlit's own
    routes; everything else goes on. The database is read in a worker thread, so the event
    loop (every visitor's websocket) never waits for it, one read per class at a time (the
    devices that ask meanwhile wait for it, holding no thread), at most READERS reads at once
    for classes known here and UNKNOWN_READERS for other codes: a request past them gets 503
    at once (the page asks again later). So a database that hangs holds a few of the threads
    Streamlit also serves its files with, not all of them, and codes that are no open class
    here never take a known class's reads. An address past UNKNOWN_PER_10S reads of unknown
    codes gets 429."""

    def __init__(self, app, pulses: Pulses | None = None) -> None:
        self.app = app
        self.pulses = pulses or Pulses()
        self.reading = 0  # reads under way of known classes (the event loop's own count)
        self.reading_unknown = 0  # ... of codes not known here
        self.strangers = PerAddress()
        self._running: dict[str, asyncio.Future] = {}  # the reads under way, by code

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or PATH not in scope.get("path", ""):
            await self.app(scope, receive, send)
            return
        found = answer(self.pulses, scope["path"])
        if found is None:
            await self.app(scope, receive, send)
            return
        if scope.get("method", "GET") not in ("GET", "HEAD"):
            found = 405, {"error": "a pulse is only read (GET)"}
        elif not found[0]:  # to be read
            reading = self._reading(scope, found[1]["code"])
            found = reading if isinstance(reading, tuple) else await asyncio.shield(reading)
        await send_json(send, *found)

    def _reading(self, scope, code: str) -> asyncio.Future | tuple[int, dict[str, Any]]:
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
        running = asyncio.ensure_future(run_in_threadpool(respond, self.pulses, scope["path"]))
        self._running[code] = running

        def done(_: asyncio.Future) -> None:
            del self._running[code]
            if known:
                self.reading -= 1
            else:
                self.reading_unknown -= 1

        running.add_done_callback(done)
        return running
