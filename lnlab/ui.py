"""The one module with Streamlit in it: what every page shares.

Importing this module first (app.py does) loads the heavy libraries once, under Python's
module lock, before any page can race another session to import them half-way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlencode

import numpy as np  # noqa: F401 - imported up front on purpose, see the module docstring
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.errors import StreamlitPageNotFoundError

from lnlab.errors import InputError
from lnlab.links import Field, decode_link, encode_link, link_state, widget_values
from lnlab.markdown import plain
from lnlab.quiz import Question, check, score

T = TypeVar("T")


@dataclass(frozen=True)
class PageInfo:
    """A page of the app: its file, its title in the navigation, and one line about it."""

    path: str
    title: str
    icon: str
    blurb: str


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
)


def last_good(key: str, compute: Callable[[], T], fallback: T) -> T:
    """Run `compute`; on bad input show its message inline and return the last good result.

    The last good result lives in session state under `key`, so a typo never blanks a page.
    """
    try:
        value = compute()
    except InputError as err:
        show_error(err)
        return st.session_state.get(key, fallback)
    st.session_state[key] = value
    return value


def show_error(err: InputError) -> None:
    """Show an input error inline, as plain text, saying that the last good input stays."""
    st.error(f"{plain(str(err))}. The page keeps the last valid input.", icon=":material/error:")


# ---------------------------------------------------------------- presenter mode

PRESENT_KEY = "present"  # the mode itself: a plain session key, so it survives page switches
_PRESENTER_CSS = """
<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stHeader"] { display: none !important; }
.stMainBlockContainer { padding-top: 1rem; max-width: 100%; }
.stMarkdown p, .stMarkdown li, .stCaption, [data-testid="stMetricValue"] { font-size: 1.6rem; }
[data-testid="stWidgetLabel"] p, [data-testid="stDataFrame"] { font-size: 1.3rem; }
.stMarkdown h1, h1 { font-size: 3rem !important; }
.katex { font-size: 1.7em !important; }
button p { font-size: 1.4rem; }
</style>
"""


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
        st.html(_PRESENTER_CSS)
        st.button(
            "Exit presenter mode", key="present_exit", on_click=_set_presenting, args=(False,)
        )
    elif PRESENT_KEY in st.query_params:
        del st.query_params[PRESENT_KEY]


def page_setup(title: str) -> None:
    """The first call of every page: wide layout, the sidebar's navigation and switches.

    Pages follow Streamlit's `pages/` convention (a link to any page works on a fresh server);
    the sidebar is drawn here so it carries titles and icons, not file names.
    """
    st.set_page_config(
        page_title=f"{title} · lnlab", page_icon=":material/functions:", layout="wide"
    )
    try:
        st.sidebar.page_link("app.py", label="Home", icon=":material/home:")
        for page in PAGES:
            st.sidebar.page_link(page.path, label=page.title, icon=page.icon)
    except StreamlitPageNotFoundError:
        pass  # a page run on its own (`streamlit run pages/x.py`) has no app to link to
    st.sidebar.divider()
    _presenter_switch()
    _figure_format_choice()
    _quiz_score()


# ---------------------------------------------------------------- charts

FIGURE_FORMATS = ("png", "svg")


def chart(fig: go.Figure, name: str, caption: str) -> None:
    """Show a Plotly figure with a caption that says what it shows.

    The figure's toolbar downloads it as PNG or SVG (the sidebar's choice); presenter mode
    enlarges its fonts.
    """
    if presenting():
        # Streamlit's chart theme overrides layout.font; explicit sizes win over it
        fig = go.Figure(fig).update_layout(
            font={"size": 22}, title_font_size=26, legend_font_size=20
        )
        fig.update_xaxes(tickfont_size=20, title_font_size=22)
        fig.update_yaxes(tickfont_size=20, title_font_size=22)
    file_format = st.session_state.get("figure_format", "png")
    config = {"toImageButtonOptions": {"format": file_format, "filename": f"lnlab-{name}"}}
    st.plotly_chart(fig, key=f"chart_{name}", config=config)
    st.caption(caption)


def _figure_format_choice() -> None:
    """The sidebar's choice of download format for every chart's toolbar (kept across pages)."""
    st.session_state.setdefault("figure_format", "png")
    st.sidebar.radio(
        "Chart download format",
        FIGURE_FORMATS,
        index=FIGURE_FORMATS.index(st.session_state["figure_format"]),
        key="figure_format_radio",
        horizontal=True,
        on_change=lambda: st.session_state.update(
            figure_format=st.session_state["figure_format_radio"]
        ),
    )


# ---------------------------------------------------------------- predict, then reveal

QUIZ_KEY = "quiz_marks"  # {question id: right at the first try}; survives page switches


def _mark(question: Question) -> None:
    """The Check button's callback: it runs before the rerun, so the sidebar score is current."""
    try:
        verdict = check(question, st.session_state.get(f"q_{question.qid}") or "")
    except InputError as err:
        st.session_state[f"_q_problem_{question.qid}"] = err
        return
    st.session_state.setdefault(QUIZ_KEY, {}).setdefault(question.qid, verdict.correct)
    st.session_state.setdefault("quiz_verdicts", {})[question.qid] = verdict


def ask(question: Question) -> bool:
    """A question to answer before the page reveals it; the first try counts for the score.

    Returns True once the question has been checked (the page may then reveal the answer).
    """
    with st.container(border=True):
        st.markdown(f"**Predict:** {plain(question.prompt)}")
        key = f"q_{question.qid}"
        if question.choices:
            st.radio("Your answer", question.choices, index=None, key=key)
        else:
            st.text_input("Your answer", key=key, placeholder="a number")
        st.button("Check", key=f"check_{question.qid}", on_click=_mark, args=(question,))
        if problem := st.session_state.pop(f"_q_problem_{question.qid}", None):
            show_error(problem)
        shown = st.session_state.get("quiz_verdicts", {}).get(question.qid)
        if shown is not None and shown.correct:
            st.success(plain(shown.message), icon=":material/check:")
        elif shown is not None:
            st.warning(plain(shown.message), icon=":material/lightbulb:")
    return shown is not None


def _quiz_score() -> None:
    """The session's score in the sidebar, once a question has been answered."""
    right, answered = score(st.session_state.get(QUIZ_KEY, {}))
    if answered:
        st.sidebar.metric("Predictions right (first try)", f"{right} / {answered}")


# ---------------------------------------------------------------- shareable links

_NOT_STATE = (PRESENT_KEY,)  # query parameters that belong to the app, not to a page


def _query() -> dict[str, str | list[str]]:
    """The URL's query parameters; a repeated one comes as a list (and is refused later)."""
    out: dict[str, str | list[str]] = {}
    for name in st.query_params:
        values = st.query_params.get_all(name)
        out[name] = values[0] if len(values) == 1 else values
    return out


def open_link(page: str, fields: tuple[Field, ...]) -> None:
    """Put the state in the URL into the page's widgets; call before creating them.

    Only a new URL is applied (not the one this page wrote itself), so edits are never undone
    on a rerun. A bad link opens the page's default example with a notice saying what is
    wrong; it never raises.
    """
    for f in fields:  # Streamlit drops the state of widgets that are not drawn (presenter mode)
        if f.key in st.session_state:
            st.session_state[f.key] = st.session_state[f.key]
    params = {k: v for k, v in _query().items() if k not in _NOT_STATE}
    signature = repr(sorted(params.items()))
    if st.session_state.get(f"_link_{page}") == signature:
        return
    st.session_state[f"_link_{page}"] = signature
    st.session_state[f"_link_arrival_{page}"] = signature
    st.session_state.pop(f"_link_initial_{page}", None)  # share_link records it after the widgets
    if not params:
        return
    try:
        state = decode_link(params, tuple(f.param for f in fields))
    except InputError as err:
        for f in fields:
            st.session_state.pop(f.key, None)
        st.session_state[f"_link_arrival_{page}"] = None  # share_link replaces the bad URL
        st.warning(
            f"{plain(str(err))}. The page opened on its default example instead.",
            icon=":material/link_off:",
        )
        return
    st.session_state.update(widget_values(state, fields))


def share_link(page: str, fields: tuple[Field, ...]) -> None:
    """Keep the URL a link to what is on screen, and offer it to copy; call after the widgets.

    Every change to the URL adds a browser history entry, so the URL is left alone until the
    visitor changes something: one press of Back still leaves a page just opened. From the
    first change on, the address bar holds the link to exactly what is on screen.
    """
    params = encode_link(link_state(st.session_state, fields), tuple(f.param for f in fields))
    if presenting():
        params[PRESENT_KEY] = "1"
    mine = repr(sorted((k, v) for k, v in params.items() if k not in _NOT_STATE))
    initial = st.session_state.setdefault(f"_link_initial_{page}", mine)
    current = st.session_state.get(f"_link_{page}")  # what the URL holds now
    clean = "[]"
    untouched = st.session_state.get(f"_link_arrival_{page}") == clean == current
    if mine != current and not (untouched and mine == initial):
        st.query_params.from_dict(params)
        st.session_state[f"_link_{page}"] = mine
    base = str(st.context.url or "").split("?")[0]
    with st.popover("Copy link to this example", icon=":material/link:"):
        st.caption("Anyone who opens this link sees the same example and settings.")
        st.code(f"{base}?{urlencode(params)}", language=None, wrap_lines=True)


def within(key: str, lo: float, hi: float, default: float, what: str) -> None:
    """Reset session value `key` to `default`, with a message, unless it is a number in lo..hi.

    Streamlit would silently clamp an out-of-range value (from a crafted message or stale
    state) to the widget's minimum; this says so instead. Call before creating the widget.
    """
    value = st.session_state.get(key, default)
    try:
        ok = lo <= float(value) <= hi
    except (TypeError, ValueError):
        ok = False
    if not ok:
        show_error(InputError(f'{what} must be between {lo:g} and {hi:g}, not "{str(value)[:20]}"'))
        st.session_state[key] = default


def data_editor(
    data: pd.DataFrame, key: str, on_change: Callable[[], None] | None = None, **kwargs: object
) -> pd.DataFrame:
    """st.data_editor that survives an edit no browser would send (a crafted message), and
    does not keep every run of the page alive.

    Streamlit itself fails to apply an edit to a row or column the grid does not have; the
    edit is dropped, the grid shows its data again and a message says why.

    A grid whose data is part of its identity (num_rows="dynamic") gets a new widget id with
    every change, and Streamlit 1.67 keeps each old id's metadata, callback included, for the
    whole session. A callback defined in a page holds that run's whole namespace (its lesson,
    figures, ...): 25 KB per edit, for ever. So the grid's callback is `_grid_changed` here,
    which calls the page's latest `on_change`, the only one kept.
    """
    if problem := st.session_state.pop(f"_{key}_problem", None):
        show_error(InputError(problem))
    st.session_state[f"_{key}_on_change"] = on_change
    callback = {"on_change": _grid_changed, "args": (key,)} if on_change else {}
    try:
        return st.data_editor(data, key=key, **callback, **kwargs)
    except (KeyError, IndexError, TypeError, ValueError) as err:
        del st.session_state[key]
        st.session_state[f"_{key}_problem"] = f"the table edit could not be applied ({err!s:.40})"
        st.rerun()


def _grid_changed(key: str) -> None:
    """The callback of every grid: the page's own, from its latest run."""
    if on_change := st.session_state.get(f"_{key}_on_change"):
        on_change()


# ---------------------------------------------------------------- stepping through a lesson


def step_buttons(prefix: str, key: str, count: int, *, disabled: bool = False) -> DeltaGenerator:
    """Previous and Next (the ← and → keys too) over st.session_state[key], 0..count-1.

    The buttons' keys are `prefix`_prev and `prefix`_next. Returns their row, for whatever a
    page puts beside them.
    """
    at = st.session_state[key]
    nav = st.container(horizontal=True, vertical_alignment="center")
    for label, name, icon, delta, shortcut, edge in (
        ("Previous", "prev", "arrow_back", -1, "Left", 0),
        ("Next", "next", "arrow_forward", 1, "Right", count - 1),
    ):
        nav.button(
            label,
            key=f"{prefix}_{name}",
            icon=f":material/{icon}:",
            on_click=_step,
            args=(key, delta, count),
            disabled=disabled or at == edge,
            shortcut=shortcut,
        )
    return nav


def _step(key: str, delta: int, count: int) -> None:
    st.session_state[key] = min(max(st.session_state[key] + delta, 0), count - 1)


def preset_choice(label: str, presets: Sequence[Any], key: str, **kwargs: Any) -> str:
    """A selectbox of `presets` (anything with key, title, source) shown by title, the chosen
    one's source as its caption. Returns the chosen key; `kwargs` go to st.selectbox."""
    by_key = {p.key: p for p in presets}
    chosen = st.selectbox(
        label, list(by_key), format_func=lambda k: by_key[k].title, key=key, **kwargs
    )
    st.caption(plain(by_key[chosen].source))
    return chosen
