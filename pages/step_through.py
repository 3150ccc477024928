"""Step through one token: Layer Norm's five steps with your own numbers.

The text box is the source of the embeddings; the grid shows its last valid numbers and an
edit in the grid rewrites the text box. The lesson (lnlab.lessons.step_through) is drawn one
section at a time by ui.lesson_view; the page's state lives in the URL (FIELDS below).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import streamlit as st

from lnlab import grid, ui
from lnlab.errors import InputError
from lnlab.export import Exports
from lnlab.lessons import step_through as slides
from lnlab.lessons import token as tk
from lnlab.links import Field, Param
from lnlab.markdown import plain
from lnlab.numbers import DEFAULT_EPS
from lnlab.parse import (
    MAX_CHARS,
    MAX_TOKENS,
    format_embeddings,
    parse_embeddings,
    parse_labels,
    parse_vector,
    short_number,
)
from lnlab.presets import CUSTOM, CUSTOM_PRESET, TOKEN_PRESETS, token_preset
from lnlab.steps import STEPS

PAGE = "step_through"
DEFAULT_PRESET = "token-2468"
EPS_MAX = 1.0
VECTOR_CHARS = 2000  # gamma and beta boxes
KEEP = "session"  # inputs keep their value while presenter mode hides them, and across pages

ss = st.session_state


# ---------------------------------------------------------------- state


def _preset_inputs(key: str) -> dict[str, Any]:
    """What picking a preset sets: its embeddings and labels, token 1, γ = 1, β = 0, step 1."""
    preset = token_preset(key)
    return {
        "st_text": format_embeddings(preset.x),
        "st_labels": grid.labels_text(preset.labels),
        "st_token": 0,
        "st_gamma": "1",
        "st_beta": "0",
        "st_step": 0,
    }


def _load_preset() -> None:
    if ss.st_preset != CUSTOM:
        ss.update(_preset_inputs(ss.st_preset))


def _text_edited() -> None:
    """Typed or pasted embeddings are no longer the preset, and the preset's labels go with
    them once they no longer fit (t1, t2, ... rather than a "1 label for 2 tokens" error)."""
    if ss.st_preset == CUSTOM or ss.st_text == _preset_inputs(ss.st_preset)["st_text"]:
        return
    preset = token_preset(ss.st_preset)
    ss.st_preset = CUSTOM
    try:
        rows = parse_embeddings(ss.st_text).shape[0]
    except InputError:
        return  # the page says what is wrong with the text
    if ss.st_labels == grid.labels_text(preset.labels) and rows != len(preset.labels):
        ss.st_labels = ""


def _init_state() -> None:
    """Defaults for whatever a link did not set. A link's own embeddings without labels get
    t1, t2, ... rather than the preset's labels."""
    defaults = _preset_inputs(DEFAULT_PRESET)
    ss.setdefault("st_preset", DEFAULT_PRESET)
    if ss.st_preset != CUSTOM:
        defaults = _preset_inputs(ss.st_preset)
    if ss.get("st_text", defaults["st_text"]) != defaults["st_text"]:
        defaults["st_labels"] = ""
    defaults |= {"st_eps": DEFAULT_EPS, "st_quiz": False}
    for key, value in defaults.items():
        ss.setdefault(key, value)


def _open_link() -> None:
    """Apply a newly opened link, then check that its parts fit together (a token beyond the
    embeddings, a gamma of the wrong length): a link that does not opens the default example
    with a notice, as any other bad link does."""
    new = ui.open_link(PAGE, FIELDS)
    _init_state()
    ui.within("st_eps", 0.0, EPS_MAX, DEFAULT_EPS, "Epsilon")
    if not new:
        return
    try:
        tk.lesson_from_text(
            ss.st_text, ss.st_labels, ss.st_token, ss.st_eps, ss.st_gamma, ss.st_beta
        )
    except InputError as err:
        for f in FIELDS:
            ss.pop(f.key, None)
        _init_state()
        st.warning(
            f"This link could not be opened: {plain(str(err))}. "
            "The page opened on its default example instead.",
            icon=":material/link_off:",
        )


def _grid_changed() -> None:
    """Write a valid grid edit back to the text box (the source); errors show on the page."""
    x, labels = ss.st_grid_base
    try:
        new_x, new_labels = grid.apply_grid_edits(x, labels, ss.st_grid)
    except InputError:
        return
    ss.st_text = format_embeddings(new_x)
    ss.st_preset = CUSTOM
    if ss.st_labels.strip() and len(new_labels) != len(labels):
        ss.st_labels = grid.labels_text(new_labels)


def _undo(gamma: str, beta: str) -> None:
    ss.st_gamma, ss.st_beta = gamma, beta
    ui.rerun_app()  # the γ and β boxes above the lesson show the new values


# ---------------------------------------------------------------- cached computations


@st.cache_data(max_entries=64, show_spinner=False)
def _embeddings(text: str) -> np.ndarray:
    return parse_embeddings(text)


@st.cache_resource(max_entries=64, show_spinner=False)
def _lesson(inputs: tuple) -> tk.TokenLesson:
    """tk.token_lesson(*inputs): (x, labels, token, eps, gamma, beta). Shared, never mutated."""
    return tk.token_lesson(*inputs)


@st.cache_resource(max_entries=64, show_spinner=False)
def _slides(inputs: tuple) -> slides.Lesson:
    return slides.slides(_lesson(inputs))


@st.cache_data(max_entries=64, show_spinner=False)
def _exports(inputs: tuple) -> Exports:
    return tk.exports(_lesson(inputs))


# ---------------------------------------------------------------- the inputs


def _inputs() -> tuple:
    """The preset, the embeddings (text and grid), labels, token, ε, γ and β; any box's
    error shows under the text boxes. Returns what _read() makes of them."""
    presets = (*TOKEN_PRESETS, CUSTOM_PRESET)
    ui.preset_choice("Preset", presets, "st_preset", on_change=_load_preset, persist_state=KEEP)
    text_col, grid_col = st.columns(2)
    with text_col:
        st.text_area(
            "Token embeddings: one token per line, numbers separated by commas or spaces",
            key="st_text",
            height=180,
            max_chars=MAX_CHARS,
            help="You can also paste a Python list, np.array(...) or tensor(...) printout.",
            on_change=_text_edited,
            persist_state=KEEP,
        )
        st.text_area(
            "Token labels (optional): one per line",
            key="st_labels",
            height=110,
            max_chars=tk.LABELS_MAX_CHARS,
            help="Leave blank for t1, t2, ... One label a line, so a label may be a comma.",
            persist_state=KEEP,
        )
    inputs = _read()
    x, labels = inputs[0], inputs[1]
    with grid_col:
        ss.st_grid_base = (x, labels)
        ui.data_editor(
            grid.grid_frame(x), key="st_grid", num_rows="dynamic", on_change=_grid_changed
        )
        try:
            grid.apply_grid_edits(x, labels, ss.get("st_grid", {}))
        except InputError as err:
            ui.show_error(err)
        st.caption(
            "The text box is the source: this grid shows its last valid numbers (one row per "
            "token), and a change here rewrites the text box. Add or delete rows to add or "
            "remove tokens."
        )
    if ss.st_token not in range(len(labels)):
        ss.st_token = 0
    token_col, eps_col, gamma_col, beta_col = st.columns(4)
    token_col.selectbox(
        "Token",
        range(len(labels)),
        format_func=lambda i: f"{i + 1}: {labels[i]}",
        key="st_token",
        persist_state=KEEP,
    )
    eps_col.number_input(
        "Epsilon ε",
        min_value=0.0,
        max_value=EPS_MAX,
        step=1e-5,
        format="%g",
        key="st_eps",
        help="Added to the variance before the square root. Set it to 0 to see why.",
        persist_state=KEEP,
    )
    for col, key, name in ((gamma_col, "st_gamma", "γ (gamma)"), (beta_col, "st_beta", "β (beta)")):
        col.text_input(
            f"{name}: one value, or one per feature",
            key=key,
            max_chars=VECTOR_CHARS,
            persist_state=KEEP,
        )
    return inputs


def _read() -> tuple:
    """(x, labels, token, eps, gamma, beta): every box's last valid value; a box with an
    error keeps its last good value and the page says what is wrong."""
    x = ui.last_good("st_good_x", lambda: _embeddings(ss.st_text), token_preset(DEFAULT_PRESET).x)
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
    return (x, tuple(labels), token, float(ss.st_eps), gamma, beta)


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


def _exports_section(_: slides.Lesson) -> None:
    ui.exports(_exports(ss.st_inputs))


# ---------------------------------------------------------------- shareable links


def _shown(name: str) -> Callable[[Any], Any]:
    """A box's value for the link: what the page shows from it (the last valid input), so
    the link opens exactly the example on screen."""

    def value(_box: Any) -> Any:
        x, labels, _, _, gamma, beta = ss.st_inputs
        shown = {"x": x, "labels": grid.labels_text(labels), "gamma": gamma, "beta": beta}
        v = shown[name]
        return v[:1] if name in ("gamma", "beta") and np.all(v == v[0]) else v

    return value


def _vector_text(v: np.ndarray) -> str:
    return ", ".join(short_number(a) for a in v)


SECTION_COUNT = len(STEPS) + 4  # the five steps, the check, the undo, the prompt twice
FIELDS = (
    Field(
        Param("preset", "choice", choices=(*(p.key for p in TOKEN_PRESETS), CUSTOM)), "st_preset"
    ),
    Field(Param("x", "matrix"), "st_text", format_embeddings, _shown("x")),
    Field(
        Param("labels", "text", max_chars=tk.LABELS_MAX_CHARS, max_lines=MAX_TOKENS),
        "st_labels",
        from_widget=_shown("labels"),
    ),
    Field(Param("tok", "int", lo=1, hi=MAX_TOKENS), "st_token", lambda i: i - 1, lambda i: i + 1),
    Field(Param("eps", "float", lo=0.0, hi=EPS_MAX), "st_eps"),
    Field(Param("gamma", "vector"), "st_gamma", _vector_text, _shown("gamma")),
    Field(Param("beta", "vector"), "st_beta", _vector_text, _shown("beta")),
    Field(
        Param("step", "int", lo=1, hi=SECTION_COUNT), "st_step", lambda i: i - 1, lambda i: i + 1
    ),
    Field(Param("all", "bool"), f"{PAGE}_all"),
    Field(Param("q", "bool"), "st_quiz"),
)


# ---------------------------------------------------------------- the page

ui.page_setup(slides.TITLE)
_open_link()
if not ui.presenting():
    st.title(slides.TITLE)
    st.markdown(slides.INTRO)
    st.toggle(
        "Predict before you see",
        key="st_quiz",
        persist_state=KEEP,
        help="Steps 1, 2, 4 and 5 first ask you to predict their result; your first tries "
        "are scored in the sidebar.",
    )
    ss.st_inputs = _inputs()
else:
    ss.st_inputs = _read()
ui.lesson_view(
    lambda: _slides(ss.st_inputs),
    page=PAGE,
    slide_key="st_step",
    fields=FIELDS,
    controls={slides.UNDO: _undo_button},
    quiz_key="st_quiz",
    after=_exports_section,
)
