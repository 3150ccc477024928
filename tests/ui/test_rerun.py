"""lnlab.ui.rerun.redraw_if_lost: a slide moved by Next's callback whose lesson run Streamlit
dropped (another fragment's run preempted it) is drawn by one whole-page run. The drop itself
needs a browser and a class's pulses (tests/browser/test_live_slides.py presses on through it)."""

from types import SimpleNamespace

import pytest
import streamlit as st

from lnlab.ui import rerun


@pytest.fixture
def reruns(monkeypatch):
    """Runs as a fragment alone on page "p"; the whole-page reruns asked for are counted."""
    asked = []
    ctx = SimpleNamespace(fragment_ids_this_run=["pulse"], page_script_hash="p")
    monkeypatch.setattr(rerun, "get_script_run_ctx", lambda: ctx)
    monkeypatch.setattr(rerun.st, "rerun", lambda scope: asked.append(scope))
    for key in ("slide", rerun._DRAWN):
        st.session_state.pop(key, None)
    yield SimpleNamespace(asked=asked, ctx=ctx)
    for key in ("slide", rerun._DRAWN):
        st.session_state.pop(key, None)


def test_a_slide_drawn_asks_for_nothing(reruns):
    st.session_state["slide"] = 3
    rerun.drew_section("slide", 3)
    rerun.redraw_if_lost()
    assert reruns.asked == []


def test_a_slide_moved_but_not_drawn_reruns_the_page_once(reruns):
    st.session_state["slide"] = 3
    rerun.drew_section("slide", 3)
    st.session_state["slide"] = 4  # Next's callback ran; the lesson's run was dropped
    rerun.redraw_if_lost()
    rerun.redraw_if_lost()  # the record went with the first rerun
    assert reruns.asked == ["app"]


def test_nothing_in_a_whole_page_run_or_on_another_page(reruns):
    st.session_state["slide"] = 3
    rerun.drew_section("slide", 3)
    st.session_state["slide"] = 4
    reruns.ctx.page_script_hash = "another page"
    rerun.redraw_if_lost()
    reruns.ctx.page_script_hash = "p"
    reruns.ctx.fragment_ids_this_run = []  # a whole-page run: the lesson draws in it
    rerun.redraw_if_lost()
    assert reruns.asked == []
