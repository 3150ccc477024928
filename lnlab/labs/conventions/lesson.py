"""The "Conventions and checker" lesson as slides: the six conventions side by side, one
section per way they differ (ε's size, ε's place, D or D − 1, the mean), the axes, then the
checker of a tutorial's printed numbers and its tally."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pandas as pd

from lnlab.core.numbers import exact, fmt
from lnlab.labs.conventions.cases import ADD_NORM, LECTURE_5, TITLES
from lnlab.labs.conventions.checker import (
    SLACK_ABS,
    SLACK_REL,
    CheckResult,
    claim_name,
    quantity_table,
    readings_table,
    summary,
    tally_table,
    verdict_table,
)
from lnlab.labs.conventions.compare import (
    CONVENTIONS,
    REFERENCE,
    AxesComparison,
    ConventionComparison,
    axes_table,
    convention,
    conventions_table,
    unbiased_ratio,
)
from lnlab.labs.conventions.plots import claim_errors, groupings_heatmap, outputs_by_convention
from lnlab.teach.figures import spread
from lnlab.teach.latex import num
from lnlab.teach.lesson import Callout, Figure, Lesson, Metric, Section, Table
from lnlab.teach.misconceptions import std, variance
from lnlab.teach.quiz import Question, Wrong, std_wrongs

TITLE = "Conventions and checker"
INTRO = (
    "Layer Norm is one formula on paper and several in code. Libraries disagree on a few "
    "details: how large ε is, whether it goes **inside the square root** or is **added to the "
    "std**, whether the variance divides by $D$ or by $D-1$, whether the mean is subtracted at "
    "all (RMSNorm), and over which axes. Take them one at a time, then check the numbers a "
    "tutorial printed."
)
SIX, AXES, CHECK = "six", "axes", "check"  # the sections whose widgets the page draws
DIFF_HELP = "The largest |output − PyTorch's output| over every token and feature."
AXES_HELP = "The largest |output − per-token Layer Norm's output|."
BARS = "Each group of bars is one feature of the token; each colour one convention."
REFINE = 4  # the ε questions may show 4 more digits than 4 decimals: ε's effect is small


def token_labels(n: int) -> list[str]:
    """Labels of n tokens: "token 1", "token 2", ..."""
    return [f"token {i}" for i in range(1, n + 1)]


def slides(
    comparison: ConventionComparison,
    token: int,
    axes: AxesComparison,
    check: CheckResult,
) -> Lesson:
    """The page's lesson for the vector `comparison` was computed from (chart of `token`), the
    sentence `axes` was, and the checked claims `check`."""
    label = token_labels(comparison.x.shape[0])[token]
    differences = (
        _difference(comparison, token, label, key, title, text, finding, formula, worked)
        for key, title, text, finding, formula, worked in _DIFFERENCES
    )
    return Lesson(
        key="conventions",
        title=TITLE,
        intro=INTRO,
        sections=(
            _six(comparison, token, label),
            *differences,
            _axes(axes),
            _check(check),
            _tally(check),
        ),
    )


def _six(comparison: ConventionComparison, token: int, label: str) -> Section:
    return Section(
        key=SIX,
        title="One vector, six conventions",
        explanation=(
            "The same token through PyTorch, Keras, BERT, the Annotated Transformer, the NumPy "
            f"class of *{TITLES[LECTURE_5]}* and RMSNorm. The next slides take their "
            "differences one at a time."
        ),
        numbers=(Table(conventions_table(comparison)),),
        figure=Figure(
            outputs_by_convention(comparison, token, label),
            "conventions-outputs",
            BARS + " PyTorch, BERT and the NumPy class overlap; the others stand out when "
            "they differ.",
            label=f"Outputs of {label} under six conventions",
            summary=_differences(comparison),
        ),
        detail="\n\n".join(f"**{c.name}** ({c.source}): ${c.formula}$" for c in CONVENTIONS),
    )


def _differences(comparison: ConventionComparison, keys: tuple[str, ...] | None = None) -> str:
    """A conventions chart's summary: each one's largest difference from PyTorch's outputs."""
    runs = [r for r in comparison.runs if r.convention.key != REFERENCE]
    shown = [r for r in runs if keys is None or r.convention.key in keys]
    each = ", ".join(f"{r.convention.name} {fmt(r.max_abs_diff)}" for r in shown)
    return f"Largest difference from PyTorch's outputs, over every token: {each}."


def _token_numbers(comparison: ConventionComparison, token: int) -> dict[str, float]:
    """The chosen token's numbers the worked formulas substitute: its mean, variance, std,
    D, and each convention's denominator (keyed by convention)."""
    x = comparison.x[token]
    numbers = {"mean": float(np.mean(x)), "var": variance(x), "std": std(x, 0.0, "no_eps")}
    numbers |= {"d": float(x.size)}
    return numbers | {r.convention.key: float(r.denominator[token]) for r in comparison.runs}


def _eps_worked(n: dict[str, float]) -> str:
    roots = (
        rf"\sqrt{{{num(n['var'])} + {convention(k).eps_latex}}} = {num(n[k])}"
        for k in ("pytorch", "keras", "bert")
    )
    return rf"\sigma^2 = {num(n['var'])}:\quad " + r",\allowbreak\quad ".join(roots)


def _place_worked(n: dict[str, float]) -> str:
    inside, outside = convention("pytorch").eps_latex, convention("numpy").eps_latex
    return (
        rf"\sqrt{{{num(n['var'])} + {inside}}} = {num(n['pytorch'])}"
        rf"\quad\text{{vs}}\quad {num(n['std'])} + {outside} = {num(n['numpy'])}"
    )


def _bessel_worked(n: dict[str, float]) -> str:
    d = int(n["d"])
    if d == 1:
        return r"D = 1:\ D - 1 = 0\text{, so }\texttt{x.std()}\text{ is NaN}"
    return rf"D = {d}:\quad \sqrt{{\tfrac{{{d - 1}}}{{{d}}}}} = {num(unbiased_ratio(d))}"


def _rms_worked(n: dict[str, float]) -> str:
    return (
        rf"\mu = {num(n['mean'])},\quad \sqrt{{\tfrac{{1}}{{D}}\textstyle\sum_j x_j^2"
        rf" + {convention('rmsnorm').eps_latex}}} = {num(n['rmsnorm'])},\quad"
        rf" \sigma = {num(n['std'])}"
    )


def _eps_size_finding(n: dict[str, float]) -> str:
    """ε's size, said with the token's own σ²: each ε scales the outputs by √(σ²/(σ² + ε))."""
    if n["var"] == 0:
        return (
            "Each adds ε to the variance under the root. This token is constant (σ² = 0): "
            "x − μ is 0, and every ε > 0 gives the same outputs, 0."
        )
    factors = ", ".join(  # σ / σ_ε, each computed without squaring σ (1e200 stays finite)
        f"{convention(k).short} {fmt(n['std'] / n[k])}" for k in ("pytorch", "keras", "bert")
    )
    size = f"σ² = {fmt(n['var'])}" if np.isfinite(n["var"]) else f"σ = {fmt(n['std'])}"
    return (
        "Each adds ε to the variance under the root, so each output is √(σ²/(σ² + ε)) times "
        "what ε = 0 would give: smaller by about ε/(2σ²) of itself when ε is small next to "
        f"σ², however large σ² is. Here {size}: {factors}."
    )


def _eps_place_finding(n: dict[str, float]) -> str:
    """Where ε goes, said with the token's own denominators."""
    gap, pytorch = abs(n["numpy"] - n["pytorch"]), n["pytorch"]
    share = f", {fmt(100 * gap / pytorch, 100)}% of PyTorch's" if pytorch > 0 else ""
    return (
        "PyTorch adds ε under the root; the NumPy class computes `np.std(x) + eps`, adding ε "
        "to the std. Both keep the denominator above 0, and they differ most, for their "
        "size, on a nearly constant token (σ near 0). Here the two denominators differ by "
        f"{fmt(gap, pytorch or 1.0)}{share}."
    )


_DIFFERENCES = (  # key, title, setting, finding (from the token's numbers), formula, worked
    (
        "eps_size",
        "How big is ε: PyTorch, Keras, BERT",
        "PyTorch's ε is 10⁻⁵, Keras's 10⁻³, BERT's 10⁻¹².",
        _eps_size_finding,
        r"y_i = \frac{x_i - \mu}{\sqrt{\sigma^2 + \epsilon}}",
        _eps_worked,
    ),
    (
        "eps_place",
        "Where ε goes: PyTorch and the NumPy class",
        f"PyTorch and the NumPy class of *{TITLES[LECTURE_5]}* both add an ε to keep the "
        "denominator above 0, in different places.",
        _eps_place_finding,
        r"\text{PyTorch: }\sqrt{\sigma^2 + \epsilon}\qquad\text{NumPy class: }\sigma + \epsilon",
        _place_worked,
    ),
    (
        "bessel",
        "Divide by D, or by D − 1",
        "The Annotated Transformer computes its std with `x.std()`; PyTorch's nn.LayerNorm "
        "computes its own.",
        lambda n: (
            "`x.std()` divides the variance by $D - 1$ (Bessel's correction); nn.LayerNorm by "
            "$D$. So the Annotated Transformer's std is larger by $\\sqrt{D/(D-1)}$ and its "
            "outputs smaller: far apart for small $D$, nearly equal at $D = 512$. It also adds "
            "its ε (10⁻⁶) to the std, not under the root."
        ),
        r"y_{\text{Annotated}} \approx \sqrt{\tfrac{D-1}{D}}\; y_{\text{PyTorch}}",
        _bessel_worked,
    ),
    (
        "rmsnorm",
        "Subtract the mean, or not: RMSNorm",
        "RMSNorm (LLaMA, T5) skips the mean: it divides $x$ by its root mean square and has no "
        "β. For a token whose mean is 0 that root mean square is σ, and the outputs match "
        "Layer Norm's up to their ε; the further the mean from 0, the more they differ. "
        "Its ε here is LLaMA's, 10⁻⁵, as Meta's reference code sets it (Hugging Face's "
        "LlamaConfig defaults to 10⁻⁶, and T5 uses 10⁻⁶).",
        lambda n: "",
        r"y_i = \frac{x_i}{\sqrt{\tfrac{1}{D}\sum_j x_j^2 + \epsilon}}",
        _rms_worked,
    ),
)
_COMPARED = {  # the conventions each difference compares with PyTorch
    "eps_size": ("keras", "bert"),
    "eps_place": ("numpy",),
    "bessel": ("annotated",),
    "rmsnorm": ("rmsnorm",),
}


def _difference(
    comparison: ConventionComparison,
    token: int,
    label: str,
    key: str,
    title: str,
    setting: str,
    finding: Callable[[dict[str, float]], str],
    formula: str,
    worked: Callable[[dict[str, float]], str],
) -> Section:
    """One difference from PyTorch. With a question, the setting shows before it and the
    rule (the finding and the formula) after; RMSNorm's asks none and shows it all."""
    keys = _COMPARED[key]
    numbers = _token_numbers(comparison, token)
    metrics = tuple(
        Metric(comparison.run(k).convention.name, comparison.run(k).max_abs_diff, DIFF_HELP)
        for k in keys
    )
    if key == "bessel" and comparison.x.shape[1] > 1:
        metrics += (Metric("√((D − 1)/D)", unbiased_ratio(comparison.x.shape[1])),)
    question = difference_question(comparison, token, label, key)
    asks = question is not None
    return Section(
        key=key,
        title=title,
        explanation=setting,
        finding=finding(numbers),
        formulas=() if asks else (formula,),
        worked=(formula, worked(numbers)) if asks else (worked(numbers),),
        numbers=metrics,
        figure=Figure(
            outputs_by_convention(comparison, token, label, (REFERENCE, *keys)),
            f"conventions-{key}",
            BARS,
            label=f"Outputs of {label}: {title.lower()}",
            summary=_differences(comparison, keys),
        ),
        question=question,
    )


def difference_question(
    comparison: ConventionComparison, token: int, label: str, key: str
) -> Question | None:
    """Before a difference's numbers: the chosen token's denominator (ε's size: Keras's; ε's
    place: PyTorch's) or σ dividing by D (Bessel), with the mistakes' answers as options.
    RMSNorm's slide asks nothing."""
    x = comparison.x[token]
    n = _token_numbers(comparison, token)
    vector = "(" + ", ".join(fmt(v) for v in x) + ")"
    qid = f"cv{key}-" + hashlib.sha256(repr((key, x.tobytes())).encode()).hexdigest()[:12]
    if key in ("eps_size", "eps_place"):
        c = convention("keras" if key == "eps_size" else REFERENCE)
        q = Question(
            qid,
            f"For {label}, x = {vector}: what does {c.name} (ε = {fmt(c.eps)}) divide x − μ by?",
            n[c.key],
            "",
            wrong=std_wrongs(x, c.eps),
            refine=REFINE,
        )
        return replace(  # the explanation at the digits the options show
            q,
            explanation=f"σ² = {fmt(n['var'])}, so √({fmt(n['var'])} + {fmt(c.eps)}) = "
            f"{q.text(n[c.key])}.",
        )
    if key == "bessel":
        d = int(n["d"])
        return Question(
            qid,
            f"For {label}, x = {vector}: what σ (before ε) does PyTorch's nn.LayerNorm compute?",
            n["std"],
            f"√(σ²) with σ² = {fmt(n['var'])}, the squared distances' sum divided by D = {d}: "
            f"{fmt(n['std'])}.",
            wrong=(
                Wrong(
                    "d_minus_1",
                    np.sqrt(variance(x, d_minus_1=True)),
                    f"That is x.std(), as the Annotated Transformer calls it: it divides by "
                    f"D − 1 = {d - 1}. Layer Norm divides by D = {d}.",
                ),
            ),
        )
    return None


def _axes(axes: AxesComparison) -> Section:
    return Section(
        key=AXES,
        title="Which axes: the last one, or the last two",
        explanation=(
            f"The PyTorch notebook of *{TITLES[ADD_NORM]}* reshapes its sentence "
            "$(B, S, E) = (1, 2, 3)$ to $(S, B, E)$ and normalizes over the last two axes, "
            "$(B, E)$: with $B = 1$, one group per token. Without the reshape the whole "
            "sentence would share one mean."
        ),
        formulas=(
            r"\text{per token: } \mu_t = \tfrac{1}{E}\textstyle\sum_{e} x_{t,e}"
            r"\qquad \text{one group: } \mu = \tfrac{1}{S E}\textstyle\sum_{t,e} x_{t,e}",
        ),
        numbers=(
            Metric("Notebook: max |Δ|", axes.notebook_vs_per_token, AXES_HELP),
            Metric("No reshape: max |Δ|", axes.one_group_vs_per_token, AXES_HELP),
            Table(
                axes_table(axes, token_labels(axes.x.shape[0])),
                "Every token's mean, denominator and outputs under the three groupings.",
                on_slide=False,
            ),
        ),
        figure=Figure(
            groupings_heatmap(axes, token_labels(axes.x.shape[0])),
            "conventions-axes",
            "Outputs with ε = 10⁻⁵. Top rows: one group per token, which is also what the "
            "notebook's (S, 1, E) layout computes. Bottom rows: all tokens in one group.",
            label="Outputs per token and as one group",
            summary=f"Per token the outputs run {spread(axes.per_token.y)}, as one group "
            f"{spread(axes.one_group.y)}: up to {fmt(axes.one_group_vs_per_token)} apart; the "
            f"notebook's layout is {fmt(axes.notebook_vs_per_token)} from per token.",
        ),
        detail=(
            "```python\n"
            "inputs = inputs.reshape(S, B, E)          # (2, 1, 3)\n"
            "dims = [-1, -2]                           # the last two axes\n"
            "mean = inputs.mean(dim=dims, keepdim=True)\n"
            "```\n\n"
            "With $B > 1$ the reshaped $(B, E)$ group would mix the same position of "
            "different sentences."
        ),
    )


def _verdict_callout(check: CheckResult) -> tuple[Callout, ...]:
    if not check.verdicts:
        return (Callout("info", "Enter at least one claim (mean, std, variance or outputs)."),)
    consistent, text = summary(check)
    return (Callout("success" if consistent else "warning", text),)


def _claims_summary(check: CheckResult) -> str:
    held = [v for v in check.verdicts if v.holds]
    wrong = [claim_name(v.claim, check.labels) for v in check.verdicts if not v.holds]
    text = f"{len(held)} of {len(check.verdicts)} claims hold"
    return text + (f"; wrong under every convention: {', '.join(wrong)}." if wrong else ".")


def claims_frame(check: CheckResult) -> pd.DataFrame:
    """The claims chart's numbers: each claim, its distance over its tolerance, its verdict."""
    return pd.DataFrame(
        {
            "claim": [claim_name(v.claim, check.labels) for v in check.verdicts],
            "error / tolerance": [
                abs(v.claim.value - v.nearest_value) / v.claim.tolerance for v in check.verdicts
            ],
            "verdict": ["holds" if v.holds else "wrong" for v in check.verdicts],
        }
    )


def _check(check: CheckResult) -> Section:
    return Section(
        key=CHECK,
        title="Check a tutorial's printed numbers",
        explanation="A claim holds when the truth **rounds** to it: `0.364` means 0.3635 "
        "to 0.3645.",
        callouts=_verdict_callout(check),
        formulas=(r"|\text{truth} - \text{claim}| \le \tfrac{1}{2} \cdot 10^{-k} + \text{slack}",),
        detail=(
            "A number written with $k$ decimals claims that the truth rounds to it, so it "
            "holds when the truth lies within half a unit of its last digit (`5` means 4.5 to "
            "5.5). Each claim is compared with every way the conventions compute its quantity. "
            f"The slack, {exact(SLACK_REL)} × |claim| + {exact(SLACK_ABS)}, only absorbs "
            "floating-point rounding, including printouts computed in float32."
        ),
        numbers=(
            Table(quantity_table(check)),
            Table(
                verdict_table(check),
                "Layer Norm value: the mean, the biased variance and std (divided by D), or "
                "PyTorch's output. Closest reading: the computation, of all the conventions', "
                "nearest the claim.",
                on_slide=False,
            ),
        ),
        figure=Figure(
            claim_errors(check),
            "conventions-claims",
            "Each bar is a claim's distance from the closest true value over its tolerance: "
            "at or below the dashed line it holds (blue), above it it is wrong under every "
            "convention (vermillion, hatched).",
            label="How far each claim is from the truth",
            summary=_claims_summary(check),
            data=lambda: claims_frame(check),
        )
        if check.verdicts
        else None,
    )


def _tally(check: CheckResult) -> Section:
    readings = readings_table(check).rename_axis("statistic").reset_index()
    return Section(
        key="tally",
        title="Which convention did the tutorial use?",
        explanation=(
            "A tutorial is consistent with a convention when every one of its claims holds "
            "under it. A claim wrong under every convention is an arithmetic slip."
        ),
        callouts=_verdict_callout(check),
        numbers=(
            Table(tally_table(check)),
            Table(
                readings,
                "The true statistics of each row: the values the claims are held to.",
                on_slide=False,
            ),
        ),
    )
