"""Layer Norm's five steps, defined once, and written out with an input's numbers.

Every place that names, draws, asks about or exports a step reads it from here: the
step-through lesson and its slides, the home page, the GPU page's parity table, the quiz and
the exports. `written_steps` substitutes one token's numbers from a trace of lnlab.core.norms
into each step's formula.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lnlab.core.norms import LayerNormTrace
from lnlab.teach.latex import bracketed, joined, num, term, vector


@dataclass(frozen=True)
class StepInfo:
    """One step: what it computes (`key`, the LayerNormTrace field), and how it is taught.

    A step that asks a question shows `setting` before it and `explanation` with its formula
    after it: they tell the rule that gives the answer. A step that asks none shows them all.
    """

    key: str  # mean, var, std, x_hat, y
    title: str
    symbol: str  # plain text, for table headers and metrics
    formula: str  # LaTeX, symbolic
    setting: str  # Markdown, one sentence: what the step is for, without its rule
    explanation: str  # Markdown, one or two sentences: the rule, and why
    question: str | None  # the prediction asked before the step's result, or None


STEPS: tuple[StepInfo, ...] = (
    StepInfo(
        "mean",
        "Mean",
        "μ",
        r"\mu = \dfrac{1}{D}\sum_{i=1}^{D} x_i",
        "First, the centre that the token will be moved to 0 from.",
        "Add the token's D features and divide by D. Only this token's own features take part.",
        'What mean does Layer Norm subtract from token "{label}"?',
    ),
    StepInfo(
        "var",
        "Variance",
        "σ²",
        r"\sigma^2 = \dfrac{1}{D}\sum_{i=1}^{D} (x_i - \mu)^2",
        "Next, how spread out the token is around that centre.",
        "The average squared distance from the mean. Layer Norm divides by D, not D − 1: "
        "it describes exactly these D numbers.",
        "What variance does Layer Norm compute for it?",
    ),
    StepInfo(
        "std",
        "Standard deviation with epsilon",
        "σ_ε",
        r"\sigma_\epsilon = \sqrt{\sigma^2 + \epsilon}",
        "The spread as a standard deviation, the number the token will be divided by.",
        "A small ε goes inside the square root, so a constant token (σ² = 0) never divides "
        "by zero.",
        None,
    ),
    StepInfo(
        "x_hat",
        "Normalize",
        "x̂",
        r"\hat{x}_i = \dfrac{x_i - \mu}{\sigma_\epsilon}",
        "Now the token is centred and rescaled with the numbers of steps 1 to 3.",
        "Subtract the mean and divide by σ_ε: the token now has mean 0 and standard "
        "deviation √(σ² / (σ² + ε)), just under 1 when ε is small next to σ², and 0 when the "
        "token is constant and ε > 0.",
        "What will its first feature be after normalizing?",
    ),
    StepInfo(
        "y",
        "Scale and shift",
        "y",
        r"y_i = \gamma_i \hat{x}_i + \beta_i",
        "Last, two learned vectors, γ and β, one number per feature each, act on the "
        "normalized features.",
        "γ scales and β shifts each normalized feature, so the model can give back any mean "
        "and spread it finds useful.",
        "And its first output after scale and shift?",
    ),
)
STEP_COUNT = len(STEPS)


def step(key: str) -> StepInfo:
    """The step that computes `key` (mean, var, std, x_hat or y)."""
    return next(s for s in STEPS if s.key == key)


@dataclass(frozen=True)
class Step:
    """One step of a calculation, ready to display."""

    title: str
    formula: str  # the symbolic formula, LaTeX
    latex: str  # the formula with this input's numbers substituted, LaTeX
    value: np.ndarray  # the step's result for every group (token)


def written_steps(trace: LayerNormTrace, row: int = 0) -> tuple[Step, ...]:
    """The five steps of Layer Norm, with the numbers of group (token) `row` substituted,
    in the trace's own convention (D or D - 1, epsilon inside or outside the root)."""
    x, x_hat, y = (trace.group(name, row) for name in ("x", "x_hat", "y"))
    mu, var, std = (float(trace.group(name, row)[0]) for name in ("mean", "var", "std"))
    g, b = trace.gamma.ravel(), trace.beta.ravel()
    n, eps, spec = x.size, trace.eps, trace.spec
    m = term(mu)
    divisor = n - 1 if spec.unbiased else n
    mean_s, var_s, std_s, x_hat_s, y_s = STEPS
    var_formula = (
        var_s.formula.replace(r"\dfrac{1}{D}", r"\dfrac{1}{D-1}")
        if spec.unbiased
        else var_s.formula
    )
    if spec.eps_outside:
        std_formula = r"\sigma_\epsilon = \sigma + \epsilon = \sqrt{\sigma^2} + \epsilon"
        std_sub = rf"\sigma_\epsilon = \sqrt{{{num(var)}}} + {num(eps)} = {num(std)}"
    else:
        std_formula = std_s.formula
        std_sub = rf"\sigma_\epsilon = \sqrt{{{num(var)} + {num(eps)}}} = {num(std)}"
    return (
        Step(
            mean_s.title,
            mean_s.formula,
            rf"\mu = \tfrac{{1}}{{{n}}}\big({joined([term(v) for v in x])}\big) = {num(mu)}",
            trace.mean,
        ),
        Step(
            var_s.title + (" (unbiased, D - 1)" if spec.unbiased else ""),
            var_formula,
            rf"\sigma^2 = \tfrac{{1}}{{{divisor}}}\big("
            + joined([f"({term(v)} - {m})^2" for v in x])
            + rf"\big) = {num(var)}",
            trace.var,
        ),
        Step(std_s.title, std_formula, std_sub, trace.std),
        Step(
            x_hat_s.title,
            x_hat_s.formula,
            r"\hat{x} = "
            + bracketed([rf"\dfrac{{{term(v)} - {m}}}{{{num(std)}}}" for v in x])
            + rf" = {vector(x_hat)}",
            trace.x_hat,
        ),
        Step(
            y_s.title,
            y_s.formula,
            r"y = "
            + bracketed(
                [
                    f"{num(gi)} \\cdot {term(xi)} + {term(bi)}"
                    for gi, xi, bi in zip(g, x_hat, b, strict=True)
                ]
            )
            + rf" = {vector(y)}",
            trace.y,
        ),
    )
