"""Layer Norm in the Transformer: Add & Norm, post-norm versus pre-norm, depth, and counting."""

from collections.abc import Iterable

import numpy as np
import pandas as pd
import streamlit as st

from lnlab import transformer as tf
from lnlab import ui
from lnlab.plots.transformer import block_diagram, depth_chart

ui.page_setup("In the Transformer")

FED = "pre-norm: sublayer input"
NORM_LABELS = {
    tf.POST_NORM: "Post-norm (original Transformer)",
    tf.PRE_NORM: "Pre-norm (GPT-2 style)",
}


@st.cache_data(max_entries=64, show_spinner=False)
def _lesson(norm_position: str, depth: int, layers: int) -> tf.TransformerLesson:
    return tf.transformer_lesson(norm_position, depth, layers)


def _stage_table(example: tf.AddNormExample, stage: tf.Stage) -> pd.DataFrame:
    table = pd.DataFrame(stage.value, index=list(example.tokens), columns=list(example.features))
    table["mean"] = stage.mean
    table["std"] = stage.std
    return table


def _number_format(columns: Iterable[str], fmt: str) -> dict:
    """Show every column in `columns` with the printf format `fmt` (the data stay exact)."""
    return {name: st.column_config.NumberColumn(format=fmt) for name in columns}


def _depth_table(result: tf.DepthExperiment) -> pd.DataFrame:
    table = pd.DataFrame({variant: result.rms[variant] for variant in tf.VARIANTS})
    table[FED] = np.append(np.nan, result.pre_norm_sublayer_input_rms)
    table.index.name = "layer"
    return table


st.title("Layer Norm in the Transformer")
st.markdown(
    "Every sublayer of a Transformer (attention, feed-forward) sits on a **residual stream**: "
    "its output is added back to its input. Layer Norm goes either *after* that addition "
    "(post-norm, the original 2017 Transformer) or *before* the sublayer (pre-norm, GPT-2 "
    "and most models since). Where it goes decides how big the stream can get."
)
norm_position = st.radio(
    "Where the Layer Norm sits",
    tf.NORM_POSITIONS,
    format_func=NORM_LABELS.__getitem__,
    horizontal=True,
    key="tf_norm",
)
# The depth and layer widgets sit further down, but the lesson needs their values now.
st.session_state.setdefault("tf_depth", tf.DEFAULT_DEPTH)
st.session_state.setdefault("tf_layers", tf.DEFAULT_LAYERS)
lesson = ui.last_good(
    "tf_lesson",
    lambda: _lesson(norm_position, st.session_state.tf_depth, st.session_state.tf_layers),
    fallback=_lesson(tf.POST_NORM, tf.DEFAULT_DEPTH, tf.DEFAULT_LAYERS),
)

# ---------------------------------------------------------------- Add & Norm on a small block
st.header("Add & Norm on a small block")
example = lesson.example
diagram, explain = st.columns(2)
with diagram:
    st.plotly_chart(block_diagram(lesson.norm_position), key="tf_diagram")
    st.caption(
        "Blue boxes are sublayers, orange boxes hold a Layer Norm, green boxes add; the purple "
        "lines are the residual connections that carry the stream around each sublayer. The "
        "dashed frame repeats once per layer."
    )
with explain:
    st.latex(tf.step_latex(lesson.norm_position))
    if lesson.norm_position == tf.POST_NORM:
        st.markdown(
            "**Post-norm.** The sublayer works on the stream as it is, its output is added "
            "back, and the sum is normalized. The Norm comes last, so what leaves the step "
            "(the last table below) has mean 0 and std 1 on every token, whatever the "
            "sublayer added."
        )
    else:
        st.markdown(
            "**Pre-norm.** Only the sublayer's input is normalized (the second table below); "
            "its output is added to the raw stream. The stream that leaves the step (the last "
            "table) keeps its own scale, and one final Layer Norm after the last layer "
            "normalizes it once, before the output head."
        )
    st.markdown(
        f"The tables run one step on the {len(example.tokens)} tokens of a worked example "
        f"({len(example.features)} features each) with a toy sublayer "
        "$f(x) = \\mathrm{ReLU}(xW)$ whose weights $W$ are fixed. Each table ends with every "
        "token's mean and (biased) standard deviation."
    )
    with st.expander("The sublayer's weights W"):
        st.dataframe(
            pd.DataFrame(example.weights, index=list(example.features), columns=example.features)
        )
for pair in (example.stages[:2], example.stages[2:]):
    for column, stage in zip(st.columns(2), pair, strict=True):
        with column:
            st.markdown(f"**{stage.title}**")
            st.latex(stage.latex)
            table = _stage_table(example, stage)
            st.dataframe(table, width="stretch", column_config=_number_format(table, "%.3f"))

# ---------------------------------------------------------------- the depth experiment
st.header("Depth: how big the residual stream gets")
st.slider(
    "Depth (layers in the stack)",
    min_value=tf.MIN_DEPTH,
    max_value=tf.MAX_DEPTH,
    key="tf_depth",
)
chart, numbers = st.columns([3, 2])
with chart:
    st.plotly_chart(depth_chart(lesson.depth), key="tf_depth_chart")
with numbers:
    st.dataframe(
        _depth_table(lesson.depth),
        width="stretch",
        height=460,
        column_config=_number_format(tf.VARIANTS, "%.4g")
        | {
            FED: st.column_config.NumberColumn(
                "LN(x) fed to f",
                format="%.6f",
                help="Pre-norm: RMS of LN(x), what layer ℓ's sublayer sees (none before layer 1)",
            )
        },
    )
st.caption(tf.depth_caption(lesson.depth))

# ---------------------------------------------------------------- counting Layer Norms
st.header("How many Layer Norms a prompt passes through")
count_input, _ = st.columns([1, 3])
count_input.number_input(
    "Layers in the model",
    min_value=tf.MIN_LAYERS,
    max_value=tf.MAX_LAYERS,
    step=1,
    key="tf_layers",
)
count = lesson.count
post, pre = st.columns(2)
post.metric("Post-norm: 2 per layer", count.post_norm)
pre.metric("Pre-norm: 2 per layer + the final one", count.pre_norm)
st.latex(
    rf"\text{{post-norm: }} 2 \times {count.layers} = {count.post_norm}"
    rf"\qquad \text{{pre-norm: }} 2 \times {count.layers} + 1 = {count.pre_norm}"
)
st.caption(
    "Each token passes every Layer Norm once per forward pass: one per sublayer (attention and "
    "feed-forward) in every layer, and in pre-norm models one more before the output head. "
    f"The original encoder-decoder Transformer ({tf.ORIGINAL_ENCODER_LAYERS} + "
    f"{tf.ORIGINAL_DECODER_LAYERS} layers, post-norm) has {count.encoder_decoder}: 2 per encoder "
    "layer and 3 per decoder layer, whose cross-attention gets its own Add & Norm."
)
