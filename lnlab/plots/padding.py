"""Figures for the padded-batch page: the stacked batch, the three outputs, the closed form."""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from lnlab.padding import FEATURES, PaddingLab, padded_moments
from lnlab.plots.common import OKABE_ITO, heatmap

PAD_FILL = "#7F7F7F"  # grey wash over PAD rows, on top of the colours
ROW_HEIGHT = 26  # pixels per token row of a heatmap


def safe_labels(labels: tuple[str, ...]) -> list[str]:
    """Row labels with <, > and & escaped: Plotly reads tags like <b> in text, users' words
    must show as typed."""
    return [html.escape(label, quote=False) for label in labels]


def _mark_pads(fig: go.Figure, real: np.ndarray) -> go.Figure:
    """Wash each PAD row in grey, across every feature, above the heatmap's colours."""
    washes = [
        {
            "type": "rect",
            "x0": -0.5,
            "x1": len(FEATURES) - 0.5,
            "y0": i - 0.5,
            "y1": i + 0.5,
            "fillcolor": PAD_FILL,
            "opacity": 0.3,
            "line": {"width": 0},
            "layer": "above",
        }
        for i in np.flatnonzero(~real)
    ]
    # one update for all shapes: fig.add_shape per shape re-validates every earlier one
    fig.update_layout(
        shapes=[*fig.layout.shapes, *washes],
        height=120 + ROW_HEIGHT * real.size,  # the title and the feature names sit on top
    )
    return fig


def batch_figure(lab: PaddingLab, highlight: np.ndarray, title: str) -> go.Figure:
    """The stacked tokens x features batch; PAD rows greyed, the cells in `highlight`
    outlined."""
    fig = heatmap(lab.tokens, safe_labels(lab.labels), FEATURES, title, highlight=highlight)
    return _mark_pads(fig, lab.real)


def output_figures(lab: PaddingLab) -> tuple[go.Figure, go.Figure, go.Figure]:
    """The outputs of naive Batch Norm, masked Batch Norm and Layer Norm, PAD rows greyed."""
    rows = safe_labels(lab.labels)
    outputs = (
        (lab.norms.naive_bn.y, "Batch Norm, naive"),
        (lab.norms.masked_bn.y, "Batch Norm, masked"),
        (lab.norms.ln.y, "Layer Norm"),
    )
    figures = tuple(
        _mark_pads(heatmap(y.reshape(-1, len(FEATURES)), rows, FEATURES, title), lab.real)
        for y, title in outputs
    )
    return figures  # type: ignore[return-value]


def closed_form_figure(
    lab: PaddingLab, feature: int, calculator_share: float | None = None
) -> go.Figure:
    """Padded mean and variance of one feature as the PAD share p grows from 0 to 1.

    Lines: the closed form (1 - p) mu and (1 - p) sigma^2 + p (1 - p) mu^2 from the real
    tokens' mu and sigma^2. Dots: what naive Batch Norm computed on this batch. A diamond:
    the calculator's share.
    """
    cf = lab.closed_form
    mu, var = cf.real_mean[feature], cf.real_var[feature]
    p = np.linspace(0.0, 1.0, 101)
    curves = padded_moments(p, mu, var)
    marks = padded_moments(calculator_share, mu, var) if calculator_share is not None else None
    computed = (cf.computed_mean[feature], cf.computed_var[feature])
    name = FEATURES[feature]
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=(f"padded mean of {name}", f"padded variance of {name}"),
    )
    for col, (curve, value) in enumerate(zip(curves, computed, strict=True), start=1):
        first = col == 1
        fig.add_trace(
            go.Scatter(
                x=p,
                y=curve,
                mode="lines",
                name="closed form",
                line={"color": OKABE_ITO[0]},
                showlegend=first,
            ),
            row=1,
            col=col,
        )
        fig.add_trace(
            go.Scatter(
                x=[cf.share],
                y=[value],
                mode="markers",
                name="computed from this batch",
                marker={"color": OKABE_ITO[1], "size": 12},
                showlegend=first,
            ),
            row=1,
            col=col,
        )
        if marks is not None:
            fig.add_trace(
                go.Scatter(
                    x=[calculator_share],
                    y=[float(marks[col - 1])],
                    mode="markers",
                    name="calculator's share",
                    marker={"color": OKABE_ITO[2], "size": 12, "symbol": "diamond"},
                    showlegend=first,
                ),
                row=1,
                col=col,
            )
        fig.update_xaxes(title_text="share of PAD rows p", range=[0, 1], row=1, col=col)
    fig.update_layout(height=360, margin={"l": 10, "r": 10, "t": 60, "b": 10})
    return fig
