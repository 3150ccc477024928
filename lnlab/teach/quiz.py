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
from lnlab.core.numbers import fmt
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


def question_id(kind: str, *parts: object) -> str:
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


def score(marks: dict[str, bool]) -> tuple[int, int]:
    """(right, answered) over a session's marks."""
    return sum(marks.values()), len(marks)
