"""A live class's devices follow it without rerunning their fragments every second.

A fragment that follows a class (`following`) used to rerun on a timer (`run_every`): every
student's device reran the whole student view every 1.5 s, so 300 students kept one process at
0.83 s of CPU a second with nothing new to show (bench/results/class_follow.md). Now the page
asks the server, which answers without running any script: GET `/_lnlab/pulse/<code>` gives
the class's pulse (lnlab.classroom.store.Pulse: the question asked now, revealed or not, how
many answered and joined, open or not) as a few bytes of JSON (lnlab.ui.server.pulse). A
component inside the fragment (static/lnlab/pulse.mjs) reruns the fragment only when a field
it watches differs from what the fragment last drew (a student's device when a question is
asked or revealed, the teacher's when a count moves); while nothing differs the server holds
its read until something does (lnlab.ui.server.waiting). A phone goes further: the page draws
the question itself (lnlab.ui.classroom.phone), and `followed` marks its fragment as following.

Until the browser has shown that it can (its first pulse read), and again after it says it
cannot, the fragment keeps its timer: a browser that blocks the request, a test run with no
server (AppTest) or an old page still follow the class. Each run
of the fragment sets the browser's timer for itself (Streamlit's own auto_rerun message: every
`every_s`, or once an hour while pulses are read), so the switch redraws nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any, TypeVar

import streamlit as st

from lnlab.classroom.store import default_store
from lnlab.core.errors import InputError
from lnlab.ui import state
from lnlab.ui.rerun import redraw_if_lost
from lnlab.ui.runtime import sessions
from lnlab.ui.runtime.turns import PULSE_KEY, redraws_a_class
from lnlab.ui.served import STATIC, base_path
from lnlab.ui.server.pulse import PATH

# The timer while the browser reads pulses: an hour, not none. Streamlit's browser asks for a
# run when its websocket comes back (another process, after the one serving it died) only if
# a timer runs or the last run was a fragment's: with the timer stopped and a whole-page run
# last, a teacher's page stayed as it was on the new process until the class changed.
FOLLOWING_TIMER_S = 3600.0

UNKNOWN: Mapping[str, Any] = {}  # what a fragment drew when it could not read its class
QUESTION = ("qid", "revealed", "open")  # the question asked now: what a student's view shows
COUNTS = (*QUESTION, "answered", "joined")  # and its counts: what the teacher's count shows

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class Pulses:
    """How a session follows classes (lnlab.ui.state)."""

    works: bool | None = None  # True once its browser read a pulse; False once it said it cannot
    watched: bool = False  # the running fragment has drawn its pulse component
    timer_s: float | None = None  # the running fragment's timer, where pulses cannot be read


_component = st.components.v2.component(
    "lnlab.pulse",
    js=(STATIC / "lnlab" / "pulse.mjs").read_text(encoding="utf-8"),
)


def works() -> bool:
    """Whether this session's browser follows classes by their pulse."""
    return state.of(Pulses).works is True


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
            redraws_a_class(sessions.fragment_id())  # its runs alone wait behind visitors' clicks
            pulses = state.of(Pulses)
            pulses.watched, pulses.timer_s = False, every_s
            try:
                return body(*args, **kwargs)
            except Exception:  # not Streamlit's rerun and stop, which are BaseExceptions
                fragment = sessions.fragment_id()
                if not pulses.watched and fragment is not None:
                    sessions.set_timer(fragment, every_s)
                raise

        return st.fragment(guarded)  # type: ignore[return-value]

    return wrap


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
    followed()
    if seen is None:
        try:
            seen = asdict(default_store().pulse(code))
        except InputError:
            seen = UNKNOWN  # the fragment shows what is wrong; the browser asks again
    status = state.of(Pulses).works
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
        on_status_change=partial(status_changed, key),
        on_changed_change=rerun_only,  # a change reruns the fragment: nothing else to do
    )


def followed() -> None:
    """Inside a `following` body: this run follows the class (`watch`, or a component that
    reads the pulse itself, lnlab.ui.classroom.phone); the fragment's timer runs every
    FOLLOWING_TIMER_S while the browser reads pulses, every `every_s` otherwise."""
    pulses = state.of(Pulses)
    pulses.watched = True
    if (fragment := sessions.fragment_id()) is not None:
        every = FOLLOWING_TIMER_S if works() else pulses.timer_s
        if every is None:
            raise RuntimeError("a class is followed inside a `following` body")
        sessions.set_timer(fragment, every)


def rerun_only() -> None:
    """A trigger's callback: the rerun it causes is the point."""


def status_changed(key: str) -> None:
    """A component's "status" callback: the browser's word on pulses (`status_of`)."""
    found = status_of(st.session_state.get(key))
    if found is not None:
        state.of(Pulses).works = found


def status_of(state: Any) -> bool | None:
    """The browser's word on pulses, from a pulse component's state: True ("ready"), False
    ("failed: ..."), None (nothing yet)."""
    status = str((state or {}).get("status") or "")
    if status == "ready":
        return True
    return False if status.startswith("failed") else None
