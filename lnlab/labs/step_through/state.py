"""The step-through page's inputs as state: what a preset sets, what an edit of the text box or
the grid changes, the defaults a link leaves unset, and the link's fields.

Plain functions of a mutable mapping (the page passes st.session_state), so they are tested
without Streamlit. Keys: st_preset, st_text, st_labels, st_token, st_eps, st_gamma, st_beta,
st_dy (the backward slides' upstream gradient, blank for the default), st_step (the section
shown), st_quiz; st_inputs holds the TokenInputs the page last read from them (each box's
last valid value), st_good_dy the last valid dy (None: the default) and st_dy_error what is wrong
with the dy box.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

import numpy as np

from lnlab.core.errors import InputError
from lnlab.core.numbers import DEFAULT_EPS
from lnlab.core.parse import (
    MAX_TOKENS,
    format_embeddings,
    parse_embeddings,
    parse_vector,
    short_number,
)
from lnlab.labs.step_through import backward, grid
from lnlab.labs.step_through.token import LABELS_MAX_CHARS
from lnlab.teach.links import Field, Param
from lnlab.teach.presets import CUSTOM, TOKEN_PRESETS, token_preset
from lnlab.teach.steps import STEPS

PAGE = "step_through"
DEFAULT_PRESET = "token-2468"
EPS_MAX = 1.0
VECTOR_CHARS = 2000  # gamma, beta and dy boxes
# the five steps, the check, the undo, the prompt twice, then the backward pass
SECTION_COUNT = len(STEPS) + 4 + len(backward.KEYS)

State = MutableMapping[str, Any]


def preset_inputs(key: str) -> dict[str, Any]:
    """What picking a preset sets: its embeddings and labels, token 1, γ = 1, β = 0, the
    default dy, step 1."""
    preset = token_preset(key)
    return {
        "st_text": format_embeddings(preset.x),
        "st_labels": grid.labels_text(preset.labels),
        "st_token": 0,
        "st_gamma": "1",
        "st_beta": "0",
        "st_dy": "",
        "st_step": 0,
    }


def load_preset(state: State) -> None:
    if state["st_preset"] != CUSTOM:
        state.update(preset_inputs(state["st_preset"]))


def text_edited(state: State) -> None:
    """Typed or pasted embeddings are no longer the preset, and the preset's labels go with
    them once they no longer fit (t1, t2, ... rather than a "1 label for 2 tokens" error)."""
    key = state["st_preset"]
    if key == CUSTOM or state["st_text"] == preset_inputs(key)["st_text"]:
        return
    preset = token_preset(key)
    state["st_preset"] = CUSTOM
    try:
        rows = parse_embeddings(state["st_text"]).shape[0]
    except InputError:
        return  # the page says what is wrong with the text
    if state["st_labels"] == grid.labels_text(preset.labels) and rows != len(preset.labels):
        state["st_labels"] = ""


def grid_changed(state: State) -> None:
    """Write a valid grid edit back to the text box (the source); errors show on the page."""
    x, labels = state["st_grid_base"]
    try:
        new_x, new_labels = grid.apply_grid_edits(x, labels, state["st_grid"])
    except InputError:
        return
    state["st_text"] = format_embeddings(new_x)
    state["st_preset"] = CUSTOM
    if state["st_labels"].strip() and len(new_labels) != len(labels):
        state["st_labels"] = grid.labels_text(new_labels)


def set_defaults(state: State) -> None:
    """Defaults for whatever a link did not set. A link's own embeddings without labels get
    t1, t2, ... rather than the preset's labels."""
    state.setdefault("st_preset", DEFAULT_PRESET)
    key = state["st_preset"]
    defaults = preset_inputs(DEFAULT_PRESET if key == CUSTOM else key)
    if state.get("st_text", defaults["st_text"]) != defaults["st_text"]:
        defaults["st_labels"] = ""
    defaults |= {"st_eps": DEFAULT_EPS, "st_quiz": False}
    for name, value in defaults.items():
        state.setdefault(name, value)


def parse_dy(text: str, d: int) -> np.ndarray | None:
    """The dy box: one value per feature or one for all; blank (None) for the default dy.
    Raises InputError like the gamma and beta boxes."""
    return None if not text.strip() else parse_vector(text, d, name="dy")


def read_dy(state: State, d: int) -> np.ndarray:
    """The dy the backward slides use for `d` features. A box that does not parse keeps the
    last valid dy (or the default, if that was for another number of features), and what is
    wrong goes to state["st_dy_error"] for the box to show."""
    try:
        state["st_good_dy"] = parse_dy(state["st_dy"], d)
        state["st_dy_error"] = ""
    except InputError as err:
        state["st_dy_error"] = str(err)
    good = state.get("st_good_dy")
    return good if good is not None and good.shape == (d,) else backward.default_dy(d)


def link_fields(state: Mapping[str, Any]) -> tuple[Field, ...]:
    """The page's link. The boxes travel as the page shows them (their last valid input, from
    state["st_inputs"]), so a link opens exactly the example on screen."""

    def shown(name: str) -> Callable[[Any], Any]:
        def value(_box: Any) -> Any:
            inputs = state["st_inputs"]
            v = grid.labels_text(inputs.labels) if name == "labels" else getattr(inputs, name)
            return v[:1] if name in ("gamma", "beta") and np.all(v == v[0]) else v

        return value

    def shown_dy(_box: Any) -> np.ndarray | None:
        """The dy on the slides, or None (left out of the link) for the default."""
        good, d = state.get("st_good_dy"), state["st_inputs"].x.shape[1]
        if good is None or good.shape != (d,):
            return None
        return good[:1] if np.all(good == good[0]) else good

    def vector_text(v: np.ndarray) -> str:
        return ", ".join(short_number(a) for a in v)

    def one_based(key: str, param: Param) -> Field:
        return Field(param, key, lambda i: i - 1, lambda i: i + 1)

    presets = (*(p.key for p in TOKEN_PRESETS), CUSTOM)
    return (
        Field(Param("preset", "choice", choices=presets), "st_preset"),
        Field(Param("x", "matrix"), "st_text", format_embeddings, shown("x")),
        Field(
            Param("labels", "text", max_chars=LABELS_MAX_CHARS, max_lines=MAX_TOKENS),
            "st_labels",
            from_widget=shown("labels"),
        ),
        one_based("st_token", Param("tok", "int", lo=1, hi=MAX_TOKENS)),
        Field(Param("eps", "float", lo=0.0, hi=EPS_MAX), "st_eps"),
        Field(Param("gamma", "vector"), "st_gamma", vector_text, shown("gamma")),
        Field(Param("beta", "vector"), "st_beta", vector_text, shown("beta")),
        Field(Param("dy", "vector"), "st_dy", vector_text, shown_dy),
        one_based("st_step", Param("step", "int", lo=1, hi=SECTION_COUNT)),
        Field(Param("all", "bool"), f"{PAGE}_all"),
        Field(Param("q", "bool"), "st_quiz"),
    )
