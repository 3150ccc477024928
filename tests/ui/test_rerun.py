"""lnlab.ui.rerun.redraw_if_lost: a slide moved by Next's callback whose lesson run Streamlit
dropped (another fragment's run preempted it) is drawn by one whole-page run. The drop itself
needs a browser and a class's pulses (tests/browser/test_live_slides.py presses on through it)."""

from types import SimpleNamespace

import pytest
import streamlit as st

from lnlab.ui import rerun, state
from lnlab.ui.runtime import turns


@pytest.fixture
def reruns(monkeypatch):
    """Runs as a fragment alone on page "p"; the whole-page reruns asked for are counted."""
    asked = []
    ctx = SimpleNamespace(fragment_ids_this_run=["pulse"], page_script_hash="p")
    monkeypatch.setattr(rerun.sessions, "_ctx", lambda: ctx)
    monkeypatch.setattr(rerun.st, "rerun", lambda scope: asked.append(scope))
    keys = ("slide", "box", "other", state.key(rerun.Reruns))
    for key in keys:
        st.session_state.pop(key, None)
    yield SimpleNamespace(asked=asked, ctx=ctx)
    for key in keys:
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


def test_a_box_above_the_lesson_changed_in_the_lessons_run_alone_reruns_the_page(reruns):
    """The values recorded are those of the widgets the whole-page run drew before the lesson;
    a run of the lesson alone that finds one changed (its callback ran there) reruns the page."""
    reruns.ctx.fragment_ids_this_run = []
    reruns.ctx.shared = SimpleNamespace(widget_user_keys_this_run={"box"})
    st.session_state.update(box="2, 4, 6, 8", other=1)
    rerun.above_lesson(["box", "other", "slide"])
    assert state.of(rerun.Reruns).above == {"box": "2, 4, 6, 8"}
    st.session_state.box = "1, 2, 3, 10"
    rerun.rerun_if_above_changed()  # a whole-page run draws the new numbers itself
    assert reruns.asked == []
    reruns.ctx.fragment_ids_this_run = ["lesson"]
    st.session_state.other = 2  # not drawn above the lesson: the lesson's own
    rerun.rerun_if_above_changed()
    assert reruns.asked == ["app"]


def test_the_lessons_run_alone_with_the_boxes_unchanged_asks_for_nothing(reruns):
    reruns.ctx.fragment_ids_this_run = []
    reruns.ctx.shared = SimpleNamespace(widget_user_keys_this_run={"box"})
    st.session_state.box = "2, 4, 6, 8"
    rerun.above_lesson(["box"])
    reruns.ctx.fragment_ids_this_run = ["lesson"]
    rerun.rerun_if_above_changed()
    assert reruns.asked == []


def _takes_turns() -> None:  # an AppTest script: the turns a run holds, noted at each point
    import streamlit as st

    from lnlab.ui import rerun
    from lnlab.ui.runtime import turns

    rerun.pace()
    st.session_state.noted = [turns.SHARE.holding()]
    with turns.turn_aside():
        st.session_state.noted.append(turns.SHARE.holding())
    st.session_state.noted.append(turns.SHARE.holding())
    try:
        with turns.turn_aside():
            raise LookupError("heavy work refused")  # the page shows it and goes on
    except LookupError:
        st.session_state.noted.append(turns.SHARE.holding())
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
    assert at.session_state.noted == [False] * 4  # not installed: no turns (AppTest)
    turns.install()
    wrapped = script_runner.exec_func_with_error_handling
    turns.install()
    assert script_runner.exec_func_with_error_handling is wrapped  # once only
    paced = []
    take = turns.Pace.take
    monkeypatch.setattr(turns.Pace, "take", lambda self, now: paced.append(now) or take(self, now))
    at.run()
    assert len(paced) == 1  # by install's wrapper; the page's pace() leaves it to that
    assert not at.exception
    assert at.session_state.noted == [True, False, True, True]
    assert (turns.SHARE.held(), turns.SHARE.waiting()) == (0, 0)  # given back at the run's end
    owner = state.of(turns.Turns, at.session_state).owner
    assert owner is not None and min(turns.SHARE.usage(*owner)) > 0  # charged
    at.session_state["fail"] = True
    at.run()
    assert at.exception
    assert turns.SHARE.held() == 0


@pytest.fixture
def wrapped(monkeypatch):
    """install()'s wrapper around a stand-in for Streamlit's exec (it calls the run), with
    SHARE's take recorded (later_s, arrived) and a session's state set up."""
    from streamlit.runtime.scriptrunner import script_runner

    monkeypatch.setattr(script_runner, "exec_func_with_error_handling", lambda func, ctx: func())
    turns.install()
    taken = []
    monkeypatch.setattr(
        turns.SHARE, "take", lambda *owner, later_s, arrived: taken.append((later_s, arrived))
    )
    monkeypatch.setattr(turns.SHARE, "give_back", lambda: None)
    st.session_state.pop(state.key(turns.Turns), None)
    state.of(turns.Turns).owner = ("session", "address")
    turns._GOES_ON.kept = None
    yield SimpleNamespace(run=script_runner.exec_func_with_error_handling, taken=taken)
    turns._GOES_ON.kept = None
    st.session_state.pop(state.key(turns.Turns), None)


def _asked_by(fired: str | None = None, timer: bool = False):
    """A run's function as Streamlit's code_to_exec keeps what asked for it: its timer, or a
    trigger fired on the widget with id `fired`."""
    from streamlit.proto.WidgetStates_pb2 import WidgetStates
    from streamlit.runtime.scriptrunner_utils.script_requests import RerunData

    states = WidgetStates()
    if fired:
        state = states.widgets.add(id=fired)
        if "pulse" in fired:
            state.json_trigger_value = '[{"event": "changed"}]'
        else:
            state.trigger_value = True
    states.widgets.add(id="$$ID-1-eps", double_value=0.1)  # every widget's value comes along

    asked = RerunData(widget_states=states, is_auto_rerun=timer)

    def code_to_exec(asked=asked):
        return (None, True, None, False, None)

    return code_to_exec


def test_a_class_redraw_asked_for_by_its_timer_or_pulse_goes_behind_visitors_clicks(wrapped):
    """A run of only the fragments that redraw what a class shows, asked for by their timer or
    a class's pulse, is placed REDRAW_LATER_S later; a click in them (Reveal, an answer), a
    whole-page run or one with another fragment is not. (AppTest cannot run a fragment alone:
    the wrapper is called as Streamlit calls it.)"""
    turns.redraws_a_class("follower")
    pulse = "$$ID-2-lnlab_pulse_student__events"
    for ids, func in (
        (None, _asked_by(timer=True)),
        (["follower"], _asked_by(timer=True)),
        (["follower"], _asked_by(fired=pulse)),
        (["follower"], _asked_by(fired="$$ID-3-live_reveal_q1")),
        (["follower"], _asked_by()),  # no trigger, no timer: a value changed
        (["follower"], lambda: None),  # nothing says what asked: a click, to be safe
        (["follower", "lesson"], _asked_by(timer=True)),
        (["lesson"], _asked_by(fired=pulse)),
    ):
        wrapped.run(func, SimpleNamespace(fragment_ids_this_run=ids))
    later = [later_s for later_s, _ in wrapped.taken]
    assert later == [0.0, turns.REDRAW_LATER_S, turns.REDRAW_LATER_S, 0.0, 0.0, 0.0, 0.0, 0.0]


def test_a_run_that_ends_for_a_rerun_keeps_its_place_in_line_a_few_times(wrapped):
    from streamlit.runtime.scriptrunner_utils.script_requests import RerunData

    ctx = SimpleNamespace(fragment_ids_this_run=None)
    for _ in range(turns.KEEP_PLACE_RERUNS + 2):
        wrapped.run(lambda: (None, True, RerunData(), False, None), ctx)
    arrived = [at for _, at in wrapped.taken]
    kept = turns.KEEP_PLACE_RERUNS
    assert arrived[: kept + 1] == [arrived[0]] * (kept + 1)  # the first run's place
    assert arrived[kept + 1] > arrived[0]  # then a place of its own
    wrapped.run(lambda: (None, True, None, False, None), ctx)  # a run that ended
    wrapped.run(lambda: (None, True, None, False, None), ctx)
    assert wrapped.taken[-1][1] > wrapped.taken[-2][1]
