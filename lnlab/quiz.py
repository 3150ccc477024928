"""Predict, then reveal: questions drawn from the example on screen, and how to mark answers.

A numeric answer is right when it is within `tolerance` of the truth, where the tolerance lets a
learner answer to two decimals (or 1 % of the value, whichever is larger). Every question
carries its explanation, written with the example's own numbers.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from lnlab.errors import InputError
from lnlab.norms import BatchNormTrace, LayerNormTrace
from lnlab.numbers import fmt
from lnlab.parse import parse_vector


@dataclass(frozen=True)
class Question:
    """A question about the current example. `choices` empty means a numeric answer."""

    qid: str  # stable for the same example, new for a new one
    prompt: str
    answer: float | str
    explanation: str
    choices: tuple[str, ...] = ()

    @property
    def tolerance(self) -> float:
        """How far a numeric answer may be from the truth: two decimals or 1 %."""
        return max(0.005, 0.01 * abs(float(self.answer)))


@dataclass(frozen=True)
class Verdict:
    """The mark for one answer."""

    correct: bool
    message: str


def check(question: Question, given: str) -> Verdict:
    """Mark `given` against the question; bad numbers raise InputError."""
    if question.choices:
        correct = given == question.answer
        head = "Right." if correct else f"Not quite: the answer is {question.answer}."
        return Verdict(correct, f"{head} {question.explanation}")
    if not given.strip():
        raise InputError("type a number first")
    value = float(parse_vector(given, 1, name="your answer")[0])
    truth = float(question.answer)
    if np.isnan(truth):
        return Verdict(False, f"The answer is NaN. {question.explanation}")
    correct = abs(value - truth) <= question.tolerance
    head = "Right" if correct else "Not quite"
    return Verdict(correct, f"{head}: the answer is {fmt(truth)}. {question.explanation}")


def _qid(kind: str, *parts: object) -> str:
    digest = hashlib.sha256(repr(parts).encode()).hexdigest()[:12]
    return f"{kind}-{digest}"


def token_questions(trace: LayerNormTrace, row: int, label: str) -> tuple[Question, ...]:
    """Questions about one token of a Layer Norm trace (rows are tokens, last axis features)."""
    x = trace.x.reshape(-1, trace.x.shape[-1])[row]
    mean = float(trace.mean.reshape(-1)[row])
    var = float(trace.var.reshape(-1)[row])
    std = float(trace.std.reshape(-1)[row])
    x_hat = trace.x_hat.reshape(-1, trace.x.shape[-1])[row]
    y = trace.y.reshape(-1, trace.x.shape[-1])[row]
    key = (x.tobytes(), std, y.tobytes())
    d = x.size
    return (
        Question(
            _qid("mean", *key),
            f'What is the mean of token "{label}"?',
            mean,
            f"Add the {d} features and divide by {d}: {fmt(x.sum())} / {d} = {fmt(mean)}.",
        ),
        Question(
            _qid("var", *key),
            "What is its variance (divide by D)?",
            var,
            f"Average the squared distances from the mean {fmt(mean)}: {fmt(var)}.",
        ),
        Question(
            _qid("xhat", *key),
            "What will its first feature be after normalizing?",
            float(x_hat[0]),
            f"(x1 - mean) / std = ({fmt(x[0])} - {fmt(mean)}) / {fmt(std)} = {fmt(x_hat[0])}.",
        ),
        Question(
            _qid("y", *key),
            "And its first output after scale and shift?",
            float(y[0]),
            f"gamma1 * x_hat1 + beta1 = {fmt(y[0])}.",
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
