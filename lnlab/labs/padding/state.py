"""The padding page's inputs as state: what a preset sets, the defaults a link leaves unset,
and the lab's inputs and the sections' choices read back from it.

Plain functions of a mutable mapping (the page passes st.session_state), tested without
Streamlit. `pad_page_inputs` holds the page's last valid PageInputs; a section's widget that
holds bad input leaves its last good value under its `pad_good_*` key (ui.last_good), which the
lesson is built from meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from lnlab.core.errors import InputError
from lnlab.labs.padding import batch as pad
from lnlab.labs.padding import links
from lnlab.labs.padding.lesson import DEFAULT_COUNT, View
from lnlab.teach.presets import BATCH_PRESETS, batch_preset

State = MutableMapping[str, Any]


@dataclass(frozen=True)
class PageInputs:
    """The inputs above the lesson, each its last valid value."""

    sentences: pad.Sentences
    overrides: pad.Overrides  # the edited embeddings
    eps: float
    beta: float


def load_preset(state: State) -> None:
    """Fill the sentences from the picked preset and drop every edited embedding."""
    state["pad_sentences"] = "\n".join(batch_preset(state["pad_preset"]).sentences)
    reset_embeddings(state)


def reset_embeddings(state: State) -> None:
    """Forget the edits; a new table identity makes the grid drop its own edit state too."""
    state["pad_overrides"] = {}
    state["pad_table_epoch"] = state.get("pad_table_epoch", 0) + 1


def set_defaults(state: State) -> None:
    """Defaults for whatever the link did not set (the sentences follow the link's preset)."""
    state.setdefault("pad_preset", BATCH_PRESETS[0].key)
    for key, value in links.defaults(state["pad_preset"]).items():
        state.setdefault(key, value)


def count(state: State) -> pad.PaddingShare:
    """The calculator's padding share (InputError for impossible lengths)."""
    return pad.padding_share(state["pad_batch"], state["pad_longest"], state["pad_average"])


def steps(state: State) -> int:
    """The running-statistics demo's training steps (InputError unless 1..MAX_STEPS)."""
    value = state["pad_steps"]
    if not isinstance(value, int) or not 1 <= value <= pad.MAX_STEPS:
        raise InputError(f"the steps must be a whole number from 1 to {pad.MAX_STEPS}")
    return value


def rows(state: State) -> int:
    """The rows of the stacked batch (B * S, PAD rows included) of the page's sentences."""
    sentences = state["pad_page_inputs"].sentences
    return len(sentences) * max(len(s) for s in sentences)


def token_and_feature(state: State) -> tuple[int, int]:
    """The token row and the feature column the statistic picker keeps (each its own, so a
    switch between a row and a column comes back to the last one of each), 0 when out of
    range."""
    token, feature = state["pad_token"], state["pad_feature"]
    token = token if token in range(rows(state)) else 0
    return token, feature if feature in range(pad.DIM) else 0


def lab_and_view(state: State) -> tuple[pad.LabInputs, View]:
    """The lab's inputs and the sections' choices, from state alone: ui.lesson_view rebuilds
    the lesson with them on every rerun of a section."""
    page: PageInputs = state["pad_page_inputs"]
    sentences = page.sentences
    focus = state["pad_focus"] if state["pad_focus"] in range(len(sentences)) else 0
    others = [b for b in range(len(sentences)) if b != focus] or [0]
    other = state["pad_other"] if state["pad_other"] in others else others[0]
    words = _kept(
        state, "pad_good_other_text", lambda: pad.parse_sentence(state["pad_other_text"]), ()
    )
    replacement = words or tuple(pad.DEFAULT_REPLACEMENT.split())
    inputs = pad.LabInputs(
        sentences,
        state["pad_preset"],
        page.overrides,
        page.eps,
        page.beta,
        focus,
        other,
        replacement,
    )
    token, feature = token_and_feature(state)
    cf_feature = state["pad_cf_feature"]
    view = View(
        pick=state["pad_pick"],
        index=token if state["pad_pick"] == pad.PICK_TOKEN else feature,
        cf_feature=cf_feature if cf_feature in range(pad.DIM) else 0,
        count=_kept(state, "pad_good_count", lambda: count(state), DEFAULT_COUNT),
        steps=_kept(state, "pad_good_steps", lambda: steps(state), pad.DEFAULT_STEPS),
    )
    return inputs, view


def _kept(state: State, key: str, compute: Callable[[], Any], fallback: Any) -> Any:
    """`compute()`, or the last good value a section's widget stored while its input is bad:
    the lesson is built before the section shows the error."""
    try:
        return compute()
    except InputError:
        return state.get(key, fallback)
