"""Figures of the "Run it on the GPU" page."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from lnlab.core.numbers import fmt
from lnlab.labs.gpu.benchmark import ScaleUp
from lnlab.labs.gpu.parity import Parity
from lnlab.teach.figures import OKABE_ITO, axis_name, figure, heatmap, panel_title

MEASURED, BOUND, COPY, STEPS, FUSED = (OKABE_ITO[i] for i in (0, 1, 7, 5, 2))
MIN_DECADES = 3  # a log axis spans at least this many powers of ten, so it has several ticks
HEADROOM = 0.3  # decades of room above the tallest bar: a factor of 2


def parity_bars(result: Parity) -> go.Figure:
    """Each step's max relative error on the device beside its expected bound, log scale.

    An exact step (error 0) has no bar on a log axis; its hover text says 0.
    """
    steps = [r.symbol for r in result.rows]  # short, so the axis labels need not turn
    errors = [r.max_rel for r in result.rows]
    bounds = [r.bound for r in result.rows]
    bars = [
        {
            "type": "bar",
            "name": "max relative error",
            "x": steps,
            "y": [e if e > 0 and np.isfinite(e) else None for e in errors],
            "hovertext": [f"{r.step}: {fmt(r.max_rel)}" for r in result.rows],
            "marker": {"color": MEASURED},
        },
        {
            "type": "bar",
            "name": "expected bound",
            "x": steps,
            "y": [b if np.isfinite(b) else None for b in bounds],
            "hovertext": [f"{r.step}: bound {fmt(r.bound)}" for r in result.rows],
            "marker": {"color": BOUND, "pattern": {"shape": "/"}},
        },
    ]
    layout = {
        "title": {"text": f"{result.dtype} on {result.device}: error per step"},
        "barmode": "group",
        "yaxis": {
            "type": "log",
            "title": {"text": "relative error"},
            "exponentformat": "power",
            "dtick": 1,
            "range": log_range([*errors, *bounds]),
        },
        "legend": {"orientation": "h", "y": -0.25},
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
    }
    return figure(bars, layout)


def log_range(values: Sequence[float]) -> list[int]:
    """A log axis range (powers of ten) around the positive finite `values`: at least HEADROOM
    decades above the largest, at least MIN_DECADES decades in all, whole decades so both
    ends are labelled ticks (dtick=1)."""
    logs = [math.log10(v) for v in values if v > 0 and math.isfinite(v)] or [0.0]
    top = math.ceil(max(logs) + HEADROOM)
    bottom = min(math.floor(min(logs)), top - MIN_DECADES)
    return [bottom, top]


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
    """Two panels, one bar per version: the median time of a call in ms (shorter is better)
    and the useful bandwidth in GB/s, read x once + write y once per second (longer is
    better); the caption says which way is better.

    Both rank the faster version best; counting every byte moved would not (the slower
    step-by-step version moves six times the bytes). Each bar's value is printed past its
    end, and the axes leave room for it, so no label covers a bar.
    """
    measurements = (result.copy, result.steps, result.fused)
    names = [m.name for m in measurements]
    colours = [COPY, STEPS, FUSED]
    panels = (  # short titles holding the unit: two must fit side by side on a slide
        ("time per call (ms)", [m.median_s * 1e3 for m in measurements]),
        ("useful GB/s", [result.useful_gbps(m) for m in measurements]),
    )
    domains = ([0.0, 0.44], [0.56, 1.0])
    bars, notes = [], []
    layout: dict = {}
    for k, ((title, values), domain) in enumerate(zip(panels, domains, strict=True)):
        x, y = axis_name("x", k), axis_name("y", k)
        bars.append(
            {
                "type": "bar",
                "x": values,
                "y": names,
                "orientation": "h",
                "xaxis": x,
                "yaxis": y,
                "marker": {"color": colours},
                "text": [f"{v:.3g}" for v in values],
                "textposition": "outside",
                "cliponaxis": False,
                "showlegend": False,
            }
        )
        notes.append(panel_title(title, domain))
        layout[f"{x.replace('x', 'xaxis')}"] = {
            "domain": domain,
            "range": [0, 1.8 * max(values)],  # room for the printed value past the bar
            "anchor": y,
            "showticklabels": False,
        }
        layout[f"{y.replace('y', 'yaxis')}"] = {
            "autorange": "reversed",
            "anchor": x,
            "showticklabels": k == 0,
        }
    layout |= {
        "annotations": notes,
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
        "height": 280,
    }
    return figure(bars, layout)
