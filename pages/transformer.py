"""Layer Norm in the Transformer: Add & Norm, post-norm versus pre-norm, depth, and counting.

The lesson (lnlab.labs.transformer.lesson) is drawn one section at a time by ui.lesson_view; each
section's input (where the norm sits, the depth, the number of layers) is drawn inside it, and
the page's state lives in the URL (FIELDS below).
"""

from __future__ import annotations

import streamlit as st

from lnlab import ui
from lnlab.labs.transformer import export as tf_export
from lnlab.labs.transformer import lesson as slides
from lnlab.labs.transformer import model as tf
from lnlab.teach.links import Field, Param

PAGE = "transformer"
KEEP = ui.KEEP
DEFAULTS = {
    "tf_norm": tf.POST_NORM,
    "tf_depth": tf.DEFAULT_DEPTH,
    "tf_layers": tf.DEFAULT_LAYERS,
    "tf_slide": 0,
}
FIELDS = (
    Field(Param("norm", "choice", choices=tf.NORM_POSITIONS), "tf_norm"),
    Field(
        Param("depth", "int", lo=tf.MIN_DEPTH, hi=tf.MAX_DEPTH),
        "tf_depth",
        from_widget=tf.check_depth,
    ),
    Field(
        Param("layers", "int", lo=tf.MIN_LAYERS, hi=tf.MAX_LAYERS),
        "tf_layers",
        from_widget=tf.check_layers,  # a value out of range is left out of the link
    ),
    # the section on screen, 1-based in the link: the same three slides as before
    Field(
        Param("s", "int", lo=1, hi=len(tf.SECTIONS)), "tf_slide", lambda s: s - 1, lambda i: i + 1
    ),
    Field(Param("q", "bool"), "tf_quiz"),
)

ss = st.session_state


@st.cache_resource(max_entries=64, show_spinner=False)
def _lesson(norm_position: str, depth: int, layers: int) -> tf.TransformerLesson:
    """Shared between sessions, never mutated."""
    return tf.transformer_lesson(norm_position, depth, layers)


@st.cache_resource(max_entries=64, show_spinner=False)
def _slides(norm_position: str, depth: int, layers: int) -> slides.Lesson:
    return slides.slides(_lesson(norm_position, depth, layers))


def _build() -> slides.Lesson:
    """The lesson for the inputs in session state; a section's input reruns only the lesson."""
    ss.tf_inputs = (ss.tf_norm, int(ss.tf_depth), int(ss.tf_layers))
    return _slides(*ss.tf_inputs)


# ---------------------------------------------------------------- the sections' inputs


def _norm_radio() -> None:
    st.radio(
        "Where the Layer Norm sits",
        tf.NORM_POSITIONS,
        format_func=slides.NORM_LABELS.__getitem__,
        horizontal=True,
        key="tf_norm",
        persist_state=KEEP,
    )


def _depth_slider() -> None:
    st.slider(
        "Depth (layers in the stack)",
        min_value=tf.MIN_DEPTH,
        max_value=tf.MAX_DEPTH,
        key="tf_depth",
        persist_state=KEEP,
    )


def _layers_input() -> None:
    st.number_input(
        "Layers in the model",
        min_value=tf.MIN_LAYERS,
        max_value=tf.MAX_LAYERS,
        step=1,
        key="tf_layers",
        width=220,
        persist_state=KEEP,
    )


def _exports() -> None:
    """The depth experiment's table as CSV and JSON."""
    ui.exports(tf_export.depth_exports(_lesson(*ss.tf_inputs).depth))


# ---------------------------------------------------------------- the page

ui.page_setup("In the Transformer")
ui.open_link(PAGE, FIELDS)
for key, value in DEFAULTS.items():
    ss.setdefault(key, value)
ui.within("tf_depth", tf.MIN_DEPTH, tf.MAX_DEPTH, tf.DEFAULT_DEPTH, "The depth")
ui.within("tf_layers", tf.MIN_LAYERS, tf.MAX_LAYERS, tf.DEFAULT_LAYERS, "The number of layers")
if not ui.presenting():
    ui.title(slides.TITLE, slides.INTRO)
    ui.predict_toggle("tf_quiz")
ui.lesson_view(
    _build,
    page=PAGE,
    slide_key="tf_slide",
    fields=FIELDS,
    controls={
        slides.ADD_NORM: _norm_radio,
        slides.DEPTH: _depth_slider,
        slides.COUNT: _layers_input,
    },
    quiz_key="tf_quiz",
    after=_exports,
)
