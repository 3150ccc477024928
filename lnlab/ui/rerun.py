"""Reruns: whole-page reruns asked for from inside a fragment, the pace of a session's runs,
and whose run goes next when the process is busy."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.runtime.scriptrunner import get_script_run_ctx, script_runner
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData

from lnlab.serving.fair_share import REDRAW_LATER_S, FairShare
from lnlab.serving.pace import Pace
from lnlab.ui.claims import client_address

_FULL_RERUN = "_lnlab_full_rerun"
_PACE = "_lnlab_pace"  # the session's lnlab.serving.pace.Pace
_DRAWN = "_lnlab_lesson_drawn"  # (page's script, slide key, section) the lesson last drew
_OWNER = "_lnlab_owner"  # (session id, address): whose runs these are, for SHARE
_REDRAWS = "_lnlab_redraws"  # ids of this session's fragments that redraw what a class shows
PULSE_KEY = "lnlab_pulse_"  # how lnlab.ui.pulse's components' keys begin: their triggers redraw
_TRIGGERS = ("trigger_value", "string_trigger_value", "json_trigger_value")
SHARE = FairShare()  # the process's turns to run, once install() has made runs take them
_GOES_ON = threading.local()  # kept: (arrived, runs) of a run that ended for a rerun
KEEP_PLACE_RERUNS = 3  # reruns in a row that keep the first run's place in line


def rerun_app() -> None:
    """Ask for a whole-page rerun after this callback (from a slide's widget, say).

    A widget inside a slide reruns only the slide; when it changes something drawn outside
    (a text box above the lesson), the lesson calls st.rerun(scope="app") once it sees this.
    """
    st.session_state[_FULL_RERUN] = True


def rerun_if_asked() -> None:
    """Rerun the whole page if a callback asked for it (see rerun_app)."""
    if st.session_state.pop(_FULL_RERUN, False):
        st.rerun(scope="app")


def drew_section(slide_key: str, at: int) -> None:
    """The lesson's fragment drew section `at` (the value of `slide_key`) on this page."""
    st.session_state[_DRAWN] = (_page(), slide_key, at)


def redraw_if_lost() -> None:
    """Rerun the whole page if the lesson's section moved but its fragment never drew it; call
    from a fragment that runs alone.

    Next's callback moves the section, then the lesson's fragment draws it. When another
    fragment's run (a class's pulse) preempts that run after its callbacks, Streamlit drops
    the lesson's run: the slide stayed put until the next press. The fragment that preempted
    it calls this. At most once for each section drawn: the record goes with the rerun.
    """
    if not getattr(get_script_run_ctx(), "fragment_ids_this_run", None):
        return  # a whole-page run: the lesson draws in it
    drawn = st.session_state.get(_DRAWN)
    if drawn is None or drawn[0] != _page():
        return
    _, key, at = drawn
    if st.session_state.get(key, at) != at:
        del st.session_state[_DRAWN]
        st.rerun(scope="app")


def _page() -> str:
    return getattr(get_script_run_ctx(), "page_script_hash", "")


def pace(fragment: bool = False) -> None:
    """Wait if this session asks for runs faster than lnlab.serving.pace allows: every whole-page
    run calls this (page_setup), and a `fragment` calls it when it runs alone. Under the
    launcher this does nothing: install() paces every run before it starts.

    The wait holds no lock and no CPU. With runner.fastReruns off (.streamlit/config.toml)
    the rerun requests that arrive meanwhile are merged into one, which starts as soon as
    this run touches Streamlit again: a flood of requests costs a few runs a second.
    """
    if _installed():
        return
    if fragment and not getattr(get_script_run_ctx(), "fragment_ids_this_run", None):
        return  # part of a whole-page run, which has paid
    _wait_for_pace()


def install() -> None:
    """Pace every script run and make it wait for its turn (lnlab.serving.fair_share), given
    back when it ends: whole-page runs and fragments alike, whatever asked for them (a page, a
    timer, a message a script wrote). The launcher calls this; AppTest runs take no turns."""
    original = script_runner.exec_func_with_error_handling
    if getattr(original, "takes_turns", False):
        return

    def run(func, ctx):  # type: ignore[no-untyped-def]
        try:
            _wait_for_pace()
            kept = getattr(_GOES_ON, "kept", None)
            _GOES_ON.kept = None
            arrived = kept[0] if kept else time.monotonic()
            later = REDRAW_LATER_S if _redraws_only(ctx, _asked(func)) else 0.0
            _take_turn(later, arrived)
            result = original(func, ctx)
            chain = kept[1] + 1 if kept else 1
            if _ended_for_rerun(result) and chain <= KEEP_PLACE_RERUNS:
                _GOES_ON.kept = (arrived, chain)  # the rerun goes on in this place in line
            return result
        finally:
            SHARE.give_back()

    run.takes_turns = True  # type: ignore[attr-defined]
    script_runner.exec_func_with_error_handling = run


def _asked(func: object) -> RerunData | None:
    """What asked for the run `func` executes: Streamlit's code_to_exec keeps its RerunData as
    a default argument (None if a later Streamlit does not)."""
    defaults = getattr(func, "__defaults__", None) or ()
    return next((d for d in defaults if isinstance(d, RerunData)), None)


def _redraws_only(ctx: object, asked: RerunData | None) -> bool:
    """Whether a run only redraws what a class shows: it runs fragments that all do so
    (redraws_a_class), and their timer or a class's pulse asked for it, not a click in them."""
    fragments = set(getattr(ctx, "fragment_ids_this_run", None) or ())
    if not fragments or not fragments <= st.session_state.get(_REDRAWS, set()) or asked is None:
        return False
    if asked.is_auto_rerun:
        return True
    fired = [
        w.id for w in (asked.widget_states.widgets if asked.widget_states else ()) if _fired(w)
    ]
    return bool(fired) and all(PULSE_KEY in widget_id for widget_id in fired)


def _fired(widget: WidgetState) -> bool:
    """A trigger in a message: a button pressed, a component's event."""
    kind = widget.WhichOneof("value")
    return kind in _TRIGGERS and bool(getattr(widget, kind))


def _ended_for_rerun(result: object) -> bool:
    """exec_func_with_error_handling's (result, ok, rerun data, stopped, error): a rerun."""
    return isinstance(result, tuple) and len(result) > 2 and result[2] is not None


def redraws_a_class(fragment_id: str | None) -> None:
    """Fragment `fragment_id` redraws what a class shows (lnlab.ui.pulse.following): a run of
    it alone, which a pulse or a timer asks for, waits behind the visitors' own clicks."""
    if fragment_id is not None:
        st.session_state.setdefault(_REDRAWS, set()).add(fragment_id)


def _installed() -> bool:
    return getattr(script_runner.exec_func_with_error_handling, "takes_turns", False)


def _wait_for_pace() -> None:
    if wait := st.session_state.setdefault(_PACE, Pace()).take(time.monotonic()):
        time.sleep(wait)


@contextmanager
def turn_aside() -> Iterator[None]:
    """Give this run's turn back while it waits on other work (the heavy-work line, the
    worker process), and wait for a turn again after it: a wait holds nobody up. After an
    error too, which the page may show and go on from; not after Streamlit's rerun or stop
    (BaseExceptions), which end the run."""
    if not (_installed() and SHARE.holding()):
        yield
        return
    SHARE.give_back()
    try:
        yield
    except Exception:
        _take_turn()
        raise
    _take_turn()


def _take_turn(later_s: float = 0.0, arrived: float | None = None) -> None:
    """Wait for this run's turn: while the process is busy, the visitors who have used the
    least of it lately go first (lnlab.serving.fair_share)."""
    owner = st.session_state.get(_OWNER)
    if owner is None:
        owner = st.session_state[_OWNER] = (get_script_run_ctx().session_id, client_address())
    SHARE.take(*owner, later_s=later_s, arrived=arrived)
