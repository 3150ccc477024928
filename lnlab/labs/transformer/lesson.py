"""The "In the Transformer" lesson as slides: Add & Norm on a small block, the depth
experiment, and counting Layer Norms, each one section, built from a TransformerLesson."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from lnlab.core.numbers import fmt
from lnlab.labs.transformer import model as tf
from lnlab.labs.transformer.plots import block_diagram, depth_chart
from lnlab.teach.lesson import Figure, Lesson, Metric, Section, Table
from lnlab.teach.quiz import Question, feature_question

TITLE = "Layer Norm in the Transformer"
INTRO = (
    "Every sublayer of a Transformer (attention, feed-forward) sits on a **residual stream**: "
    "its output is added back to its input. Layer Norm goes either *after* that addition "
    "(post-norm, the original 2017 Transformer) or *before* the sublayer (pre-norm, GPT-2 and "
    "most models since). Where it goes decides how big the stream can get."
)
ADD_NORM, DEPTH, COUNT = "add_norm", "depth", "count"  # the section keys, in order
NORM_LABELS = {
    tf.POST_NORM: "Post-norm (original Transformer)",
    tf.PRE_NORM: "Pre-norm (GPT-2 style)",
}
DIAGRAM_CAPTION = (
    "Blue boxes are sublayers, orange boxes hold a Layer Norm, green boxes add; the purple "
    "lines are the residual connections around each sublayer. The dashed frame repeats once "
    "per layer."
)
DEPTH_CAPTION = (
    "RMS of the stream after each layer (log scale): no norm vermillion and dotted, post-norm "
    "blue and solid, pre-norm green and dashed; the star is pre-norm after its final Layer Norm."
)


KIND_NAMES = {
    "io": "the stream in or out",
    "sublayer": "sublayer",
    "norm": "Layer Norm",
    "add": "residual add",
    "add-norm": "residual add, then Layer Norm",
}


def diagram(norm_position: str, name: str = "tf-diagram") -> Figure:
    """The block's diagram, with its boxes in words for a reader who cannot see it: the flow
    from input to output as its summary, each box (what it is, what it adds) as its table."""
    steps = tf.block_steps(norm_position)
    adds = [
        f"{s.label} ({k + 1}) adds the stream that entered {steps[s.skip_from].label} "
        f"({s.skip_from + 1})"
        for k, s in enumerate(steps)
        if s.skip_from is not None
    ]
    data = pd.DataFrame(
        {
            "box": [f"{k + 1}. {s.label}" for k, s in enumerate(steps)],
            "what it is": [KIND_NAMES[s.kind] for s in steps],
            "adds the stream entering": [
                "" if s.skip_from is None else f"{s.skip_from + 1}. {steps[s.skip_from].label}"
                for s in steps
            ],
            "once per layer": ["yes" if s.repeated else "no" for s in steps],
        }
    )
    return Figure(
        block_diagram(norm_position),
        name,
        DIAGRAM_CAPTION,
        label=f"{NORM_LABELS[norm_position]}: one block",
        summary=" → ".join(s.label for s in steps) + "; " + "; ".join(adds) + ".",
        data=data,
    )


def slides(lesson: tf.TransformerLesson) -> Lesson:
    """The page's lesson: one step of Add & Norm, the depth experiment, the count."""
    return Lesson(
        key="transformer",
        title=TITLE,
        intro=INTRO,
        sections=(_add_norm(lesson), _depth(lesson.depth), _count(lesson.count)),
    )


def stage_frame(example: tf.AddNormExample, stage: tf.Stage) -> pd.DataFrame:
    """One stage of the worked example: a row per token, its features, its mean and std."""
    frame = pd.DataFrame(stage.value, columns=list(example.features))
    frame.insert(0, "token", list(example.tokens))
    return frame.assign(mean=stage.mean, std=stage.std)


def summary_frame(example: tf.AddNormExample) -> pd.DataFrame:
    """Each token's mean and std entering the step and leaving it: the slide's one table."""
    first, last = example.stages[0], example.stages[-1]
    return pd.DataFrame(
        {
            "token": list(example.tokens),
            "mean of x": first.mean,
            "std of x": first.std,
            "mean leaving": last.mean,
            "std leaving": last.std,
        }
    )


def _add_norm(lesson: tf.TransformerLesson) -> Section:
    example = lesson.example
    post = lesson.norm_position == tf.POST_NORM
    what = (
        "The sublayer's output is added back and the **sum is normalized**: every token "
        "leaves with mean 0 and std just under 1, whatever the sublayer added."
        if post
        else "Only the **sublayer's input is normalized**; its output is added to the raw "
        "stream, which keeps its own scale. One final Layer Norm after the last layer "
        "normalizes it once, before the output head."
    )
    weights = pd.DataFrame(example.weights, columns=list(example.features))
    weights.insert(0, "W", list(example.features))
    stages = tuple(
        Table(stage_frame(example, s), f"{s.title}: ${s.latex}$", on_slide=False)
        for s in example.stages
    )
    return Section(
        key=ADD_NORM,
        title=tf.SECTIONS[0],
        explanation=what,
        worked=tf.step_latex(lesson.norm_position),  # after the question, as on every slide
        numbers=(
            Table(
                summary_frame(example),
                f"{len(example.tokens)} tokens through one step of the toy sublayer "
                r"$f(x) = \mathrm{ReLU}(xW)$.",
            ),
            *stages,
            Table(weights, "The sublayer's fixed weights W.", on_slide=False),
        ),
        figure=diagram(lesson.norm_position),
        question=norm_question(example),
        detail="The tables run one step on the tokens of a worked example, each ending with "
        "every token's mean and (biased) standard deviation.",
    )


def norm_question(example: tf.AddNormExample) -> Question:
    """Before the tables: the first token's f1 out of the step's Layer Norm (post-norm: of
    x + f(x); pre-norm: of x), from the numbers it enters with. gamma = 1, beta = 0."""
    post = example.norm_position == tf.POST_NORM
    entering, leaving = (example.stages[2], example.stages[3]) if post else example.stages[:2]
    x, token = entering.value[0], example.tokens[0]
    answer = float(leaving.value[0, 0])
    mean, std = float(x.mean()), float(np.sqrt(x.var() + tf.EPS))
    what = "x + f(x)" if post else "x"
    vector = "(" + ", ".join(fmt(v) for v in x) + ")"
    return feature_question(
        "tfln-" + hashlib.sha256(repr((post, x.tobytes())).encode()).hexdigest()[:12],
        f"Token “{token}” enters the Layer Norm as {what} = {vector}. What is its f1 after "
        f"it (ε = {fmt(tf.EPS)}, γ = 1, β = 0)?",
        answer,
        f"(x1 − μ) / √(σ² + ε) = ({fmt(x[0])} − {fmt(mean)}) / {fmt(std)} = {fmt(answer)}.",
        entering.value,
        0,
        tf.EPS,
        gamma=1.0,
    )


def _depth(result: tf.DepthExperiment) -> Section:
    last = result.depth
    return Section(
        key=DEPTH,
        title=tf.SECTIONS[1],
        explanation=(
            f"The same random tokens go through the same {last} random linear layers three "
            "ways. Without a norm the stream multiplies at every layer; post-norm resets it "
            "to 1; pre-norm lets it grow like the square root of depth. Below: its RMS after "
            f"layer {last}."
        ),
        formulas=(r"\text{pre-norm: RMS}_\ell \approx \sqrt{\text{RMS}_0^2 + \ell\, g^2}",),
        numbers=(
            *(
                Metric(v, float(result.rms[v][last]), f"RMS of the stream after layer {last}")
                for v in tf.VARIANTS
            ),
            Table(
                pd.DataFrame(tf.depth_rows(result)),
                "The stream's RMS after each layer, and the RMS of LN(x) that pre-norm feeds "
                "layer ℓ's sublayer (none before layer 1).",
                on_slide=False,
            ),
        ),
        figure=Figure(
            depth_chart(result),
            "tf-depth",
            DEPTH_CAPTION,
            label="The residual stream's RMS, layer by layer",
            summary=f"After layer {last} the stream's RMS is "
            f"{fmt(result.rms[tf.NO_NORM][last])} with no norm, "
            f"{fmt(result.rms[tf.POST_NORM][last])} post-norm and "
            f"{fmt(result.rms[tf.PRE_NORM][last])} pre-norm "
            f"({fmt(result.pre_norm_final_rms)} after pre-norm's final Layer Norm).",
        ),
        detail=tf.depth_caption(result),
    )


def _count(count: tf.LayerNormCount) -> Section:
    return Section(
        key=COUNT,
        title=tf.SECTIONS[2],
        explanation=(
            "Each token passes every Layer Norm once per forward pass: one per sublayer "
            "(attention and feed-forward) in every layer, and in pre-norm models one more "
            "before the output head."
        ),
        formulas=(
            rf"\text{{post-norm: }} 2 \times {count.layers} = {count.post_norm}",
            rf"\text{{pre-norm: }} 2 \times {count.layers} + 1 = {count.pre_norm}",
        ),
        numbers=(
            Metric("Post-norm: 2 per layer", count.post_norm),
            Metric("Pre-norm: 2 per layer + the final one", count.pre_norm),
        ),
        detail=(
            f"The original encoder-decoder Transformer ({tf.ORIGINAL_ENCODER_LAYERS} + "
            f"{tf.ORIGINAL_DECODER_LAYERS} layers, post-norm) has {count.encoder_decoder}: 2 "
            "per encoder layer and 3 per decoder layer, whose cross-attention gets its own "
            "Add & Norm."
        ),
    )
