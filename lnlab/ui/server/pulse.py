"""GET .../_lnlab/pulse/<code>: a class's pulse for its devices, answered with no script run.

`PulseRoute` is one of the app's middleware (lnlab.ui.server): it answers from a cache, one
database read per class at most every CACHE_S, in a worker thread, so the event loop (every
visitor's websocket) never waits for the database. The page's side is lnlab.ui.pulse.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from lnlab.classroom.store import ClassError, Pulse, StoreDown, default_store, normalize_code
from lnlab.core.errors import InputError
from lnlab.ui.server.asgi import send_json

PATH = "_lnlab/pulse/"
CACHE_S = 0.25  # the route reads one class's pulse from the database at most 4 times a second
CACHE_CLASSES = 1000  # pulses kept at most (a server has at most 200 classes open)
READERS = 8  # requests reading the database at once (Streamlit's thread pool has 28 threads)
_ROUTE = re.compile(rf"(?:/[^?#]*)?/{PATH}([^/?#]{{1,100}})")


class Pulses:
    """The class store's pulses, each read from the database at most once per CACHE_S, one
    read at a time per class (all of a class's devices ask; one read answers them). A
    database that does not answer is kept as such for CACHE_S too."""

    def __init__(self, read: Callable[[str], Pulse] | None = None) -> None:
        self._read = read or (lambda code: default_store().pulse(code))
        self._kept: dict[str, tuple[float, Pulse | StoreDown]] = {}
        self._reading: dict[str, threading.Lock] = {}  # per class: one read at a time
        self._lock = threading.Lock()

    def fresh(self, code: str) -> Pulse | StoreDown | None:
        """What was last read for `code`, if younger than CACHE_S."""
        with self._lock:
            kept = self._kept.get(code)
        return kept[1] if kept and time.monotonic() - kept[0] < CACHE_S else None

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
    loop (every visitor's websocket) never waits for it, and by at most READERS requests at
    once: the others get 503 at once (the page asks again later), so a database that hangs
    holds a few of the threads Streamlit also serves its files with, not all of them."""

    def __init__(self, app, pulses: Pulses | None = None) -> None:
        self.app = app
        self.pulses = pulses or Pulses()
        self.reading = 0  # requests waiting for a read (the event loop's own count)

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
        elif not found[0] and self.reading >= READERS:
            found = 503, {"error": "busy: ask again in a moment"}
        elif not found[0]:
            from starlette.concurrency import run_in_threadpool

            self.reading += 1
            try:
                found = await run_in_threadpool(respond, self.pulses, scope["path"])
            finally:
                self.reading -= 1
        await send_json(send, *found)
