"""The backward pass of the step-through lesson: from the upstream gradient dy to dbeta and
dgamma, to dx_hat, to dx, why dx sums to zero, and the check beside torch autograd.

Each slide works with the chosen token's own numbers (lnlab.core.backward computes them; the
formula and its two identities are derived in that module's docstring). The page's dy box
(pages/step_through.py, the "dy" section's control) gives dy; blank gives `default_dy`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lnlab.core.backward import AUTOGRAD_DTYPES, GRADIENTS, AutogradCheck, autograd_check
from lnlab.core.numbers import fmt
from lnlab.labs.step_through.grid import feature_names
from lnlab.labs.step_through.token import TokenLesson
from lnlab.teach.claims import claim
from lnlab.teach.latex import bracketed, joined, num, power, term, vector
from lnlab.teach.lesson import Callout, Metric, Section, Table
from lnlab.teach.quiz import Question, question_id

DY = "dy"  # the section whose control (drawn by the page) is the dy box
KEYS = (DY, "dbeta_dgamma", "dx_hat", "dx", "dx_sums", "autograd")
DEFAULT_DY = (1.0, -2.0, 0.5, 3.0, -1.0, 2.0, -0.5, 1.5)  # repeated for more features
GRADIENT_NAMES = {"dx": "dx", "dgamma": "dγ", "dbeta": "dβ"}
DX_HAT = r"d\hat{x}"
MEAN_DX_HAT = r"\overline{d\hat{x}}"
MEAN_PROJECTION = r"\overline{d\hat{x}\,\hat{x}}"


def default_dy(d: int) -> np.ndarray:
    """The dy the slides use when the box is blank: DEFAULT_DY's first d values, repeated.
    Not all equal, so that dx is not 0 (with gamma = 1 an all-equal dy gives dx = 0)."""
    return np.resize(np.array(DEFAULT_DY), d)


def sections(lesson: TokenLesson, dy: np.ndarray | None = None) -> tuple[Section, ...]:
    """The backward slides for the lesson's token, in the order of KEYS."""
    dy = default_dy(lesson.features) if dy is None else np.asarray(dy, dtype=np.float64)
    check = autograd_check(lesson.x, dy, lesson.gamma, lesson.eps)
    dx_hat = dy * lesson.gamma  # back through gamma: the step the three slides after it share
    return (
        _upstream(lesson, dy),
        _dgamma_dbeta(lesson, dy, check),
        _dx_hat(lesson, dy, dx_hat),
        _dx(lesson, dx_hat, check),
        _sums(lesson, dy, dx_hat, check),
        _autograd(check),
    )


def _rows(*rows: tuple[str, np.ndarray]) -> pd.DataFrame:
    """Vectors as the rows of one table: the name, then f1..fD. One 2-D array: a frame of
    one-row frames costs pandas a column array per value."""
    values = np.stack([np.asarray(v, dtype=np.float64) for _, v in rows])
    table = pd.DataFrame(values, columns=feature_names(values.shape[1]))
    table.insert(0, "vector", [name for name, _ in rows])
    return table


def _qid(kind: str, lesson: TokenLesson, dy: np.ndarray) -> str:
    """New for a new token, epsilon, gamma or dy; the same across reruns."""
    parts = (lesson.x.tobytes(), lesson.eps, lesson.gamma.tobytes(), dy.tobytes())
    return question_id(kind, *parts)


def _after(lesson: TokenLesson, finding: str) -> str:
    """A questioned slide's finding, led by the NaN note when there is one: before the
    answer it would give a NaN answer away."""
    return " ".join((*(f"**{c.text}**" for c in _nan_note(lesson)), finding))


def _nan_note(lesson: TokenLesson) -> tuple[Callout, ...]:
    said = claim(
        "step_through.backward_nan",
        lesson.undefined,
        "σ_ε = 0 (a constant token with ε = 0): x̂ is 0 / 0 = NaN, and so are dγ and dx. "
        "With any ε > 0 they are finite.",
    )
    return (Callout("warning", said),) if said else ()


def _upstream(lesson: TokenLesson, dy: np.ndarray) -> Section:
    return Section(
        key=DY,
        title="Backward: the upstream gradient dy",
        explanation=(
            "Training also runs backwards. The layers after Layer Norm turn y into a loss $L$, "
            "and backpropagation hands Layer Norm $dy = \\partial L / \\partial y$: how fast "
            "$L$ changes with each output. For a squared error "
            "$L = \\tfrac12 \\sum_i (y_i - t_i)^2$ it is $y - t$. Type your own dy below "
            "(blank gives the default)."
        ),
        formulas=(r"dy_i = \dfrac{\partial L}{\partial y_i}",),
        numbers=(Table(_rows(("y", lesson.y), ("dy", dy))),),
    )


def _dgamma_dbeta(lesson: TokenLesson, dy: np.ndarray, check: AutogradCheck) -> Section:
    g = check.grads
    x_hat = g.x_hat
    return Section(
        key="dbeta_dgamma",
        title="Back to β and γ",
        explanation=(
            "The first gradients backpropagation reaches are those of the learned β and γ, "
            "one of each per feature."
        ),
        finding=_after(  # after the question: the rule gives its answer
            lesson,
            "$y_i = \\gamma_i \\hat{x}_i + \\beta_i$: $\\beta_i$ adds straight to $y_i$, so "
            "$d\\beta_i = dy_i$; $\\gamma_i$ multiplies $\\hat{x}_i$, so "
            "$d\\gamma_i = dy_i\\,\\hat{x}_i$. Over a batch, every token adds its own share.",
        ),
        worked=(
            r"d\beta_i = dy_i,\quad d\gamma_i = dy_i\,\hat{x}_i",
            r"d\gamma = "
            + bracketed([rf"{term(a)} \cdot {term(b)}" for a, b in zip(dy, x_hat, strict=True)])
            + rf" = {vector(g.dgamma)}",
        ),
        numbers=(Table(_rows(("dy", dy), ("x̂", x_hat), ("dγ", g.dgamma), ("dβ", g.dbeta))),),
        question=Question(
            _qid("dgamma", lesson, dy),
            "What is dγ₁, the gradient of the first γ?",
            float(g.dgamma[0]),
            f"dγ₁ = dy₁ · x̂₁ = {fmt(dy[0])} · {fmt(x_hat[0])} = {fmt(g.dgamma[0])}.",
        ),
    )


def _dx_hat(lesson: TokenLesson, dy: np.ndarray, dx_hat: np.ndarray) -> Section:
    return Section(
        key="dx_hat",
        title="Back through γ: dx̂ = dy γ",
        explanation=(
            "$\\hat{x}_i$ reaches the loss only through $y_i = \\gamma_i \\hat{x}_i + \\beta_i$, "
            "so its gradient is $dy_i$ times $\\gamma_i$. With $\\gamma = 1$, $d\\hat{x} = dy$."
        ),
        formulas=(rf"{DX_HAT}_i = dy_i\,\gamma_i",),
        worked=(
            rf"{DX_HAT} = "
            + bracketed(
                [rf"{term(a)} \cdot {term(b)}" for a, b in zip(dy, lesson.gamma, strict=True)]
            )
            + rf" = {vector(dx_hat)}",
        ),
        numbers=(Table(_rows(("dy", dy), ("γ", lesson.gamma), ("dx̂", dx_hat))),),
    )


def _dx(lesson: TokenLesson, dx_hat: np.ndarray, check: AutogradCheck) -> Section:
    g = check.grads
    x_hat, sigma, d = g.x_hat, float(g.std[0]), lesson.features
    with np.errstate(invalid="ignore"):  # NaN when sigma_eps = 0, said by the callout
        mean_dx_hat, mean_projection = float(dx_hat.mean()), float((dx_hat * x_hat).mean())
    products = [rf"{term(a)} \cdot {term(b)}" for a, b in zip(dx_hat, x_hat, strict=True)]
    return Section(
        key="dx",
        title="Back through μ and σ_ε: dx",
        explanation=(
            "Every $\\hat{x}_i$ depends on every $x_j$ through $\\mu$ and $\\sigma_\\epsilon$: "
            "nudging one feature moves the whole token's mean and spread. So two terms come "
            "off $d\\hat{x}$: its mean (through $\\mu$), and $\\hat{x}$ times the mean of "
            "$d\\hat{x}\\,\\hat{x}$ (through $\\sigma_\\epsilon$)."
        ),
        formulas=(
            rf"dx = \dfrac{{1}}{{\sigma_\epsilon}}\big({DX_HAT} - {MEAN_DX_HAT}"
            rf" - \hat{{x}}\,{MEAN_PROJECTION}\big)",
        ),
        worked=(
            rf"{MEAN_DX_HAT} = \tfrac{{1}}{{{d}}}\big({joined([term(v) for v in dx_hat])}\big)"
            rf" = {num(mean_dx_hat)}",
            rf"{MEAN_PROJECTION} = \tfrac{{1}}{{{d}}}\big({joined(products)}\big)"
            rf" = {num(mean_projection)}",
            rf"dx = \tfrac{{1}}{{{num(sigma)}}}\big({vector(dx_hat)} - {term(mean_dx_hat)}"
            rf" - {term(mean_projection)}\,{vector(x_hat)}\big) = {vector(g.dx)}",
        ),
        # off the slides: the worked formulas hold the same vectors
        numbers=(Table(_rows(("dx̂", dx_hat), ("x̂", x_hat), ("dx", g.dx)), on_slide=False),),
        callouts=_nan_note(lesson),
    )


def _sums(lesson: TokenLesson, dy: np.ndarray, dx_hat: np.ndarray, check: AutogradCheck) -> Section:
    g = check.grads
    x_hat, sigma, eps = g.x_hat, g.std[0], lesson.eps  # numpy's sigma: 0 / 0 is NaN, no error
    with np.errstate(all="ignore"):  # NaN when sigma_eps = 0, said by the callout
        projection = float(np.sum(dx_hat * x_hat))  # sum(dx_hat * x_hat)
        dot = float(np.sum(g.dx * x_hat))
        predicted = float(eps * projection / sigma**3)
        scale = float(np.nansum(np.abs(g.dx * x_hat))) or 1.0
    total = float(g.dx.sum())
    total_scale = float(np.nansum(np.abs(g.dx))) or 1.0
    eps_note = (
        claim("step_through.dot_nan", lesson.undefined, "With σ_ε = 0 it is NaN.")
        or claim(
            "step_through.dot_0_eps_0",
            eps == 0,
            "With ε = 0 that is exactly 0: dx is orthogonal to x̂.",
        )
        or claim(
            "step_through.dot_0_projection_0",
            projection == 0,
            f"Here Σ dx̂ x̂ = 0, so it is 0 even with ε = {fmt(eps)}.",
        )
        or claim(
            "step_through.dot_not_0",
            eps > 0 and projection != 0,
            f"With ε = {fmt(eps)} it is "
            + (fmt(predicted) if predicted != 0 else "below the smallest float64 (it prints 0)")
            + ", not 0: dx is orthogonal to x̂ only when ε = 0.",
            predicted=predicted,
        )
    )
    return Section(
        key="dx_sums",
        title="Adding up dx, and dx · x̂",
        explanation=(
            "Two checks on the gradient dx: its sum over the features, and its dot product with x̂."
        ),
        finding=_after(  # after the question: the reason is its answer
            lesson,
            "Adding one number to every feature moves μ along and changes no $\\hat{x}_i$, so "
            "the loss cannot feel it: $dx$ has no part along $(1, \\dots, 1)$, and it sums to "
            "0 for any dy. Both results follow from $\\sum_i \\hat{x}_i = 0$ and "
            "$\\overline{\\hat{x}^2} = \\sigma^2 / \\sigma_\\epsilon^2$. Scaling the features "
            "about μ leaves $\\hat{x}$ unchanged only when ε = 0, so "
            f"$dx \\cdot \\hat{{x}}$ keeps an ε term. {eps_note}",
        ),
        worked=(
            rf"\textstyle\sum_i dx_i = \tfrac{{1}}{{\sigma_\epsilon}}\big(\sum_i {DX_HAT}_i"
            rf" - D\,{MEAN_DX_HAT} - {MEAN_PROJECTION} \sum_i \hat{{x}}_i\big) = 0",
            rf"dx \cdot \hat{{x}} = \tfrac{{1}}{{\sigma_\epsilon}} \textstyle\sum_i "
            rf"{DX_HAT}_i \hat{{x}}_i \big(1 - \overline{{\hat{{x}}^2}}\big) = "
            rf"\dfrac{{\epsilon \sum_i {DX_HAT}_i \hat{{x}}_i}}{{\sigma_\epsilon^3}}",
            rf"\textstyle\sum_i dx_i = {joined([term(v, total_scale) for v in g.dx])}"
            rf" = {num(total, total_scale)}",
            rf"dx \cdot \hat{{x}} = \dfrac{{{num(eps)} \cdot {term(projection)}}}"
            rf"{{{power(sigma, 3)}}} = {num(predicted, scale)}",
        ),
        numbers=(
            Metric(
                "Σ dx",
                total,
                claim(
                    "step_through.sum_dx_0",
                    not lesson.undefined,
                    "0 up to rounding, for any dy.",
                    "NaN: σ_ε = 0.",
                ),
                total_scale,
            ),
            Metric("dx · x̂", dot, "Computed from the dx above.", scale),
            Metric("ε Σ dx̂ x̂ / σ_ε³", predicted, "The formula's prediction.", scale),
        ),
        question=Question(
            _qid("sumdx", lesson, dy),
            "What is dx₁ + dx₂ + … + dx_D, the sum of dx over the features?",
            float("nan") if lesson.undefined else 0.0,
            claim(
                "step_through.sum_dx_0",
                not lesson.undefined,
                "0, for any dy: Σ x̂ = 0 removes the last term and the first two cancel.",
                "NaN: with σ_ε = 0 every dx is 0 / 0.",
            ),
            scale=total_scale,  # "0" is read against the size of dx, not against 1
        ),
    )


def _autograd(check: AutogradCheck) -> Section:
    grads = check.grads
    d = grads.dx.size
    nan = bool(np.isnan(grads.dx).any())
    worst = {t: max(check.max_abs_diff(t, n) for n in GRADIENTS) for t in AUTOGRAD_DTYPES}
    measured = ", ".join(f"{fmt(v)} in {t}" for t, v in worst.items())
    differences = pd.DataFrame(
        {
            "gradient": [GRADIENT_NAMES[n] for n in GRADIENTS],
            **{
                f"max |Δ| {dtype}": [check.max_abs_diff(dtype, n) for n in GRADIENTS]
                for dtype in AUTOGRAD_DTYPES
            },
        }
    )
    return Section(
        key="autograd",
        title="Check beside torch autograd",
        explanation=(
            f"torch works the same gradients out by itself: `y = F.layer_norm(x, ({d},), γ, β, "
            "ε)`, then `y.backward(dy)`. Δ is the largest difference from the formula, "
            f"here {measured}: rounding, which grows with the size of x next to its spread σ_ε "
            "(each float32 keeps about 7 significant digits, float64 about 16)."
        ),
        numbers=(
            Table(
                _rows(
                    ("dx formula, float64", grads.dx),
                    *((f"dx autograd, {t}", check.autograd[t]["dx"]) for t in AUTOGRAD_DTYPES),
                )
            ),
            Table(
                differences,
                claim("step_through.autograd_nan", nan, "Where both are NaN (0 / 0) they agree."),
            ),
        ),
    )
