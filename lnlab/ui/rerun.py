"""Reruns: whole-page reruns asked for from inside a fragment, the pace of a session's runs,
and whose run goes next when the process is busy."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx, script_runner

from lnlab.serving.fair_share import REDRAW_LATER_S, FairShare
from lnlab.serving.pace import Pace
from lnlab.ui.claims import client_address

_FULL_RERUN = "_lnlab_full_rerun"
_PACE = "_lnlab_pace"  # the session's lnlab.serving.pace.Pace
_DRAWN = "_lnlab_lesson_drawn"  # (page's script, slide key, section) the lesson last drew
_OWNER = "_lnlab_owner"  # (session id, address): whose runs these are, for SHARE
_REDRAWS = "_lnlab_redraws"  # ids of this session's fragments that redraw what a class shows
SHARE = FairShare()  # the process's turns to run, once install() has made runs give them back


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
            fragments = set(getattr(ctx, "fragment_ids_this_run", None) or ())
            redraw = fragments and fragments <= st.session_state.get(_REDRAWS, set())
            _take_turn(REDRAW_LATER_S if redraw else 0.0)
            return original(func, ctx)
        finally:
            SHARE.give_back()

    run.takes_turns = True  # type: ignore[attr-defined]
    script_runner.exec_func_with_error_handling = run


def redraws_a_class(fragment_id: str | None) -> None:
    """Fragment `fragment_id` redraws what a class shows (lnlab.ui.pulse.following): a run of
    it alone, which a pulse or a timer asks for, waits behind the visitors' own clicks."""
    if fragment_id is not None:
        redraws = st.session_state.setdefault(_REDRAWS, set())
        if fragment_id not in redraws:
            redraws.add(fragment_id)


def _installed() -> bool:
    return getattr(script_runner.exec_func_with_error_handling, "takes_turns", False)


def _wait_for_pace() -> None:
    if wait := st.session_state.setdefault(_PACE, Pace()).take(time.monotonic()):
        time.sleep(wait)


@contextmanager
def turn_aside() -> Iterator[None]:
    """Give this run's turn back while it waits on other work (the heavy-work line, the
    worker process), and wait for a turn again after it: a wait holds nobody up."""
    if not (_installed() and SHARE.holding()):
        yield
        return
    SHARE.give_back()
    yield
    _take_turn()  # not after an exception: the run ends without running more


def _take_turn(later_s: float = 0.0) -> None:
    """Wait for this run's turn: while the process is busy, the visitors who have used the
    least of it lately go first (lnlab.serving.fair_share)."""
    owner = st.session_state.get(_OWNER)
    if owner is None:
        owner = st.session_state[_OWNER] = (get_script_run_ctx().session_id, client_address())
    SHARE.take(*owner, later_s=later_s)
