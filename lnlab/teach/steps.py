"""Layer Norm's five steps, defined once.

Every place that names, draws, asks about or exports a step reads it from here: the traces in
lnlab.core.norms, the step-through lesson and its slides, the home page, the GPU page's parity
table, the quiz and the exports.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StepInfo:
    """One step: what it computes (`key`, the LayerNormTrace field), and how it is taught."""

    key: str  # mean, var, std, x_hat, y
    title: str
    symbol: str  # plain text, for table headers and metrics
    formula: str  # LaTeX, symbolic
    explanation: str  # Markdown, one or two sentences
    question: str | None  # the prediction asked before the step's result, or None


STEPS: tuple[StepInfo, ...] = (
    StepInfo(
        "mean",
        "Mean",
        "μ",
        r"\mu = \dfrac{1}{D}\sum_{i=1}^{D} x_i",
        "Add the token's $D$ features and divide by $D$: the centre the token will be moved "
        "to 0 from. Only this token's own features take part.",
        'What is the mean of token "{label}"?',
    ),
    StepInfo(
        "var",
        "Variance",
        "σ²",
        r"\sigma^2 = \dfrac{1}{D}\sum_{i=1}^{D} (x_i - \mu)^2",
        "The average squared distance from the mean: how spread out the features are. "
        "Layer Norm divides by $D$, not $D - 1$: it describes exactly these $D$ numbers.",
        "What is its variance (divide by D)?",
    ),
    StepInfo(
        "std",
        "Standard deviation with epsilon",
        "σ_ε",
        r"\sigma_\epsilon = \sqrt{\sigma^2 + \epsilon}",
        "A small $\\epsilon$ goes inside the square root, so a constant token "
        "($\\sigma^2 = 0$) never divides by zero.",
        None,
    ),
    StepInfo(
        "x_hat",
        "Normalize",
        "x̂",
        r"\hat{x}_i = \dfrac{x_i - \mu}{\sigma_\epsilon}",
        "Subtract the mean and divide by $\\sigma_\\epsilon$: the token now has mean 0 and "
        "standard deviation 1 (a hair under, because of $\\epsilon$).",
        "What will its first feature be after normalizing?",
    ),
    StepInfo(
        "y",
        "Scale and shift",
        "y",
        r"y_i = \gamma_i \hat{x}_i + \beta_i",
        "Learned $\\gamma$ and $\\beta$ (one per feature) scale and shift the normalized "
        "features, so the model can give back any mean and spread it finds useful.",
        "And its first output after scale and shift?",
    ),
)
STEP_COUNT = len(STEPS)


def step(key: str) -> StepInfo:
    """The step that computes `key` (mean, var, std, x_hat or y)."""
    return next(s for s in STEPS if s.key == key)
