"""Figures for the padded-batch page: the stacked batch, the three outputs, the closed form,
the 5 x 3 table and the running statistics."""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import plotly.graph_objects as go

from lnlab.core.numbers import fmt
from lnlab.labs.padding.batch import FEATURES, PaddingLab, Running, padded_moments
from lnlab.teach.figures import (
    OKABE_ITO,
    axis_name,
    cell_colours,
    figure,
    heatmap,
    ink_on,
    panel_title,
)

PAD_FILL = "#7F7F7F"  # grey wash over PAD rows, on top of the colours
ROW_HEIGHT = 26  # pixels per token row of a heatmap
PANELS = ((0.0, 0.45), (0.55, 1.0))  # x domains of the closed form's two panels


def safe_labels(labels: tuple[str, ...]) -> list[str]:
    """Row labels with <, > and & escaped: Plotly reads tags like <b> in text, users' words
    must show as typed."""
    return [html.escape(label, quote=False) for label in labels]


def _pad_washes(real: np.ndarray) -> list[dict[str, Any]]:
    """A grey wash over each PAD row, across every feature, above the heatmap's colours."""
    return [
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


def _batch_heatmap(
    z: np.ndarray, lab: PaddingLab, title: str, highlight: np.ndarray | None = None
) -> go.Figure:
    """Tokens x features of the batch, PAD rows greyed; the title and feature names on top."""
    return heatmap(
        z.reshape(-1, len(FEATURES)),
        safe_labels(lab.labels),
        FEATURES,
        title,
        highlight=highlight,
        shapes=_pad_washes(lab.real),
        height=120 + ROW_HEIGHT * lab.real.size,
    )


def batch_cells(lab: PaddingLab) -> list[list[dict[str, str]]]:
    """The batch heatmap's cells as batch_figure draws them, row by row: each one's colour
    (PAD rows washed grey), the ink of its number (black or white, whichever contrasts more)
    and the number as shown. For the page's own drawing of the batch (lnlab.labs.padding.live).
    """
    z = lab.tokens
    bound = float(np.max(np.abs(z))) or 1.0
    fill = cell_colours(z, bound, _pad_washes(lab.real))
    ink = ink_on(fill)
    return [
        [
            {
                "fill": "#{:02x}{:02x}{:02x}".format(*np.rint(fill[i, j]).astype(int)),
                "ink": str(ink[i, j]),
                "text": fmt(float(z[i, j]), bound),
            }
            for j in range(z.shape[1])
        ]
        for i in range(z.shape[0])
    ]


def batch_figure(lab: PaddingLab, highlight: np.ndarray, title: str) -> go.Figure:
    """The stacked tokens x features batch; PAD rows greyed, the cells in `highlight`
    outlined."""
    return _batch_heatmap(lab.tokens, lab, title, highlight)


def output_figures(lab: PaddingLab) -> tuple[go.Figure, go.Figure, go.Figure]:
    """The outputs of naive Batch Norm, masked Batch Norm and Layer Norm, PAD rows greyed."""
    return (
        _batch_heatmap(lab.norms.naive_bn.y, lab, "Batch Norm, naive"),
        _batch_heatmap(lab.norms.masked_bn.y, lab, "Batch Norm, masked"),
        _batch_heatmap(lab.norms.ln.y, lab, "Layer Norm"),
    )


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
    titles = (f"padded mean of {name}", f"padded variance of {name}")
    data = []
    for col, (curve, value) in enumerate(zip(curves, computed, strict=True)):
        axes = {"xaxis": axis_name("x", col), "yaxis": axis_name("y", col), "showlegend": col == 0}
        data += [
            {
                "type": "scatter",
                "x": p.tolist(),
                "y": curve.tolist(),
                "mode": "lines",
                "name": "closed form",
                "line": {"color": OKABE_ITO[0]},
                **axes,
            },
            {
                "type": "scatter",
                "x": [cf.share],
                "y": [float(value)],
                "mode": "markers",
                "name": "computed from this batch",
                "marker": {"color": OKABE_ITO[1], "size": 12},
                **axes,
            },
        ]
        if marks is not None:
            data.append(
                {
                    "type": "scatter",
                    "x": [calculator_share],
                    "y": [float(marks[col])],
                    "mode": "markers",
                    "name": "calculator's share",
                    "marker": {"color": OKABE_ITO[2], "size": 12, "symbol": "diamond"},
                    **axes,
                }
            )
    layout: dict[str, Any] = {
        "height": 360,
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
        "annotations": [panel_title(t, domain) for t, domain in zip(titles, PANELS, strict=True)],
    }
    for col, domain in enumerate(PANELS):
        x, y = axis_name("x", col), axis_name("y", col)
        layout["xaxis" + x[1:]] = {
            "anchor": y,
            "domain": domain,
            "range": [0, 1],
            "title": {"text": "share of PAD rows p"},
        }
        layout["yaxis" + y[1:]] = {"anchor": x, "domain": [0.0, 1.0]}
    return figure(data, layout)


def table_heatmap(
    z: np.ndarray, rows: tuple[str, ...], columns: tuple[str, ...], title: str
) -> go.Figure:
    """A small samples x nodes table (the 5 x 3 pre-activations) as a heatmap, numbers printed."""
    return heatmap(z, safe_labels(rows), columns, title, height=120 + 2 * ROW_HEIGHT * len(rows))


def running_figure(running: Running) -> go.Figure:
    """The running mean and variance of each feature, step by step, against the batch's own
    mean and unbiased variance (dashed): what eval mode uses, creeping towards what training
    uses."""
    steps = list(range(running.steps + 1))
    data = []
    panels = ((running.mean, running.batch_mean), (running.var, running.batch_var))
    for col, (values, target) in enumerate(panels):
        axes = {"xaxis": axis_name("x", col), "yaxis": axis_name("y", col)}
        for j, name in enumerate(FEATURES):
            colour = OKABE_ITO[j]
            data += [
                {
                    "type": "scatter",
                    "x": steps,
                    "y": values[:, j].tolist(),
                    "mode": "lines+markers" if running.steps <= 30 else "lines",
                    "name": name,
                    "legendgroup": name,
                    "showlegend": col == 0,
                    "line": {"color": colour},
                    **axes,
                },
                {
                    "type": "scatter",
                    "x": [0, running.steps],
                    "y": [float(target[j])] * 2,
                    "mode": "lines",
                    "name": f"{name}, batch",
                    "legendgroup": name,
                    "showlegend": False,
                    "line": {"color": colour, "dash": "dash"},
                    **axes,
                },
            ]
    layout: dict[str, Any] = {
        "height": 340,
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "legend": {"orientation": "h", "y": -0.25},
        "annotations": [
            panel_title(t, domain)
            for t, domain in zip(("running mean", "running variance"), PANELS, strict=True)
        ],
    }
    for col, domain in enumerate(PANELS):
        x, y = axis_name("x", col), axis_name("y", col)
        layout["xaxis" + x[1:]] = {"anchor": y, "domain": domain, "title": {"text": "step"}}
        layout["yaxis" + y[1:]] = {"anchor": x, "domain": [0.0, 1.0]}
    return figure(data, layout)
