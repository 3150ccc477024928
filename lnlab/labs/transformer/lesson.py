"""The "In the Transformer" lesson as slides: Add & Norm on a small block, the depth
experiment, and counting Layer Norms, each one section, built from a TransformerLesson."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pandas as pd

from lnlab.core.numbers import fmt, fmt_apart
from lnlab.labs.transformer import model as tf
from lnlab.labs.transformer.plots import block_diagram, depth_chart
from lnlab.teach.claims import claim
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
AT_ONE = 1e-3  # an RMS this close to 1 "is 1" in the sentences, with its distance as a bound
SQRT_LAW = 0.1  # pre-norm grows "like a square root" while within 10% of the law at every layer
EXPLODED = 100.0  # no norm "explodes" once its RMS has grown this many times
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
        summary=about(norm_position, " → ".join(s.label for s in steps) + "; " + "; ".join(adds))
        + ".",
        data=data,
    )


def about(norm_position: str, text: str) -> str:
    """Words true of one norm position, said as a claim that it is the one on screen."""
    return claim(f"transformer.about_{norm_position}", True, text, position=norm_position)


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
    position = lesson.norm_position
    what = (
        "The sublayer's output is added back and the **sum is normalized**: "
        + _leaves_normalized(example.stages[-1])
        if position == tf.POST_NORM
        else "Only the **sublayer's input is normalized**; its output is added to the raw "
        "stream, which keeps its own scale. One final Layer Norm after the last layer "
        "normalizes it once, before the output head."
    )
    weights = pd.DataFrame(example.weights, columns=list(example.features))
    weights.insert(0, "W", list(example.features))
    stages = tuple(
        Table(stage_frame(example, s), about(position, f"{s.title}: {s.formula}"), on_slide=False)
        for s in example.stages
    )
    return Section(
        key=ADD_NORM,
        title=tf.SECTIONS[0],
        explanation=about(position, what),
        worked=tf.step_latex(position),  # after the question, as on every slide
        numbers=(
            Table(
                summary_frame(example),
                f"{len(example.tokens)} tokens through one step of the toy sublayer "
                "f(x) = ReLU(xW).",
            ),
            *stages,
            Table(weights, "The sublayer's fixed weights W.", on_slide=False),
        ),
        figure=diagram(position),
        question=norm_question(example),
        detail="The tables run one step on the tokens of a worked example, each ending with "
        "every token's mean and (biased) standard deviation.",
    )


def _leaves_normalized(leaving: tf.Stage) -> str:
    """What post-norm's Layer Norm leaves: mean 0 and std 1 (within AT_ONE, and the bound
    said) where every token's variance is large next to ε; else a std under 1 by more."""
    off = float(np.max(np.abs(leaving.std - 1)))
    return claim(
        "transformer.leaves_unit",
        bool(np.all(np.abs(leaving.mean) <= 1e-9) and off <= AT_ONE),
        f"every token leaves with mean 0 and std 1 (within {_upper_bound(off)}), whatever "
        "the sublayer added.",
        f"every token leaves with mean 0 and a std under 1 (as low as {fmt(leaving.std.min())})"
        ", whatever the sublayer added.",
        bound=_upper_bound(off),
    )


def norm_question(example: tf.AddNormExample) -> Question:
    """Before the tables: the first token's f1 out of the step's Layer Norm (post-norm: of
    x + f(x); pre-norm: of x), from the numbers it enters with. gamma = 1, beta = 0."""
    post = example.norm_position == tf.POST_NORM
    entering, leaving = (example.stages[2], example.stages[3]) if post else example.stages[:2]
    x, token = entering.value[0], example.tokens[0]
    answer = float(leaving.value[0, 0])
    mean, std = float(x.mean()), float(np.sqrt(x.var() + tf.EPS))
    enters = about(example.norm_position, f"enters the Layer Norm as {'x + f(x)' if post else 'x'}")
    vector = "(" + ", ".join(fmt_apart(x)) + ")"
    return feature_question(
        "tfln-" + hashlib.sha256(repr((post, x.tobytes())).encode()).hexdigest()[:12],
        f"Token “{token}” {enters} = {vector}. What is its f1 after "
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
            f"ways. {_no_norm_every_layer(result)}; post-norm {_post_norm_at_one(result)}; "
            f"pre-norm {_pre_norm_growth(result)}. Below: its RMS after layer {last}."
        ),
        formulas=(r"\text{pre-norm: RMS}_\ell \approx \sqrt{\text{RMS}_0^2 + \ell\, g^2}",),
        numbers=(
            Table(last_layer_frame(result), "The stream's RMS after the last layer."),
            Table(
                pd.DataFrame(tf.depth_rows(result)).drop(columns=tf.NORMED),
                "The stream's RMS after each layer. The download adds pre-norm's stream after a "
                f"Layer Norm ({tf.NORMED}): what the next layer's sublayer gets, and after the "
                "last layer the final Layer Norm's output.",
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
        detail=depth_detail(result),
    )


def last_layer_frame(result: tf.DepthExperiment) -> pd.DataFrame:
    """The slide's numbers: each stack's RMS after the last layer, one row each (a table, not
    three metrics side by side: a large RMS such as 4750.9873 fits a row, not a third of a
    column)."""
    last = result.depth
    return pd.DataFrame(
        {
            "stack": [*tf.VARIANTS, "pre-norm, final LN"],
            f"RMS after layer {last}": [
                *(float(result.rms[v][last]) for v in tf.VARIANTS),
                result.pre_norm_final_rms,
            ],
        }
    )


def depth_detail(result: tf.DepthExperiment) -> str:
    """What the depth chart shows, with its numbers, every statement a claim."""
    last = result.depth
    none, pre = result.rms[tf.NO_NORM], result.rms[tf.PRE_NORM]
    exploded = bool(none[last] > EXPLODED * none[0])
    growth = claim(
        "transformer.no_norm_explodes",
        exploded,
        "**No normalization** explodes",
        claim(
            "transformer.no_norm_grows",
            bool(none[last] > none[0]),
            "**No normalization** grows",
            "**No normalization** ends no larger than it began",
        ),
    )
    law = result.pre_norm_sqrt_law[last]
    return (
        f"The same {result.tokens} random tokens (width {result.width}) go through the same "
        f"{last} random linear layers, three ways. {growth}: each layer adds f(x) to x, and "
        f"the RMS multiplies by {result.no_norm_growth_per_layer:.3g} per layer on average "
        f"(geometric mean), from {none[0]:.3g} to {none[last]:.3g}. "
        f"**Post-norm** {_post_norm_at_one(result)}, because the Layer Norm is the last "
        "operation of every layer. "
        f"**Pre-norm** {_pre_norm_growth(result)}: {pre[last]:.3g} after "
        f"{last} layers, against √({pre[0]:.3g}² + {last}·{result.gain:g}²) = {law:.3g}; "
        f"{_fed_at_one(result)}, and {_final_at_one(result)}."
    )


def _no_norm_every_layer(result: tf.DepthExperiment) -> str:
    every = bool(np.all(np.diff(result.rms[tf.NO_NORM]) > 0))
    return claim(
        "transformer.no_norm_grows_every_layer",
        every,
        "Without a norm the stream grows at every layer",
        "Without a norm nothing holds the stream's size: here it does not grow at every layer",
    )


def _post_norm_at_one(result: tf.DepthExperiment) -> str:
    """Post-norm's RMS after every layer: 1 within a bound, or how low it falls."""
    post = result.rms[tf.POST_NORM][1:]
    off = float(np.max(np.abs(post - 1)))
    return claim(
        "transformer.post_norm_at_1",
        off <= AT_ONE,
        f"resets the stream to an RMS of 1 after every layer (within {_upper_bound(off)})",
        "holds every token at mean 0 and std under 1: the RMS falls to "
        f"{fmt(post.min())} where a token's variance is not large next to ε",
        bound=_upper_bound(off),
    )


def _pre_norm_growth(result: tf.DepthExperiment) -> str:
    """Whether pre-norm's stream grows, and whether like √(RMS₀² + ℓ g²) (within SQRT_LAW at
    every layer)."""
    pre = result.rms[tf.PRE_NORM]
    grows = claim(
        "transformer.pre_norm_grows",
        bool(pre[-1] > pre[0]),
        "lets the stream grow",
        "leaves the stream no larger than it began",
    )
    off = float(np.max(np.abs(pre / result.pre_norm_sqrt_law - 1)))
    like = claim(
        "transformer.pre_norm_sqrt",
        off <= SQRT_LAW,
        "but only like the square root of depth",
        f"not like the square root of depth (up to {100 * off:.0f}% off the law)",
    )
    return f"{grows}, {like}"


def _fed_at_one(result: tf.DepthExperiment) -> str:
    fed = result.pre_norm_sublayer_input_rms
    off = float(np.max(np.abs(fed - 1)))
    return claim(
        "transformer.fed_at_1",
        off <= AT_ONE,
        f"yet every sublayer sees a normalized input (RMS within {_upper_bound(off)} of 1)",
        f"yet every sublayer sees LN(x), each token at mean 0 and std under 1 (RMS as low as "
        f"{fmt(fed.min())})",
        bound=_upper_bound(off),
    )


def _final_at_one(result: tf.DepthExperiment) -> str:
    final = result.pre_norm_final_rms
    off = abs(final - 1)
    return claim(
        "transformer.final_at_1",
        off <= AT_ONE,
        f"the final Layer Norm brings the output back to an RMS of 1 (within {_upper_bound(off)})",
        f"the final Layer Norm brings the output to an RMS of {fmt(final)}",
        bound=_upper_bound(off),
    )


def _upper_bound(deviation: float) -> str:
    """The power of ten just above `deviation` (3.3e-06 -> 1e-05), so the claim stays true."""
    return f"{10.0 ** math.ceil(math.log10(max(deviation, 1e-15))):.0e}"


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
