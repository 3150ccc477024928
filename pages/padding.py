"""Batch Norm vs Layer Norm on a padded batch of sentences.

The sentences, the preset, the embedding grid, ε and β are the page's inputs; the lesson
(lnlab.labs.padding.lesson) is drawn one section at a time by ui.lesson_view, with the widgets of
its sections (the statistic to outline, the calculator, who else, the training steps) inside
them; its first two sections (the batch, the statistic picked) are drawn and answered in the
browser (lnlab.labs.padding.live). The math is lnlab.labs.padding.batch; the page's state
lives in the URL (links.FIELDS below).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from lnlab import ui
from lnlab.core.numbers import DEFAULT_EPS
from lnlab.labs.padding import batch as pad
from lnlab.labs.padding import export as pex
from lnlab.labs.padding import lesson as slides
from lnlab.labs.padding import links, state
from lnlab.labs.padding import live as in_page
from lnlab.teach.presets import BATCH_PRESETS, PADDING_COUNT, batch_preset

PAGE = "padding"
FEATURES = pad.FEATURES
KEEP = ui.KEEP

ss = st.session_state


# ---------------------------------------------------------------- cached computations


@st.cache_resource(max_entries=64, show_spinner=False)
def _lab(inputs: pad.LabInputs) -> pad.PaddingLab:
    """The lab of the inputs: shared by every session, never mutated."""
    return inputs.lab()


@st.cache_resource(max_entries=64, show_spinner=False)
def _slides(inputs: pad.LabInputs, view: slides.View) -> slides.Lesson:
    return slides.slides(_lab(inputs), view)


# ---------------------------------------------------------------- reading the state


def _state() -> tuple[pad.LabInputs, slides.View]:
    return state.lab_and_view(ss)


def _sentences() -> pad.Sentences:
    return ui.last_good(
        "pad_good_sentences",
        lambda: pad.parse_sentences(ss.pad_sentences),
        tuple(tuple(s.split()) for s in batch_preset(ss.pad_preset).sentences),
    )


# ---------------------------------------------------------------- the page's inputs


def _inputs() -> pad.Sentences:
    """The preset, sentences, ε, β and the embedding grid (edits land in ss.pad_overrides);
    returns the last good sentences."""
    text_col, table_col = st.columns(2)
    with text_col:
        ui.preset_choice(
            "Example",
            BATCH_PRESETS,
            "pad_preset",
            on_change=state.load_preset,
            args=(ss,),
            persist_state=KEEP,
        )
        ui.text_box(
            st.text_area,
            "Sentences, one per line (words are split on spaces)",
            "pad_sentences",
            pad.MAX_TEXT_CHARS,
            height=150,
            help=f"At most {pad.MAX_SENTENCES} sentences of {pad.MAX_WORDS} words, "
            f"{pad.MAX_WORD_CHARS} characters a word.",
            persist_state=KEEP,
        )
        sentences = _sentences()
        eps_col, beta_col = st.columns(2)
        eps_col.number_input(
            "epsilon ε",
            0.0,
            pad.MAX_EPS,
            step=DEFAULT_EPS,
            format="%g",
            key="pad_eps",
            persist_state=KEEP,
        )
        beta_col.number_input(
            "β (the same for every feature; γ = 1)",
            -pad.MAX_BETA,
            pad.MAX_BETA,
            step=0.5,
            key="pad_beta",
            persist_state=KEEP,
        )
    with table_col:
        _embedding_grid(pad.vocabulary(sentences))
    return sentences


def _grid_editor(grid: pd.DataFrame) -> pd.DataFrame:
    """The embeddings' grid, edited: its words and sources fixed, its numbers bounded."""
    limit = pad.MAX_ABS_VALUE
    return ui.data_editor(
        grid,
        key="pad_words",
        max_rows=len(grid),
        hide_index=True,
        disabled=["word", "from"],
        column_config={
            f: st.column_config.NumberColumn(f, min_value=-limit, max_value=limit, step=0.1)
            for f in FEATURES
        },
    )


def _last_edits(grid: pd.DataFrame) -> pd.DataFrame:
    """`grid` with the edits the editor sent last: a run may find its popover closed by the
    click that also ended an edit, and the editor not drawn; its state is still there."""
    edits = ss.get("pad_words")
    rows = edits.get("edited_rows") if isinstance(edits, dict) else None
    if not isinstance(rows, dict):
        return grid
    frame = grid.astype({f: object for f in FEATURES})  # as sent: read_overrides checks them
    for r, changes in rows.items():
        row = int(r) if str(r).isdigit() else -1
        if row in range(len(frame)) and isinstance(changes, dict):
            for column, value in changes.items():
                if column in FEATURES:
                    frame.iloc[row, frame.columns.get_loc(column)] = value
    return frame


def _embedding_grid(words: tuple[str, ...]) -> None:
    """Each word's embedding as a table, and as a grid one edits in a popover drawn only
    while open (a run on opening it): the grid's code and its data's (Arrow) load for a
    reader who edits, not with every visit."""
    grid = pad.embedding_frame(words, ss.pad_preset, ss.pad_overrides, ss.pad_table_epoch)
    ui.table(grid, "Each word's embedding")
    st.caption(
        "Each word's embedding: the example's numbers, or a fixed vector hashed from the word, "
        "or your edit. Edit a number to change every occurrence of that word. PAD rows are "
        "always zeros."
    )
    with st.container(horizontal=True):
        drawer = st.popover(
            "Edit the embeddings",
            icon=":material/table_rows:",
            key="pad_words_open",
            on_change="rerun",
        )
        with drawer:
            edited = _grid_editor(grid) if drawer.open else _last_edits(grid)
        st.button(
            "Reset the embeddings",
            key="pad_reset_words",
            on_click=state.reset_embeddings,
            args=(ss,),
        )
    values = edited[list(FEATURES)].to_numpy().tolist()
    overrides = ui.last_good(
        "pad_good_overrides",
        lambda: pad.read_overrides(words, values, ss.pad_preset, ss.pad_overrides),
        ss.pad_overrides,
    )
    if overrides != ss.pad_overrides:
        ss.pad_overrides = overrides
        st.rerun()  # so the "from" column shows the edit at once


# ---------------------------------------------------------------- the sections' widgets


def _cells_control() -> None:
    labels = _lab(_state()[0]).labels
    picked = st.radio(
        "Statistic", list(pad.PICKS), format_func=pad.PICKS.get, key="pad_pick", persist_state=KEEP
    )
    if picked == pad.PICK_TOKEN:
        if ss.pad_token not in range(len(labels)):
            ss.pad_token = 0
        ui.menu(st, "Token row", range(len(labels)), "pad_token", labels.__getitem__)
    else:
        _feature_radio("Feature column", "pad_feature")


def _feature_radio(label: str, key: str) -> None:
    st.radio(
        label,
        range(pad.DIM),
        format_func=FEATURES.__getitem__,
        key=key,
        horizontal=True,
        persist_state=KEEP,
    )


def _feature_control() -> None:
    _feature_radio("Feature", "pad_cf_feature")


def _calculator_control() -> None:
    batch, longest, average = st.columns(3)
    limit = pad.MAX_CALC_LONGEST
    batch.number_input(
        "Sentences", 1, pad.MAX_CALC_BATCH, step=1, key="pad_batch", persist_state=KEEP
    )
    longest.number_input("Longest (words)", 1, limit, step=1, key="pad_longest", persist_state=KEEP)
    average.number_input(
        "Average (words)", 1.0, float(limit), step=1.0, key="pad_average", persist_state=KEEP
    )
    ui.last_good("pad_good_count", lambda: state.count(ss), slides.DEFAULT_COUNT)


def _who_else_control() -> None:
    sentences = ss.pad_page_inputs.sentences
    if len(sentences) < 2:
        return
    if ss.pad_focus not in range(len(sentences)):
        ss.pad_focus = 0
    others = [b for b in range(len(sentences)) if b != ss.pad_focus]
    if ss.pad_other not in others:
        ss.pad_other = others[0]
    focus, other, text = st.columns([1, 1, 2])
    for col, key, label, options in (
        (focus, "pad_focus", "This sentence", range(len(sentences))),
        (other, "pad_other", "Edit this other sentence", others),
    ):
        ui.menu(col, label, list(options), key, lambda b: f"{b + 1}: {' '.join(sentences[b])}")
    ui.text_box(
        text.text_input, "...into", "pad_other_text", links.MAX_SENTENCE_CHARS, persist_state=KEEP
    )
    ui.last_good("pad_good_other_text", lambda: pad.parse_sentence(ss.pad_other_text), ())


def _steps_control() -> None:
    st.number_input("Training steps", 1, pad.MAX_STEPS, step=1, key="pad_steps", persist_state=KEEP)


def _browser_data() -> dict:
    inputs, view = _state()
    token, feature = state.token_and_feature(ss)
    return in_page.browser_data(_lab(inputs), view, _slides(inputs, view), token, feature)


def _exports() -> None:
    """CSV, JSON and a PyTorch script of the numbers (files built only when clicked)."""
    ui.exports(pex.exports(_lab(_state()[0]), ss.pad_preset))


# ---------------------------------------------------------------- the page

ui.page_setup("Batch Norm vs Layer Norm")
ui.open_link(PAGE, links.FIELDS)
state.set_defaults(ss)
ui.within("pad_batch", 1, pad.MAX_CALC_BATCH, PADDING_COUNT.batch, "The batch size")
ui.within("pad_longest", 1, pad.MAX_CALC_LONGEST, PADDING_COUNT.longest, "The longest sentence")
ui.within("pad_average", 1, pad.MAX_CALC_LONGEST, PADDING_COUNT.average, "The average length")
if not ui.presenting():
    ui.title(slides.TITLE, slides.INTRO)
    ui.predict_toggle("pad_quiz")
sentences = _sentences() if ui.presenting() else _inputs()
eps, beta = ui.last_good(
    "pad_good_settings", lambda: pad.checked_settings(ss.pad_eps, ss.pad_beta), (DEFAULT_EPS, 0.0)
)
ss.pad_page_inputs = state.PageInputs(sentences, tuple(ss.pad_overrides.items()), eps, beta)
ui.lesson_view(
    lambda: _slides(*_state()),
    page=PAGE,
    slide_key="pad_slide",
    fields=links.FIELDS,
    controls={
        slides.CELLS: _cells_control,
        slides.CLOSED_FORM: _feature_control,
        slides.CALCULATOR: _calculator_control,
        slides.WHO_ELSE: _who_else_control,
        slides.RUNNING: _steps_control,
    },
    quiz_key="pad_quiz",
    after=_exports,
    live=ui.LiveSections(  # the batch and the picked statistic, drawn in the browser
        "padding",
        in_page.SECTIONS,
        _browser_data,
        lambda changes: in_page.apply_changes(ss, changes),
    ),
)
