"""The "Run it on the GPU" lesson as slides: the device and dtype, the five steps in torch
with their parity against float64, the error to expect per dtype, and the scale-up benchmark,
each one section, built from a Parity (and, once run, a ScaleUp)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from lnlab.core.numbers import fmt
from lnlab.labs.gpu import traffic
from lnlab.labs.gpu.benchmark import ScaleUp, scale_up_table
from lnlab.labs.gpu.parity import Parity, dtype_table, parity_table
from lnlab.labs.gpu.plots import error_heatmap, parity_bars, throughput_bars
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


def _device(result: Parity, tokens: Sequence[str], device_label: str) -> Section:
    features = [f"f{j + 1}" for j in range(result.reference.x.shape[-1])]
    return Section(
        key=DEVICE,
        title=f"{result.dtype} on {plain(device_label)}: every number rounded",
        explanation=(
            f"torch rounds the input to {result.dtype}, computes on {result.device}, and "
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
            f"y in {result.dtype} on the device minus y in float64, every output (orange "
            "below 0, purple above).",
            on_slide=False,
            label=f"Rounding error of y in {result.dtype}",
            summary=f"{len(tokens)} tokens × {len(features)} features: y on the device "
            f"minus y in float64 runs {spread(result.trace.y - result.reference.y)}.",
        ),
    )


def _parity_summary(result: Parity) -> str:
    """The parity chart in words: the largest error against its bound, and any step over."""
    worst = max(result.rows, key=lambda r: r.max_rel if np.isfinite(r.max_rel) else math.inf)
    over = [r.step for r in result.rows if not r.within]
    text = (
        f"The largest relative error is {fmt(worst.max_rel)}, at {worst.step}, against a "
        f"bound of {fmt(worst.bound)}; "
    )
    return text + (f"over the bound: {', '.join(over)}." if over else "every step is within.")


def steps_question(result: Parity, token: int, name: str) -> Question:
    """Before the five steps: the exact (float64) y1 of the chosen token, gamma = 1, beta = 0."""
    x = result.reference.x.reshape(-1, result.reference.x.shape[-1])
    answer = float(result.reference.y.reshape(x.shape)[token, 0])
    mean, std = (
        float(result.reference.mean.reshape(-1)[token]),
        float(result.reference.std.reshape(-1)[token]),
    )
    vector = "(" + ", ".join(fmt(v) for v in x[token]) + ")"
    return feature_question(
        "gpuy-" + hashlib.sha256(repr((x.tobytes(), token, result.eps)).encode()).hexdigest()[:12],
        f"Exactly (in float64), what is y1 of {name}, x = {vector} (ε = {fmt(result.eps)}, "
        "γ = 1, β = 0)?",
        answer,
        f"(x1 − μ) / √(σ² + ε) = ({fmt(x[token, 0])} − {fmt(mean)}) / {fmt(std)} = {fmt(answer)}.",
        x,
        token,
        result.eps,
        gamma=1.0,
    )


def _steps(result: Parity, index: int, token: str, device_label: str) -> Section:
    beyond = [r.step for r in result.rows if not r.within]
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
        callouts=(
            Callout(
                "warning",
                f"Beyond the expected bound: {plain(', '.join(beyond))}. This happens when "
                f"values leave {result.dtype}'s range (overflow to inf, or tiny values stored "
                "with fewer bits), where the unit roundoff no longer describes the rounding.",
            ),
        )
        if beyond
        else (),
        question=steps_question(result, index, token),
    )


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
            r"\kappa = \max_{\text{tokens}} \tfrac{\max_i |x_i|}{\sigma_\epsilon}",
        ),
        numbers=(
            Metric("κ", result.kappa, "The largest input over its token's spread σ_ε."),
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
            "mean itself. Centred data has a small $\\kappa$, so the error is a few $u$. A "
            "token like 1000.1, 1000.2, 1000.3 has a huge $\\kappa$: in float16 it loses "
            "almost everything before any arithmetic happens."
        ),
    )


def _scale(dtype: str, shape: tuple[int, int, int], scale_up: ScaleUp | None) -> Section:
    steps, fused = len(traffic.STEP_OPS), len(traffic.FUSED_OPS)
    batch, seq, features = shape
    totals = tuple(
        rf"\text{{{version}}}: {n}N + {r}R + {d}D"
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
        memory = f" {scale_up.memory_text()}" if scale_up.level is not None else ""
        rows = scale_up.shape[0] * scale_up.shape[1]
        where = (
            "" if scale_up.checked_rows >= rows else f" on the first {scale_up.checked_rows:,} rows"
        )
        numbers = (
            Table(
                pd.DataFrame(scale_up_table(scale_up)),
                f"Median over the samples, {scale_up.threads} CPU thread(s), "
                f"{scale_up.elapsed_s:.1f} s in all with the warm-up; step by step and fused "
                f"agree to {scale_up.max_diff:.1e}{where}. GB/s moved counts every byte each "
                f"operation reads and writes.{plain(memory)} {scale_up.note}".rstrip(),
                on_slide=False,
            ),
            *numbers,
        )
        b, s, f = scale_up.shape
        runs = (scale_up.copy, scale_up.steps, scale_up.fused)
        figure = Figure(
            throughput_bars(scale_up),
            "gpu-throughput",
            f"{b} x {s} x {f} {scale_up.dtype} on {scale_up.device}.{plain(memory)} Left, the "
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
