"""Figures of the "Step through one token" page."""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from lnlab.lesson import feature_names, fmt
from lnlab.plots.common import OKABE_ITO, heatmap

INPUT, MEAN, X_HAT, Y = OKABE_ITO[0], OKABE_ITO[5], OKABE_ITO[2], OKABE_ITO[3]
BAND_OPACITY = 0.15
LABEL_BACKGROUND = "rgba(255, 255, 255, 0.8)"  # keeps a line's label readable over the bars


def token_bars(
    x: np.ndarray, x_hat: np.ndarray, y: np.ndarray, mean: float, std: float, step: int
) -> go.Figure:
    """One token before and after, drawn up to `step` (0-based, 0..4; -1: the input alone).

    Left: the input x as bars, its mean as a line (from step 0) and the band mean ± sigma_eps
    (from step 2). Right: x_hat with its mean 0 and band ±1 (from step 3), and y beside it
    (step 4). The figure grows with the steps; an empty panel says when it fills.
    """
    features = feature_names(len(x))
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("input x", "x̂, then y"),
        horizontal_spacing=0.12,
    )
    fig.add_trace(go.Bar(x=features, y=list(x), name="x", marker_color=INPUT), row=1, col=1)
    if step >= 0:
        fig.add_hline(
            y=mean,
            line={"color": MEAN, "dash": "dash", "width": 2},
            annotation_text=f"μ = {fmt(mean, 4)}",
            annotation_position="top left",
            annotation_bgcolor=LABEL_BACKGROUND,
            row=1,
            col=1,
        )
    if step >= 2 and np.isfinite(std) and std > 0:
        fig.add_hrect(
            y0=mean - std,
            y1=mean + std,
            fillcolor=MEAN,
            opacity=BAND_OPACITY,
            line_width=0,
            layer="below",
            annotation_text=f"μ ± σ_ε (σ_ε = {fmt(std, 4)})",
            annotation_position="bottom left",
            annotation_bgcolor=LABEL_BACKGROUND,
            row=1,
            col=1,
        )
    if step >= 3:
        fig.add_trace(go.Bar(x=features, y=list(x_hat), name="x̂", marker_color=X_HAT), row=1, col=2)
        fig.add_hline(y=0, line={"color": MEAN, "dash": "dash", "width": 2}, row=1, col=2)
        fig.add_hrect(
            y0=-1,
            y1=1,
            fillcolor=MEAN,
            opacity=BAND_OPACITY,
            line_width=0,
            layer="below",
            annotation_text="0 ± 1",
            annotation_position="bottom left",
            annotation_bgcolor=LABEL_BACKGROUND,
            row=1,
            col=2,
        )
    if step >= 4:
        fig.add_trace(go.Bar(x=features, y=list(y), name="y", marker_color=Y), row=1, col=2)
    note = _right_panel_note(x_hat, step)
    if note:
        left, right = fig.layout.xaxis2.domain  # paper coordinates: an empty panel has no axes
        fig.add_annotation(
            text=note,
            xref="paper",
            yref="paper",
            x=(left + right) / 2,
            y=0.5,
            showarrow=False,
            bgcolor=LABEL_BACKGROUND,
        )
    fig.update_layout(
        barmode="group",
        height=360,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend={"orientation": "h", "y": -0.15},
    )
    return fig


def _right_panel_note(x_hat: np.ndarray, step: int) -> str:
    """What the right panel says when it has no bars to show."""
    if step < 3:
        return "x̂ appears at step 4"
    return "x̂ = 0 / 0 = NaN: nothing to draw" if np.isnan(x_hat).any() else ""


def prompt_heatmap(z: np.ndarray, labels: Sequence[str], title: str, token: int) -> go.Figure:
    """Every token's row of `z` (tokens x features), the chosen `token`'s row outlined.

    Rows are named "k: label" so that repeated labels stay separate rows.
    """
    z = np.asarray(z, dtype=np.float64)
    rows = [f"{i}: {html.escape(label)}" for i, label in enumerate(labels, start=1)]
    highlight = np.zeros(z.shape, dtype=bool)
    highlight[token] = True
    fig = heatmap(z, rows, feature_names(z.shape[1]), title, highlight=highlight)
    fig.update_layout(height=120 + 36 * len(rows))
    return fig
