"""The page set-up every page starts with: the navigation, presenter mode and the sidebar."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from lnlab.ui import classroom, icons, lesson_hooks
from lnlab.ui.assist import landing
from lnlab.ui.inputs import check_text_sizes
from lnlab.ui.quiz import sidebar_score
from lnlab.ui.rerun import pace
from lnlab.ui.style import BASE_CSS, PRESENTER_CSS

PRESENT_KEY = "present"  # the mode itself: a plain session key, so it survives page switches


@dataclass(frozen=True)
class PageInfo:
    """A page of the app: its file, its title in the navigation, and one line about it."""

    path: str
    title: str
    icon: str
    blurb: str
    lesson: bool = True  # a lesson, with slides; False for the Class page


PAGES: tuple[PageInfo, ...] = (
    PageInfo(
        "pages/step_through.py",
        "Step through one token",
        ":material/stairs:",
        "Mean, variance, std with epsilon, normalize, scale and shift: one token at a time.",
    ),
    PageInfo(
        "pages/padding.py",
        "Batch Norm vs Layer Norm",
        ":material/table_rows:",
        "How padding zeros corrupt Batch Norm's statistics, and why Layer Norm does not care.",
    ),
    PageInfo(
        "pages/transformer.py",
        "In the Transformer",
        ":material/account_tree:",
        "Add & Norm, post-norm versus pre-norm, and what depth does without normalization.",
    ),
    PageInfo(
        "pages/conventions.py",
        "Conventions and checker",
        ":material/rule:",
        "PyTorch, Keras, BERT, the Annotated Transformer, RMSNorm; check a tutorial's numbers.",
    ),
    PageInfo(
        "pages/gpu.py",
        "Run it on the GPU",
        ":material/memory:",
        "The same steps in torch on CUDA, MPS or the CPU: parity with float64 and timings.",
    ),
    PageInfo(
        "pages/training.py",
        "Training lab",
        ":material/model_training:",
        "A tiny Transformer trained with each norm: loss, gradients, Batch Norm's statistics.",
    ),
    PageInfo(
        "pages/class.py",
        "Live class",
        ":material/groups:",
        "Start a class with a join code and QR code; students answer on their phones, live.",
        lesson=False,
    ),
)


def presenting() -> bool:
    """True in presenter mode: big fonts, no sidebar, one step per screen."""
    return bool(st.session_state.get(PRESENT_KEY, False))


def _set_presenting(on: bool) -> None:
    st.session_state[PRESENT_KEY] = on


def _presenter_switch() -> None:
    """The presenter-mode switch, honouring `?present=1` in the URL.

    The switch lives in the sidebar, which presenter mode hides, so the page also gets an exit
    button. The URL keeps `present=1` on every page while the mode is on.
    """
    if PRESENT_KEY not in st.session_state:
        _set_presenting(st.query_params.get(PRESENT_KEY) in ("1", "true"))
    st.sidebar.toggle(
        "Presenter mode",
        value=presenting(),
        key="present_toggle",
        help="Big fonts, no sidebar, one step per screen",
        on_change=lambda: _set_presenting(st.session_state["present_toggle"]),
    )
    if presenting():
        st.query_params[PRESENT_KEY] = "1"
        st.html(PRESENTER_CSS)
        bar = st.container(horizontal=True, vertical_alignment="center", key="present_bar")
        with bar:
            st.button(
                "Exit presenter mode", key="present_exit", on_click=_set_presenting, args=(False,)
            )
            classroom.presenter_buttons(PAGES)  # and its Class menu: another lesson, End
            classroom.join_line()
    elif PRESENT_KEY in st.query_params:
        del st.query_params[PRESENT_KEY]


HEAD = "lnlab_head"  # the container of a page's title and first words (style.BASE_CSS)


def title(text: str, intro: str = "") -> None:
    """The page's title and its first words (Markdown). They are shown at once: the rest of
    the page waits until its first screen is drawn (lnlab/ui/assets/assist.js), and nothing
    stands above them to move them meanwhile. So a first visit paints as soon as the first
    run's first message arrives, as a page with no widgets would (issue 40)."""
    with st.container(key=HEAD):
        st.title(text)
        if intro:
            st.markdown(intro)


def page_setup(title: str) -> None:
    """The first call of every page: wide layout, the sidebar's navigation and switches.

    Pages follow Streamlit's `pages/` convention (a link to any page works on a fresh server);
    the sidebar is drawn here so it carries titles and icons, not file names. A session that
    asks for runs faster than lnlab.serving.pace allows waits here first, and no text box's value
    over its limit gets past here (ui.text_box).
    """
    pace()
    # a local file: a ":material/...:" page icon makes every browser fetch the tab's icon from
    # an outside font host (tests/browser/test_offline.py)
    st.set_page_config(page_title=f"{title} · lnlab", page_icon=icons.PAGE_ICON, layout="wide")
    try:
        st.sidebar.page_link("home.py", label="Home", icon=":material/home:")
        for page in PAGES:
            st.sidebar.page_link(page.path, label=page.title, icon=page.icon)
    except StreamlitPageNotFoundError:
        pass  # a page run on its own (`streamlit run pages/x.py`) has no app to link to
    st.sidebar.divider()
    lesson_hooks.use(classroom.LESSON_HOOKS)  # a lesson's slides ask this class
    classroom.take_link()
    classroom.keep_in_url()
    classroom.sidebar_start()
    _presenter_switch()
    sidebar_score()
    st.html(BASE_CSS)
    landing()  # where the focus goes after the action that started this run, if it said
    check_text_sizes()
