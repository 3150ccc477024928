"""lnlab: the home page and the navigation of the app.

Run with `make run`. Every page is a thin script in pages/; the math lives in lnlab/.
"""

import streamlit as st

from lnlab import ui  # first: loads the heavy libraries once, before any page runs
from lnlab.backend import device_summary


@st.cache_resource(show_spinner="Looking for a GPU...")
def _device_badge() -> str:
    return device_summary()


def home() -> None:
    """Where Layer Norm sits, the five steps, and a way into every page."""
    st.title("Layer Normalization, step by step")
    st.badge(f"torch would compute on: {_device_badge()}", icon=":material/memory:")
    st.markdown(
        "Layer Norm rescales each token's features to mean 0 and standard deviation 1, "
        "then lets the model scale and shift them back with learned $\\gamma$ and $\\beta$."
    )
    st.subheader("Where it sits in a Transformer block")
    st.markdown(
        "Input → Multi-Head Attention → **Add & Norm** → Feed-Forward → **Add & Norm** → output"
    )
    st.subheader("The five steps, for one token $x_1, \\dots, x_D$")
    st.latex(r"1.\ \mu = \tfrac{1}{D}\textstyle\sum_i x_i")
    st.latex(r"2.\ \sigma^2 = \tfrac{1}{D}\textstyle\sum_i (x_i - \mu)^2")
    st.latex(r"3.\ \sigma_\epsilon = \sqrt{\sigma^2 + \epsilon}")
    st.latex(r"4.\ \hat{x}_i = (x_i - \mu) / \sigma_\epsilon")
    st.latex(r"5.\ y_i = \gamma_i \hat{x}_i + \beta_i")
    st.subheader("Explore")
    for page in ui.PAGES:
        st.page_link(page.path, label=f"{page.title}: {page.blurb}", icon=page.icon)


st.set_page_config(page_title="lnlab", page_icon=":material/functions:", layout="wide")
ui.presenter_switch()
ui.figure_format_choice()
ui.quiz_score()
navigation = st.navigation(
    [st.Page(home, title="Home", icon=":material/home:", default=True)]
    + [st.Page(p.path, title=p.title, icon=p.icon) for p in ui.PAGES]
)
navigation.run()
