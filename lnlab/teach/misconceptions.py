"""The mistakes students really make with Layer Norm, and what each gives on given numbers.

Each misconception has one home here: its name, why it is wrong, and a function that computes
the number a student who holds it would get, so a question can offer that number as a wrong
option and, when a student picks it, name the mistake. All in float64 numpy:

* d_minus_1      var = sum((x - mean)^2) / (D - 1) instead of / D (torch.var's default);
* no_eps         std = sqrt(var) instead of sqrt(var + eps);
* eps_outside    std = sqrt(var) + eps instead of sqrt(var + eps);
* across_batch   one feature's statistics over the batch's rows instead of one token's features;
* pad_as_tokens  a mean over every row, PAD rows included, instead of the real rows only;
* gamma_beta_swap  y = beta * x_hat + gamma instead of gamma * x_hat + beta;

and, for the training lab (lnlab.labs.training.lesson), beliefs about training whose wrong answer
is read off the run's own numbers (the question computes it):

* post_ln_uniform     post-LN's gradients at initialisation the same in every block;
* placement_irrelevant  post-LN and pre-LN give the same gradients (the norm's place is a detail);
* depth_irrelevant    post-LN's gradient over pre-LN's the same at any depth;
* bn_ignores_padding  naive Batch Norm's statistics unmoved by padding, as attention's are;
* running_is_batch    evaluation mode normalises with the batch's own statistics.

A value that is undefined for the numbers (D - 1 = 0 with one feature) is NaN; questions drop
wrong answers that are not finite.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Misconception:
    """A mistake: its key, its name as a student reads it, and why Layer Norm does otherwise."""

    key: str
    name: str
    why: str  # one sentence, no numbers: the question's note gives the student's numbers


MISCONCEPTIONS: dict[str, Misconception] = {
    m.key: m
    for m in (
        Misconception(
            "d_minus_1",
            "Dividing by D − 1",
            "Layer Norm's variance averages the D squared distances: it divides by D, not by "
            "D − 1 (Bessel's correction, torch.var's default).",
        ),
        Misconception(
            "no_eps",
            "Forgetting epsilon",
            "Epsilon is added to the variance before the square root: σ_ε = √(σ² + ε).",
        ),
        Misconception(
            "eps_outside",
            "Epsilon outside the root",
            "Epsilon goes inside the square root, √(σ² + ε), not after it, √σ² + ε.",
        ),
        Misconception(
            "root_mixup",
            "Mixing up the variance and the standard deviation",
            "The variance σ² averages the squared distances from the mean; the standard "
            "deviation is its square root, and Layer Norm divides by √(σ² + ε).",
        ),
        Misconception(
            "across_batch",
            "Normalising across the batch instead of the token",
            "Layer Norm takes each token's statistics over its own D features; one feature's "
            "statistics over the batch's rows is Batch Norm.",
        ),
        Misconception(
            "pad_as_tokens",
            "Counting PAD rows as tokens",
            "PAD rows are filler, not tokens: an average over the batch counts the real rows only.",
        ),
        Misconception(
            "gamma_beta_swap",
            "Mixing up gamma and beta",
            "γ scales and β shifts: y = γ x̂ + β.",
        ),
        Misconception(
            "post_ln_uniform",
            "Post-LN's gradients are uniform across depth",
            "Normalising every block's output does not make every block's gradient the same: "
            "where a block sits changes it (Xiong et al. 2020 found post-LN's largest in the "
            "blocks next to the output).",
        ),
        Misconception(
            "placement_irrelevant",
            "Where the norm sits does not matter",
            "Post-LN normalises the residual stream after each addition; pre-LN normalises "
            "only each branch's input and leaves the stream alone, so their gradients differ.",
        ),
        Misconception(
            "depth_irrelevant",
            "Depth does not change the gap",
            "Post-LN and pre-LN part further as the model deepens: Xiong et al. (2020) showed "
            "that at initialisation pre-LN's gradient next to the output shrinks with depth "
            "and post-LN's does not.",
        ),
        Misconception(
            "bn_ignores_padding",
            "Batch Norm's statistics ignore padding",
            "Attention and the loss skip the padded positions, but naive Batch Norm averages "
            "over every position of the batch, the padded ones included, so each batch's share "
            "of padding moves its statistics.",
        ),
        Misconception(
            "running_is_batch",
            "Evaluation uses the batch's own statistics",
            "In evaluation mode Batch Norm divides by running averages of past batches' "
            "statistics, not the batch's own, so its loss differs from training mode; Layer "
            "Norm has no running statistics.",
        ),
    )
}


def _row(x: object) -> np.ndarray:
    return np.asarray(x, dtype=np.float64).reshape(-1)


def _spread(x: object, divisor: int) -> tuple[float, float]:
    """(s, m): the distances from the mean are s times numbers of at most 1 in size, whose
    squares sum to m * divisor. var = s^2 m, std = s sqrt(m): no square of 1e200 overflows
    and none of 1e-200 underflows."""
    v = _row(x)
    d = v - v.mean()
    s = float(np.max(np.abs(d))) if d.size else 0.0
    s = s if s > 0 and np.isfinite(s) else 1.0
    return s, float(((d / s) ** 2).sum() / divisor)


def _divisor(x: object, d_minus_1: bool) -> int:
    n = _row(x).size
    return n - 1 if d_minus_1 else n


def variance(x: object, *, d_minus_1: bool = False) -> float:
    """sum((x - mean)^2) / D, or / (D - 1) with `d_minus_1` (NaN when D = 1; ∞ when it is
    too large for a float64, as the trace's own)."""
    divisor = _divisor(x, d_minus_1)
    if divisor <= 0:
        return float("nan")
    s, m = _spread(x, divisor)
    with np.errstate(over="ignore"):
        return float(np.float64(s) ** 2 * m)


def std(x: object, eps: float, mistake: str | None = None) -> float:
    """Layer Norm's σ_ε = sqrt(var + eps) of one token, or what `mistake` gives instead:
    "d_minus_1" sqrt(var_{D-1} + eps), "no_eps" sqrt(var), "eps_outside" sqrt(var) + eps.
    Computed as hypot(s sqrt(m), sqrt(eps)) (see `_spread`), finite wherever σ_ε is."""
    if mistake not in (None, "d_minus_1", "no_eps", "eps_outside"):
        raise ValueError(f"{mistake!r} does not change the std")
    divisor = _divisor(x, mistake == "d_minus_1")
    if divisor <= 0:
        return float("nan")
    s, m = _spread(x, divisor)
    if mistake == "no_eps":
        return float(s * np.sqrt(m))
    if mistake == "eps_outside":
        return float(s * np.sqrt(m) + eps)
    return float(np.hypot(s * np.sqrt(m), np.sqrt(eps)))


def x_hat(x: object, eps: float, mistake: str | None = None) -> np.ndarray:
    """(x - mean) / σ_ε for one token, σ_ε as `std(x, eps, mistake)` gives it (NaN for 0 / 0)."""
    v = _row(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (v - v.mean()) / std(v, eps, mistake)


def across_batch_x_hat(batch: object, eps: float) -> np.ndarray:
    """Each feature normalized over the rows of `batch` (rows x features): Batch Norm's
    (x - mean over rows) / sqrt(var over rows + eps), what a Layer Norm 'across the batch' gives."""
    b = np.asarray(batch, dtype=np.float64)
    b = b.reshape(-1, b.shape[-1])
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.stack([(c - c.mean()) / std(c, eps) for c in b.T], axis=1)


def mean_counting_pad(values: object, real: object) -> float:
    """The mean over every row, PAD rows included (`real` marks the real rows, which are
    ignored here): sum(values) / number of rows, where the truth is sum(real values) / number
    of real rows."""
    v = _row(values)
    if _row(real).size != v.size:
        raise ValueError("values and real need one entry per row")
    return float(v.mean())


def mean_of_real(values: object, real: object) -> float:
    """The mean over the real rows only (NaN when there are none)."""
    v, keep = _row(values), _row(real).astype(bool)
    return float(v[keep].mean()) if keep.any() else float("nan")


def y_swapped(x_hat_value: object, gamma: object, beta: object) -> np.ndarray:
    """beta * x_hat + gamma: the output with γ and β swapped (the truth is γ x̂ + β)."""
    return np.asarray(beta, np.float64) * np.asarray(x_hat_value, np.float64) + np.asarray(
        gamma, np.float64
    )
