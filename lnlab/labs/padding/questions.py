"""The padding lesson's questions, each asked before the section that reveals its answer: which
statistic padding changes, a PAD row under naive Batch Norm, how much padding shrinks a mean,
a token's Layer Norm mean, and a token under masked Batch Norm."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass

import numpy as np

from lnlab.core.norms import BatchNormTrace
from lnlab.core.numbers import fmt
from lnlab.labs.padding import batch as pad
from lnlab.teach import misconceptions as mc
from lnlab.teach.quiz import Question, Wrong, question_id

PADDING_CHOICES = (
    "Batch Norm's mean of a feature",
    "Layer Norm's mean of a real token",
    "Both",
    "Neither",
)


def padding_questions(
    naive: BatchNormTrace, masked: BatchNormTrace, pad_share: float
) -> tuple[Question, ...]:
    """Questions about a padded batch: naive versus masked Batch Norm, and Layer Norm."""
    pad_value = float((-naive.mean[0]) / naive.std[0])
    key = (naive.x.tobytes(), pad_share)
    return (
        Question(
            question_id("which", *key),
            "Which of these statistics does padding change?",
            PADDING_CHOICES[0],
            "Batch Norm averages each feature over every row of the batch, PAD rows included; "
            "Layer Norm averages one token's own features, so other rows never enter it.",
            PADDING_CHOICES,
            wrong=tuple(
                Wrong(
                    "across_batch",
                    choice,
                    "Layer Norm's mean of a real token is over that token's own features; "
                    "only Batch Norm's column runs through the PAD rows.",
                )
                for choice in PADDING_CHOICES[1:3]
            ),
        ),
        Question(
            question_id("padbn", *key),
            "Under naive Batch Norm, what does a PAD row's first feature become?",
            pad_value,
            f"(0 - mean) / std with the padded statistics: (0 - {fmt(naive.mean[0])}) / "
            f"{fmt(naive.std[0])} = {fmt(pad_value)}. Zeros in, non-zeros out.",
        ),
        Question(
            question_id("meanshift", *key),
            "By what factor does padding shrink feature 1's mean (padded / real)?",
            float(naive.mean[0] / masked.mean[0]) if masked.mean[0] != 0 else 1.0,
            f"The padded mean is (1 - p) times the real one, with p = {fmt(pad_share)} the "
            "share of PAD rows.",
            wrong=(
                Wrong(
                    "bn_ignores_padding",
                    1.0,
                    f"1 would leave the mean as it is, as if the PAD zeros were not counted; "
                    f"naive Batch Norm counts them: f1's mean is {fmt(naive.mean[0])} padded "
                    f"and {fmt(masked.mean[0])} over the real tokens.",
                ),
            ),
        ),
    )


@dataclass(frozen=True)
class PaddingQuestions:
    """The page's questions, each asked before the section that reveals its answer."""

    statistics: Question  # which statistic padding changes: before Batch Norm's statistics
    outputs: Question | None  # a PAD row under naive Batch Norm: before its output
    closed_form: Question | None  # padded mean / real mean: before the closed form
    ln_mean: Question  # the first token's Layer Norm mean: before Layer Norm's statistics
    masked: Question  # the first token's f1 under masked Batch Norm: before its output


def page_questions(lab: pad.PaddingLab) -> PaddingQuestions:
    """lnlab.teach.quiz.padding_questions for this batch, fitted to the page.

    The PAD-row question asks for the output y, so its answer is (0 - mu) / sigma_eps + beta
    with the page's beta (and a new id when eps or beta change). It is left out without PAD
    rows, and the shrink question when feature 1's real mean is 0 (no ratio).
    """
    naive, masked = lab.norms.naive_bn, lab.norms.masked_bn
    which, pad_row, shrink = padding_questions(naive, masked, lab.closed_form.share)
    pads = np.flatnonzero(~lab.real)
    outputs = None
    if pads.size:
        y = float(naive.y.reshape(-1, pad.DIM)[pads[0], 0])
        settings = hashlib.sha256(repr((lab.eps, lab.beta)).encode()).hexdigest()[:8]
        outputs = dataclasses.replace(
            pad_row,
            qid=f"{pad_row.qid}-{settings}",
            answer=y,
            explanation=(
                f"(0 − μ) / σ_ε + β with the padded statistics of f1: "
                f"(0 − {fmt(naive.mean[0])}) / {fmt(naive.std[0])} + {fmt(lab.beta)} = "
                f"{fmt(y)}. Zeros in, non-zeros out."
            ),
            wrong=(_swapped(float(naive.x_hat.reshape(-1, pad.DIM)[pads[0], 0]), lab.beta),),
        )
    return PaddingQuestions(
        statistics=which,
        outputs=outputs,
        closed_form=shrink if masked.mean[0] != 0 else None,
        ln_mean=_ln_mean_question(lab),
        masked=_masked_question(lab),
    )


def _ln_mean_question(lab: pad.PaddingLab) -> Question:
    """Layer Norm's mean of the first token; wrong: feature 1's mean down its column."""
    x, column = lab.tokens[0], lab.tokens[:, 0]
    mean, label = float(x.mean()), lab.labels[0]
    return Question(
        question_id("lnmean", lab.x.tobytes(), lab.mask.tobytes()),
        f"What is Layer Norm's mean of the token “{label}”, x = {_numbers(x)}?",
        mean,
        f"The average of its own {pad.DIM} features: {fmt(x.sum())} / {pad.DIM} = {fmt(mean)}.",
        wrong=(
            Wrong(
                "across_batch",
                float(column.mean()),
                f"That is f1's mean down its column, over all {column.size} rows: Batch Norm's "
                f"statistic. Layer Norm averages the token's own {pad.DIM} features.",
            ),
        ),
    )


def _masked_question(lab: pad.PaddingLab) -> Question:
    """The first token's f1 under masked Batch Norm (the page's gamma = 1 and beta); wrong:
    the statistics counting the PAD rows, as naive Batch Norm has them."""
    naive, masked = lab.norms.naive_bn, lab.norms.masked_bn
    y = float(masked.y.reshape(-1, pad.DIM)[0, 0])
    x = float(lab.tokens[0, 0])
    real, rows = int(lab.real.sum()), lab.real.size
    return Question(
        question_id("maskedy", lab.x.tobytes(), lab.mask.tobytes(), lab.eps, lab.beta),
        f"Under masked Batch Norm, what does f1 of the token “{lab.labels[0]}” "
        f"(x = {fmt(x)}) become?",
        y,
        f"(x − μ) / σ_ε + β with f1's statistics over the {real} real tokens: ({fmt(x)} − "
        f"{fmt(masked.mean[0])}) / {fmt(masked.std[0])} + {fmt(lab.beta)} = {fmt(y)}.",
        wrong=(
            Wrong(
                "pad_as_tokens",
                float(naive.y.reshape(-1, pad.DIM)[0, 0]),
                f"That uses f1's statistics over all {rows} rows, the {rows - real} PAD rows "
                f"counted as tokens (μ = {fmt(naive.mean[0])}, σ_ε = {fmt(naive.std[0])}); "
                f"masked, they come from the {real} real tokens (μ = {fmt(masked.mean[0])}, "
                f"σ_ε = {fmt(masked.std[0])}).",
            ),
        ),
    )


def _swapped(x_hat: float, beta: float) -> Wrong:
    """gamma = 1 and beta swapped: beta * x_hat + 1 instead of x_hat + beta."""
    return Wrong(
        "gamma_beta_swap",
        float(mc.y_swapped(x_hat, 1.0, beta)),
        f"That is β x̂ + γ = {fmt(beta)} × {fmt(x_hat)} + 1; the output is γ x̂ + β = "
        f"1 × {fmt(x_hat)} + {fmt(beta)}.",
    )


def _numbers(values: np.ndarray) -> str:
    return "(" + ", ".join(fmt(v) for v in values) + ")"
