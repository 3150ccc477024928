"""Whole-page reruns asked for from inside a fragment."""

from __future__ import annotations

import streamlit as st

_FULL_RERUN = "_lnlab_full_rerun"


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
