"""Figures of the conventions page: outputs per convention, groupings, claim errors."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from lnlab.conventions import AxesComparison, CheckResult, ConventionComparison, claim_name
from lnlab.plots.common import HIGHLIGHT, OKABE_ITO, heatmap

NOISE = 1e-12  # outputs smaller than this are floating-point rounding of an exact 0
ERROR_FLOOR = 1e-3  # claims that are exact still get a visible bar on the log axis


def outputs_by_convention(comparison: ConventionComparison, token: int, label: str) -> go.Figure:
    """Grouped bars: the outputs y_i of token `token` under every convention, side by side."""
    features = [f"y{i + 1}" for i in range(comparison.x.shape[1])]
    fig = go.Figure(
        [
            go.Bar(
                name=run.convention.name,
                x=features,
                y=run.y[token].tolist(),
                marker_color=OKABE_ITO[i % len(OKABE_ITO)],
                hovertemplate=f"{run.convention.name}<br>%{{x}} = %{{y:.6f}}<extra></extra>",
            )
            for i, run in enumerate(comparison.runs)
        ]
    )
    fig.update_layout(
        barmode="group",
        title=f"Outputs of {label} under each convention",
        xaxis_title="feature",
        yaxis_title="y",
        legend={"orientation": "h", "y": -0.2},
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
    )
    return fig


def groupings_heatmap(axes: AxesComparison, labels: list[str]) -> go.Figure:
    """The outputs of every token, normalized per token (top) and as one group (bottom)."""
    z = np.vstack([axes.per_token.y, axes.one_group.y[0]])
    rows = [f"{t}, per token" for t in labels] + [f"{t}, one group" for t in labels]
    z = np.where(np.abs(z) < NOISE, 0.0, z)  # x - mean is exactly 0 only up to rounding
    columns = [f"y{i + 1}" for i in range(axes.x.shape[1])]
    fig = heatmap(z, rows, columns, "Per token (= the notebook's layout) vs one group")
    # the columns' labels sit on top: move the title above them
    fig.update_layout(margin={"t": 90}, title={"y": 0.97, "yanchor": "top"})
    return fig


def claim_errors(result: CheckResult) -> go.Figure:
    """Each claim's distance from the closest reading, in units of its written precision.

    A bar at or below 1 (the dashed line) means the truth rounds to what was written.
    """
    names = [claim_name(v.claim, result.labels) for v in result.verdicts]
    ratios = [
        max(abs(v.claim.value - v.nearest_value) / v.claim.tolerance, ERROR_FLOOR)
        if np.isfinite(v.nearest_value)
        else None
        for v in result.verdicts
    ]
    colours = [OKABE_ITO[0] if v.holds else HIGHLIGHT for v in result.verdicts]
    fig = go.Figure(
        go.Bar(
            x=list(range(len(names))),
            y=ratios,
            marker_color=colours,
            marker_pattern_shape=["" if v.holds else "x" for v in result.verdicts],
            customdata=[
                [n, "holds" if v.holds else "wrong"]
                for n, v in zip(names, result.verdicts, strict=True)
            ],
            hovertemplate="%{customdata[0]}: %{customdata[1]}<br>"
            "error / tolerance = %{y:.3g}<extra></extra>",
        )
    )
    fig.add_hline(
        y=1, line_dash="dash", annotation_text="rounds to the claim", annotation_position="top left"
    )
    fig.update_layout(
        title="How far each claim is from the closest true value (log scale)",
        yaxis={"type": "log", "title": "error / tolerance"},
        xaxis={"tickvals": list(range(len(names))), "ticktext": names, "title": "claim"},
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
    )
    return fig
