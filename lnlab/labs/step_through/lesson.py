"""The "Step through one token" lesson as slides: the five steps, the check, the undo and the
whole prompt, each one section, built from a TokenLesson (lnlab.labs.step_through.token); then the
backward pass (lnlab.labs.step_through.backward)."""

from __future__ import annotations

import numpy as np

from lnlab.core.numbers import fmt
from lnlab.labs.step_through import backward
from lnlab.labs.step_through.plots import prompt_heatmap, token_bars
from lnlab.labs.step_through.questions import check_question, step_questions
from lnlab.labs.step_through.token import (
    TokenLesson,
    input_table,
    normalized_table,
    recovery_frame,
    token_summary,
    vector_frame,
)
from lnlab.teach.figures import spread
from lnlab.teach.latex import num
from lnlab.teach.lesson import Callout, Figure, Lesson, Metric, Section, Table
from lnlab.teach.markdown import plain
from lnlab.teach.quiz import Question
from lnlab.teach.steps import STEPS, StepInfo

TITLE = "Step through one token"
INTRO = (
    "Layer Norm looks at **one token at a time**: it takes that token's $D$ features, "
    "computes their mean and spread, and rescales them. Enter embeddings (or pick a preset), "
    "choose a token, and walk through the five steps."
)
COLOURS = "orange is negative, purple positive, and every cell prints its number"
BARS_CAPTION = (
    "Left: the token's features as bars, the dashed line at their mean μ and, from step 3, "
    "the band μ ± σ_ε. Right, from step 4: x̂ with its band 0 ± 1, then y = γ x̂ + β."
)
UNDO = "undo"  # the section whose button (drawn by the page) sets γ and β to undo the norm
UNDEFINED_TOKEN = (
    "This token is constant, so σ² = 0, and ε = 0, so σ_ε = √(0 + 0) = 0: every "
    "x̂ᵢ = 0 / 0 is NaN (not a number), and so is y. This is why ε exists: with "
    "any ε > 0 the same token gives x̂ = 0 and y = β."
)
CONSTANT_TOKEN = "This token is constant (σ² = 0): ε keeps σ_ε above 0, so x̂ = 0 and y = β."


def slides(lesson: TokenLesson, dy: np.ndarray | None = None) -> Lesson:
    """The page's lesson: steps 1-5, then the check, the undo, the whole prompt, and the
    backward pass with upstream gradient `dy` (None: backward.default_dy)."""
    questions = step_questions(lesson)
    steps = tuple(_step(lesson, k, questions[k]) for k in range(len(STEPS)))
    back = backward.sections(lesson, dy)
    return Lesson(
        key="step_through",
        title=TITLE,
        intro=INTRO,
        context=f"**Token {lesson.token + 1}: {plain(lesson.labels[lesson.token])}** · "
        + plain(token_summary(lesson)),
        sections=(*steps, _check(lesson), _undo(lesson), *_prompt(lesson), *back),
    )


def _step(lesson: TokenLesson, k: int, question: Question | None) -> Section:
    """Step k: with a question, its setting before it and its rule after (lnlab.teach.steps);
    a constant token's note goes after the answer too, since it gives x̂ and y away."""
    info, traced = STEPS[k], lesson.steps[k]
    value = traced.value[lesson.token]
    if value.size == 1:
        numbers: tuple = (Metric(metric_label(info), float(value[0])),)
    else:
        numbers = (Table(vector_frame(info.symbol, value)),)
    notes = _warnings(lesson) if info.key in ("std", "x_hat", "y") else ()
    asks = question is not None
    return Section(
        key=info.key,
        title=info.title,
        explanation=info.setting if asks else f"{info.setting} {info.explanation}",
        formulas=() if asks else (traced.formula,),
        finding=" ".join((info.explanation, *(f"**{n.text}**" for n in notes))) if asks else "",
        worked=(traced.formula, traced.latex) if asks else (traced.latex,),
        numbers=numbers,
        figure=Figure(
            lambda: token_bars(lesson.x, lesson.x_hat, lesson.y, lesson.mean, lesson.std, k),
            "st_bars",
            BARS_CAPTION,
            label=f"Token {lesson.token + 1} before and after",
            summary=bars_summary(lesson, k),
        ),
        question=question,
        callouts=() if asks else notes,
    )


def bars_summary(lesson: TokenLesson, k: int) -> str:
    """What the bars of step `k` (0-based) show, in one sentence of the token's numbers."""
    parts = [
        f"x's {lesson.features} values run {spread(lesson.x)}, its mean {fmt(lesson.mean)} "
        "marked by the dashed line"
    ]
    if k >= 2 and np.isfinite(lesson.std) and lesson.std > 0:
        low, high = lesson.mean - lesson.std, lesson.mean + lesson.std
        parts.append(f"the band μ ± σ_ε spans {fmt(low)} to {fmt(high)}")
    if k >= 3:
        parts.append(
            "x̂ is NaN (0 / 0): nothing to draw"
            if np.isnan(lesson.x_hat).all()
            else f"after normalizing the values lie {spread(lesson.x_hat)}"
        )
    if k >= 4 and not np.isnan(lesson.y).all():
        parts.append(f"y = γ x̂ + β lies {spread(lesson.y)}")
    return "; ".join(parts) + "."


def metric_label(info: StepInfo) -> str:
    """A one-number step's label: "μ (mean)"."""
    return f"{info.symbol} ({info.title.lower()})"


def _warnings(lesson: TokenLesson) -> tuple[Callout, ...]:
    """Why a constant token gives NaN with ε = 0, or β with ε > 0."""
    if lesson.undefined:
        return (Callout("warning", UNDEFINED_TOKEN),)
    if lesson.var == 0:
        return (Callout("info", CONSTANT_TOKEN),)
    return ()


def _spread(lesson: TokenLesson) -> str:
    """What the std of x̂ is on this token, in words its numbers bear out."""
    c = lesson.check
    if lesson.undefined:
        return "With σ_ε = 0, x̂ is NaN, and so is its std."
    if lesson.var == 0:
        return "The token is constant, so x̂ is all 0 and its std is 0."
    if lesson.eps == 0:
        return "With ε = 0 the std of x̂ is exactly 1 (up to rounding)."
    return (
        f"With ε = {fmt(lesson.eps)} under the root, the std of x̂ is √(σ² / (σ² + ε)) = "
        f"{fmt(c.expected_std)}, under 1 by the share ε takes of σ² + ε."
    )


def _check(lesson: TokenLesson) -> Section:
    c = lesson.check
    d = c.features
    return Section(
        key="check",
        title="The check: the mean and spread of x̂",
        explanation="Measure the normalized token x̂: its mean and its standard deviation.",
        finding=(
            f"Layer Norm divides by $D$: it describes exactly these $D = {d}$ numbers. "
            f"{_spread(lesson)} `torch.std` divides by $D - 1$ (Bessel's correction), as if "
            "the features were a sample of a larger population, so it prints a bigger number."
        ),
        worked=(  # after the question: they give its answer
            r"\mathrm{std}(\hat{x}) = \sqrt{\dfrac{\sigma^2}{\sigma^2 + \epsilon}} = "
            rf"\sqrt{{\dfrac{{{num(lesson.var)}}}{{{num(lesson.var)} + {num(lesson.eps)}}}}}"
            rf" = {num(c.expected_std)}",
            rf"\texttt{{torch.std}}(\hat{{x}}) = {num(c.std)} \times "
            rf"\sqrt{{\tfrac{{{d}}}{{{d - 1}}}}} = {num(c.std_unbiased)}",
        ),
        numbers=(
            Metric(
                "mean of x̂", c.mean, "Something like 5.6e-17 is 0 up to floating-point rounding."
            ),
            Metric("std of x̂, dividing by D", c.std),
            Metric("torch.std(x̂), dividing by D − 1", c.std_unbiased),
        ),
        callouts=(Callout("info", "With one feature D − 1 = 0, so torch.std returns nan."),)
        if d == 1
        else (),
        question=check_question(lesson),
        detail=(
            f"Likewise `torch.var(x)` gives {fmt(c.var_input_unbiased)} for this token, where "
            f"Layer Norm uses σ² = {fmt(lesson.var)}. Ask torch for Layer Norm's numbers with "
            "`x.std(unbiased=False)` or `x.var(correction=0)`."
        ),
    )


def _undo(lesson: TokenLesson) -> Section:
    done = lesson.undoes_token
    return Section(
        key=UNDO,
        title="Let γ and β undo it",
        explanation=(
            "γ and β are learned, so the model can undo the normalization if that helps: with "
            r"$\gamma = \sigma_\epsilon$ and $\beta = \mu$, "
            r"$y = \sigma_\epsilon (x - \mu) / \sigma_\epsilon + \mu = x$."
        ),
        formulas=(
            rf"\gamma = \sigma_\epsilon = {num(lesson.undo_gamma)},\quad "
            rf"\beta = \mu = {num(lesson.undo_beta)}",
        ),
        numbers=(Table(recovery_frame(lesson)),) if done else (),
        callouts=(
            Callout(
                "success",
                f"The input is back: y = x for token {lesson.token + 1}, largest difference "
                f"|y − x| = {fmt(lesson.recovery_error, abs(lesson.x).max())}.",
            ),
        )
        if done
        else (),
        detail="γ and β are shared by every token, so the other tokens come back only if they "
        "happen to have the same mean and σ_ε."
        if done
        else "",
    )


def normalized_caption(lesson: TokenLesson) -> str:
    """What the normalized rows' means and stds are, said from this prompt's numbers: every
    defined row has mean 0; its std is √(σ² / (σ² + ε)), 1 with ε = 0 and 0 for a constant
    token."""
    t = lesson.trace
    var, eps = t.var[:, 0], lesson.eps
    defined = t.std[:, 0] > 0
    constant = [i + 1 for i in np.flatnonzero(defined & (var == 0))]
    undefined = [i + 1 for i in np.flatnonzero(~defined)]
    rows = t.x_hat[defined & (var > 0)]  # their std is √(σ² / (σ² + ε)), the caption's
    spread = np.sqrt(((rows - rows.mean(axis=1, keepdims=True)) ** 2).mean(axis=1))
    parts = []
    if spread.size:
        low, high = fmt(spread.min()), fmt(spread.max())
        std = (
            "std 1"
            if eps == 0
            else f"std √(σ² / (σ² + ε)) of its token, here {low}"
            + (f" to {high}" if high != low else "")
        )
        parts.append(f"Each row's mean is 0 and its {std}")
    if constant:
        parts.append(f"{_tokens(constant)} constant: x̂ all 0, std 0")
    if undefined:
        parts.append(f"{_tokens(undefined)} constant with ε = 0: NaN")
    return "; ".join(parts) + "."


def _tokens(numbers: list[int]) -> str:
    """'token 3 is' or 'tokens 1, 4 are'."""
    if len(numbers) == 1:
        return f"token {numbers[0]} is"
    return f"tokens {', '.join(map(str, numbers))} are"


def _prompt(lesson: TokenLesson) -> tuple[Section, Section]:
    """The whole prompt, before and after: every token with its own mean and σ_ε."""
    t = lesson.trace
    own = (
        r"Every token is normalized with its own mean and $\sigma_\epsilon$, never with another "
        f"token's. The outlined row is token {lesson.token + 1}."
    )
    undefined = lesson.undefined_tokens
    nan_note = (
        (
            Callout(
                "warning",
                f"Tokens {', '.join(str(i + 1) for i in undefined)} are constant "
                "and ε = 0: their x̂ is NaN.",
            ),
        )
        if undefined
        else ()
    )
    return (
        Section(
            key="prompt_input",
            title="The whole prompt: input",
            explanation=own,
            numbers=(Table(input_table(lesson), "Each token's mean μ and σ_ε beside its row."),),
            figure=Figure(
                lambda: prompt_heatmap(t.x, lesson.labels, "Input x", lesson.token),
                "st_heat_input",
                f"The input, one row per token ({COLOURS}).",
                label="The whole prompt's input",
                summary=f"{t.x.shape[0]} tokens × {t.x.shape[1]} features, values "
                f"{spread(t.x)}; token {lesson.token + 1}'s row is outlined.",
            ),
        ),
        Section(
            key="prompt_normalized",
            title="The whole prompt: normalized",
            explanation=own,
            numbers=(Table(normalized_table(lesson), normalized_caption(lesson)),),
            figure=Figure(
                lambda: prompt_heatmap(t.x_hat, lesson.labels, "Normalized x̂", lesson.token),
                "st_heat_normalized",
                f"x̂, one row per token ({COLOURS}); a row whose σ_ε is 0 is NaN.",
                label="The whole prompt, normalized",
                summary=f"Each token's row normalized (the caption says which rows reach mean 0 "
                f"and std about 1): values {spread(t.x_hat)}; token {lesson.token + 1}'s row is "
                "outlined.",
            ),
            callouts=nan_note,
        ),
    )
