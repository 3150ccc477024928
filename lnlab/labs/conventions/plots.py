"""Figures of the conventions page: outputs per convention, groupings, claim errors."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from lnlab.labs.conventions.checker import CheckResult, claim_name
from lnlab.labs.conventions.compare import AxesComparison, ConventionComparison
from lnlab.teach.figures import HIGHLIGHT, OKABE_ITO, figure, heatmap

NOISE = 1e-12  # outputs smaller than this are floating-point rounding of an exact 0
ERROR_FLOOR = 1e-3  # claims that are exact still get a visible bar on the log axis
BAR_BASE = ERROR_FLOOR / 2  # bars start here: a log axis has no 0 (from 0 they reach far below)


def outputs_by_convention(
    comparison: ConventionComparison,
    token: int,
    label: str,
    keys: tuple[str, ...] | None = None,
) -> go.Figure:
    """Grouped bars: the outputs y_i of token `token` under the conventions `keys` (all if
    None), side by side; each convention keeps its colour whichever others are shown."""
    features = [f"y{i + 1}" for i in range(comparison.x.shape[1])]
    bars = [
        {
            "type": "bar",
            "name": run.convention.name,
            "x": features,
            "y": run.y[token].tolist(),
            "marker": {"color": OKABE_ITO[i % len(OKABE_ITO)]},
            "hovertemplate": f"{run.convention.name}<br>%{{x}} = %{{y:.6f}}<extra></extra>",
        }
        for i, run in enumerate(comparison.runs)
        if keys is None or run.convention.key in keys
    ]
    layout = {
        "barmode": "group",
        "title": {"text": f"Outputs of {label}"},
        "xaxis": {"title": {"text": "feature"}},
        "yaxis": {"title": {"text": "y"}},
        "legend": {"orientation": "h", "y": -0.2},
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
    }
    return figure(bars, layout)


def groupings_heatmap(axes: AxesComparison, labels: list[str]) -> go.Figure:
    """The outputs of every token, normalized per token (top) and as one group (bottom)."""
    z = np.vstack([axes.per_token.y, axes.one_group.y[0]])
    rows = [f"{t}, per token" for t in labels] + [f"{t}, one group" for t in labels]
    z = np.where(np.abs(z) < NOISE, 0.0, z)  # x - mean is exactly 0 only up to rounding
    columns = [f"y{i + 1}" for i in range(axes.x.shape[1])]
    fig = heatmap(z, rows, columns, "Per token (= the notebook's layout) vs one group")
    # the columns' labels sit on top: move the title above them
    fig.layout.title.y, fig.layout.title.yanchor = 0.97, "top"
    return fig


def claim_errors(result: CheckResult) -> go.Figure:
    """Each claim's distance from the closest reading, in units of its tolerance (half a
    unit of its last digit plus the slack of a float32 printout).

    A bar at or below 1 (the dashed line) means the truth rounds to what was written.
    """
    names = [claim_name(v.claim, result.labels) for v in result.verdicts]
    ratios = [max(v.ratio, ERROR_FLOOR) if np.isfinite(v.ratio) else None for v in result.verdicts]
    bars = {
        "type": "bar",
        "x": list(range(len(names))),
        "y": [None if r is None else r - BAR_BASE for r in ratios],  # on top of the base
        "base": BAR_BASE,
        "marker": {
            "color": [OKABE_ITO[0] if v.holds else HIGHLIGHT for v in result.verdicts],
            "pattern": {"shape": ["" if v.holds else "x" for v in result.verdicts]},
        },
        "customdata": [
            [n, "holds" if v.holds else "wrong", r]
            for n, v, r in zip(names, result.verdicts, ratios, strict=True)
        ],
        "hovertemplate": "%{customdata[0]}: %{customdata[1]}<br>"
        "error / tolerance = %{customdata[2]:.3g}<extra></extra>",
    }
    layout = {
        "title": {"text": "How far each claim is from the closest true value (log scale)"},
        "yaxis": {"type": "log", "dtick": 1, "title": {"text": "error / tolerance"}},
        "xaxis": {
            "tickvals": list(range(len(names))),
            "ticktext": names,
            "title": {"text": "claim"},
        },
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
        "shapes": [
            {
                "type": "line",
                "xref": "x domain",
                "x0": 0,
                "x1": 1,
                "yref": "y",
                "y0": 1,
                "y1": 1,
                "line": {"dash": "dash"},
            }
        ],
        "annotations": [
            {
                "text": "rounds to the claim",
                "xref": "x domain",
                "yref": "y",
                "x": 0,
                "y": 0,  # on a log axis an annotation's y is log10: the line at 1
                "xanchor": "left",
                "yanchor": "bottom",
                "showarrow": False,
            }
        ],
    }
    return figure([bars], layout)
