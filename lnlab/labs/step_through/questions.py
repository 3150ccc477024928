"""The step-through lesson's questions, asked before each result: the token's mean, variance,
first x_hat and first y (with the wrong answers real misconceptions give on its numbers), and
the std of x_hat before the check."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from lnlab.core.norms import LayerNormTrace
from lnlab.core.numbers import DEFAULT_EPS, fmt
from lnlab.labs.step_through.token import TokenLesson
from lnlab.teach import misconceptions as mc
from lnlab.teach.claims import claim
from lnlab.teach.quiz import Question, Wrong, across_batch_note, feature_question, question_id
from lnlab.teach.steps import STEPS, step


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
            question_id("mean", *key),
            _asked("mean").format(label=label),
            mean,
            f"Add the {d} features and divide by {d}: {fmt(x.sum())} / {d} = {fmt(mean)}.",
            wrong=(
                *((Wrong("across_batch", float(column.mean()), batch),) if across else ()),
                *((_mean_d_minus_1(x),) if d > 1 else ()),
            ),
        ),
        Question(
            question_id("var", *key),
            _asked("var"),
            var,
            f"Average the squared distances from the mean {fmt(mean)}: {fmt(var)}.",
            wrong=(
                Wrong(
                    "d_minus_1",
                    mc.variance(x, d_minus_1=True),
                    f"That is the sum of squared distances, {fmt(var * d)}, divided by D − 1 = "
                    f"{d - 1}. Layer Norm divides by D = {d}.",
                ),
                *((Wrong("across_batch", mc.variance(column), batch),) if across else ()),
                Wrong(
                    "root_mixup",
                    float(np.sqrt(var)),
                    f"That is σ = √{fmt(var)}, the standard deviation. The variance is the "
                    "average of the squared distances itself, before any root.",
                ),
            ),
        ),
        feature_question(
            question_id("xhat", *key),
            _asked("x_hat"),
            float(x_hat[0]),
            f"(x1 - mean) / std = ({fmt(x[0])} - {fmt(mean)}) / {fmt(std)} = {fmt(x_hat[0])}.",
            rows,
            row,
            eps,
        ),
        feature_question(
            question_id("y", *key),
            _asked("y"),
            float(y[0]),
            f"gamma1 * x_hat1 + beta1 = {fmt(y[0])}.",
            rows,
            row,
            eps,
            gamma=gamma,
            beta=beta,
        ),
    )


def _mean_d_minus_1(x: np.ndarray) -> Wrong:
    """The sum over D − 1: Bessel's correction, which belongs to a sample's variance, carried
    over to the mean."""
    d = x.size
    return Wrong(
        "d_minus_1",
        float(x.sum() / (d - 1)),
        f"That is the sum {fmt(float(x.sum()))} divided by D − 1 = {d - 1}. The mean divides "
        f"by D = {d}, and so does Layer Norm's variance.",
    )


def _asked(key: str) -> str:
    """The question step `key` asks (lnlab.teach.steps.STEPS: one home for its wording)."""
    return str(step(key).question)


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
        replace(q, qid=question_id(q.qid.split("-")[0], *parts))
        for q, parts in zip(asked, depends_on, strict=True)
    )
    return tuple(None if s.question is None else next(rekeyed) for s in STEPS)


def check_question(lesson: TokenLesson) -> Question:
    """Before the check: the std of x_hat as Layer Norm measures spread (dividing by D, which
    the stem does not say). Wrong: torch.std's D - 1, and 1 exactly, which holds only without
    epsilon."""
    c, d = lesson.check, lesson.check.features
    return Question(
        question_id("xhatstd", lesson.x.tobytes(), lesson.eps),
        "What is the standard deviation of x̂, measured as Layer Norm measures spread?",
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
                "root_mixup",
                c.std**2,
                f"That is x̂'s variance, σ² / (σ² + ε) = {fmt(c.std**2)}: its standard "
                "deviation is the square root.",
            ),
            Wrong(
                "no_eps",
                1.0,
                claim(
                    "step_through.no_eps_note",
                    not lesson.constant,
                    f"x̂ has std exactly 1 only without ε: with ε = {fmt(lesson.eps)} under the "
                    f"root x̂ is divided by σ_ε = {fmt(lesson.std)}, not by σ = "
                    f"{fmt(float(np.sqrt(lesson.var)))}.",
                    "x̂ has std 1 only for a token that varies, and without ε: this token is "
                    "constant, so x̂ is all 0.",
                ),
            ),
        ),
    )
