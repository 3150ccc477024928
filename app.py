"""lnlab's server: `make run`, or `streamlit run app.py`, or `uvicorn app:app`.

Streamlit finds `app` (an `st.App`) here and serves it; the home page is home.py and every
other page a thin script in pages/ (Streamlit's pages convention). lnlab.ui.server says what
the app adds to Streamlit's own server.
"""

import streamlit as st

from lnlab.ui.server import lifespan, middleware

app = st.App("home.py", middleware=middleware(), lifespan=lifespan)
