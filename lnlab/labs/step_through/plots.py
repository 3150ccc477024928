"""Figures of the "Step through one token" page."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from lnlab.core.numbers import fmt
from lnlab.labs.step_through.grid import feature_names
from lnlab.teach.figures import OKABE_ITO, axis_name, figure, heatmap, panel_title

INPUT, MEAN, X_HAT, Y = OKABE_ITO[0], OKABE_ITO[5], OKABE_ITO[2], OKABE_ITO[3]
BAND_OPACITY = 0.15
LABEL_BACKGROUND = "rgba(255, 255, 255, 0.8)"  # keeps a line's label readable over the bars
SPACING = 0.12  # between the two panels, as a share of the width
PANELS = ((0.0, (1 - SPACING) / 2), ((1 + SPACING) / 2, 1.0))  # x domains: input, output
LINE = {"color": MEAN, "dash": "dash", "width": 2}


def token_bars(
    x: np.ndarray, x_hat: np.ndarray, y: np.ndarray, mean: float, std: float, step: int
) -> go.Figure:
    """One token before and after, drawn up to `step` (0-based, 0..4; -1: the input alone).

    Left: the input x as bars, its mean as a line (from step 0) and the band mean ± sigma_eps
    (from step 2). Right: x_hat with its mean 0 and band ±1 (from step 3), and y beside it
    (step 4). The figure grows with the steps; an empty panel says when it fills.
    """
    features = feature_names(len(x))
    data = [_bars(features, x, "x", INPUT, 0)]
    shapes: list[dict[str, Any]] = []
    left, right = ["input x"], ["x̂, then y"]
    if step >= 0:
        shapes.append(_across(0, "line", mean, mean, line=LINE))
        left.append(f"dashed: μ = {fmt(mean)}")
    if step >= 2 and np.isfinite(std) and std > 0:
        shapes.append(_band(0, mean - std, mean + std))
        left.append(f"band: μ ± σ_ε, σ_ε = {fmt(std)}")
    if step >= 3:
        data.append(_bars(features, x_hat, "x̂", X_HAT, 1))
        shapes += [_across(1, "line", 0, 0, line=LINE), _band(1, -1, 1)]
        right.append("band: 0 ± 1")
    if step >= 4:
        data.append(_bars(features, y, "y", Y, 1))
    # the labels sit above the panels, in their titles, where no bar can hide them
    notes = [panel_title("<br>".join(left), PANELS[0]), panel_title("<br>".join(right), PANELS[1])]
    note = _right_panel_note(x_hat, step)
    if note:
        notes.append(
            {
                "text": note,
                "xref": "paper",
                "yref": "paper",
                "x": sum(PANELS[1]) / 2,
                "y": 0.5,
                "showarrow": False,
                "bgcolor": LABEL_BACKGROUND,
                "font": {"color": "#000000"},  # on its white box, in either theme
            }
        )
    layout = {
        "xaxis": {"anchor": "y", "domain": PANELS[0]},
        "yaxis": {"anchor": "x"},
        "xaxis2": {"anchor": "y2", "domain": PANELS[1]},
        "yaxis2": {"anchor": "x2"},
        "shapes": shapes,
        "annotations": notes,
        "barmode": "group",
        "height": 360,
        "margin": {"l": 10, "r": 10, "t": 80, "b": 10},
        "legend": {"orientation": "h", "y": -0.15},
    }
    return figure(data, layout)


def _bars(features: list[str], values: np.ndarray, name: str, colour: str, panel: int) -> dict:
    return {
        "type": "bar",
        "x": features,
        "y": [float(v) for v in values],
        "name": name,
        "marker": {"color": colour},
        "xaxis": axis_name("x", panel),
        "yaxis": axis_name("y", panel),
    }


def _across(panel: int, kind: str, y0: float, y1: float, **style: Any) -> dict:
    """A shape of `kind` ("line", "rect") across the whole of `panel`, from y0 to y1."""
    xref, yref = f"{axis_name('x', panel)} domain", axis_name("y", panel)
    return {"type": kind, "xref": xref, "x0": 0, "x1": 1, "yref": yref, "y0": y0, "y1": y1, **style}


def _band(panel: int, y0: float, y1: float) -> dict:
    style = {"fillcolor": MEAN, "opacity": BAND_OPACITY, "line": {"width": 0}, "layer": "below"}
    return _across(panel, "rect", y0, y1, **style)


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
    columns = feature_names(z.shape[1])
    return heatmap(z, rows, columns, title, highlight=highlight, height=120 + 36 * len(rows))
