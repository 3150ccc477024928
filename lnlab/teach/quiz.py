"""Predict, then reveal: questions drawn from the example on screen, and how to mark answers.

A numeric question shows its numbers to a precision set by their size (`Question.unit`: 4
decimals for numbers from 0.1 to a million, 4 significant digits for smaller and larger ones)
and marks at that precision: an answer is right when it rounds to the same text as the
answer. Every question carries its explanation, written with the example's own numbers, and
the wrong answers that real misconceptions (lnlab.teach.misconceptions) give on those
numbers: `diagnose` names the misconception a wrong answer matches, and `options` offers them
beside the truth. A wrong answer is offered only when the grader can tell it from the truth
and from every other option at the question's precision.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

import numpy as np

from lnlab.core.errors import InputError
from lnlab.core.numbers import fmt
from lnlab.core.parse import parse_vector
from lnlab.teach import misconceptions as mc
from lnlab.teach.misconceptions import MISCONCEPTIONS

FIXED_RANGE = (1e-4, 1e6)  # numbers of this size are shown with decimals, others in 1.234e-05
SLACK = 1e-9  # relative: float rounding at a window's edge is not a different answer
MIN_DIGITS = 3  # a typed number coarser than the question's is right only with this many


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
    undefined (NaN), or that the grader cannot tell from the truth or from an earlier wrong
    answer at the question's precision, are dropped when the question is made: an answer is
    never both. `scale` is the size the numbers are read against (None: the largest of the
    answer and its wrong answers); `refine` is how many digits beyond that precision the
    options may show to keep a mistake apart from the truth (the conventions' ε questions,
    where the difference ε makes is the point).
    """

    qid: str  # stable for the same example, new for a new one
    prompt: str
    answer: float | str
    explanation: str
    choices: tuple[str, ...] = ()
    wrong: tuple[Wrong, ...] = ()
    scale: float | None = None
    refine: int = 0
    unit: float = field(init=False, default=0.0)  # the last digit shown and marked; 0: choices
    fixed: bool = field(init=False, default=True)  # decimals (2.2361), else 1.234e-05

    def __post_init__(self) -> None:
        for w in self.wrong:
            if w.misconception not in MISCONCEPTIONS:
                raise ValueError(f"unknown misconception {w.misconception!r}")
        if self.choices or isinstance(self.answer, str):
            kept: list[Wrong] = []
            for w in self.wrong:
                if w.answer != self.answer and w.answer not in (k.answer for k in kept):
                    kept.append(w)
            object.__setattr__(self, "wrong", tuple(kept))
            return
        size = self._size()
        object.__setattr__(self, "fixed", FIXED_RANGE[0] <= size < FIXED_RANGE[1])
        base = _base_unit(size)
        finest = self._separable(base / 10**self.refine)
        for k in range(self.refine + 1):  # the coarsest precision that keeps as many apart
            if len(self._separable(base / 10**k)) == len(finest):
                object.__setattr__(self, "unit", base / 10**k)
                break
        object.__setattr__(self, "wrong", self._separable(self.unit))

    def _size(self) -> float:
        if self.scale is not None and math.isfinite(self.scale) and self.scale > 0:
            return float(self.scale)
        values = [float(self.answer), *(float(w.answer) for w in self.wrong)]
        finite = [abs(v) for v in values if math.isfinite(v) and v != 0]
        return max(finite, default=1.0)

    def _separable(self, unit: float) -> tuple[Wrong, ...]:
        """The wrong answers, in order, that are finite, do not print as 0 unless they are 0
        (1.2368 beside 1.875e+15 would), and are more than one `unit` from the truth and from
        each one kept before them: no two round to the same text."""
        kept: list[Wrong] = []
        for w in self.wrong:
            v = float(w.answer)
            taken = [float(self.answer), *(float(k.answer) for k in kept)]
            if v != 0 and abs(v) < unit / 2:
                continue
            if math.isfinite(v) and all(
                not math.isfinite(t) or abs(v - t) > unit * (1 + SLACK) for t in taken
            ):
                kept.append(w)
        return tuple(kept)

    def text(self, value: float | str) -> str:
        """`value` as the question shows it: rounded to its unit, trailing zeros dropped."""
        if isinstance(value, str):
            return value
        return _rounded_text(float(value), self.unit, self.fixed)

    @property
    def precision(self) -> str:
        """The question's precision in words: "4 decimals", "4 significant digits"."""
        if self.fixed:
            return f"{_decimals(self.unit)} decimals"
        digits = math.floor(math.log10(self._size())) + _decimals(self.unit) + 1
        return f"{digits} significant digits"


def _decimals(unit: float) -> int:
    return round(-math.log10(unit))


def _base_unit(size: float) -> float:
    """The last digit a question about numbers of `size` shows: 4 decimals (as the app's
    lnlab.core.numbers.fmt) from 0.1 to a million, 4 significant digits outside."""
    exponent = math.floor(math.log10(size))
    if size < FIXED_RANGE[1]:
        return 10.0 ** min(-4, exponent - 3)
    return 10.0 ** (exponent - 3)


def _rounded_text(v: float, unit: float, fixed: bool) -> str:
    """`v` rounded to `unit`: "2.2361", "0", "1.235e+06", "NaN", "∞"."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if abs(v) < unit / 2:
        return "0"
    if fixed:
        text = f"{v:.{_decimals(unit)}f}".rstrip("0").rstrip(".")
        return "0" if text in ("-0", "0") else text
    digits = max(1, math.floor(math.log10(abs(v))) + _decimals(unit) + 1)
    return f"{v:.{digits}g}"


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


def diagnose(question: Question, given: str, *, picked: bool = False) -> Diagnosis:
    """Mark `given` and say which misconception it matches, with the example's numbers.

    A `picked` answer is an option's text (lnlab.teach.quiz.options): it is what it says. A
    typed number is read at its own precision. With at least the question's digits it is
    right when it rounds to the answer's text, and a mistake's when it rounds to that one's.
    With fewer (2.23607 where the question shows 2.236070, its zero dropped) it is right when
    the truth rounds to it, it keeps MIN_DIGITS significant digits or reads as the answer's
    text, and no offered mistake rounds to it too; a mistake's likewise. A coarse number that
    both the truth and a mistake round to raises InputError, which asks for the question's
    precision; so does a number that does not parse.
    """
    truth = question.text(question.answer)
    if question.choices or picked:
        if given == (question.answer if question.choices else truth):
            return _right(question, truth)
        texts = {
            w.answer if question.choices else question.text(w.answer): w for w in question.wrong
        }
        match = texts.get(given)
    else:
        text = given.strip()
        if not text:
            raise InputError("type a number first")
        if text == truth and not math.isfinite(float(question.answer)):  # "NaN", "∞"
            return _right(question, truth)
        found = _match_number(question, float(parse_vector(text, 1, name="your answer")[0]), text)
        if found is RIGHT:
            return _right(question, truth)
        match = found  # type: ignore[assignment]
    if match is None:
        return _diagnosis(question, OTHER, f"Not quite: the answer is {truth}.")
    m = MISCONCEPTIONS[match.misconception]
    answer = f"The answer is {truth}."
    lead = f"{m.name}: {match.note or m.why} {answer}"
    return _diagnosis(question, m.key, f"{m.name}. {answer}", lead)


def _right(question: Question, truth: str) -> Diagnosis:
    if question.choices:
        return _diagnosis(question, RIGHT, "Right.")
    return _diagnosis(question, RIGHT, f"Right: the answer is {truth}.")


def _match_number(question: Question, value: float, text: str) -> Wrong | str | None:
    """RIGHT, the wrong answer `value` stands for, or None (see `diagnose`)."""
    typed = _typed_unit(text)
    if typed <= question.unit * (1 + SLACK):  # as many digits as the question shows, or more
        shown = question.text(value)
        if shown == question.text(question.answer):
            return RIGHT
        return next((w for w in question.wrong if question.text(w.answer) == shown), None)
    digits = _typed_digits(text)

    def rounds_to_it(target: float) -> bool:  # at the typed number of significant digits
        return math.isfinite(target) and float(f"{target:.{digits}g}") == value

    targets: list[tuple[Wrong | str, float]] = [(RIGHT, float(question.answer))]
    targets += [(w, float(w.answer)) for w in question.wrong]
    near = [(found, target) for found, target in targets if rounds_to_it(target)]
    if len(near) == 1:
        found, target = near[0]
        if digits >= MIN_DIGITS or question.text(value) == question.text(target):
            return found
        if found is not RIGHT:
            return None  # too coarse to name a mistake by: something else
    if near:
        raise InputError(f"give your answer to {question.precision}: {text} is too coarse to mark")
    return None


_DIGITS = re.compile(r"[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+\.")


def _typed_digits(text: str) -> int:
    """How many significant digits a typed number gives: 3 for "2.24" and "0.00224", 1 for
    "1e-06", 3 for "5.00"."""
    found = _DIGITS.search(text)
    try:
        return max(1, len(Decimal(found.group()).as_tuple().digits)) if found else 1
    except InvalidOperation:
        return 1


def _typed_unit(text: str) -> float:
    """The last digit a typed number gives: 0.01 for "2.24", 1 for "5", 10 for "1.5e2"."""
    found = _DIGITS.search(text)
    try:
        exponent = Decimal(found.group()).as_tuple().exponent if found else 0
    except InvalidOperation:
        exponent = 0
    return 10.0 ** int(exponent)  # type: ignore[arg-type]


def _diagnosis(question: Question, group: str, headline: str, lead: str = "") -> Diagnosis:
    """The message is `lead` (for a misconception: its name and note, with the example's
    numbers), else the headline, then the question's explanation."""
    message = f"{lead or headline} {question.explanation}".strip()
    return Diagnosis(group == RIGHT, group, message, headline)


def options(question: Question) -> tuple[str, ...]:
    """The multiple-choice texts: the question's own choices, or else the answer and each
    wrong answer as the question shows them (Question.text), in an order fixed by the qid
    (every student sees the same order, and the answer is not always first)."""
    if question.choices:
        return question.choices
    texts = [question.text(question.answer), *(question.text(w.answer) for w in question.wrong)]
    return tuple(
        sorted(texts, key=lambda t: hashlib.sha256(f"{question.qid}|{t}".encode()).digest())
    )


def group_of(question: Question, option_text: str) -> str:
    """The group an option belongs to: RIGHT, a misconception's key, or OTHER."""
    return diagnose(question, option_text, picked=True).group


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
    var = mc.variance(v)
    if var + eps > 0:
        wrongs.append(
            Wrong(
                "root_mixup",
                gamma * diff / (var + eps) + beta,
                f"That divides by σ² + ε = {fmt(var + eps)}, the variance; Layer Norm divides "
                f"by its square root σ_ε = {fmt(float(np.sqrt(var + eps)))}.",
            )
        )
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
