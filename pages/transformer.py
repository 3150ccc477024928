"""Layer Norm in the Transformer: Add & Norm, post-norm versus pre-norm, depth, and counting.

In presenter mode the three sections become three slides (Previous/Next, ← and →).
"""

from collections.abc import Iterable

import pandas as pd
import streamlit as st

from lnlab import transformer as tf
from lnlab import ui
from lnlab.export import to_csv
from lnlab.links import Field, Param
from lnlab.plots.transformer import block_diagram, depth_chart

NORM_LABELS = {
    tf.POST_NORM: "Post-norm (original Transformer)",
    tf.PRE_NORM: "Pre-norm (GPT-2 style)",
}
LINK = (
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
    # the slide reached in presenter mode, 1-based in the link
    Field(
        Param("s", "int", lo=1, hi=len(tf.SECTIONS)),
        "tf_slide",
        lambda s: s - 1,
        lambda i: i + 1,
    ),
)
DEFAULTS = {
    "tf_norm": tf.POST_NORM,
    "tf_depth": tf.DEFAULT_DEPTH,
    "tf_layers": tf.DEFAULT_LAYERS,
    "tf_slide": 0,
}

ss = st.session_state


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


def _showing(section: int) -> bool:
    """Every section on the page; one per screen in presenter mode."""
    return not presenting or ss.tf_slide == section


ui.page_setup("In the Transformer")
ui.open_link("transformer", LINK)
for key, value in DEFAULTS.items():
    # re-assigning keeps a widget's value while presenter mode hides it (Streamlit drops the
    # state of widgets that are not drawn)
    ss[key] = ss.get(key, value)
ui.within("tf_depth", tf.MIN_DEPTH, tf.MAX_DEPTH, tf.DEFAULT_DEPTH, "The depth")
ui.within("tf_layers", tf.MIN_LAYERS, tf.MAX_LAYERS, tf.DEFAULT_LAYERS, "The number of layers")
presenting = ui.presenting()

st.title("Layer Norm in the Transformer")
if presenting:
    nav = ui.step_buttons("tf", "tf_slide", len(tf.SECTIONS))
    nav.caption(f"Slide {ss.tf_slide + 1} of {len(tf.SECTIONS)} · the ← and → keys move too")
else:
    st.markdown(
        "Every sublayer of a Transformer (attention, feed-forward) sits on a **residual "
        "stream**: its output is added back to its input. Layer Norm goes either *after* that "
        "addition (post-norm, the original 2017 Transformer) or *before* the sublayer "
        "(pre-norm, GPT-2 and most models since). Where it goes decides how big the stream can "
        "get."
    )
lesson = ui.last_good(
    "tf_lesson",
    lambda: _lesson(ss.tf_norm, ss.tf_depth, ss.tf_layers),
    fallback=_lesson(tf.POST_NORM, tf.DEFAULT_DEPTH, tf.DEFAULT_LAYERS),
)

# ---------------------------------------------------------------- Add & Norm on a small block
if _showing(0):
    st.header(tf.SECTIONS[0])
    st.radio(
        "Where the Layer Norm sits",
        tf.NORM_POSITIONS,
        format_func=NORM_LABELS.__getitem__,
        horizontal=True,
        key="tf_norm",
    )
    example = lesson.example
    diagram, explain = st.columns(2)
    with diagram:
        ui.chart(
            block_diagram(lesson.norm_position),
            "tf-diagram",
            "Blue boxes are sublayers, orange boxes hold a Layer Norm, green boxes add; the "
            "purple lines are the residual connections that carry the stream around each "
            "sublayer. The dashed frame repeats once per layer.",
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
                "**Pre-norm.** Only the sublayer's input is normalized (the second table "
                "below); its output is added to the raw stream. The stream that leaves the step "
                "(the last table) keeps its own scale, and one final Layer Norm after the last "
                "layer normalizes it once, before the output head."
            )
        st.markdown(
            f"The tables run one step on the {len(example.tokens)} tokens of a worked example "
            f"({len(example.features)} features each) with a toy sublayer "
            "$f(x) = \\mathrm{ReLU}(xW)$ whose weights $W$ are fixed. Each table ends with "
            "every token's mean and (biased) standard deviation."
        )
        if not presenting:
            with st.expander("The sublayer's weights W"):
                st.dataframe(
                    pd.DataFrame(
                        example.weights, index=list(example.features), columns=example.features
                    )
                )
    for pair in (example.stages[:2], example.stages[2:]):
        for column, stage in zip(st.columns(2), pair, strict=True):
            with column:
                st.markdown(f"**{stage.title}**")
                st.latex(stage.latex)
                table = _stage_table(example, stage)
                st.dataframe(table, width="stretch", column_config=_number_format(table, "%.3f"))

# ---------------------------------------------------------------- the depth experiment
if _showing(1):
    st.header(tf.SECTIONS[1])
    st.slider(
        "Depth (layers in the stack)",
        min_value=tf.MIN_DEPTH,
        max_value=tf.MAX_DEPTH,
        key="tf_depth",
    )
    depth_caption = tf.depth_caption(lesson.depth)
    if presenting:  # the chart is the slide; its numbers are in the table off-slide
        ui.chart(depth_chart(lesson.depth), "tf-depth", depth_caption)
    else:
        chart, numbers = st.columns([3, 2])
        with chart:
            ui.chart(depth_chart(lesson.depth), "tf-depth", depth_caption)
        rows = tf.depth_rows(lesson.depth)
        with numbers:
            st.dataframe(
                pd.DataFrame(rows).set_index("layer"),
                width="stretch",
                height=460,
                column_config=_number_format(tf.VARIANTS, "%.4g")
                | {
                    tf.SUBLAYER_INPUT: st.column_config.NumberColumn(
                        "LN(x) fed to f",
                        format="%.6f",
                        help="Pre-norm: RMS of LN(x), what layer ℓ's sublayer sees (none "
                        "before layer 1)",
                    )
                },
            )
            csv_col, json_col = st.columns(2)
            name = f"lnlab-depth-{lesson.depth.depth}"
            csv_col.download_button(
                "CSV",
                to_csv(rows),
                f"{name}.csv",
                "text/csv",
                key="tf_dl_csv",
                icon=":material/download:",
                help="The table: the stream's RMS after each layer, three ways",
            )
            json_col.download_button(
                "JSON",
                tf.depth_json(lesson.depth),
                f"{name}.json",
                "application/json",
                key="tf_dl_json",
                icon=":material/download:",
                help="The table and the experiment's settings",
            )

# ---------------------------------------------------------------- counting Layer Norms
if _showing(2):
    st.header(tf.SECTIONS[2])
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
        "Each token passes every Layer Norm once per forward pass: one per sublayer (attention "
        "and feed-forward) in every layer, and in pre-norm models one more before the output "
        f"head. The original encoder-decoder Transformer ({tf.ORIGINAL_ENCODER_LAYERS} + "
        f"{tf.ORIGINAL_DECODER_LAYERS} layers, post-norm) has {count.encoder_decoder}: 2 per "
        "encoder layer and 3 per decoder layer, whose cross-attention gets its own Add & Norm."
    )

ui.share_link("transformer", LINK)
