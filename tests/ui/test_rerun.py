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
    """With the launcher's install(), a paced run holds a turn (lnlab.serving.fair_share), gives
    it back while it waits on other work, and gives it back when it ends, error or not."""
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
    at.run()
    assert not at.exception
    assert at.session_state.noted == [True, False, True]
    assert (rerun.SHARE.held(), rerun.SHARE.waiting()) == (0, 0)  # given back at the run's end
    assert rerun.SHARE.usage(*at.session_state[rerun._OWNER]) > 0
    at.session_state["fail"] = True
    at.run()
    assert at.exception
    assert rerun.SHARE.held() == 0
