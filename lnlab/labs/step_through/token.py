"""The lesson of the "Step through one token" page, as plain Python (no Streamlit).

`token_lesson` takes the page's inputs (embeddings, labels, token, epsilon, gamma, beta) and
returns everything the page shows in one `TokenLesson`: the five steps for the chosen token,
the check that x_hat has mean 0 and biased std 1, the gamma and beta that undo the
normalization, and the whole prompt at once. The other functions check a link's boxes
together (`lesson_from_text`), pick each step's prediction question, write the exports, and
turn it all into the page's slides (lnlab.labs.step_through.lesson).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from lnlab.core.errors import InputError
from lnlab.core.norms import LayerNormTrace, layer_norm_trace
from lnlab.core.numbers import fmt, scale_of
from lnlab.core.parse import (
    MAX_LABEL_CHARS,
    MAX_TOKENS,
    parse_embeddings,
    parse_labels,
    parse_vector,
)
from lnlab.labs.step_through.grid import feature_names
from lnlab.teach.export import Download, Exports, layer_norm_script, to_csv, trace_json, trace_rows
from lnlab.teach.quiz import Question, Wrong, token_questions
from lnlab.teach.steps import STEPS, Step, written_steps

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
    table.insert(0, "", [name])
    return table


def recovery_frame(lesson: TokenLesson) -> pd.DataFrame:
    """The chosen token's x, y and y - x, to show that gamma and beta gave the input back."""
    table = pd.DataFrame(
        [lesson.x, lesson.y, lesson.y - lesson.x], columns=feature_names(lesson.features)
    )
    table.insert(0, "", ["x", "y", "y − x"])
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


# ---------------------------------------------------------------- predict, then reveal


def step_questions(lesson: TokenLesson) -> tuple[Question | None, ...]:
    """The question each step asks before it shows its result (None: step 3 asks none).

    Step 1 asks the chosen token's mean, step 2 its variance, step 4 its first x_hat, step 5
    its first y (quiz.token_questions). Each id covers just what its answer depends on: the
    mean and variance on x, x_hat also on epsilon, y also on gamma and beta. So a new example
    gets new questions, while setting epsilon to 0 does not ask for the mean again.
    """
    asked = token_questions(
        lesson.trace,
        lesson.token,
        lesson.labels[lesson.token],
        eps=lesson.eps,
        gamma=float(lesson.gamma[0]),
        beta=float(lesson.beta[0]),
    )
    x = lesson.x.tobytes()
    depends_on = (
        (x,),
        (x,),
        (x, lesson.eps),
        (x, lesson.eps, float(lesson.gamma[0]), float(lesson.beta[0])),
    )
    rekeyed = iter(
        replace(q, qid=f"{q.qid.split('-')[0]}-{_digest(parts)}")
        for q, parts in zip(asked, depends_on, strict=True)
    )
    return tuple(None if s.question is None else next(rekeyed) for s in STEPS)


def check_question(lesson: TokenLesson) -> Question:
    """Before the check: the std of x_hat, dividing by D. Wrong: torch.std's D - 1, and 1
    exactly, which holds only without epsilon."""
    c, d = lesson.check, lesson.check.features
    return Question(
        f"xhatstd-{_digest((lesson.x.tobytes(), lesson.eps))}",
        "What is the standard deviation of x̂, dividing by D?",
        c.std,
        f"√(σ² / (σ² + ε)) = √({fmt(lesson.var)} / ({fmt(lesson.var)} + {fmt(lesson.eps)})) = "
        f"{fmt(c.std)}.",
        wrong=(
            Wrong(
                "d_minus_1",
                c.std_unbiased,
                f"That is what torch.std prints: it divides by D − 1 = {d - 1}, so it is "
                f"√({d}/{d - 1}) times larger. Layer Norm's own spread divides by D = {d}.",
            ),
            Wrong(
                "no_eps",
                1.0,
                f"x̂ has std exactly 1 only without ε: with ε = {fmt(lesson.eps)} under the root "
                "x̂ is divided by a hair more than σ.",
            ),
        ),
    )


def _digest(parts: tuple) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:12]


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
    shown = ", ".join(fmt(a, scale_of(v)) for a in v[:SUMMARY_VALUES])
    more = f", … {len(v)} values" if len(v) > SUMMARY_VALUES else ""
    return f"({shown}{more})"


def _setting(v: np.ndarray) -> str:
    """gamma or beta: one number when every feature has the same."""
    return fmt(v[0]) if np.all(v == v[0]) else _short_vector(v)


def export_csv(lesson: TokenLesson) -> str:
    """The whole trace as CSV: one row per token and feature (x, mean, var, std, x_hat, y)."""
    return to_csv(trace_rows(lesson.trace, lesson.labels))


def export_json(lesson: TokenLesson) -> str:
    """The whole trace as JSON, with the settings that produced it (token 1-based)."""
    settings = {
        "eps": lesson.eps,
        "gamma": lesson.gamma.tolist(),
        "beta": lesson.beta.tolist(),
        "token": lesson.token + 1,
    }
    return trace_json(lesson.trace, lesson.labels, settings, lesson.token)


def export_script(lesson: TokenLesson) -> str:
    """A PyTorch script (F.layer_norm, float64) that prints every token's mean, var and y."""
    return layer_norm_script(lesson.trace.x, lesson.gamma, lesson.beta, lesson.eps)


def exports(lesson: TokenLesson) -> Exports:
    """The step-through page's downloads: the trace as CSV and JSON, and the PyTorch script."""
    return Exports(
        (
            Download(
                "Trace as CSV",
                export_csv(lesson),
                "lnlab-steps.csv",
                "text/csv",
                "st_dl_csv",
                "table",
            ),
            Download(
                "Trace as JSON",
                export_json(lesson),
                "lnlab-steps.json",
                "application/json",
                "st_dl_json",
                "data_object",
            ),
            Download(
                "PyTorch script",
                export_script(lesson),
                "lnlab_steps.py",
                "text/x-python",
                "st_dl_py",
                "code",
            ),
        ),
        "The CSV has one row per token and feature: x, the token's mean, variance and σ_ε, "
        "then x̂ and y. The JSON holds the same arrays, each step's formula and the settings.",
        export_script(lesson),
    )
