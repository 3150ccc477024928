"""The padding lesson's questions, each asked before the section that reveals its answer: which
statistic averages over the PAD rows, a PAD row under naive Batch Norm, the variance padding
leaves a feature, a token's Layer Norm mean, and a token under masked Batch Norm.

Each numeric question offers the wrong answers real misconceptions give on the batch's own
numbers (lnlab.teach.misconceptions), so that no option can be ruled out by reading the stem;
a question whose answer is undefined (NaN) or absent (no PAD rows) is left out.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np

from lnlab.core.numbers import fmt
from lnlab.labs.padding import batch as pad
from lnlab.teach import misconceptions as mc
from lnlab.teach.claims import claim
from lnlab.teach.quiz import Question, Wrong, question_id

PADDING_CHOICES = (
    "Naive Batch Norm's mean of a feature",
    "Masked Batch Norm's mean of a feature",
    "Layer Norm's mean of a real token",
    "All three",
    "None of them",
)


@dataclass(frozen=True)
class PaddingQuestions:
    """The page's questions, each asked before the section that reveals its answer."""

    statistics: Question  # which statistic averages over PAD rows: before Batch Norm's
    outputs: Question | None  # a PAD row under naive Batch Norm: before its output
    closed_form: Question | None  # f1's padded variance: before the closed form
    ln_mean: Question  # the first token's Layer Norm mean: before Layer Norm's statistics
    masked: Question | None  # the first token's f1 under masked Batch Norm: before its output


def page_questions(lab: pad.PaddingLab) -> PaddingQuestions:
    """The questions on this batch, with the page's ε and β (and γ = 1)."""
    return PaddingQuestions(
        statistics=_statistics_question(lab),
        outputs=_pad_row_question(lab),
        closed_form=_variance_question(lab),
        ln_mean=_ln_mean_question(lab),
        masked=_masked_question(lab),
    )


def _statistics_question(lab: pad.PaddingLab) -> Question:
    """Which average runs over the PAD rows: naive Batch Norm's column only. Each wrong choice
    is a misconception: the mask counting them, a token's row holding them, neither."""
    naive, masked, ln, every, none = PADDING_CHOICES
    row = (
        "Layer Norm's mean of a token is over its own features, so PAD rows never enter it; "
        "only Batch Norm's column runs through them, and masked, not even that."
    )
    return Question(
        question_id("which", lab.x.tobytes(), lab.closed_form.share),
        "Which of these statistics averages over the PAD rows too?",
        naive,
        "Naive Batch Norm averages each feature down its column, over every row of the batch, "
        "PAD rows included. Masked, it averages over the real tokens only; Layer Norm averages "
        "one token's own features, so no other row enters it.",
        PADDING_CHOICES,
        wrong=(
            Wrong(
                "pad_as_tokens",
                masked,
                "The mask exists to leave the PAD rows out: masked Batch Norm averages each "
                "column over the real tokens only.",
            ),
            Wrong("across_batch", ln, row),
            Wrong("across_batch", every, row),
            Wrong(
                "bn_ignores_padding",
                none,
                "Naive Batch Norm averages each column over every row of the batch, the PAD "
                "rows included: nothing tells it which rows are padding.",
            ),
        ),
    )


def _pad_row_question(lab: pad.PaddingLab) -> Question | None:
    """A PAD row's f1 under naive Batch Norm, (0 − μ)/σ_ε + β; left out without PAD rows or
    where it is 0/0 (an all-zero column with ε = 0)."""
    naive = lab.norms.naive_bn
    pads = np.flatnonzero(~lab.real)
    if not pads.size:
        return None
    y = float(naive.y.reshape(-1, pad.DIM)[pads[0], 0])
    if not math.isfinite(y):
        return None
    column = lab.tokens[:, 0]
    real = column[lab.real]
    mean, std = float(naive.mean[0]), float(naive.std[0])
    beta, eps = lab.beta, lab.eps
    settings = hashlib.sha256(repr((eps, beta)).encode()).hexdigest()[:8]
    masked_std = mc.std(real, eps)
    d_minus_1, no_eps = mc.std(column, eps, "d_minus_1"), mc.std(column, eps, "no_eps")
    return Question(
        f"{question_id('padbn', naive.x.tobytes(), lab.closed_form.share)}-{settings}",
        "Under naive Batch Norm, what does a PAD row's first feature become?",
        y,
        f"(0 − μ) / σ_ε + β with the padded statistics of f1: (0 − {fmt(mean)}) / "
        f"{fmt(std)} + {fmt(beta)} = {fmt(y)}."
        + claim(
            "padding.pad_f1_moves",
            y != 0,
            " Zeros in, non-zeros out.",
            " Zeros in, and here zeros out.",
        ),
        wrong=(
            _swapped(float(naive.x_hat.reshape(-1, pad.DIM)[pads[0], 0]), beta),
            Wrong(
                "bn_ignores_padding",
                _output(0.0, float(real.mean()), masked_std, beta),
                f"That uses f1's statistics over the {real.size} real tokens only (μ = "
                f"{fmt(real.mean())}, σ_ε = {fmt(masked_std)}); naive Batch Norm counts all "
                f"{column.size} rows, PAD rows included: μ = {fmt(mean)}, σ_ε = {fmt(std)}.",
            ),
            Wrong(
                "d_minus_1",
                _output(0.0, mean, d_minus_1, beta),
                f"That divides the squared distances by n − 1 = {column.size - 1} (torch.var's "
                f"default): σ_ε = {fmt(d_minus_1)}. Batch Norm divides by the n = "
                f"{column.size} rows: σ_ε = {fmt(std)}.",
            ),
            Wrong(
                "no_eps",
                _output(0.0, mean, no_eps, beta),
                f"Without ε, σ_ε = √{fmt(naive.var[0])} = {fmt(no_eps)}; Batch Norm takes "
                f"√({fmt(naive.var[0])} + {fmt(eps)}) = {fmt(std)}.",
            ),
        ),
        # read at the answer's size: far from 0 the real tokens' statistics give a number
        # millions of times larger (1e8 + x over a spread of 1), which would round it to 0
        scale=abs(y) or None,
    )


def _variance_question(lab: pad.PaddingLab) -> Question | None:
    """f1's variance under naive Batch Norm from its real tokens' μ, σ² and the PAD share p:
    (1 − p)σ² + p(1 − p)μ². Left out without PAD rows, or where f1 is 0 in every row."""
    cf, naive = lab.closed_form, lab.norms.naive_bn
    p, mu, var = cf.share, float(cf.real_mean[0]), float(cf.real_var[0])
    answer = float(naive.var[0])
    if not lab.pad_count or answer == 0:
        return None
    n = naive.count
    unbiased = mc.variance(lab.tokens[:, 0], d_minus_1=True)
    return Question(
        question_id("padvar", naive.x.tobytes(), p),
        f"f1's real tokens have mean μ = {given(mu)} and variance σ² = {given(var)}, and PAD "
        f"zeros are a share p = {given(p)} of its column. What variance does naive Batch "
        "Norm compute for f1?",
        answer,
        "The zeros shrink the real tokens' spread by 1 − p and add their own distance from "
        f"the mean: (1 − p)σ² + p(1 − p)μ² = (1 − {fmt(p)}) × {fmt(var)} + {fmt(p)} × "
        f"(1 − {fmt(p)}) × {fmt(mu)}² = {fmt(answer)}.",
        wrong=(
            Wrong(
                "bn_ignores_padding",
                var,
                f"{fmt(var)} is the real tokens' own variance, as if the PAD zeros were not "
                f"counted; naive Batch Norm averages over all {n} rows, the PAD zeros included.",
            ),
            Wrong(
                "d_minus_1",
                unbiased,
                f"That divides the squared distances by n − 1 = {n - 1} (torch.var's default); "
                f"Batch Norm's variance divides by the n = {n} rows: {fmt(answer)}.",
            ),
        ),
    )


def _ln_mean_question(lab: pad.PaddingLab) -> Question:
    """Layer Norm's mean of the first token; wrong: feature 1's mean down its column, with and
    without the PAD rows (Batch Norm's statistics, naive and masked)."""
    x, column = lab.tokens[0], lab.tokens[:, 0]
    real = column[lab.real]
    mean, label = float(x.mean()), lab.labels[0]
    return Question(
        question_id("lnmean", lab.x.tobytes(), lab.mask.tobytes()),
        f"What is Layer Norm's mean of the token “{label}”, x = {_numbers(x)}?",
        mean,
        f"The average of its own {pad.DIM} features: {fmt(x.sum())} / {pad.DIM} = {fmt(mean)}.",
        wrong=tuple(_column_mean(values, lab.real.size) for values in (column, real)),
    )


def _column_mean(values: np.ndarray, rows: int) -> Wrong:
    """f1's mean down its column over `values`: Batch Norm's statistic, naive or masked."""
    return Wrong(
        "across_batch",
        float(values.mean()),
        f"That is f1's mean down its column, over {values.size} of the batch's {rows} rows: a "
        f"Batch Norm statistic. Layer Norm averages the token's own {pad.DIM} features.",
    )


def _masked_question(lab: pad.PaddingLab) -> Question | None:
    """The first token's f1 under masked Batch Norm (the page's γ = 1 and β); wrong: the
    statistics counting the PAD rows, γ and β swapped, the variance over n − 1, no ε. Left out
    where it is 0/0 (a constant column with ε = 0)."""
    naive, masked = lab.norms.naive_bn, lab.norms.masked_bn
    y = float(masked.y.reshape(-1, pad.DIM)[0, 0])
    if not math.isfinite(y):
        return None
    x = float(lab.tokens[0, 0])
    real = lab.tokens[lab.real, 0]
    rows = lab.real.size
    mean, std, eps, beta = float(masked.mean[0]), float(masked.std[0]), lab.eps, lab.beta
    d_minus_1, no_eps = mc.std(real, eps, "d_minus_1"), mc.std(real, eps, "no_eps")
    return Question(
        question_id("maskedy", lab.x.tobytes(), lab.mask.tobytes(), eps, beta),
        f"Under masked Batch Norm, what does f1 of the token “{lab.labels[0]}” "
        f"(x = {given(x)}) become?",
        y,
        f"(x − μ) / σ_ε + β with f1's statistics over the {real.size} real tokens: "
        f"({fmt(x)} − {fmt(mean)}) / {fmt(std)} + {fmt(beta)} = {fmt(y)}.",
        wrong=(
            Wrong(
                "pad_as_tokens",
                float(naive.y.reshape(-1, pad.DIM)[0, 0]),
                f"That uses f1's statistics over all {rows} rows, the {rows - real.size} PAD "
                f"rows counted as tokens (μ = {fmt(naive.mean[0])}, σ_ε = "
                f"{fmt(naive.std[0])}); masked, they come from the {real.size} real tokens "
                f"(μ = {fmt(mean)}, σ_ε = {fmt(std)}).",
            ),
            _swapped(float(masked.x_hat.reshape(-1, pad.DIM)[0, 0]), beta),
            Wrong(
                "d_minus_1",
                _output(x, mean, d_minus_1, beta),
                f"That divides the squared distances by n − 1 = {real.size - 1} (torch.var's "
                f"default): σ_ε = {fmt(d_minus_1)}. Batch Norm divides by the n = "
                f"{real.size} real tokens: σ_ε = {fmt(std)}.",
            ),
            Wrong(
                "no_eps",
                _output(x, mean, no_eps, beta),
                f"Without ε, σ_ε = √{fmt(masked.var[0])} = {fmt(no_eps)}; Batch Norm takes "
                f"√({fmt(masked.var[0])} + {fmt(eps)}) = {fmt(std)}.",
            ),
        ),
    )


def _swapped(x_hat: float, beta: float) -> Wrong:
    """γ = 1 and β swapped: β x̂ + 1 instead of x̂ + β."""
    return Wrong(
        "gamma_beta_swap",
        float(mc.y_swapped(x_hat, 1.0, beta)),
        f"That is β x̂ + γ = {fmt(beta)} × {fmt(x_hat)} + 1; the output is γ x̂ + β = "
        f"1 × {fmt(x_hat)} + {fmt(beta)}.",
    )


def given(v: float) -> str:
    """A number a stem gives to compute with: as typed (its shortest exact text) when that is
    short, else 10 significant digits, so that an answer worked from it rounds as the true one
    does at the question's 4 and 1e8 + 0.5 does not read as 1e+08."""
    text = repr(float(v)).removesuffix(".0")
    return text if len(text) <= 12 else f"{float(v):.10g}"


def _output(x: float, mean: float, std: float, beta: float) -> float:
    """(x − μ) / σ_ε + β, NaN or ±∞ where σ_ε is 0 (such a wrong answer is not offered)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(x - mean) / np.float64(std) + beta)


def _numbers(values: np.ndarray) -> str:
    return "(" + ", ".join(given(v) for v in values) + ")"
