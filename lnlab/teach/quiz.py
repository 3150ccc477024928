"""Predict, then reveal: questions drawn from the example on screen, and how to mark answers.

A numeric answer is right when it is within `tolerance` of the truth, where the tolerance lets a
learner answer to two decimals (or 1 % of the value, whichever is larger). Every question
carries its explanation, written with the example's own numbers, and the wrong answers that
real misconceptions (lnlab.teach.misconceptions) give on those numbers: `diagnose` names the
misconception a wrong answer matches, and `options` offers them beside the truth.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from lnlab.core.errors import InputError
from lnlab.core.norms import BatchNormTrace, LayerNormTrace
from lnlab.core.numbers import DEFAULT_EPS, fmt
from lnlab.core.parse import parse_vector
from lnlab.teach import misconceptions as mc
from lnlab.teach.misconceptions import MISCONCEPTIONS


@dataclass(frozen=True)
class Wrong:
    """A wrong answer a misconception gives (lnlab.teach.misconceptions), and `note`: how it arises,
    with the example's numbers ("That is the variance divided by D − 1 = 3")."""

    misconception: str  # a key of MISCONCEPTIONS
    answer: float | str
    note: str = ""


@dataclass(frozen=True)
class Question:
    """A question about the current example. `choices` empty means a numeric answer.

    `wrong` holds the wrong answers that misconceptions give on this example; those that are
    undefined (NaN), within the tolerance of the truth or of an earlier wrong answer, or that
    print the same, are dropped when the question is made: an answer is never both.
    """

    qid: str  # stable for the same example, new for a new one
    prompt: str
    answer: float | str
    explanation: str
    choices: tuple[str, ...] = ()
    wrong: tuple[Wrong, ...] = ()

    def __post_init__(self) -> None:
        for w in self.wrong:
            if w.misconception not in MISCONCEPTIONS:
                raise ValueError(f"unknown misconception {w.misconception!r}")
        kept: list[Wrong] = []
        for w in self.wrong:
            if self._distinct(w.answer, [self.answer, *(k.answer for k in kept)]):
                kept.append(w)
        object.__setattr__(self, "wrong", tuple(kept))

    def _distinct(self, value: float | str, taken: list[float | str]) -> bool:
        if self.choices or isinstance(value, str):
            return value not in taken
        v = float(value)
        return (
            np.isfinite(v)
            and fmt(v) not in {fmt(float(t)) for t in taken}
            and all(abs(v - float(t)) > self.tolerance for t in taken if np.isfinite(float(t)))
        )

    @property
    def tolerance(self) -> float:
        """How far a numeric answer may be from the truth: two decimals or 1 %."""
        scale = abs(float(self.answer))
        return max(0.005, 0.01 * scale) if np.isfinite(scale) else 0.005


RIGHT, OTHER = "right", "other"


@dataclass(frozen=True)
class Diagnosis:
    """The mark for one answer: `group` is RIGHT, the misconception's key, or OTHER."""

    correct: bool
    group: str
    message: str  # the headline, then the question's explanation
    headline: str = ""  # the verdict alone, for slides: "Dividing by D − 1. The answer is 5."


GROUP_NAMES: dict[str, str] = {
    RIGHT: "Right",
    **{key: m.name for key, m in MISCONCEPTIONS.items()},
    OTHER: "Something else",
}


def group_name(group: str) -> str:
    """A group's display name: "Right", the misconception's name, or "Something else"."""
    return GROUP_NAMES.get(group, GROUP_NAMES[OTHER])


def _shown(answer: float | str) -> str:
    return answer if isinstance(answer, str) else fmt(answer)


def diagnose(question: Question, given: str) -> Diagnosis:
    """Mark `given` and say which misconception it matches, with the example's numbers.

    Numbers match the truth, or else the nearest wrong answer, within the question's tolerance
    (the truth wins ties); bad numbers raise InputError.
    """
    truth = _shown(question.answer)
    if question.choices:
        if given == question.answer:
            return _diagnosis(question, RIGHT, "Right.")
        match = next((w for w in question.wrong if w.answer == given), None)
    else:
        if not given.strip():
            raise InputError("type a number first")
        right = _diagnosis(question, RIGHT, f"Right: the answer is {truth}.")
        if given.strip() == truth:  # the option as printed: "NaN" too, which no box parses
            return right
        value = float(parse_vector(given, 1, name="your answer")[0])
        if abs(value - float(question.answer)) <= question.tolerance:  # never for NaN
            return right
        near = [w for w in question.wrong if abs(value - float(w.answer)) <= question.tolerance]
        match = min(near, key=lambda w: abs(value - float(w.answer)), default=None)
    if match is None:
        return _diagnosis(question, OTHER, f"Not quite: the answer is {truth}.")
    m = MISCONCEPTIONS[match.misconception]
    answer = f"The answer is {truth}."
    lead = f"{m.name}: {match.note or m.why} {answer}"
    return _diagnosis(question, m.key, f"{m.name}. {answer}", lead)


def _diagnosis(question: Question, group: str, headline: str, lead: str = "") -> Diagnosis:
    """The message is `lead` (for a misconception: its name and note, with the example's
    numbers), else the headline, then the question's explanation."""
    message = f"{lead or headline} {question.explanation}".strip()
    return Diagnosis(group == RIGHT, group, message, headline)


def options(question: Question) -> tuple[str, ...]:
    """The multiple-choice texts: the question's own choices, or else the answer and each
    wrong answer as lnlab.core.numbers.fmt prints them, in an order fixed by the qid (every student
    sees the same order, and the answer is not always first)."""
    if question.choices:
        return question.choices
    texts = [_shown(question.answer), *(_shown(w.answer) for w in question.wrong)]
    return tuple(
        sorted(texts, key=lambda t: hashlib.sha256(f"{question.qid}|{t}".encode()).digest())
    )


def group_of(question: Question, option_text: str) -> str:
    """The group an option belongs to: RIGHT, a misconception's key, or OTHER."""
    return diagnose(question, option_text).group


def _qid(kind: str, *parts: object) -> str:
    digest = hashlib.sha256(repr(parts).encode()).hexdigest()[:12]
    return f"{kind}-{digest}"


def std_wrongs(x: object, eps: float) -> tuple[Wrong, ...]:
    """What dividing by D - 1, forgetting epsilon and epsilon outside the root give for the
    sigma_eps = sqrt(var + eps) of one token `x`, each with its numbers."""
    v = np.asarray(x, np.float64).reshape(-1)
    d, var, var1 = v.size, mc.variance(v), mc.variance(v, d_minus_1=True)
    e = fmt(eps)
    s1, s0 = mc.std(v, eps, "d_minus_1"), mc.std(v, eps, "no_eps")
    return (
        Wrong(
            "d_minus_1",
            s1,
            f"With the squared distances divided by D − 1 = {d - 1}, σ² = {fmt(var1)} and "
            f"σ_ε = {fmt(s1)}. Layer Norm divides by D = {d}: σ² = {fmt(var)}.",
        ),
        Wrong(
            "no_eps",
            s0,
            f"Without ε, σ_ε = √{fmt(var)} = {fmt(s0)}; Layer Norm takes √({fmt(var)} + {e}).",
        ),
        Wrong(
            "eps_outside",
            mc.std(v, eps, "eps_outside"),
            f"With ε outside the root, σ_ε = √σ² + ε = {fmt(s0)} + {e}; Layer Norm takes "
            f"√({fmt(var)} + {e}).",
        ),
    )


def x_hat_wrongs(
    x: object, eps: float, feature: int = 0, gamma: float = 1.0, beta: float = 0.0
) -> tuple[Wrong, ...]:
    """What each mistake gives for gamma * x_hat[feature] + beta of one token `x`: the std
    mistakes of `std_wrongs`, and (when it differs) gamma and beta swapped."""
    v = np.asarray(x, np.float64).reshape(-1)
    diff = v[feature] - v.mean()
    wrongs = [
        Wrong(w.misconception, gamma * diff / float(w.answer) + beta, w.note)
        for w in std_wrongs(v, eps)
        if float(w.answer) != 0
    ]
    x_hat = float(mc.x_hat(v, eps)[feature])
    j = feature + 1
    swapped = float(mc.y_swapped(x_hat, gamma, beta))
    wrongs.append(
        Wrong(
            "gamma_beta_swap",
            swapped,
            f"That is β{j} x̂{j} + γ{j} = {fmt(beta)} × {fmt(x_hat)} + {fmt(gamma)}; the output "
            f"is γ{j} x̂{j} + β{j} = {fmt(gamma)} × {fmt(x_hat)} + {fmt(beta)}.",
        )
    )
    return tuple(wrongs)


def feature_question(
    qid: str,
    prompt: str,
    answer: float,
    explanation: str,
    batch: np.ndarray,
    row: int,
    eps: float,
    *,
    gamma: float | None = None,
    beta: float = 0.0,
) -> Question:
    """A question on feature 1 of token `row` of `batch` (tokens x features) after Layer Norm:
    x_hat with `gamma` None, else gamma * x_hat + beta. Wrong answers: dividing by D - 1,
    epsilon forgotten or outside the root, gamma and beta swapped (for y), and feature 1
    normalised over the batch's rows (with more than one row)."""
    rows = np.asarray(batch, np.float64).reshape(-1, np.shape(batch)[-1])
    g = 1.0 if gamma is None else gamma
    wrong = x_hat_wrongs(rows[row], eps, 0, g, beta)
    if gamma is None:
        wrong = wrong[:-1]  # no gamma and beta to swap in x_hat
    if rows.shape[0] > 1:
        across = float(mc.across_batch_x_hat(rows, eps)[row, 0])
        wrong += (Wrong("across_batch", g * across + beta, across_batch_note(rows.shape, row)),)
    return Question(qid, prompt, answer, explanation, wrong=wrong)


def across_batch_note(shape: tuple[int, ...], row: int) -> str:
    """Why feature 1 over the batch's rows is not Layer Norm's statistic, with the sizes."""
    n, d = shape[0], shape[-1]
    return (
        f"That is feature 1 over the {n} tokens (a column): Batch Norm's statistic. Layer "
        f"Norm takes the features of token {row + 1} (its row), all {d} of them."
    )


def token_questions(
    trace: LayerNormTrace,
    row: int,
    label: str,
    *,
    eps: float = DEFAULT_EPS,
    gamma: float = 1.0,
    beta: float = 0.0,
) -> tuple[Question, ...]:
    """Questions about one token of a Layer Norm trace (rows are tokens, last axis features),
    computed with `eps`, and `gamma`, `beta` for the first feature. Their wrong answers:
    feature 1 over the batch's rows (with more than one row), dividing by D - 1, epsilon
    forgotten or outside the root, gamma and beta swapped."""
    rows = trace.x.reshape(-1, trace.x.shape[-1])
    x = rows[row]
    mean = float(trace.mean.reshape(-1)[row])
    var = float(trace.var.reshape(-1)[row])
    std = float(trace.std.reshape(-1)[row])
    x_hat = trace.x_hat.reshape(-1, trace.x.shape[-1])[row]
    y = trace.y.reshape(-1, trace.x.shape[-1])[row]
    key = (x.tobytes(), std, y.tobytes())
    d, n = x.size, rows.shape[0]
    column = rows[:, 0]
    batch = across_batch_note(rows.shape, row)
    across = n > 1
    return (
        Question(
            _qid("mean", *key),
            f'What is the mean of token "{label}"?',
            mean,
            f"Add the {d} features and divide by {d}: {fmt(x.sum())} / {d} = {fmt(mean)}.",
            wrong=(Wrong("across_batch", float(column.mean()), batch),) if across else (),
        ),
        Question(
            _qid("var", *key),
            "What is its variance (divide by D)?",
            var,
            f"Average the squared distances from the mean {fmt(mean)}: {fmt(var)}.",
            wrong=(
                Wrong(
                    "d_minus_1",
                    mc.variance(x, d_minus_1=True),
                    f"That is the sum of squared distances, {fmt(var * d)}, divided by D − 1 = "
                    f"{d - 1}. Layer Norm divides by D = {d}.",
                ),
                *((Wrong("across_batch", float(column.var()), batch),) if across else ()),
            ),
        ),
        feature_question(
            _qid("xhat", *key),
            "What will its first feature be after normalizing?",
            float(x_hat[0]),
            f"(x1 - mean) / std = ({fmt(x[0])} - {fmt(mean)}) / {fmt(std)} = {fmt(x_hat[0])}.",
            rows,
            row,
            eps,
        ),
        feature_question(
            _qid("y", *key),
            "And its first output after scale and shift?",
            float(y[0]),
            f"gamma1 * x_hat1 + beta1 = {fmt(y[0])}.",
            rows,
            row,
            eps,
            gamma=gamma,
            beta=beta,
        ),
    )


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
            _qid("which", *key),
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
            _qid("padbn", *key),
            "Under naive Batch Norm, what does a PAD row's first feature become?",
            pad_value,
            f"(0 - mean) / std with the padded statistics: (0 - {fmt(naive.mean[0])}) / "
            f"{fmt(naive.std[0])} = {fmt(pad_value)}. Zeros in, non-zeros out.",
        ),
        Question(
            _qid("meanshift", *key),
            "By what factor does padding shrink feature 1's mean (padded / real)?",
            float(naive.mean[0] / masked.mean[0]) if masked.mean[0] != 0 else 1.0,
            f"The padded mean is (1 - p) times the real one, with p = {fmt(pad_share)} the "
            "share of PAD rows.",
        ),
    )


def score(marks: dict[str, bool]) -> tuple[int, int]:
    """(right, answered) over a session's marks."""
    return sum(marks.values()), len(marks)
