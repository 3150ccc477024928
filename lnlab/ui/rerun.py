"""Reruns a page asks for: a whole-page rerun from inside a fragment, a section the lesson
never drew, a box above the lesson changed in a run of the lesson alone, and the pace of a
session's runs where the app's server does not pace them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from lnlab.ui import state
from lnlab.ui.runtime import sessions, stale, turns


@dataclass
class Reruns:
    """The reruns a session's page has asked for (lnlab.ui.state)."""

    full: bool = False  # a callback asked for a whole-page rerun (rerun_app)
    drawn: tuple[str, str, int] | None = None  # (page's script, slide key, section) last drawn
    above: dict[str, Any] = field(default_factory=dict)  # see above_lesson


def rerun_app() -> None:
    """Ask for a whole-page rerun after this callback (from a slide's widget, say).

    A widget inside a slide reruns only the slide; when it changes something drawn outside
    (a text box above the lesson), the lesson calls st.rerun(scope="app") once it sees this.
    """
    state.of(Reruns).full = True


def rerun_if_asked() -> None:
    """Rerun the whole page if a callback asked for it (see rerun_app)."""
    reruns = state.of(Reruns)
    if reruns.full:
        reruns.full = False
        st.rerun(scope="app")


def above_lesson(keys: Iterable[str]) -> None:
    """Record the values of the widgets among `keys` that this whole-page run drew before the
    lesson (the page's boxes, as the lesson is built from them); call before the lesson's
    fragment."""
    ss = st.session_state
    state.of(Reruns).above = {k: ss[k] for k in keys if sessions.drew_widget(k) and k in ss}


def rerun_if_above_changed() -> None:
    """In a run of the lesson's fragment alone: rerun the whole page if a box above the lesson
    no longer holds the value the lesson was built from.

    Streamlit calls the callback of every widget whose value a message changed, outside the
    fragment too, even in a run of the fragment alone. Under load an edit of the embeddings
    (Ctrl+Enter) reached the server that way once in a few dozen runs of the browser suite:
    its callback ran, no whole-page run followed, and the page, the lesson and the link stayed
    on the old numbers (tests/browser/test_lessons.py; bench/results/history.md, 2026-11-29).
    """
    if not sessions.runs_fragments_alone():
        return
    ss = st.session_state
    for key, value in state.of(Reruns).above.items():
        now = ss.get(key)  # an unchanged widget's value is the same object (NaN too)
        if now is not value and not stale.same(now, value):
            st.rerun(scope="app")
            return


def drew_section(slide_key: str, at: int) -> None:
    """The lesson's fragment drew section `at` (the value of `slide_key`) on this page."""
    state.of(Reruns).drawn = (sessions.page_hash(), slide_key, at)


def redraw_if_lost() -> None:
    """Rerun the whole page if the lesson's section moved but its fragment never drew it; call
    from a fragment that runs alone.

    Next's callback moves the section, then the lesson's fragment draws it. When another
    fragment's run (a class's pulse) preempts that run after its callbacks, Streamlit drops
    the lesson's run: the slide stayed put until the next press. The fragment that preempted
    it calls this. At most once for each section drawn: the record goes with the rerun.
    """
    if not sessions.runs_fragments_alone():
        return  # a whole-page run: the lesson draws in it
    reruns = state.of(Reruns)
    drawn = reruns.drawn
    if drawn is None or drawn[0] != sessions.page_hash():
        return
    _, key, at = drawn
    if st.session_state.get(key, at) != at:
        reruns.drawn = None
        st.rerun(scope="app")


def pace(fragment: bool = False) -> None:
    """Wait if this session asks for runs faster than lnlab.serving.pace allows: every whole-page
    run calls this (page_setup), and a `fragment` calls it when it runs alone. Under the app's
    server this does nothing: lnlab.ui.runtime.turns paces every run before it starts.

    The wait holds no lock and no CPU. With runner.fastReruns off (.streamlit/config.toml)
    the rerun requests that arrive meanwhile are merged into one, which starts as soon as
    this run touches Streamlit again: a flood of requests costs a few runs a second.
    """
    if turns.installed():
        return
    if fragment and not sessions.runs_fragments_alone():
        return  # part of a whole-page run, which has paid
    turns.wait_for_pace()
