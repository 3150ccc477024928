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


def _takes_turns() -> None:  # an AppTest script: the turns a run holds, noted at each point
    import streamlit as st

    from lnlab.ui import rerun

    rerun.pace()
    st.session_state.noted = [rerun.SHARE.holding()]
    with rerun.turn_aside():
        st.session_state.noted.append(rerun.SHARE.holding())
    if st.session_state.get("fail"):
        raise ValueError("a page's error")
    st.session_state.noted.append(rerun.SHARE.holding())
    if st.session_state.get("fail"):
        raise ValueError("a page's error")


def test_a_run_takes_a_turn_gives_it_aside_and_back_at_its_end(monkeypatch):
    """With the launcher's install(), every run is paced once and holds a turn
    (lnlab.serving.fair_share), gives it back while it waits on other work, and gives it back
    when it ends, error or not."""
    from streamlit.runtime.scriptrunner import script_runner
    from streamlit.testing.v1 import AppTest

    monkeypatch.setattr(
        script_runner, "exec_func_with_error_handling", script_runner.exec_func_with_error_handling
    )
    at = AppTest.from_function(_takes_turns)
    at.run()
    assert at.session_state.noted == [False, False, False]  # not installed: no turns (AppTest)
    rerun.install()
    wrapped = script_runner.exec_func_with_error_handling
    rerun.install()
    assert script_runner.exec_func_with_error_handling is wrapped  # once only
    paced = []
    take = rerun.Pace.take
    monkeypatch.setattr(rerun.Pace, "take", lambda self, now: paced.append(now) or take(self, now))
    at.run()
    assert len(paced) == 1  # by install's wrapper; the page's pace() leaves it to that
    assert not at.exception
    assert at.session_state.noted == [True, False, True]
    assert (rerun.SHARE.held(), rerun.SHARE.waiting()) == (0, 0)  # given back at the run's end
    assert min(rerun.SHARE.usage(*at.session_state[rerun._OWNER])) > 0  # charged
    at.session_state["fail"] = True
    at.run()
    assert at.exception
    assert rerun.SHARE.held() == 0


def test_a_run_of_a_class_redraw_alone_goes_behind_visitors_clicks(monkeypatch):
    """A run of only the fragments that redraw what a class shows is placed REDRAW_LATER_S
    later; a whole-page run or one with another fragment is not. (AppTest cannot run a
    fragment alone: the wrapper is called as Streamlit calls it.)"""
    from streamlit.runtime.scriptrunner import script_runner

    monkeypatch.setattr(script_runner, "exec_func_with_error_handling", lambda func, ctx: func())
    rerun.install()
    asked = []
    monkeypatch.setattr(rerun.SHARE, "take", lambda *owner, later_s: asked.append(later_s))
    monkeypatch.setattr(rerun.SHARE, "give_back", lambda: None)
    keys = (rerun._OWNER, rerun._PACE, rerun._REDRAWS)
    st.session_state[rerun._OWNER] = ("session", "address")
    rerun.redraws_a_class("follower")
    try:
        for ids in (None, ["follower"], ["follower", "lesson"], ["lesson"]):
            ran = script_runner.exec_func_with_error_handling(
                lambda: "ran", SimpleNamespace(fragment_ids_this_run=ids)
            )
            assert ran == "ran"
    finally:
        for key in keys:
            st.session_state.pop(key, None)
    assert asked == [0.0, rerun.REDRAW_LATER_S, 0.0, 0.0]
