"""lnlab: the home page. Run with `make run`.

Every other page is a thin script in pages/ (Streamlit's pages convention); the math lives in
lnlab/.
"""

import streamlit as st

from lnlab import ui  # first: loads the heavy libraries once, before any page runs
from lnlab.core.backend import device_summary
from lnlab.labs.transformer.lesson import diagram
from lnlab.labs.transformer.model import POST_NORM
from lnlab.teach.steps import STEPS
from lnlab.ui import classroom


@st.cache_resource(show_spinner="Looking for a GPU...")
def _device_badge() -> str:
    return device_summary()


ui.page_setup("Home")
ui.title("Layer Normalization, step by step")
classroom.running_class()  # the teacher's browser: its class is running, and the way back
st.badge(f"torch would compute on: {_device_badge()}", icon=":material/memory:")
st.markdown(
    "Layer Norm rescales each token's features to mean 0 and standard deviation 1, "
    "then lets the model scale and shift them back with a learned γ and β."
)
st.header("Where it sits in a Transformer block")
st.markdown(
    "Input → Multi-Head Attention → **Add & Norm** → Feed-Forward → **Add & Norm** → output"
)
ui.chart(diagram(POST_NORM, "home-block"))
st.header("The five steps, for one token of D features")
ui.formulas([s.formula for s in STEPS], "home", [f"{n}." for n in range(1, len(STEPS) + 1)])
st.header("Explore")
for page in ui.PAGES:
    st.page_link(page.path, label=f"{page.title}: {page.blurb}", icon=page.icon)
