"""The framework's floor for bench.browser: one text area, and the sum of the numbers typed.

Run by bench.browser with `streamlit run bench/minimal_app.py`; not part of the app.
"""

import re

import streamlit as st

st.title("Minimal app")
text = st.text_area("Numbers", value="1, 2, 3, 4", key="mini_text", max_chars=2000)
try:
    total = sum(float(part) for part in re.split(r"[,\s]+", text.strip()) if part)
except ValueError:
    st.error("Type numbers separated by commas or spaces.")
else:
    st.metric("sum", f"{total:.6g}")
