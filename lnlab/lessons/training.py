"""The training lab as slides: the run's settings, then each effect it shows, stated from
this run's own numbers (lnlab.training.run), never from the papers'."""

from __future__ import annotations

import pandas as pd

from lnlab.lessons.model import Callout, Figure, Lesson, Metric, Section, Table
from lnlab.plots.training import lines
from lnlab.training import data
from lnlab.training.config import TrainConfig
from lnlab.training.model import D_MODEL, HEADS, VARIANTS
from lnlab.training.run import LabResult, final_loss, fluctuation, growth

TITLE = "Training lab"
INTRO = (
    "A tiny Transformer encoder learns to sort the tokens of padded sentences, once per "
    "normalization, on the same data from the same seed. Watch the loss, the gradients at "
    "initialisation, and Batch Norm's statistics: why Transformers chose Layer Norm."
)
SETUP, LOSS, GRADS, DEPTH, WARMUP, BATCH, GAP = (
    "setup",
    "loss",
    "grads",
    "depth",
    "warmup",
    "batch",
    "gap",
)
NOT_YET = "Press **Train** on the first slide to run this configuration."


def label(variant: str) -> str:
    return VARIANTS[variant][0]


def slides(config: TrainConfig, result: LabResult | None) -> Lesson:
    """The lesson for `config`, with its numbers once `result` (the run of `config`) exists."""
    sections = (_setup(config, result),)
    if result is None:
        sections += tuple(
            Section(key=key, title=title, callouts=(Callout("info", NOT_YET),))
            for key, title in (
                (LOSS, "Loss curves"),
                (GRADS, "Gradients at initialisation"),
                (DEPTH, "Gradients against depth"),
                (WARMUP, "What warm-up changes for post-LN"),
                (BATCH, "Batch Norm's statistics over training"),
                (GAP, "Training mode against evaluation mode"),
            )
        )
    else:
        sections += (
            _loss(result),
            _grads(result),
            _depth(result),
            _warmup(result),
            _batch(result),
            _gap(result),
        )
    return Lesson(key="training", title=TITLE, intro=INTRO, sections=sections)


def _setup(config: TrainConfig, result: LabResult | None) -> Section:
    low, high = data.length_range(config.padding)
    blocks = f"{config.layers} block" + "s" * (config.layers != 1)
    numbers: tuple = ()
    if result is not None:
        numbers = (
            Metric("seconds of training", result.seconds, "In the worker process, one thread."),
            Metric("steps in all", config.trained_runs * config.steps),
        )
    return Section(
        key=SETUP,
        title="The task and the run",
        explanation=(
            f"Sentences of {low} to {high} tokens (from {data.VOCAB - 1} kinds) padded to "
            f"{data.SEQ} positions; each token's target is its rank in its sentence. The "
            f"encoder has d = {D_MODEL}, {HEADS} heads and {blocks}; attention and the loss "
            "ignore padding, so only Batch Norm, which pools over the batch, sees "
            "it. Adam, gradients clipped at norm 1."
        ),
        numbers=numbers,
    )


def _loss(result: LabResult) -> Section:
    ranked = sorted(result.runs, key=final_loss)
    best, worst = ranked[0], ranked[-1]
    steps = range(1, result.config.steps + 1)
    said = (
        f"Lowest training loss at the end (mean of the last 10 steps): **{label(best.variant)}**, "
        f"{final_loss(best):.3f}; highest: **{label(worst.variant)}**, {final_loss(worst):.3f}."
        if len(ranked) > 1
        else f"{label(best.variant)} ends at {final_loss(best):.3f}."
    )
    frame = pd.DataFrame(
        {
            "variant": [label(r.variant) for r in result.runs],
            "final training loss": [final_loss(r) for r in result.runs],
            "held-out loss": [r.eval_loss for r in result.runs],
            "seconds": [r.seconds for r in result.runs],
        }
    )
    return Section(
        key=LOSS,
        title="Loss curves on the same data",
        explanation=said,
        numbers=(Table(frame, "Held-out: 256 new sentences, evaluation mode.", on_slide=False),),
        figure=Figure(
            lambda: lines(
                {label(r.variant): (steps, r.losses) for r in result.runs},
                "Training loss",
                "step",
                "cross-entropy",
            ),
            "training-loss",
            f"Every variant: seed {result.config.seed}, the same batches, learning rate "
            f"{result.config.lr:g}, warm-up {'on' if result.config.warmup else 'off'}.",
        ),
    )


def _grads(result: LabResult) -> Section:
    runs = result.runs
    post, pre = result.run("post"), result.run("pre")
    said = "Choose post-LN and pre-LN to compare them."
    if post is not None and pre is not None:
        ratio = post.grad_norms[-1] / pre.grad_norms[-1]
        said = (
            f"Last block: post-LN's gradient norm is **{ratio:.1f}x** "
            f"pre-LN's. Last over first block: post-LN {growth(post):.2f}x, pre-LN "
            f"{growth(pre):.2f}x."
        )
    layers = range(1, result.config.layers + 1)
    return Section(
        key=GRADS,
        title="Gradients at initialisation, block by block",
        explanation=(
            "Before any step, the gradient of the loss for each block's weights. Xiong et al. "
            "(2020) showed post-LN's are large near the output, so Adam's first steps need a "
            "small learning rate. " + said
        ),
        figure=Figure(
            lambda: lines(
                {label(r.variant): (layers, r.grad_norms) for r in runs},
                "Gradient norm per block at initialisation",
                "block (1 = next to the input)",
                "‖∇ block weights‖",
                markers=True,
            ),
            "training-grads",
            "One batch, the initial weights of the run's seed.",
        ),
    )


def _depth(result: LabResult) -> Section:
    depths = range(1, len(result.depth_grads["post"]) + 1)
    ratios = [p[-1] / q[-1] for p, q in zip(*result.depth_grads.values(), strict=True)]
    pre_last = [g[-1] for g in result.depth_grads["pre"]]
    return Section(
        key=DEPTH,
        title="Post-LN against pre-LN as the model deepens",
        explanation=(
            f"The last block's gradient, post-LN over pre-LN: **{ratios[0]:.1f}x** with one "
            f"block, **{ratios[-1]:.1f}x** with {depths[-1]}. Pre-LN's shrinks from "
            f"{pre_last[0]:.2f} to {pre_last[-1]:.2f}: its residual stream grows with depth "
            "and the final norm divides by it."
        ),
        figure=Figure(
            lambda: lines(
                {"post-LN / pre-LN, last block": (depths, ratios)},
                "Last block's gradient norm, post-LN over pre-LN",
                "blocks in the model",
                "ratio",
                markers=True,
            ),
            "training-depth",
            "At initialisation, seed of the run, one batch.",
        ),
    )


def _warmup(result: LabResult) -> Section:
    on, off = result.warmup_on, result.warmup_off
    steps = range(1, result.config.steps + 1)
    advice = (
        "The large first gradients of the initial weights, taken at full rate, set post-LN off "
        "course; ramping the rate up lets it train."
        if final_loss(on) < final_loss(off)
        else "Here warm-up does not help: try a larger learning rate and more blocks."
    )
    return Section(
        key=WARMUP,
        title="What warm-up changes for post-LN",
        explanation=(
            f"Warm-up raises the learning rate from 0 to {result.config.lr:g} over the first "
            f"fifth of the steps. Post-LN here ends at {final_loss(on):.3f} with warm-up and "
            f"{final_loss(off):.3f} without. " + advice
        ),
        figure=Figure(
            lambda: lines(
                {
                    "post-LN, warm-up": (steps, on.losses),
                    "post-LN, no warm-up": (steps, off.losses),
                },
                "Post-LN's training loss",
                "step",
                "cross-entropy",
            ),
            "training-warmup",
            "The same seed and batches; only the learning-rate schedule differs.",
        ),
    )


def _batch(result: LabResult) -> Section:
    runs = [r for r in result.runs if r.bn_var]
    if not runs:
        return Section(
            key=BATCH,
            title="Batch Norm's statistics over training",
            callouts=(Callout("info", "Choose naive and masked Batch Norm to see them."),),
        )
    steps = range(1, result.config.steps + 1)
    said = " ".join(
        f"{label(r.variant)}: the batch variance varies by {100 * fluctuation(r.bn_var):.1f}% "
        "from step to step (std over mean)."
        for r in runs
    )
    return Section(
        key=BATCH,
        title="Batch Norm's statistics over training",
        explanation=(
            "The first Batch Norm's batch variance, averaged over features, at every step. "
            "Naive Batch Norm counts the padding zeros, so each batch's share of padding moves "
            "its statistics (Shen et al. 2020 measured such fluctuation in NLP). " + said
        ),
        figure=Figure(
            lambda: lines(
                {label(r.variant): (steps, r.bn_var) for r in runs},
                "Batch variance of the first norm",
                "step",
                "mean over features of σ²_B",
            ),
            "training-batch-stats",
            f"Padding share {result.config.padding:.0%} on average.",
        ),
    )


def _gap(result: LabResult) -> Section:
    frame = pd.DataFrame(
        {
            "variant": [label(r.variant) for r in result.runs],
            "evaluation mode": [r.eval_loss for r in result.runs],
            "training mode": [r.eval_loss_train_mode for r in result.runs],
            "gap": [r.eval_loss - r.eval_loss_train_mode for r in result.runs],
        }
    )
    biggest = max(result.runs, key=lambda r: abs(r.eval_loss - r.eval_loss_train_mode))
    gap = biggest.eval_loss - biggest.eval_loss_train_mode
    return Section(
        key=GAP,
        title="Training mode against evaluation mode",
        explanation=(
            "The held-out loss twice: with the running statistics (evaluation) and with the "
            "batch's own (training mode). Only Batch Norm has running statistics, so only "
            f"its rows differ. Largest gap: **{label(biggest.variant)}**, {gap:+.4f}. Running "
            "statistics average the last ten or so batches (momentum 0.1): they trail the batch's "
            "own when the weights move fast, and under naive Batch Norm they count padding."
        ),
        numbers=(Table(frame, "Held-out: 256 sentences with the run's padding."),),
    )
