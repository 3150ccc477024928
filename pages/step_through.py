"""Step through one token: Layer Norm's five steps with your own numbers.

The text box is the source of the embeddings; the grid shows its last valid numbers and an
edit in the grid rewrites the text box. The lesson (lnlab.labs.step_through.lesson) is drawn one
section at a time by ui.lesson_view; the page's state lives in the URL (FIELDS below).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from lnlab import ui
from lnlab.core.errors import InputError
from lnlab.core.numbers import DEFAULT_EPS, fmt
from lnlab.core.parse import (
    MAX_TOKENS,
    parse_embeddings,
    parse_labels,
    parse_vector,
)
from lnlab.labs.step_through import backward, grid, live, state
from lnlab.labs.step_through import export as st_export
from lnlab.labs.step_through import lesson as slides
from lnlab.labs.step_through import token as tk
from lnlab.teach.export import Exports
from lnlab.teach.markdown import plain
from lnlab.teach.presets import CUSTOM_PRESET, TOKEN_PRESETS, token_preset

KEEP = ui.KEEP

ss = st.session_state
FIELDS = state.link_fields(ss)


# ---------------------------------------------------------------- state


def _open_link() -> None:
    """Apply a newly opened link, then check that its parts fit together (a token beyond the
    embeddings, a gamma of the wrong length): a link that does not opens the default example
    with a notice, as any other bad link does."""
    new = ui.open_link(state.PAGE, FIELDS)
    state.set_defaults(ss)
    ui.keep_in_range("st_eps", 0.0, state.EPS_MAX, DEFAULT_EPS, "Epsilon")
    if not new:
        return
    try:
        lesson = tk.lesson_from_text(
            ss.st_text, ss.st_labels, ss.st_token, ss.st_eps, ss.st_gamma, ss.st_beta
        )
        state.parse_dy(ss.st_dy, lesson.features)
    except InputError as err:
        for f in FIELDS:
            ss.pop(f.key, None)
        state.set_defaults(ss)
        st.warning(
            f"This link could not be opened: {plain(str(err))}. "
            "The page opened on its default example instead.",
            icon=":material/link_off:",
        )


def _undo(gamma: str, beta: str) -> None:
    ss.st_gamma, ss.st_beta = gamma, beta
    ui.rerun_app()  # the γ and β boxes above the lesson show the new values


# ---------------------------------------------------------------- cached computations


@st.cache_data(max_entries=64, show_spinner=False)
def _embeddings(text: str) -> np.ndarray:
    return parse_embeddings(text)


@st.cache_resource(max_entries=64, show_spinner=False)
def _lesson(inputs: tk.TokenInputs) -> tk.TokenLesson:
    """The lesson of the page's inputs: shared by every session, never mutated."""
    return inputs.lesson()


@st.cache_resource(max_entries=64, show_spinner=False)
def _slides(inputs: tk.TokenInputs, dy: np.ndarray) -> slides.Lesson:
    return slides.slides(_lesson(inputs), dy)


@st.cache_data(max_entries=64, show_spinner=False)
def _exports(inputs: tk.TokenInputs) -> Exports:
    return st_export.exports(_lesson(inputs))


# ---------------------------------------------------------------- the inputs


def _inputs() -> tk.TokenInputs:
    """The preset, the embeddings (text and grid), labels, token, ε, γ and β; any box's
    error shows under the text boxes. Returns what _read() makes of them."""
    presets = (*TOKEN_PRESETS, CUSTOM_PRESET)
    ui.preset_choice(
        "Preset", presets, "st_preset", on_change=state.load_preset, args=(ss,), persist_state=KEEP
    )
    text_col, labels_col = st.columns(2)
    with text_col:
        ui.embeddings_box("st_text", 180, on_change=state.text_edited, args=(ss,))
    with labels_col:
        ui.text_box(
            st.text_area,
            "Token labels (optional): one per line",
            "st_labels",
            tk.LABELS_MAX_CHARS,
            height=110,
            help="Leave blank for t1, t2, ... One label a line, so a label may be a comma.",
            persist_state=KEEP,
        )
    inputs = _read()
    labels = inputs.labels
    with labels_col:
        _grid(inputs.x, labels)
    if ss.st_token not in range(len(labels)):
        ss.st_token = 0
    token_col, eps_col, gamma_col, beta_col = st.columns(4, vertical_alignment="bottom")
    ui.token_choice(token_col, "Token", "st_token", labels)
    ui.number_box(
        eps_col,
        "Epsilon ε",
        "st_eps",
        step=DEFAULT_EPS,
        format="%g",
        help="Added to the variance before the square root, from 0 to 1. Set it to 0 to see why.",
        persist_state=KEEP,
    )
    for col, key, name in ((gamma_col, "st_gamma", "γ (gamma)"), (beta_col, "st_beta", "β (beta)")):
        col.text_input(
            f"{name}: one value, or one per feature",
            key=key,
            max_chars=state.VECTOR_CHARS,
            persist_state=KEEP,
        )
    return inputs


def _grid(x: np.ndarray, labels: tuple[str, ...]) -> None:
    """The embeddings as a grid one edits cell by cell, in a popover drawn only while open
    (a run on opening it): the grid's code and its data's (Arrow) load for a reader who asks
    for them, not with every visit. The text box stays the source."""
    ss.st_grid_base = (x, labels)
    drawer = st.popover(
        "Edit the numbers in a grid",
        icon=":material/table_rows:",
        key="st_grid_open",
        on_change="rerun",
    )
    with drawer:
        if not drawer.open:
            return
        ui.data_editor(
            grid.grid_frame(x),
            key="st_grid",
            max_rows=MAX_TOKENS,
            num_rows="dynamic",
            on_change=lambda: state.grid_changed(ss),
        )
        st.caption(
            "The text box is the source: this grid shows its last valid numbers (one row per "
            "token), and a change here rewrites the text box. Add or delete rows to add or "
            "remove tokens."
        )
    try:
        grid.apply_grid_edits(x, labels, ss.get("st_grid", {}))
    except InputError as err:
        ui.show_error(err)


def _read() -> tk.TokenInputs:
    """Every box's last valid value; a box with an error keeps its last good value and the
    page says what is wrong."""
    x = ui.last_good(
        "st_good_x", lambda: _embeddings(ss.st_text), token_preset(state.DEFAULT_PRESET).x
    )
    n, d = x.shape
    labels = ui.last_good("st_good_labels", lambda: parse_labels(ss.st_labels, n), [])
    labels = labels if len(labels) == n else parse_labels("", n)
    gamma, beta = (
        ui.last_good(f"st_good_{name}", lambda k=key, m=name: parse_vector(ss[k], d, name=m), None)
        for key, name in (("st_gamma", "gamma"), ("st_beta", "beta"))
    )
    gamma = gamma if gamma is not None and gamma.shape == (d,) else np.ones(d)
    beta = beta if beta is not None and beta.shape == (d,) else np.zeros(d)
    token = ss.st_token if ss.st_token in range(n) else 0
    return tk.TokenInputs(x, tuple(labels), token, float(ss.st_eps), gamma, beta)


# ---------------------------------------------------------------- what the lesson adds


def _undo_button() -> None:
    lesson = _lesson(ss.st_inputs)
    st.button(
        "Let γ and β undo it",
        key="st_undo",
        icon=":material/undo:",
        on_click=_undo,
        args=(repr(lesson.undo_gamma), repr(lesson.undo_beta)),
        disabled=lesson.undefined,
        help="Sets γ to this token's σ_ε and β to its mean.",
    )


def _dy_box() -> None:
    """The backward slides' dy: a change reruns the page, which reads it (state.read_dy)."""
    d = ss.st_inputs.x.shape[1]
    st.text_input(
        "dy: one value per feature, or one for all (blank: the default)",
        key="st_dy",
        max_chars=state.VECTOR_CHARS,
        placeholder=", ".join(fmt(v) for v in backward.default_dy(d)),
        on_change=ui.rerun_app,
        persist_state=KEEP,
    )
    if ss.get("st_dy_error"):
        ui.show_error(InputError(ss.st_dy_error))


def _exports_section() -> None:
    ui.exports(_exports(ss.st_inputs))


# ---------------------------------------------------------------- the page

ui.page_setup(slides.TITLE)
_open_link()
if not ui.presenting():
    ui.title(slides.TITLE, slides.INTRO)
    ui.predict_toggle("st_quiz")
    ss.st_inputs = _inputs()
else:
    ss.st_inputs = _read()
dy = state.read_dy(ss, ss.st_inputs.x.shape[1])
# a click reruns the lesson alone: nothing to rehash
ss.st_slides = _slides(ss.st_inputs, dy)
ss.st_live = live.browser_data(_lesson(ss.st_inputs))
ui.lesson_view(
    lambda: ss.st_slides,
    page=state.PAGE,
    slide_key="st_step",
    fields=FIELDS,
    controls={slides.UNDO: _undo_button, backward.DY: _dy_box},
    quiz_key="st_quiz",
    after=_exports_section,
    live=ui.LiveSections(  # the five steps, computed and drawn in the browser
        "step_through",
        live.SECTIONS,
        lambda: ss.st_live,
        lambda changes: live.apply_changes(ss, changes),
    ),
)
