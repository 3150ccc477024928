"""Figures of the "Run it on the GPU" page."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from lnlab.plots.common import OKABE_ITO, figure, heatmap
from lnlab.timing import Parity, ScaleUp

MEASURED, BOUND, COPY, STEPS, FUSED = (OKABE_ITO[i] for i in (0, 1, 7, 5, 2))


def _sci(v: float) -> str:
    if not np.isfinite(v):
        return "inf"
    return "0" if v == 0 else f"{v:.2g}"


def parity_bars(result: Parity) -> go.Figure:
    """Each step's max relative error on the device beside its expected bound, log scale.

    An exact step (error 0) has no bar on a log axis; its hover text says 0.
    """
    steps = [r.step for r in result.rows]
    errors = [r.max_rel for r in result.rows]
    bounds = [r.bound for r in result.rows]
    bars = [
        {
            "type": "bar",
            "name": "max relative error",
            "x": steps,
            "y": [e if e > 0 and np.isfinite(e) else None for e in errors],
            "hovertext": [_sci(e) for e in errors],
            "marker": {"color": MEASURED},
        },
        {
            "type": "bar",
            "name": "expected bound",
            "x": steps,
            "y": [b if np.isfinite(b) else None for b in bounds],
            "hovertext": [_sci(b) for b in bounds],
            "marker": {"color": BOUND, "pattern": {"shape": "/"}},
        },
    ]
    layout = {
        "title": {"text": f"{result.dtype} on {result.device}: error against float64, per step"},
        "barmode": "group",
        "yaxis": {
            "type": "log",
            "title": {"text": "relative error"},
            "exponentformat": "power",
            "dtick": 1,
        },
        "legend": {"orientation": "h", "y": -0.25},
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
    }
    return figure(bars, layout)


def error_heatmap(result: Parity, tokens: Sequence[str], features: Sequence[str]) -> go.Figure:
    """y on the device minus y in float64, token by feature: where the rounding landed."""
    diff = result.trace.y - result.reference.y
    return heatmap(
        diff.reshape(-1, diff.shape[-1]),
        tokens,
        features,
        f"y in {result.dtype} on {result.device} minus y in float64",
        top=80,  # room for the title above the top x axis
    )


def throughput_bars(result: ScaleUp) -> go.Figure:
    """GB/s moved by the copy, the step-by-step and the fused Layer Norm, with their shares."""
    measurements = (result.copy, result.steps, result.fused)
    bars = {
        "type": "bar",
        "x": [m.gbps for m in measurements],
        "y": [m.name for m in measurements],
        "orientation": "h",
        "marker": {"color": [COPY, STEPS, FUSED]},
        "text": [f"{m.gbps:.3g} GB/s, {result.share_of_copy(m):.0%} of copy" for m in measurements],
        "textposition": "auto",
    }
    batch, seq, features = result.shape
    layout = {
        "title": {
            "text": f"{batch} x {seq} x {features} {result.dtype} on {result.device}: GB/s moved"
        },
        "xaxis": {"title": {"text": "GB/s moved (bytes read + written per second)"}},
        "yaxis": {"autorange": "reversed"},
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
        "height": 280,
    }
    return figure([bars], layout)
