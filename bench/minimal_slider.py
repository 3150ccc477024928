"""The framework's floor for bench.live: one slider, and a number computed from it.

Run by bench.live with `streamlit run bench/minimal_slider.py`; not part of the app. st.slider
sends its value when it is let go (or on each key press), and the script reruns.
"""

import streamlit as st

st.title("Minimal app")
value = st.slider("gamma", -3.0, 3.0, 1.0, 0.05, key="mini_slider")
st.metric("gamma times 2.2361", f"{value * 2.2361:.4f}")
