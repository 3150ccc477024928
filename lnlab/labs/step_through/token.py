"""The lesson of the "Step through one token" page, as plain Python (no Streamlit).

`token_lesson` takes the page's inputs (embeddings, labels, token, epsilon, gamma, beta) and
returns everything the page shows in one `TokenLesson`: the five steps for the chosen token,
the check that x_hat has mean 0 and biased std 1, the gamma and beta that undo the
normalization, and the whole prompt at once. `lesson_from_text` checks a link's boxes
together. The lab's questions are in `questions`, its downloads in `export`, its slides in
`lesson`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lnlab.core.errors import InputError
from lnlab.core.norms import LayerNormTrace, layer_norm_trace
from lnlab.core.numbers import fmt, fmt_apart, scale_of
from lnlab.core.parse import (
    MAX_LABEL_CHARS,
    MAX_TOKENS,
    parse_embeddings,
    parse_labels,
    parse_vector,
)
from lnlab.labs.step_through.grid import feature_names
from lnlab.teach.claims import claim
from lnlab.teach.steps import Step, written_steps

LABELS_MAX_CHARS = MAX_TOKENS * (MAX_LABEL_CHARS + 1)  # 64 labels of 40 characters, one a line
SUMMARY_VALUES = 8  # a slide's summary line lists at most this many features


@dataclass(frozen=True)
class Check:
    """The normalized token x_hat: mean 0, biased std 1 (up to epsilon), and torch.std's view.

    The biased std of x_hat is exactly sqrt(var / (var + eps)): a hair under 1 when eps > 0.
    torch.std divides by D - 1 (Bessel's correction) by default, so it prints the biased std
    times sqrt(D / (D - 1)).
    """

    features: int  # D
    mean: float  # mean of x_hat
    std: float  # sqrt(sum((x_hat - mean)^2) / D)
    expected_std: float  # sqrt(var / (var + eps)), from the token's own statistics
    std_unbiased: float  # sqrt(sum((x_hat - mean)^2) / (D - 1)): torch.std(x_hat); NaN if D = 1
    bessel: float  # sqrt(D / (D - 1)): std_unbiased / std; NaN if D = 1
    var_input_unbiased: float  # torch.var(x): the token's variance divided by D - 1


@dataclass(frozen=True)
class TokenLesson:
    """Everything the page shows for one prompt and one chosen token."""

    trace: LayerNormTrace  # every token
    steps: tuple[Step, ...]  # the five steps written out with `token`'s numbers
    labels: tuple[str, ...]
    token: int  # 0-based
    eps: float
    gamma: np.ndarray  # (D,)
    beta: np.ndarray  # (D,)
    check: Check
    undo_gamma: float  # the token's sigma_eps = sqrt(var + eps): gamma that undoes it
    undo_beta: float  # the token's mean: beta that undoes it

    @property
    def features(self) -> int:
        return int(self.trace.x.shape[1])

    @property
    def x(self) -> np.ndarray:
        """The chosen token's input, (D,)."""
        return self.trace.x[self.token]

    @property
    def x_hat(self) -> np.ndarray:
        return self.trace.x_hat[self.token]

    @property
    def y(self) -> np.ndarray:
        return self.trace.y[self.token]

    @property
    def mean(self) -> float:
        return float(self.trace.mean[self.token, 0])

    @property
    def var(self) -> float:
        return float(self.trace.var[self.token, 0])

    @property
    def std(self) -> float:
        """sigma_eps = sqrt(var + eps), the denominator."""
        return float(self.trace.std[self.token, 0])

    @property
    def undefined(self) -> bool:
        """sigma_eps is 0 (a constant token with eps = 0): x_hat = 0 / 0 = NaN."""
        return self.std == 0.0

    @property
    def undefined_tokens(self) -> tuple[int, ...]:
        """Every token (0-based) whose sigma_eps is 0, so its x_hat is NaN."""
        return tuple(int(i) for i in np.flatnonzero(self.trace.std[:, 0] == 0.0))

    @property
    def constant(self) -> bool:
        """Every feature equal: x̂ is 0 (or NaN with ε = 0). Not σ² == 0, which a token of
        1e-200s also gives: its σ² underflows, while its x̂ is computed exactly."""
        return bool(np.all(self.x == self.x[0]))

    @property
    def undoes_token(self) -> bool:
        """gamma and beta are exactly the token's sigma_eps and mean, for every feature."""
        return bool(np.all(self.gamma == self.undo_gamma) and np.all(self.beta == self.undo_beta))

    @property
    def recovery_error(self) -> float:
        """max |y - x| over the chosen token's features (NaN if y is NaN)."""
        return float(np.max(np.abs(self.y - self.x)))


@dataclass(frozen=True, eq=False)
class TokenInputs:
    """The page's inputs, each box's last valid value: what the lesson is built from, the
    link writes and the exports describe. (eq=False: arrays do not compare as one bool.)"""

    x: np.ndarray  # (tokens, features)
    labels: tuple[str, ...]
    token: int  # 0-based
    eps: float
    gamma: np.ndarray  # (features,)
    beta: np.ndarray  # (features,)

    def lesson(self) -> TokenLesson:
        return token_lesson(**vars(self))


def token_lesson(
    x: np.ndarray,
    labels: Sequence[str],
    token: int,
    eps: float,
    gamma: np.ndarray,
    beta: np.ndarray,
) -> TokenLesson:
    """Layer Norm of every row of `x` (tokens x features), told for row `token`.

    gamma and beta have one value per feature (or one value for all). Raises InputError for
    a missing token, a bad epsilon, or gamma/beta of the wrong length.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.size == 0:
        raise InputError("the embeddings must be a table of tokens x features")
    if len(labels) != x.shape[0]:
        raise InputError(f"{len(labels)} labels for {x.shape[0]} tokens")
    trace = layer_norm_trace(x, gamma, beta, eps)  # checks eps, gamma, beta
    steps = written_steps(trace, token)  # checks the token
    return TokenLesson(
        trace=trace,
        steps=steps,
        labels=tuple(labels),
        token=token,
        eps=float(eps),
        gamma=trace.gamma,
        beta=trace.beta,
        check=_check(trace.x_hat[token], float(trace.var[token, 0]), float(eps), x[token]),
        undo_gamma=float(trace.std[token, 0]),
        undo_beta=float(trace.mean[token, 0]),
    )


def lesson_from_text(
    text: str, labels: str, token: int, eps: float, gamma: str, beta: str
) -> TokenLesson:
    """The lesson of the page's boxes as typed (embeddings, labels, gamma and beta as text).

    Raises InputError for anything that does not parse or does not fit together, such as a
    link's token 9 of 4 tokens, or a gamma with 2 values for 4 features.
    """
    x = parse_embeddings(text)
    n, d = x.shape
    return token_lesson(
        x,
        parse_labels(labels, n),
        token,
        eps,
        parse_vector(gamma, d, name="gamma"),
        parse_vector(beta, d, name="beta"),
    )


def _check(x_hat: np.ndarray, var: float, eps: float, x: np.ndarray) -> Check:
    """The mean and spread of x_hat, and what torch.std and torch.var (D - 1) print."""
    d = x_hat.size
    bessel = d / (d - 1) if d > 1 else np.nan  # NaN for one feature, as torch gives
    with np.errstate(all="ignore"):  # 0 / 0 (eps = 0 on a constant token) is NaN, honestly
        squares = float(np.sum((x_hat - x_hat.mean()) ** 2))
        return Check(
            features=d,
            mean=float(x_hat.mean()),
            std=float(np.sqrt(squares / d)),
            expected_std=float(np.sqrt(np.float64(var) / (var + eps))),
            std_unbiased=float(np.sqrt(squares / d * bessel)),
            bessel=float(np.sqrt(bessel)),
            var_input_unbiased=float(np.sum((x - x.mean()) ** 2) / d * bessel),
        )


def vector_frame(name: str, values: np.ndarray) -> pd.DataFrame:
    """One vector as a one-row table: its name, then f1..fD."""
    table = pd.DataFrame([np.asarray(values, dtype=np.float64)], columns=feature_names(len(values)))
    table.insert(0, "vector", [name])
    return table


def recovery_frame(lesson: TokenLesson) -> pd.DataFrame:
    """The chosen token's x, y and y - x, to show that gamma and beta gave the input back."""
    table = pd.DataFrame(
        [lesson.x, lesson.y, lesson.y - lesson.x], columns=feature_names(lesson.features)
    )
    table.insert(0, "vector", ["x", "y", "y − x"])
    return table


def input_table(lesson: TokenLesson) -> pd.DataFrame:
    """Every token's input row with its mean and sigma_eps: the numbers behind the heatmap."""
    t = lesson.trace
    return _rows_table(lesson, t.x, t.mean[:, 0], t.std[:, 0], "σ_ε")


def normalized_table(lesson: TokenLesson) -> pd.DataFrame:
    """Every token's x_hat row with its mean (0) and biased std (1 up to epsilon)."""
    x_hat = lesson.trace.x_hat
    with np.errstate(all="ignore"):
        mean = x_hat.mean(axis=1)
        std = np.sqrt(((x_hat - mean[:, None]) ** 2).mean(axis=1))
    return _rows_table(lesson, x_hat, mean, std, "std")


def _rows_table(
    lesson: TokenLesson, values: np.ndarray, mean: np.ndarray, std: np.ndarray, std_name: str
) -> pd.DataFrame:
    table = pd.DataFrame(values, columns=feature_names(values.shape[1]))
    table.insert(0, "token", list(lesson.labels))
    table["mean"] = mean
    table[std_name] = std
    return table


# ---------------------------------------------------------------- slides and exports


def token_summary(lesson: TokenLesson) -> str:
    """The chosen token and the settings in one line of plain text, for the top of a slide:
    "x = (2, 4, 6, 8) · D = 4 · ε = 1e-05 · γ = 1 · β = 0"."""
    return " · ".join(
        (
            f"x = {_short_vector(lesson.x)}",
            f"D = {lesson.features}",
            f"ε = {fmt(lesson.eps)}",
            f"γ = {_setting(lesson.gamma)}",
            f"β = {_setting(lesson.beta)}",
        )
    )


def _short_vector(v: np.ndarray) -> str:
    """The first SUMMARY_VALUES values in brackets, and how many there are if more."""
    shown = ", ".join(fmt_apart(v[:SUMMARY_VALUES], scale_of(v)))
    more = claim("step_through.more_values", len(v) > SUMMARY_VALUES, f", … {len(v)} values")
    return f"({shown}{more})"


def _setting(v: np.ndarray) -> str:
    """gamma or beta: one number when every feature has the same."""
    return fmt(v[0]) if np.all(v == v[0]) else _short_vector(v)
