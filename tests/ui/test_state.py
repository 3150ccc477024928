"""lnlab.ui.state: a session's one instance of each concern's dataclass, under one key."""

from dataclasses import dataclass, field

import streamlit as st
from streamlit.runtime.state.session_state import SessionState

from lnlab.ui import state


@dataclass
class Kept:
    count: int = 0
    names: list[str] = field(default_factory=list)


def test_a_session_has_one_instance_made_on_first_use_and_changed_in_place():
    st.session_state.pop(state.key(Kept), None)
    try:
        kept = state.of(Kept)
        assert kept == Kept()
        kept.count += 1
        assert state.of(Kept) is kept and st.session_state[state.key(Kept)].count == 1
    finally:
        st.session_state.pop(state.key(Kept), None)
    assert state.key(Kept) == f"_lnlab.{__name__}.Kept"


def test_streamlits_own_session_state_and_a_reloaded_class():
    raw = SessionState()
    state.of(Kept, raw).names.append("x")
    assert raw[state.key(Kept)].names == ["x"]

    @dataclass
    class Kept2:  # the class of a module reloaded in development: its state starts afresh
        count: int = 0

    raw[state.key(Kept)] = Kept2(5)
    assert state.of(Kept, raw) == Kept()
