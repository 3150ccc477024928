"""The "Conventions and checker" lesson as slides: the six conventions side by side, one
section per way they differ (ε's size, ε's place, D or D − 1, the mean), the axes, then the
checker of a tutorial's printed numbers and its tally."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pandas as pd

from lnlab.core.numbers import fmt
from lnlab.labs.conventions.cases import ADD_NORM, LECTURE_5, TITLES
from lnlab.labs.conventions.checker import (
    ROUNDINGS,
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
from lnlab.teach.claims import claim
from lnlab.teach.figures import spread
from lnlab.teach.latex import num
from lnlab.teach.lesson import Callout, Figure, Lesson, Metric, Section, Table
from lnlab.teach.misconceptions import std, variance
from lnlab.teach.quiz import Question, std_wrongs, x_hat_wrongs

TITLE = "Conventions and checker"
INTRO = (
    "Layer Norm is one formula on paper and several in code. Libraries disagree on a few "
    "details: how large ε is, whether it goes **inside the square root** or is **added to the "
    "std**, whether the variance divides by D or by D − 1, whether the mean is subtracted at "
    "all (RMSNorm), and over which axes. Take them one at a time, then check the numbers a "
    "tutorial printed."
)
SIX, AXES, CHECK = "six", "axes", "check"  # the sections whose widgets the page draws
DIFF_HELP = "The largest |output − PyTorch's output| over every token and feature."
AXES_HELP = "The largest |output − per-token Layer Norm's output|."
BARS = "Each group of bars is one feature of the token; each colour one convention."
REFINE = 4  # the ε questions may show 4 more digits than 4 decimals: ε's effect is small
OVERLAP = 0.01  # bars within 1% of the tallest one's height look the same on the chart
_NEAR = ("bert", "numpy")  # the conventions whose ε is the only difference from PyTorch's


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
            f"{BARS} {_overlap(comparison, token)}",
            label=f"Outputs of {label} under six conventions",
            summary=_differences(comparison),
        ),
        definitions=tuple((f"{c.name} ({c.source}):", c.formula) for c in CONVENTIONS),
    )


def _overlap(comparison: ConventionComparison, token: int) -> str:
    """Whether BERT's and the NumPy class's bars overlap PyTorch's for the token shown: they
    do where each output is within OVERLAP of the tallest bar, i.e. where ε is small next to
    σ² (all three divide by the same σ, up to their ε)."""
    reference = comparison.run(REFERENCE).y[token]
    top = float(np.max(np.abs(reference)))
    gaps = {k: float(np.max(np.abs(comparison.run(k).y[token] - reference))) for k in _NEAR}
    near = all(gap <= OVERLAP * top for gap in gaps.values())
    return claim(
        "conventions.overlap",
        near,
        "PyTorch, BERT and the NumPy class overlap; the others stand out when they differ.",
        f"Here BERT's bars stand up to {fmt(gaps['bert'])} from PyTorch's and the NumPy "
        f"class's up to {fmt(gaps['numpy'])}, on bars up to {fmt(top)} tall: with "
        f"σ² = {fmt(_token_numbers(comparison, token)['var'])}, even PyTorch's ε = 10⁻⁵ moves "
        "the outputs.",
        gaps=gaps,
        top=top,
    )


def _differences(comparison: ConventionComparison, keys: tuple[str, ...] | None = None) -> str:
    """A conventions chart's summary: each one's largest difference from PyTorch's outputs."""
    runs = [r for r in comparison.runs if r.convention.key != REFERENCE]
    shown = [r for r in runs if keys is None or r.convention.key in keys]
    each = ", ".join(f"{r.convention.name} {fmt(r.max_abs_diff)}" for r in shown)
    return f"Largest difference from PyTorch's outputs, over every token: {each}."


def _token_numbers(comparison: ConventionComparison, token: int) -> dict[str, float]:
    """The chosen token's numbers the worked formulas substitute: its mean, variance, std,
    D, whether it is constant (1.0) and each convention's denominator (keyed by convention)."""
    x = comparison.x[token]
    numbers = {"mean": float(np.mean(x)), "var": variance(x), "std": std(x, 0.0, "no_eps")}
    numbers |= {"d": float(x.size), "constant": float(np.all(x == x[0]))}
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


def factor_text(ratio: float, below: float) -> str:
    """A factor near 1 as text that never reads "1" when it is not: "0.9996", "1 − 2e-06".
    `below` is 1 − ratio, computed by the caller without cancellation."""
    text = fmt(ratio)
    if text != "1" or below == 0:
        return text
    return f"1 − {fmt(below)}" if below > 0 else f"1 + {fmt(-below)}"


def _eps_factor(n: dict[str, float], key: str) -> str:
    """σ/σ_ε for the convention `key` (its outputs over ε = 0's), as text: 1 − σ/σ_ε is
    ε/(σ_ε (σ_ε + σ)), which no subtraction loses."""
    eps, sigma, sigma_eps = convention(key).eps, n["std"], n[key]
    below = eps / sigma_eps / (sigma_eps + sigma)
    if below == 0:  # under float64's least number: say it as the rule gives it
        return f"1 − {fmt(eps)}/(2σ²)"
    return factor_text(sigma / sigma_eps, below)


def _eps_size_finding(n: dict[str, float]) -> str:
    """ε's size, said with the token's own σ²: each ε scales the outputs by √(σ²/(σ² + ε))."""
    factors = ", ".join(
        f"{convention(k).short} {_eps_factor(n, k)}" for k in ("pytorch", "keras", "bert")
    )
    size = claim(  # σ² of a 1e200-scale token is beyond float64: say σ instead
        "conventions.var_finite",
        bool(np.isfinite(n["var"])),
        f"σ² = {fmt(n['var'])}",
        f"σ = {fmt(n['std'])}",
    )
    return "Each adds ε to the variance under the root. " + claim(
        "conventions.eps_constant",
        n["constant"] == 1,
        "This token is constant (σ² = 0): x − μ is 0, and every ε > 0 gives the same outputs, 0.",
        "So each output is √(σ²/(σ² + ε)) times what ε = 0 would give: smaller by about "
        f"ε/(2σ²) of itself when ε is small next to σ², however large σ² is. Here {size}: "
        f"{factors}.",
    )


def _eps_place_finding(n: dict[str, float]) -> str:
    """Where ε goes, said with the token's own denominators. Their gap, (σ + ε₁) − √(σ² + ε₂),
    is ε₁ − ε₂/(σ + √(σ² + ε₂)): no subtraction of nearly equal numbers loses it."""
    pytorch, numpy_eps = n["pytorch"], convention("numpy").eps
    gap = abs(numpy_eps - convention("pytorch").eps / (n["std"] + pytorch))
    return (
        "PyTorch adds ε under the root; the NumPy class computes `np.std(x) + eps`, adding ε "
        "to the std. Both keep the denominator above 0, and they differ most, for their "
        "size, on a nearly constant token (σ near 0). Here the two denominators differ by "
        f"{fmt(gap)}, {fmt(100 * gap / pytorch)}% of PyTorch's."
    )


def _bessel_finding(n: dict[str, float]) -> str:
    """D or D − 1, and which way this token's outputs move: PyTorch's larger ε can outweigh
    Bessel's correction where σ² is small, and then the Annotated outputs are the larger."""
    d, constant = int(n["d"]), n["constant"] == 1
    pytorch, annotated = n["pytorch"], n["annotated"]
    apart = d > 1 and not constant
    factor = factor_text(pytorch / annotated, (annotated - pytorch) / annotated)
    return (
        "`x.std()` divides by $D - 1$ (Bessel's correction), nn.LayerNorm by $D$; the "
        "Annotated Transformer adds its ε (10⁻⁶) to σ, PyTorch its own (10⁻⁵) under the root, "
        "which outweighs Bessel's correction where σ² is small. "
        + claim(
            "conventions.bessel_nan",
            d == 1,
            "With D = 1, D − 1 = 0: `x.std()` is NaN, and so is every Annotated output.",
        )
        + claim(
            "conventions.bessel_constant",
            d > 1 and constant,
            "This token is constant: x − μ is 0, so both give 0 whatever they divide by.",
        )
        + claim(
            "conventions.bessel_smaller",
            apart and annotated > pytorch,
            f"Here its outputs are smaller: {factor} times PyTorch's.",
            pytorch=pytorch,
            annotated=annotated,
        )
        + claim(
            "conventions.bessel_larger",
            apart and annotated < pytorch,
            f"Here PyTorch's ε weighs more, and its outputs are larger: {factor} times PyTorch's.",
            pytorch=pytorch,
            annotated=annotated,
        )
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
        _bessel_finding,
        r"y_{\text{Annotated}} = \frac{\sqrt{\sigma^2 + 10^{-5}}}"
        r"{\sqrt{\tfrac{D}{D-1}}\,\sigma + 10^{-6}}\; y_{\text{PyTorch}}"
        r"\;\approx\; \sqrt{\tfrac{D-1}{D}}\; y_{\text{PyTorch}}"
        r"\ \text{ when } \epsilon \ll \sigma^2",
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
    place: PyTorch's) or PyTorch's output farthest from 0 (Bessel), with the mistakes'
    answers as options. RMSNorm's slide asks nothing."""
    x = comparison.x[token]
    qid = f"cv{key}-" + hashlib.sha256(repr((key, x.tobytes())).encode()).hexdigest()[:12]
    if key in ("eps_size", "eps_place"):
        c = convention("keras" if key == "eps_size" else REFERENCE)

        def ask(v: np.ndarray, shown: str = "") -> Question:
            return _denominator_question(qid, f"For {label}, x = {shown}", c.key, v)

    elif key == "bessel":

        def ask(v: np.ndarray, shown: str = "") -> Question:
            return _output_question(qid, f"For {label}, x = {shown}", v)

    else:
        return None
    return ask(x, answerable(x, ask))


def _denominator_question(qid: str, head: str, key: str, x: np.ndarray) -> Question:
    """What the convention `key` divides x − μ by, with std_wrongs as its options."""
    c = convention(key)
    var, answer = variance(x), std(x, c.eps)
    q = Question(
        qid,
        f"{head}: what does {c.name} (ε = {fmt(c.eps)}) divide x − μ by?",
        answer,
        "",
        wrong=std_wrongs(x, c.eps),
        refine=REFINE,
    )
    return replace(  # the explanation at the digits the options show
        q,
        explanation=f"σ² = {fmt(var)}, so √({fmt(var)} + {fmt(c.eps)}) = {q.text(answer)}.",
    )


def _output_question(qid: str, head: str, x: np.ndarray) -> Question:
    """PyTorch's output of the feature farthest from the mean: dividing by D − 1 (what
    `x.std()` does), forgetting ε and ε outside the root are its options."""
    eps = convention(REFERENCE).eps
    centred = x - np.mean(x)
    i = int(np.argmax(np.abs(centred)))
    j, var = i + 1, variance(x)
    answer = float(centred[i] / std(x, eps))
    q = Question(
        qid,
        f"{head}: what is PyTorch's output y{j} (ε = {fmt(eps)})?",
        answer,
        "",
        wrong=tuple(w for w in x_hat_wrongs(x, eps, i) if w.misconception != "gamma_beta_swap"),
        refine=REFINE,
    )
    return replace(
        q,
        explanation=f"y{j} = (x{j} − μ)/√(σ² + ε) with σ² = {fmt(var)}: "
        f"{fmt(centred[i])}/√({fmt(var)} + {fmt(eps)}) = {q.text(answer)}.",
    )


def answerable(x: np.ndarray, ask: Callable[[np.ndarray], Question]) -> str:
    """x as a stem shows it: with fmt's digits where the question asked about them has the
    same options, else with the fewest more digits that keep them (1e6 + x would read
    (1e+06, 1e+06, 1e+06, 1e+06), a constant token, where the answer is 1.1185)."""
    truth = ask(x)

    def options_of(q: Question) -> tuple[str, ...]:  # at the true question's digits
        return (
            truth.text(q.answer),
            *sorted(f"{w.misconception} {truth.text(w.answer)}" for w in q.wrong),
        )

    wanted = options_of(truth)
    for digits in (None, *range(5, 18)):
        texts = [fmt(v) if digits is None else f"{v:.{digits}g}" for v in x]
        if options_of(ask(np.array([float(t) for t in texts]))) == wanted:
            break
    return "(" + ", ".join(texts) + ")"


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
    listed = claim(
        "conventions.wrong_listed",
        bool(wrong),
        f"; wrong under every convention: {', '.join(wrong)}",
    )
    return f"{len(held)} of {len(check.verdicts)} claims hold{listed}."


def claims_frame(check: CheckResult) -> pd.DataFrame:
    """The claims chart's numbers: each claim, its distance over its tolerance, its verdict."""
    return pd.DataFrame(
        {
            "claim": [claim_name(v.claim, check.labels) for v in check.verdicts],
            "error / tolerance": [v.ratio for v in check.verdicts],
            "verdict": ["holds" if v.holds else "wrong" for v in check.verdicts],
        }
    )


def _check(check: CheckResult) -> Section:
    return Section(
        key=CHECK,
        title="Check a tutorial's printed numbers",
        explanation="A claim holds when the truth, computed in float64 or in float32, "
        "**rounds** to it: `0.364` means 0.3635 to 0.3645, give or take float32's error.",
        callouts=_verdict_callout(check),
        formulas=(r"|\text{truth} - \text{claim}| \le \tfrac{1}{2} \cdot 10^{-k} + \text{slack}",),
        detail=(
            "A number written with $k$ decimals claims that the truth rounds to it, so it "
            "holds when the truth lies within half a unit of its last digit (`5` means 4.5 to "
            "5.5). Each claim is compared with every way the conventions compute its quantity. "
            "The slack on top is what a printout computed in float32 may be off by: float32 "
            "stores each number to $u = 2^{-24}$ of itself, so each $x - \\mu$ may be off by "
            f"$e = {ROUNDINGS}u\\,(|\\mu| + \\max|x - \\mu|)$, the std by as much, and an "
            "output, divided by its denominator $\\sigma_\\epsilon$, by about "
            "$e\\,(1 + |y|)/\\sigma_\\epsilon$. On a token near 0 that is a few millionths; on "
            "one far from 0 next to its spread ($|\\mu|/\\sigma$ large) it is much more: "
            "Keras's float32 outputs of 100.1, 100.2, 100.3, 100.4 are off by about 10⁻⁴, and "
            "hold. A claim farther than that from every convention is wrong. " + _slack_here(check)
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


def _slack_here(check: CheckResult) -> str:
    """The largest |μ|/σ among the checked tokens and the slack it gives PyTorch's outputs."""
    with np.errstate(all="ignore"):
        far = np.abs(np.mean(check.x, axis=1)) / np.std(check.x, axis=1)
    pytorch = next(r for r in check.readings["out"] if r.key == REFERENCE)
    return (
        f"Here |μ|/σ is up to {fmt(float(np.nanmax(far, initial=0.0)))}, and the slack on "
        f"PyTorch's outputs up to {fmt(float(np.nanmax(pytorch.slack)))}."
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
