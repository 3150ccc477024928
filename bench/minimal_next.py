"""The framework's floor for bench.clicks: Previous and Next buttons and a counter.

Run by bench.clicks with `streamlit run bench/minimal_next.py`; not part of the app.
"""

import streamlit as st

COUNT = 9  # as many steps as the step-through lesson has sections

st.session_state.setdefault("mini_at", 0)


def _move(delta: int) -> None:
    st.session_state.mini_at = min(max(st.session_state.mini_at + delta, 0), COUNT - 1)


st.title("Minimal app")
st.button("Previous", key="mini_prev", on_click=_move, args=(-1,))
st.button("Next", key="mini_next", on_click=_move, args=(1,))
st.metric("step", st.session_state.mini_at + 1)
