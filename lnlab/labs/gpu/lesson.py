"""The "Run it on the GPU" lesson as slides: the device and dtype, the five steps in torch
with their parity against float64, the error to expect per dtype, and the scale-up benchmark,
each one section, built from a Parity (and, once run, a ScaleUp)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from lnlab.core.numbers import fmt, fmt_apart
from lnlab.labs.gpu import traffic
from lnlab.labs.gpu.benchmark import ScaleUp, scale_up_table
from lnlab.labs.gpu.parity import Parity, dtype_range, dtype_table, out_of_range, parity_table
from lnlab.labs.gpu.plots import error_heatmap, parity_bars, throughput_bars
from lnlab.teach.claims import claim
from lnlab.teach.figures import spread
from lnlab.teach.lesson import Callout, Figure, Lesson, Metric, Section, Table
from lnlab.teach.markdown import plain
from lnlab.teach.quiz import Question, feature_question

TITLE = "Run it on the GPU"
INTRO = (
    "The same five steps, computed with **torch** on a device and in a dtype you choose, then "
    "compared with the exact answer (numpy in float64). Then the same Layer Norm on a big "
    "batch, timed: one operation per step against PyTorch's fused kernel."
)
DEVICE, STEPS, BOUND, SCALE = "device", "steps", "bound", "scale"  # the section keys, in order
STATS = (("mean", "μ"), ("var", "σ²"), ("std", "σ_ε"))


def slides(
    result: Parity,
    tokens: Sequence[str],
    token: int,
    device_label: str,
    shape: tuple[int, int, int],
    scale_up: ScaleUp | None,
) -> Lesson:
    """The page's lesson for one parity run, the benchmark's sizes and its last result."""
    return Lesson(
        key="gpu",
        title=TITLE,
        intro=INTRO,
        sections=(
            _device(result, tokens, device_label),
            _steps(result, token, f"token {token + 1} ({plain(tokens[token])})", device_label),
            _bound(result),
            _scale(result.dtype, shape, scale_up),
        ),
    )


def stats_frame(result: Parity, tokens: Sequence[str]) -> pd.DataFrame:
    """Each token's μ, σ² and σ_ε computed in the dtype on the device and in float64."""
    frame = pd.DataFrame({"token": list(tokens)})
    for step, symbol in STATS:
        for trace, where in ((result.trace, result.dtype), (result.reference, "float64")):
            frame[f"{symbol} {where}"] = getattr(trace, step).reshape(-1)
    return frame


def named(dtype: str, key: str = "gpu.dtype") -> str:
    """A dtype's name in a sentence, said as a claim: it names the dtype the numbers beside it
    were computed in (the words around it are the same for every dtype)."""
    return claim(key, True, dtype, dtype=dtype)


def _device(result: Parity, tokens: Sequence[str], device_label: str) -> Section:
    features = [f"f{j + 1}" for j in range(result.reference.x.shape[-1])]
    dtype = named(result.dtype)
    return Section(
        key=DEVICE,
        title=f"{result.dtype} on {plain(device_label)}: every number rounded",
        explanation=(
            f"torch rounds the input to {dtype}, computes on {result.device}, and "
            "rounds every result back; numpy in float64 gives the exact answer beside it. "
            f"ε = {result.eps:g}, γ = 1, β = 0."
        ),
        numbers=(
            Metric(f"unit roundoff u of {result.dtype}", result.unit_roundoff),
            Table(stats_frame(result, tokens), "Each token's statistics, both ways."),
        ),
        figure=Figure(
            error_heatmap(result, tokens, features),
            "gpu-error",
            f"y in {dtype} on the device minus y in float64, every output (orange "
            "below 0, purple above).",
            on_slide=False,
            label=f"Rounding error of y in {result.dtype}",
            summary=f"Tokens × features: {len(tokens)} × {len(features)}. y on the device "
            f"minus y in float64 {_error_range(result)}",
        ),
    )


def _error_range(result: Parity) -> str:
    """The heatmap's range in words, and how many outputs the device could not compute."""
    diff = result.trace.y - result.reference.y
    finite = np.isfinite(diff)
    shown = f"runs {spread(diff[finite])}" if finite.any() else "is nowhere a number"
    return claim(
        "gpu.y_finite",
        bool(finite.all()),
        f"{shown}.",
        f"{shown}: the device's y is NaN or ±∞ in {int((~finite).sum())} of its "
        f"{diff.size} outputs.",
        not_finite=int((~finite).sum()),
    )


def _parity_summary(result: Parity) -> str:
    """The parity chart in words: the largest error against its bound, and any step over."""
    worst = max(result.rows, key=lambda r: r.max_rel)
    over = [r.step for r in result.rows if not r.within]
    largest = claim(
        "gpu.largest_error_at",
        True,
        f"The largest relative error is {fmt(worst.max_rel)}, at {worst.step}, against a "
        f"bound of {fmt(worst.bound)}",
        step=worst.step,
    )
    within = claim(
        "gpu.all_within", not over, "every step is within.", f"over the bound: {', '.join(over)}."
    )
    return f"{largest}; {within}"


def steps_question(result: Parity, token: int, name: str) -> Question:
    """Before the five steps: the exact (float64) y1 of the chosen token, gamma = 1, beta = 0."""
    x = result.reference.x.reshape(-1, result.reference.x.shape[-1])
    answer = float(result.reference.y.reshape(x.shape)[token, 0])
    mean, std = (
        float(result.reference.mean.reshape(-1)[token]),
        float(result.reference.std.reshape(-1)[token]),
    )
    vector = "(" + ", ".join(fmt_apart(x[token])) + ")"
    x1, mu = fmt_apart([x[token, 0], mean])
    return feature_question(
        "gpuy-" + hashlib.sha256(repr((x.tobytes(), token, result.eps)).encode()).hexdigest()[:12],
        f"Exactly (in float64), what is y1 of {name}, x = {vector} (ε = {fmt(result.eps)}, "
        "γ = 1, β = 0)?",
        answer,
        f"(x1 − μ) / √(σ² + ε) = ({x1} − {mu}) / {fmt(std)} = {fmt(answer)}.",
        x,
        token,
        result.eps,
        gamma=1.0,
    )


def _steps(result: Parity, index: int, token: str, device_label: str) -> Section:
    return Section(
        key=STEPS,
        title=f"The five steps for {token} in {result.dtype} on {plain(device_label)}",
        worked=tuple(s.latex for s in result.steps),  # after the question
        numbers=(
            Table(
                pd.DataFrame(parity_table(result)),
                "Each step's largest error against float64 over every token, relative to the "
                "step's largest value (so a value near 0 cannot inflate it).",
            ),
        ),
        callouts=_beyond(result),
        question=steps_question(result, index, token),
    )


def _beyond(result: Parity) -> tuple[Callout, ...]:
    """The steps over their bound, if any, and why: values out of the dtype's range, or
    rounding that the first-order bound underestimates."""
    beyond = [r.step for r in result.rows if not r.within]
    said = claim(
        "gpu.beyond",
        bool(beyond),
        plain(f"Beyond the expected bound: {', '.join(beyond)}."),
        steps=beyond,
    )
    if not beyond:
        return ()
    return (Callout("warning", f"{said} {_range_words(result)}"),)


def _range_words(result: Parity) -> str:
    """Which values leave the dtype's range (over its largest number, or under its smallest
    normal one, where fewer bits are left), or that none does."""
    over, under = out_of_range(result)
    tiny, largest = dtype_range(result.dtype)
    dtype = named(result.dtype)
    parts = [
        claim(
            "gpu.overflow",
            bool(over),
            f"{_subject(over)} past {dtype}'s largest number, {fmt(largest)}",
            names=over,
        ),
        claim(
            "gpu.underflow",
            bool(under),
            f"{_subject(under)} under {dtype}'s smallest normal number, {fmt(tiny)}, where "
            "fewer bits are left (or none: 0)",
            names=under,
        ),
    ]
    leaving = "; ".join(p for p in parts if p)
    return claim(
        "gpu.within_range",
        not (over or under),
        f"Every value here is within {dtype}'s range: u (2 + a κ) estimates the rounding to "
        "first order, not as a guarantee, and this input's rounding is larger.",
        f"Values leave {dtype}'s range here: {leaving}. There the unit roundoff no longer "
        "describes the rounding.",
    )


def _subject(names: list[str]) -> str:
    """ "σ² is", "x, μ are": the values a sentence is about, with their verb."""
    return f"{plain(', '.join(names))} {'is' if len(names) == 1 else 'are'}"


def _dtype_frame() -> pd.DataFrame:
    """The dtype table with u and the bound as text, each number against its own size: they
    span 14 powers of ten, and against one column scale (or 1) float64's would show as 0."""
    frame = pd.DataFrame(dtype_table())
    for column in ("u = 2^-p", "x̂ bound at κ = 1"):
        frame[column] = frame[column].map(lambda v: fmt(v, scale=v))
    return frame


def _bound(result: Parity) -> Section:
    return Section(
        key=BOUND,
        title="What error to expect",
        explanation=(
            "A $p$-bit significand stores any number within the **unit roundoff** "
            "$u = 2^{-p}$. The steps amplify that by $\\kappa$, how large the inputs are "
            "next to their spread."
        ),
        formulas=(
            r"\text{bound} = u\,(2 + a\,\kappa)",
            r"\kappa = \max_{\text{tokens}} \tfrac{\max_i |x_i|}{\sigma_\epsilon}"
            r" \,/\, \min(1, \max |\hat{x}|)",
        ),
        numbers=(
            Metric(
                "κ",
                result.kappa,
                "The largest input over its token's spread σ_ε, over the largest |x̂| too "
                "where that is under 1.",
            ),
            Metric("κ_μ", result.kappa_mean, "The largest input over the largest mean."),
            Table(_dtype_frame(), "Each dtype's u and its bound at κ = 1."),
        ),
        figure=Figure(
            parity_bars(result),
            "gpu-parity",
            "Blue: each step's largest relative error against float64 (log scale). Orange: "
            "the bound to expect. The last pair is torch's own fused F.layer_norm.",
            label=f"Error per step in {result.dtype}",
            summary=_parity_summary(result),
        ),
        detail=(
            "$a = 2$ for $\\mu$ and $\\sigma_\\epsilon$, $4$ for $\\sigma^2$, $\\hat{x}$ and "
            "$y$; rounding the result back adds the 2. For the mean, $\\kappa$ is replaced by "
            "$\\kappa_\\mu = \\max|x| / \\max|\\mu|$, since its error is measured against the "
            "mean itself. An $\\epsilon$ far above $\\sigma^2$ shrinks $\\hat{x}$ but not the "
            "rounding of $x - \\mu$, which then counts against the smaller $\\hat{x}$: hence "
            "the division by $\\max|\\hat{x}|$ when it is under 1. Centred data has a small "
            "$\\kappa$, so the error is a few $u$. A token like 1000.1, 1000.2, 1000.3 has a "
            "huge $\\kappa$: in half precision it loses almost everything before any "
            "arithmetic happens."
        ),
    )


def _scale(dtype: str, shape: tuple[int, int, int], scale_up: ScaleUp | None) -> Section:
    steps, fused = len(traffic.STEP_OPS), len(traffic.FUSED_OPS)
    batch, seq, features = shape
    totals = tuple(
        rf"\text{{{version}:}}\ {n}N + {r}R + {d}D"
        for version, ops in traffic.VERSIONS.items()
        for n, r, d in [traffic.traffic_totals(ops)]
    )
    numbers: tuple = (
        Table(
            pd.DataFrame(traffic.traffic_table(batch * seq, features, traffic.ITEMSIZE[dtype])),
            "Elements read and written by each operation, in bytes: N = batch x sequence x "
            "features, R = batch x sequence rows, D = features (caches ignored).",
            on_slide=False,
        ),
    )
    figure = None
    if scale_up is not None:
        memory = _memory_words(scale_up)
        numbers = (
            *numbers,
            Table(
                pd.DataFrame(scale_up_table(scale_up)),
                f"Median over the samples, {scale_up.threads} CPU thread(s), "
                f"{scale_up.elapsed_s:.1f} s in all with the warm-up; step by step and fused "
                f"agree to {scale_up.max_diff:.1e} {_checked_rows(scale_up)}. GB/s moved "
                f"counts every byte each operation reads and writes.{memory} "
                f"{scale_up.note}".rstrip(),
                on_slide=False,
            ),
        )
        b, s, f = scale_up.shape
        runs = (scale_up.copy, scale_up.steps, scale_up.fused)
        figure = Figure(
            throughput_bars(scale_up),
            "gpu-throughput",
            f"{b} x {s} x {f} {named(scale_up.dtype, 'gpu.benchmark_dtype')} on "
            f"{scale_up.device}.{memory} Left, the "
            "time of one call: shorter is better. Right, useful bandwidth, reading x once and "
            "writing y once per second: longer is better. Both rank the faster version best.",
            label="Time per call and useful bandwidth",
            summary="; ".join(
                f"{m.name}: {m.median_s * 1e3:.3g} ms a call, "
                f"{scale_up.useful_gbps(m):.3g} useful GB/s"
                for m in runs
            )
            + ".",
            data=pd.DataFrame(
                {
                    "version": [m.name for m in runs],
                    "time per call (ms)": [m.median_s * 1e3 for m in runs],
                    "useful GB/s": [scale_up.useful_gbps(m) for m in runs],
                }
            ),
        )
    return Section(
        key=SCALE,
        title="Scale it up: step by step against fused",
        explanation=(
            "Layer Norm does little arithmetic per number, so **memory** sets its speed. One "
            f"operation per step makes {steps} passes over memory; the fused `F.layer_norm` "
            f"makes {fused}. A copy of the tensor shows what the memory can do, once the "
            "tensor is well past the device's last cache: a smaller one is timed in the cache."
        ),
        formulas=totals,
        numbers=numbers,
        figure=figure,
    )


def _checked_rows(scale_up: ScaleUp) -> str:
    """Over which rows step by step and fused were compared."""
    rows = scale_up.shape[0] * scale_up.shape[1]
    return claim(
        "gpu.checked_every_row",
        scale_up.checked_rows >= rows,
        f"on all {rows:,} rows",
        f"on the first {scale_up.checked_rows:,} rows",
        rows=rows,
        checked=scale_up.checked_rows,
    )


def _memory_words(scale_up: ScaleUp) -> str:
    """Which memory the timings describe, and the most memory torch held: " " and two
    sentences, or "" for a result that does not describe its device."""
    level = scale_up.level
    if level is None:
        return ""
    which = claim(f"gpu.timed_in_{level.kind}", True, plain(level.text), kind=level.kind)
    peak = claim(
        "gpu.peak_reported",
        scale_up.peak_bytes is not None,
        plain(scale_up.peak_text()),
        plain(f"torch does not report peak memory on {scale_up.device}."),
    )
    return f" {which} {peak}"
