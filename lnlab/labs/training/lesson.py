"""The training lab as slides: the run's settings, then each effect it shows, stated from
this run's own numbers (lnlab.labs.training.run), never from the papers': every direction
("grows", "varies more", "helps") is the one the run's numbers have, and a paper's finding is
said to be the paper's, with whether this run agrees.

Four slides ask first (Predict before you see), with nothing on the slide before the answer
that gives it: their answers and wrong options are read off the same run, each wrong option
the one a misconception (lnlab.teach.misconceptions) predicts, offered only where the run
shows that misconception wrong: pre-LN's gradient for post-LN's (the norm's place does not
matter), block 1's for the last block's (post-LN's gradients uniform across depth; offered
when post-LN's grow towards the output), the one-block ratio for the deep one (depth does not
change the gap), "the same" for naive and masked Batch Norm (Batch Norm ignores padding), no
gap between the modes (evaluation uses the batch's own statistics).
"""

from __future__ import annotations

import hashlib

import pandas as pd

from lnlab.core.numbers import fmt
from lnlab.labs.training import data
from lnlab.labs.training.config import TrainConfig
from lnlab.labs.training.model import D_MODEL, HEADS, VARIANTS
from lnlab.labs.training.plots import lines
from lnlab.labs.training.run import LabResult, final_loss, fluctuation
from lnlab.labs.training.train import WARMUP_SHARE
from lnlab.teach.lesson import Callout, Figure, Lesson, Metric, Section, Table
from lnlab.teach.quiz import Question, Wrong

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
SAME = "Both about the same"
NO_GAP = "None: every variant gives the same loss in both modes"
CLEAR = 1.2  # a number "grows", "varies more", "helps" only when over CLEAR times the other


def label(variant: str) -> str:
    return VARIANTS[variant][0]


def clearly(a: float, b: float) -> int:
    """1 when a is over CLEAR times b, -1 when b is over CLEAR times a, else 0 (both > 0)."""
    return 1 if a > CLEAR * b else -1 if b > CLEAR * a else 0


def change(start: float, end: float) -> str:
    """How `start` became `end`, in words the numbers bear out: "grows", "shrinks", or
    "stays within 20 %" (within CLEAR of each other)."""
    return {1: "grows", -1: "shrinks", 0: "stays within 20 %"}[clearly(end, start)]


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
            label="Training loss, step by step",
            summary="Final training loss (mean of the last 10 steps): "
            + ", ".join(f"{label(r.variant)} {final_loss(r):.3f}" for r in result.runs)
            + ".",
        ),
    )


def _grads(result: LabResult) -> Section:
    runs = result.runs
    layers = range(1, result.config.layers + 1)
    return Section(
        key=GRADS,
        title="Gradients at initialisation, block by block",
        explanation=(
            "Before any step, the gradient of the loss for each block's weights, on one batch: "
            "how hard the first step will push each block (block 1 is next to the input)."
        ),
        finding=grads_finding(result),
        question=grads_question(result),
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
            label="Gradient norm per block at initialisation",
            summary="; ".join(
                f"{label(r.variant)}: {r.grad_norms[0]:.3g} at block 1, "
                f"{r.grad_norms[-1]:.3g} at block {len(r.grad_norms)}"
                for r in runs
            )
            + ".",
        ),
    )


def grads_finding(result: LabResult) -> str:
    """The gradients at initialisation in words, each direction read off this run."""
    post, pre = result.run("post"), result.run("pre")
    if post is None or pre is None:
        return "Choose post-LN and pre-LN to compare them."
    n = result.config.layers
    ratio = post.grad_norms[-1] / pre.grad_norms[-1]
    said = f"Last block: post-LN's gradient norm is **{ratio:.2f}x** pre-LN's."
    if n > 1:
        (a, b), (c, d) = ((r.grad_norms[0], r.grad_norms[-1]) for r in (post, pre))
        said += (
            f" From block 1 to block {n}, post-LN's {change(a, b)} ({a:.2f} to {b:.2f}) and "
            f"pre-LN's {change(c, d)} ({c:.2f} to {d:.2f})."
        )
    larger = clearly(post.grad_norms[-1], pre.grad_norms[-1]) == 1
    grows = n > 1 and clearly(post.grad_norms[-1], post.grad_norms[0]) == 1
    agree = (
        "This run agrees on both."
        if larger and grows
        else "This run agrees on the first, not on the second."
        if larger
        else "This run does not show the first."
    )
    return (
        f"{said} Xiong et al. (2020) found post-LN's gradients next to the output larger "
        "than pre-LN's, and largest in the blocks next to the output, which is why post-LN "
        f"needs a small learning rate at first (warm-up). {agree}"
    )


def _depth(result: LabResult) -> Section:
    depths = range(1, len(result.depth_grads["post"]) + 1)
    ratios = [p[-1] / q[-1] for p, q in zip(*result.depth_grads.values(), strict=True)]
    return Section(
        key=DEPTH,
        title="Post-LN against pre-LN as the model deepens",
        explanation=(
            f"The same batch and seed, with 1 to {depths[-1]} blocks: the last block's gradient "
            "norm at initialisation, post-LN over pre-LN."
        ),
        finding=depth_finding(result),
        question=depth_question(result),
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
            label="Post-LN over pre-LN as the model deepens",
            summary=f"The last block's gradient norm, post-LN over pre-LN: {ratios[0]:.1f}x "
            f"with one block, {ratios[-1]:.1f}x with {depths[-1]}.",
        ),
    )


def depth_finding(result: LabResult) -> str:
    """Post-LN over pre-LN from one block to the deepest, and pre-LN's own last block, each
    direction read off this run."""
    post, pre = result.depth_grads["post"], result.depth_grads["pre"]
    one, deep, n = post[0][-1] / pre[0][-1], post[-1][-1] / pre[-1][-1], len(post)
    first, last = pre[0][-1], pre[-1][-1]
    said = (
        f"The last block's gradient, post-LN over pre-LN: **{one:.2f}x** with one block, "
        f"**{deep:.2f}x** with {n}: the ratio {change(one, deep)}. Pre-LN's own "
        f"{change(first, last)} ({first:.2f} to {last:.2f})"
    )
    return (
        said
        + {
            -1: ", as Xiong et al. (2020) showed: pre-LN's residual stream grows with depth, and "
            "the final norm divides by it.",
            0: "; Xiong et al. (2020) showed it shrinking with depth.",
            1: ", unlike in Xiong et al. (2020), who showed it shrinking with depth.",
        }[clearly(last, first)]
    )


def _warmup(result: LabResult) -> Section:
    on, off = result.warmup_on, result.warmup_off
    steps = range(1, result.config.steps + 1)
    return Section(
        key=WARMUP,
        title="What warm-up changes for post-LN",
        explanation=(
            f"Warm-up raises the learning rate in equal steps up to {result.config.lr:g} over "
            f"the first {WARMUP_SHARE:.0%} of the steps, then holds it. " + warmup_finding(result)
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
            label="Post-LN's training loss with and without warm-up",
            summary=f"Post-LN ends at {final_loss(on):.3f} with warm-up and "
            f"{final_loss(off):.3f} without (mean of the last 10 steps).",
        ),
    )


def warmup_finding(result: LabResult) -> str:
    """Post-LN's final loss with warm-up and without, and what the difference says; the
    reason given only where this run's gradients bear it out."""
    on, off = final_loss(result.warmup_on), final_loss(result.warmup_off)
    said = f"Post-LN here ends at {on:.3f} with warm-up and {off:.3f} without. "
    verdict = clearly(off, on)
    if verdict == -1:
        return said + "Here warm-up hurts: the slower start costs more than it saves."
    if verdict == 0:
        return said + (
            "Here warm-up makes little difference (within 20 %): try a larger learning rate "
            "and more blocks."
        )
    n = result.config.layers
    post, pre = (result.depth_grads[v][n - 1][-1] for v in ("post", "pre"))
    why = (
        f" At initialisation post-LN's last block has {post / pre:.1f}x pre-LN's gradient; "
        "taken at the full rate from the first step, such gradients can set it off course "
        "(Xiong et al. 2020)."
        if clearly(post, pre) == 1
        else ""
    )
    return said + "Warm-up helps." + why


def _batch(result: LabResult) -> Section:
    runs = [r for r in result.runs if r.bn_var]
    if not runs:
        return Section(
            key=BATCH,
            title="Batch Norm's statistics over training",
            callouts=(Callout("info", "Choose naive and masked Batch Norm to see them."),),
        )
    steps = range(1, result.config.steps + 1)
    return Section(
        key=BATCH,
        title="Batch Norm's statistics over training",
        explanation=(
            "The first Batch Norm's batch variance, averaged over features, at every step of "
            "training."
        ),
        finding=batch_finding(result),
        question=batch_question(result),
        figure=Figure(
            lambda: lines(
                {label(r.variant): (steps, r.bn_var) for r in runs},
                "Batch variance of the first norm",
                "step",
                "mean over features of σ²_B",
            ),
            "training-batch-stats",
            f"Padding share {result.config.padding:.0%} on average.",
            label="Batch variance of the first norm, step by step",
            summary="From step to step the batch variance varies by "
            + ", ".join(f"{100 * fluctuation(r.bn_var):.1f}% for {label(r.variant)}" for r in runs)
            + " (std over mean).",
        ),
    )


def batch_finding(result: LabResult) -> str:
    """How much each Batch Norm's batch variance varies, and, with both, which varies more."""
    runs = [r for r in result.runs if r.bn_var]
    said = (
        "; ".join(f"{label(r.variant)}: {100 * fluctuation(r.bn_var):.1f}%" for r in runs)
        + " from step to step (std over mean, after the first quarter)."
    )
    how = (
        "Naive Batch Norm averages over every position, the padded ones included, and each "
        "batch has its own share of them; at the first norm they hold what attention computes "
        "there, not zeros (only a block's output is reset to zero). Masked Batch Norm "
        "averages over the real tokens only."
    )
    naive, masked = result.run("bn"), result.run("mbn")
    if naive is None or masked is None:
        return f"{said} {how}"
    f_naive, f_masked = fluctuation(naive.bn_var), fluctuation(masked.bn_var)
    verdict = {
        1: f"Naive's varies {f_naive / f_masked:.1f}x as much as masked's, the kind of "
        "fluctuation Shen et al. (2020) measured in NLP.",
        -1: f"Here masked's varies {f_masked / f_naive:.1f}x as much as naive's.",
        0: "Here the two vary about as much (within 20 %).",
    }[clearly(f_naive, f_masked)]
    return f"{said} {verdict} {how}"


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
            "The held-out loss of each variant twice: in evaluation mode and in training mode."
        ),
        finding=(
            "Evaluation mode normalises with the running statistics, training mode with the "
            "batch's own. Only Batch Norm has running statistics, so only its rows differ. "
            "Largest gap: "
            f"**{label(biggest.variant)}**, {gap:+.4f}. Running statistics average the last ten "
            "or so batches (momentum 0.1): they trail the batch's own when the weights move "
            "fast, and under naive Batch Norm they count padding."
        ),
        question=gap_question(result),
        numbers=(Table(frame, "Held-out: 256 sentences with the run's padding."),),
    )


# ---------------------------------------------------------------- predict before you see


def _qid(kind: str, result: LabResult) -> str:
    """Stable for the same run (its configuration fixes its numbers), new for another."""
    return f"tr{kind}-" + hashlib.sha256(repr((kind, result.config)).encode()).hexdigest()[:12]


def grads_question(result: LabResult) -> Question | None:
    """Post-LN's last-block gradient norm at initialisation, given pre-LN's. Wrong: pre-LN's
    (the norm's place does not matter), offered when the two differ clearly; post-LN's block 1
    (uniform across depth), given in the prompt and offered when post-LN's grow clearly
    towards the output in this run. None unless post-LN and pre-LN were both run."""
    post, pre = result.run("post"), result.run("pre")
    if post is None or pre is None:
        return None
    n = result.config.layers
    last, first, pre_last = post.grad_norms[-1], post.grad_norms[0], pre.grad_norms[-1]
    uniform = n > 1 and clearly(last, first) == 1
    given = f" post-LN's block 1 has {fmt(first)};" if uniform else ""
    wrong = []
    if clearly(last, pre_last):
        wrong.append(
            Wrong(
                "placement_irrelevant",
                pre_last,
                f"{fmt(pre_last)} is pre-LN's, from the same weights and batch; post-LN, "
                f"its norm after the addition, gives {fmt(last)}.",
            )
        )
    if uniform:
        wrong.append(
            Wrong(
                "post_ln_uniform",
                first,
                f"{fmt(first)} is post-LN's block 1; its block {n}, next to the output, has "
                f"{fmt(last)}.",
            )
        )
    return Question(
        _qid("grads", result),
        f"Before any step, pre-LN's last block (block {n}) has gradient norm {fmt(pre_last)};"
        f"{given} what has post-LN's block {n}?",
        last,
        f"Post-LN's block {n}: {fmt(last)}, {fmt(last / pre_last)}x pre-LN's {fmt(pre_last)}.",
        wrong=tuple(wrong),
    )


def depth_question(result: LabResult) -> Question:
    """Post-LN over pre-LN, last block, at the deepest model, given the one-block ratio.
    Wrong: the one-block ratio (depth does not change the gap), offered when the deep ratio
    differs from it clearly. (1, the norm's place not mattering, is not offered: the stem's
    one-block ratio already rules it out.)"""
    post, pre = result.depth_grads["post"], result.depth_grads["pre"]
    one, deep = post[0][-1] / pre[0][-1], post[-1][-1] / pre[-1][-1]
    n = len(post)
    wrong = (
        Wrong(
            "depth_irrelevant",
            one,
            f"{fmt(one)} is the one-block ratio; with {n} blocks post-LN's last block has "
            f"{fmt(post[-1][-1])} and pre-LN's {fmt(pre[-1][-1])}: {fmt(deep)}x.",
        ),
    )
    return Question(
        _qid("depth", result),
        f"With one block, post-LN's last-block gradient norm is {fmt(one)}x pre-LN's. With "
        f"{n} blocks, how many times?",
        deep,
        f"With {n} blocks: post-LN {fmt(post[-1][-1])}, pre-LN {fmt(pre[-1][-1])}, {fmt(deep)}x.",
        wrong=wrong if clearly(deep, one) else (),
    )


def batch_question(result: LabResult) -> Question | None:
    """Which Batch Norm's batch variance fluctuates more: naive, masked, or about the same
    (neither over CLEAR times the other). Wrong: "the same" (Batch Norm ignores padding).
    None unless both were run."""
    naive, masked = result.run("bn"), result.run("mbn")
    if naive is None or masked is None:
        return None
    f_naive, f_masked = fluctuation(naive.bn_var), fluctuation(masked.bn_var)
    choices = (label("bn"), label("mbn"), SAME)
    answer = (
        choices[0]
        if f_naive > CLEAR * f_masked
        else choices[1]
        if f_masked > CLEAR * f_naive
        else SAME
    )
    said = (
        f"Naive: {100 * f_naive:.1f}%, masked: {100 * f_masked:.1f}% (std over mean, step to "
        f"step), with {result.config.padding:.0%} padding."
    )
    return Question(
        _qid("batch", result),
        "Whose batch variance varies more from step to step (std over mean)?",
        answer,
        said,
        choices,
        wrong=(
            Wrong(
                "bn_ignores_padding",
                SAME,
                f"If it ignored padding, naive Batch Norm would compute masked's statistics. "
                f"{said}",
            ),
        ),
    )


def gap_question(result: LabResult) -> Question:
    """Which variant's held-out loss differs most between evaluation and training mode, or
    none. Wrong: none (evaluation uses the batch's own statistics)."""
    gaps = {label(r.variant): r.eval_loss - r.eval_loss_train_mode for r in result.runs}
    biggest = max(gaps, key=lambda k: abs(gaps[k]))
    answer = biggest if gaps[biggest] != 0 else NO_GAP
    return Question(
        _qid("gap", result),
        "Whose held-out loss changes most between evaluation and training mode?",
        answer,
        "Evaluation minus training mode: "
        + ", ".join(f"{k} {v:+.4f}" for k, v in gaps.items())
        + ".",
        (*gaps, NO_GAP),
        wrong=(
            Wrong(
                "running_is_batch",
                NO_GAP,
                f"With the batch's own statistics in evaluation, no row would change; "
                f"{biggest}'s changes by {gaps[biggest]:+.4f}.",
            ),
        ),
    )
