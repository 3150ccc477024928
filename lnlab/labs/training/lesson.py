"""The training lab as slides: the run's settings, then each effect it shows, stated from
this run's own numbers (lnlab.labs.training.run), never from the papers'. Every sentence whose
words depend on the numbers ("grows", "varies more", "helps", "lowest") is a claim
(lnlab.teach.claims), made with the condition that makes it true; tests/claims/training.py
checks each against its own computation. A change counts only beyond CLEAR (20 %), and a
paper's finding is said to be the paper's, with whether this run agrees in exactly the terms
the condition tests.

Four slides ask first (Predict before you see), with nothing on the slide before the answer
that gives it and no option printed in the stem: each answer is read off the same run, and the
option a misconception (lnlab.teach.misconceptions) predicts is offered only where the run
shows it wrong. Post-LN's last block against pre-LN's, and the ratio of the two with one
block against the deepest model, each as larger, smaller or about the same (the norm's place,
or depth, does not matter); whose Batch Norm statistics vary more ("the same": Batch Norm
ignores padding); whose held-out loss changes most between the modes ("none": evaluation uses
the batch's own statistics). Each offers three options or more.
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
from lnlab.labs.training.train import WARMUP_SHARE, VariantRun
from lnlab.teach.claims import claim
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
POST_MORE, PRE_MORE, ALIKE = (
    "Post-LN's, by over 20 %",
    "Pre-LN's, by over 20 %",
    "About the same (within 20 %)",
)
DEEP_MORE, ONE_MORE = "Larger with more blocks, by over 20 %", "Larger with one block, by over 20 %"


def label(variant: str) -> str:
    return VARIANTS[variant][0]


def clearly(a: float, b: float) -> int:
    """1 when a is over CLEAR times b, -1 when b is over CLEAR times a, else 0 (both > 0)."""
    return 1 if a > CLEAR * b else -1 if b > CLEAR * a else 0


def by_margin(a: float, b: float, more: tuple[str, str], less: tuple[str, str], alike: str) -> str:
    """The words for `a` against `b` as claims: more's (key, text) where `a` is over CLEAR
    times `b`, less's where `b` is over CLEAR times `a`, else `alike` (within 20 %)."""
    over = a > CLEAR * b
    rest = "" if over else claim(less[0], b > CLEAR * a, less[1], alike, a=a, b=b)
    return claim(more[0], over, more[1], rest, a=a, b=b)


def dec(v: float, places: int, sign: str = "") -> str:
    """`v` with `places` decimals ("+" in `sign` signs it), or in fmt's 4 significant digits
    where those decimals would read 0: a nonzero number never prints as 0."""
    text = f"{v:{sign}.{places}f}"
    if v == 0 or float(text) != 0:
        return text
    return ("+" if sign and v > 0 else "") + fmt(v)


def times(ratio: float, places: int = 2) -> str:
    """A ratio as "2.68x"; with fmt's 4 decimals where `places` would read as the CLEAR the
    words compare it with (1.2004 is over 1.2x; "1.20x" would not say so)."""
    text = dec(ratio, places)
    return f"{fmt(ratio) if float(text) == CLEAR and ratio != CLEAR else text}x"


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
    n = config.layers
    model = claim(
        "training.one_block", n == 1, f"{HEADS} heads and 1 block", f"{HEADS} heads and {n} blocks"
    )
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
            f"encoder has d = {D_MODEL}, {model}; attention and the loss "
            "ignore padding, so only Batch Norm, which pools over the batch, sees "
            "it. Adam, gradients clipped at norm 1."
        ),
        numbers=numbers,
    )


def _named_loss(key: str, run: VariantRun) -> str:
    """The variant picked as lowest or highest, with its loss: a claim the test checks
    against every run's loss."""
    text = f"**{label(run.variant)}**, {dec(final_loss(run), 3)}"
    return claim(key, True, text, variant=run.variant)


def _loss(result: LabResult) -> Section:
    ranked = sorted(result.runs, key=final_loss)
    best, worst = ranked[0], ranked[-1]
    steps = range(1, result.config.steps + 1)
    said = (
        "Lowest training loss at the end (mean of the last 10 steps): "
        f"{_named_loss('training.lowest_loss', best)}; highest: "
        f"{_named_loss('training.highest_loss', worst)}."
        if len(ranked) > 1
        else f"{label(best.variant)} ends at {dec(final_loss(best), 3)}."
    )
    frame = pd.DataFrame(
        {
            "variant": [label(r.variant) for r in result.runs],
            "final training loss": [final_loss(r) for r in result.runs],
            "held-out loss": [r.eval_loss for r in result.runs],
            "seconds": [r.seconds for r in result.runs],
        }
    )
    warmup = claim("training.warmup_on", result.config.warmup, "warm-up on", "warm-up off")
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
            f"{result.config.lr:g}, {warmup}.",
            label="Training loss, step by step",
            summary="Final training loss (mean of the last 10 steps): "
            + ", ".join(f"{label(r.variant)} {dec(final_loss(r), 3)}" for r in result.runs)
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
            "how strongly the loss responds to each block (block 1 is next to the input). It "
            "is not how far the first step moves a block: Adam divides each weight's gradient "
            "by its own size, so its first step moves every block about as far as any other."
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
    """Xiong et al.'s two findings, and whether this run shows each, in the terms tested:
    post-LN's last block over CLEAR times pre-LN's; post-LN's last block over CLEAR times its
    block 1. Pre-LN's own change from block 1 to the last beside it."""
    post, pre = result.run("post"), result.run("pre")
    if post is None or pre is None:
        return "Choose post-LN and pre-LN to compare them."
    n = result.config.layers
    a, b, c, d = post.grad_norms[0], post.grad_norms[-1], pre.grad_norms[0], pre.grad_norms[-1]
    paper = (
        "Xiong et al. (2020) found that at initialisation post-LN's gradient next to the "
        "output is larger than pre-LN's (the first finding), and that post-LN's grows from "
        "the blocks next to the input to those next to the output (the second); they give "
        "this as why post-LN needs a small learning rate at first (warm-up). A change counts "
        "here only beyond 20 %."
    )
    ratio = f"Post-LN's last block has **{times(b / d)}** pre-LN's gradient norm"
    first = claim(
        "training.post_larger",
        b > CLEAR * d,
        f"{ratio}: this run agrees on the first.",
        f"{ratio}, not over 1.2x: this run does not show the first.",
        post=b,
        pre=d,
    )
    return f"{paper} {first} {_second(a, b, c, d, n)}"


def _second(a: float, b: float, c: float, d: float, n: int) -> str:
    """Post-LN's block 1 (a) to block n (b), against the second finding, and pre-LN's (c to
    d) beside it; with one block there is nothing to compare."""
    if n == 1:
        return claim(
            "training.one_block", n == 1, "With one block this run cannot show the second."
        )
    post = f"From block 1 to block {n}, post-LN's gradient norm"
    between = f"({fmt(a)} to {fmt(b)}): this run"
    said = by_margin(
        b,
        a,
        ("training.post_grows", f"{post} grows by over 20 % {between} agrees on the second."),
        ("training.post_shrinks", f"{post} shrinks {between} shows the opposite of the second."),
        f"{post} stays within 20 % {between} shows no clear growth.",
    )
    nums = f"({fmt(c)} to {fmt(d)})"
    pre = by_margin(
        d,
        c,
        ("training.pre_grows", f"Pre-LN's grows by over 20 % {nums}."),
        ("training.pre_shrinks", f"Pre-LN's shrinks {nums}."),
        f"Pre-LN's stays within 20 % {nums}.",
    )
    return f"{said} {pre}"


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
            summary=f"The last block's gradient norm, post-LN over pre-LN: {times(ratios[0], 1)} "
            f"with one block, {times(ratios[-1], 1)} with {depths[-1]}.",
        ),
    )


def _ratio_change(result: LabResult, tail: tuple[str, str, str]) -> str:
    """The last block's ratio, post-LN over pre-LN, from one block to the deepest model: the
    claims training.ratio_grows and training.ratio_shrinks, each ending with its `tail`."""
    post, pre = result.depth_grads["post"], result.depth_grads["pre"]
    one, deep = post[0][-1] / pre[0][-1], post[-1][-1] / pre[-1][-1]
    return by_margin(
        deep,
        one,
        ("training.ratio_grows", tail[0]),
        ("training.ratio_shrinks", tail[1]),
        tail[2],
    )


def depth_finding(result: LabResult) -> str:
    """Post-LN over pre-LN from one block to the deepest, and pre-LN's own last block, each
    direction read off this run."""
    post, pre = result.depth_grads["post"], result.depth_grads["pre"]
    one, deep, n = post[0][-1] / pre[0][-1], post[-1][-1] / pre[-1][-1], len(post)
    first, last = pre[0][-1], pre[-1][-1]
    lead = (
        f"The last block's gradient, post-LN over pre-LN: **{times(one)}** with one block, "
        f"**{times(deep)}** with {n}: the ratio"
    )
    ratio = _ratio_change(
        result,
        (f"{lead} grows.", f"{lead} shrinks.", f"{lead} stays within 20 %."),
    )
    own = f"Pre-LN's own last block {{}} ({fmt(first)} to {fmt(last)})"
    pre_said = by_margin(
        last,
        first,
        (
            "training.pre_deep_grows",
            own.format("grows")
            + ", unlike in Xiong et al. (2020), who showed it shrinking with depth.",
        ),
        (
            "training.pre_deep_shrinks",
            own.format("shrinks") + ", as Xiong et al. (2020) showed: pre-LN's residual stream "
            "grows with depth, and the final norm divides by it.",
        ),
        own.format("stays within 20 %") + "; Xiong et al. (2020) showed it shrinking with depth.",
    )
    return f"{ratio} {pre_said}"


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
            summary=f"Post-LN ends at {dec(final_loss(on), 3)} with warm-up and "
            f"{dec(final_loss(off), 3)} without (mean of the last 10 steps).",
        ),
    )


def warmup_finding(result: LabResult) -> str:
    """Post-LN's final loss with warm-up and without, and what the difference says; the
    paper's reason given only where this run's gradients bear it out."""
    on, off = final_loss(result.warmup_on), final_loss(result.warmup_off)
    said = f"Post-LN here ends at {dec(on, 3)} with warm-up and {dec(off, 3)} without. "
    helps = "Warm-up helps." + (_warmup_reason(result) if off > CLEAR * on else "")
    return said + by_margin(
        off,
        on,
        ("training.warmup_helps", helps),
        ("training.warmup_hurts", "Here warm-up hurts: the slower start costs more than it saves."),
        "Here warm-up makes little difference (within 20 %): try a larger learning rate "
        "and more blocks.",
    )


def _warmup_reason(result: LabResult) -> str:
    """Xiong et al.'s reason for warm-up, where post-LN's last block starts with over CLEAR
    times pre-LN's gradient at this run's depth."""
    n = result.config.layers
    post, pre = (result.depth_grads[v][n - 1][-1] for v in ("post", "pre"))
    return claim(
        "training.warmup_reason",
        post > CLEAR * pre,
        f" At initialisation post-LN's last block has {times(post / pre, 1)} pre-LN's "
        "gradient: Xiong et al. (2020) trace post-LN's need for warm-up to such gradients "
        "next to the output.",
        post=post,
        pre=pre,
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
            + ", ".join(f"{percent(fluctuation(r.bn_var))} for {label(r.variant)}" for r in runs)
            + " (std over mean).",
        ),
    )


def percent(share: float) -> str:
    """A share as "10.2%": one decimal, more where that would read 0."""
    return f"{dec(100 * share, 1)}%"


def batch_finding(result: LabResult) -> str:
    """How much each Batch Norm's batch variance varies, and, with both, which varies more."""
    runs = [r for r in result.runs if r.bn_var]
    said = (
        "; ".join(f"{label(r.variant)}: {percent(fluctuation(r.bn_var))}" for r in runs)
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
    verdict = by_margin(
        f_naive,
        f_masked,
        (
            "training.naive_varies_more",
            f"Naive's varies {times(f_naive / f_masked, 1)} as much as masked's, the kind of "
            "fluctuation Shen et al. (2020) measured in NLP.",
        ),
        (
            "training.masked_varies_more",
            f"Here masked's varies {times(f_masked / f_naive, 1)} as much as naive's.",
        ),
        "Here the two vary about as much (within 20 %).",
    )
    return f"{said} {verdict} {how}"


def _gaps(result: LabResult) -> dict[str, float]:
    """Each variant's held-out loss, evaluation mode minus training mode."""
    return {r.variant: r.eval_loss - r.eval_loss_train_mode for r in result.runs}


def _largest_gap(result: LabResult, text: str) -> str:
    """`text` (with {label} and {gap}) for the variant whose loss changes most between the
    modes: a claim the test checks against every variant's gap."""
    gaps = _gaps(result)
    widest = max(gaps, key=lambda v: abs(gaps[v]))
    said = text.format(label=label(widest), gap=dec(gaps[widest], 4, "+"))
    return claim("training.largest_gap", True, said, variant=widest)


def _gap(result: LabResult) -> Section:
    gaps = _gaps(result)
    frame = pd.DataFrame(
        {
            "variant": [label(r.variant) for r in result.runs],
            "evaluation mode": [r.eval_loss for r in result.runs],
            "training mode": [r.eval_loss_train_mode for r in result.runs],
            "gap": list(gaps.values()),
        }
    )
    batch = {v for v in gaps if VARIANTS[v][1] in ("batch", "masked batch")}
    only = all((gaps[v] != 0) == (v in batch) for v in gaps)
    running = claim(
        "training.only_batch_norm_gaps",
        only,
        "Only Batch Norm has running statistics, so only its rows differ.",
        "Only Batch Norm has running statistics.",
    )
    return Section(
        key=GAP,
        title="Training mode against evaluation mode",
        explanation=(
            "The held-out loss of each variant twice: in evaluation mode and in training mode."
        ),
        finding=(
            "Evaluation mode normalises with the running statistics, training mode with the "
            f"batch's own. {running} Largest gap: "
            + _largest_gap(result, "**{label}**, {gap}")
            + ". Running statistics average the last ten or so batches (momentum 0.1): they "
            "trail the batch's own when the weights move fast, and under naive Batch Norm "
            "they count padding."
        ),
        question=gap_question(result),
        numbers=(Table(frame, "Held-out: 256 sentences with the run's padding."),),
    )


# ---------------------------------------------------------------- predict before you see


def _qid(kind: str, result: LabResult) -> str:
    """Stable for the same run (its configuration fixes its numbers), new for another."""
    return f"tr{kind}-" + hashlib.sha256(repr((kind, result.config)).encode()).hexdigest()[:12]


def grads_question(result: LabResult) -> Question | None:
    """Whose last block has the larger gradient norm at initialisation: post-LN's, pre-LN's
    (each by over CLEAR), or about the same. Wrong: about the same (the norm's place does not
    matter), offered where the two differ by over CLEAR. None unless both were run."""
    post, pre = result.run("post"), result.run("pre")
    if post is None or pre is None:
        return None
    n = result.config.layers
    last, pre_last = post.grad_norms[-1], pre.grad_norms[-1]
    answer = {1: POST_MORE, -1: PRE_MORE, 0: ALIKE}[clearly(last, pre_last)]
    said = f"Block {n}: post-LN's {fmt(last)}, pre-LN's {fmt(pre_last)}."
    verdict = by_margin(
        last,
        pre_last,
        ("training.post_larger", f"Post-LN's is {times(last / pre_last)} pre-LN's."),
        ("training.pre_larger", f"Pre-LN's is {times(pre_last / last)} post-LN's."),
        "They are within 20 % of each other.",
    )
    return Question(
        _qid("grads", result),
        f"Before any step, whose last block (block {n}) has the larger gradient norm, "
        "post-LN's or pre-LN's?",
        answer,
        f"{said} {verdict}",
        (POST_MORE, PRE_MORE, ALIKE),
        wrong=(
            Wrong(
                "placement_irrelevant",
                ALIKE,
                f"From the same weights and batch the two differ (block {n}: post-LN's "
                f"{fmt(last)}, pre-LN's {fmt(pre_last)}): post-LN normalises the sum after "
                "each addition, pre-LN only each branch's input.",
            ),
        ),
    )


def depth_question(result: LabResult) -> Question:
    """Post-LN over pre-LN, last block: larger with one block or with the deepest model (by
    over CLEAR), or about the same. Wrong: about the same (depth does not change the gap),
    offered where the two ratios differ by over CLEAR."""
    post, pre = result.depth_grads["post"], result.depth_grads["pre"]
    one, deep, n = post[0][-1] / pre[0][-1], post[-1][-1] / pre[-1][-1], len(post)
    answer = {1: DEEP_MORE, -1: ONE_MORE, 0: ALIKE}[clearly(deep, one)]
    said = (
        f"With one block post-LN's last block has {times(one)} pre-LN's gradient norm; with "
        f"{n}, {times(deep)} ({fmt(post[-1][-1])} against {fmt(pre[-1][-1])})."
    )
    verdict = _ratio_change(
        result,
        (
            f"With {n} blocks it is over 1.2x the one-block ratio.",
            f"With one block it is over 1.2x the {n}-block ratio.",
            "The two are within 20 % of each other.",
        ),
    )
    return Question(
        _qid("depth", result),
        f"Post-LN's last-block gradient norm over pre-LN's, at initialisation: is it larger "
        f"with one block or with {n}?",
        answer,
        f"{said} {verdict}",
        (DEEP_MORE, ONE_MORE, ALIKE),
        wrong=(
            Wrong(
                "depth_irrelevant",
                ALIKE,
                f"If depth did not change the gap, the ratio would stay the same. {said}",
            ),
        ),
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
    answer = {1: choices[0], -1: choices[1], 0: SAME}[clearly(f_naive, f_masked)]
    said = (
        f"Naive: {percent(f_naive)}, masked: {percent(f_masked)} (std over mean, step to "
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
    gaps = {label(v): gap for v, gap in _gaps(result).items()}
    biggest = max(gaps, key=lambda k: abs(gaps[k]))
    answer = biggest if gaps[biggest] != 0 else NO_GAP
    return Question(
        _qid("gap", result),
        "Whose held-out loss changes most between evaluation and training mode?",
        answer,
        "Evaluation minus training mode: "
        + ", ".join(f"{k} {dec(v, 4, '+')}" for k, v in gaps.items())
        + ".",
        (*gaps, NO_GAP),
        wrong=(
            Wrong(
                "running_is_batch",
                NO_GAP,
                "With the batch's own statistics in evaluation, no row would change; "
                + _largest_gap(result, "{label}'s changes by {gap}")
                + ".",
            ),
        ),
    )
