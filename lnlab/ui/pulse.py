"""A live class's devices follow it without rerunning their fragments every second.

A fragment that follows a class (`following`) used to rerun on a timer (`run_every`): every
student's device reran the whole student view every 1.5 s, so 300 students kept one process
at 0.83 s of CPU a second with nothing new to show (bench.class_follow). Now the page asks the
server a question it answers without running any script: GET `/_lnlab/pulse/<code>` gives the
class's pulse (lnlab.classroom.store.Pulse: the question asked now, revealed or not, how many
answered and joined, open or not) as a few bytes of JSON, answered by the launcher's route
(`install`) from a cache: one database read per class at most every CACHE_S, in a worker
thread. A component inside the fragment (static/lnlab/pulse.mjs) asks every `every_s` and
reruns the fragment only when a field it watches differs from what the fragment last drew: a
student's device reruns when a question is asked or revealed, the teacher's when a count moves.

Until the browser has shown that it can (its first pulse read), and again after it says it
cannot, the fragment keeps its timer: a server started without the route (`streamlit run
app.py`), a browser that blocks the request, or an old page still follow the class. Each run
of the fragment sets the browser's timer for itself (Streamlit's own auto_rerun message: every
`every_s`, or once an hour while pulses are read), so the switch redraws nothing.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from functools import partial
from typing import Any, TypeVar

import streamlit as st

from lnlab.classroom.store import ClassError, Pulse, StoreDown, default_store, normalize_code
from lnlab.core.errors import InputError
from lnlab.ui.asgi import add_middleware, send_json
from lnlab.ui.rerun import PULSE_KEY, redraw_if_lost, redraws_a_class
from lnlab.ui.served import STATIC, base_path

PATH = "_lnlab/pulse/"
CACHE_S = 0.25  # the route reads one class's pulse from the database at most 4 times a second
CACHE_CLASSES = 1000  # pulses kept at most (a server has at most 200 classes open)
READERS = 8  # requests reading the database at once (Streamlit's thread pool has 28 threads)
_ROUTE = re.compile(rf"(?:/[^?#]*)?/{PATH}([^/?#]{{1,100}})")
_WORKS = "_lnlab_pulse_works"  # True once this browser read a pulse; False once it said it cannot
_WATCHED = "_lnlab_pulse_watched"  # the running fragment has drawn its pulse component
_TIMER_S = "_lnlab_pulse_timer_s"  # the running fragment's timer, where pulses cannot be read
# The timer while the browser reads pulses: an hour, not none. Streamlit's browser asks for a
# run when its websocket comes back (another process, after the one serving it died) only if
# a timer runs or the last run was a fragment's: with the timer stopped and a whole-page run
# last, a teacher's page stayed as it was on the new process until the class changed.
FOLLOWING_TIMER_S = 3600.0

UNKNOWN: Mapping[str, Any] = {}  # what a fragment drew when it could not read its class
QUESTION = ("qid", "revealed", "open")  # the question asked now: what a student's view shows
COUNTS = (*QUESTION, "answered", "joined")  # and its counts: what the teacher's count shows

F = TypeVar("F", bound=Callable[..., Any])


# ---------------------------------------------------------------- the server's side


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


def install() -> None:
    """Streamlit's server answers pulses first (PulseRoute). For the launcher, lnlab.ui.serve."""
    add_middleware(PulseRoute, "lnlab_pulse")


# ---------------------------------------------------------------- the page's side

_component = st.components.v2.component(
    "lnlab.pulse",
    js=(STATIC / "lnlab" / "pulse.mjs").read_text(encoding="utf-8"),
)


def works() -> bool:
    """Whether this session's browser follows classes by their pulse."""
    return st.session_state.get(_WORKS) is True


def following(every_s: float) -> Callable[[F], F]:
    """Decorator: draw `body` in a fragment that follows a class. `watch` (inside `body`) sets
    how it reruns: when the class's pulse changes, while the browser reads pulses; otherwise
    every `every_s` seconds (the browser's timer, as Streamlit's `run_every`). A run that
    fails before `watch` has drawn its component starts the timer, so the fragment tries
    again as it always did, instead of following nothing."""

    def wrap(body: F) -> F:
        @functools.wraps(body)  # the fragment's identity stays the body's
        def guarded(*args: Any, **kwargs: Any) -> Any:
            redraw_if_lost()  # a press whose slide this run's pulse kept from being drawn
            redraws_a_class(_fragment_id())  # its runs alone wait behind visitors' clicks
            ss = st.session_state
            ss[_WATCHED], ss[_TIMER_S] = False, every_s
            try:
                return body(*args, **kwargs)
            except Exception:  # not Streamlit's rerun and stop, which are BaseExceptions
                fragment = _fragment_id()
                if not ss.get(_WATCHED) and fragment is not None:
                    _timer(fragment, every_s)
                raise

        return st.fragment(guarded)  # type: ignore[return-value]

    return wrap


def _fragment_id() -> str | None:
    """The fragment running now (Streamlit's own bookkeeping; None outside one)."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

    try:
        return ThreadState.get().fragment_id
    except RuntimeError:  # no script run (a plain call in a test)
        return None


def _timer(fragment_id: str, every_s: float) -> None:
    """Set the browser's timer that reruns `fragment_id` every `every_s`, as Streamlit's
    `run_every` does (the browser keeps a timer sent again unchanged)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    msg = ForwardMsg()
    msg.auto_rerun.interval = every_s
    msg.auto_rerun.fragment_id = fragment_id
    if (ctx := get_script_run_ctx()) is not None:
        ctx.enqueue(msg)


def watch(
    name: str,
    code: str,
    fields: Sequence[str],
    every_s: float,
    seen: Mapping[str, Any] | None = None,
) -> None:
    """Inside a `following` body, on every path through it: the component that reruns the
    fragment when one of `fields` of class `code`'s pulse differs from `seen`, what the
    fragment draws (asked every `every_s`). `seen` None: the pulse read now, before the
    fragment reads what it draws; UNKNOWN: the fragment could not read it (the next read
    reruns it, at most every few seconds). The fragment's timer (`following`'s) runs every
    FOLLOWING_TIMER_S while the browser reads pulses, every `every_s` otherwise: every run
    says so for itself, for the same fragment, so nothing is redrawn when the browser's word
    changes."""
    ss = st.session_state
    ss[_WATCHED] = True
    if (fragment := _fragment_id()) is not None:
        _timer(fragment, FOLLOWING_TIMER_S if works() else ss[_TIMER_S])
    if seen is None:
        try:
            seen = asdict(default_store().pulse(code))
        except InputError:
            seen = UNKNOWN  # the fragment shows what is wrong; the browser asks again
    status = ss.get(_WORKS)
    key = f"{PULSE_KEY}{name}"
    _component(
        key=key,
        data={
            "name": name,
            "url": f"{base_path()}{PATH}{code}",
            "watch": list(fields),
            "seen": dict(seen),
            "every_ms": round(every_s * 1000),
            "status": "ready" if status else ("failed" if status is False else ""),
        },
        on_status_change=partial(_status, key),
        on_changed_change=_nothing,  # a change reruns the fragment: nothing else to do
    )


def _nothing() -> None:
    """A trigger's callback: the rerun it causes is the point."""


def _status(key: str) -> None:
    found = status_of(st.session_state.get(key))
    if found is not None:
        st.session_state[_WORKS] = found


def status_of(state: Any) -> bool | None:
    """The browser's word on pulses, from a pulse component's state: True ("ready"), False
    ("failed: ..."), None (nothing yet)."""
    status = str((state or {}).get("status") or "")
    if status == "ready":
        return True
    return False if status.startswith("failed") else None
