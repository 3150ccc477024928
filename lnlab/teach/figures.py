"""Colours and the heatmap every page shares.

Colour-blind safe throughout: Okabe-Ito for categories and ColorBrewer's PuOr (diverging, for
signed values around 0). Every heatmap also prints its numbers, and pages put the same numbers
in a table beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.colors import get_colorscale

from lnlab.core.numbers import fmt

OKABE_ITO = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#D55E00",  # vermillion
    "#F0E442",  # yellow
    "#000000",  # black
)
DIVERGING = get_colorscale("PuOr")  # as colours: plotly.js knows only a few scales by name
HIGHLIGHT = "#D55E00"  # outline of the cells that feed a statistic


def figure(data: list[dict[str, Any]], layout: dict[str, Any]) -> go.Figure:
    """A figure from plain Plotly JSON, without plotly's property-by-property validation.

    Validating costs 15 to 45 ms for a small figure, more than the page's arithmetic on every
    edit, and every session waits for it; built from dicts it is about 1 ms. The figure tests
    validate each builder's output once instead (tests/helpers.validated).
    """
    layout = {k: v for k, v in layout.items() if v != []}  # as plotly does: no empty lists
    # No plotly template: the browser styles every chart with Streamlit's theme, and plotly's
    # default template would be deep-copied into each figure (4 ms) and sent with it (most of
    # a small figure's bytes)
    layout.setdefault("template", {})
    return go.Figure({"data": data, "layout": layout}, _validate=False)


def axis_name(letter: str, panel: int) -> str:
    """Plotly's name for the x or y axis of panel 0, 1, ...: x, x2, ... (or y, y2, ...)."""
    return letter if panel == 0 else f"{letter}{panel + 1}"


def panel_title(text: str, domain: Sequence[float]) -> dict[str, Any]:
    """A panel's title, centred above its x domain (as make_subplots writes one)."""
    return {
        "text": text,
        "font": {"size": 16},
        "showarrow": False,
        "xref": "paper",
        "yref": "paper",
        "x": sum(domain) / 2,
        "y": 1.0,
        "xanchor": "center",
        "yanchor": "bottom",
    }


def heatmap(
    z: np.ndarray,
    rows: Sequence[str],
    columns: Sequence[str],
    title: str,
    *,
    highlight: np.ndarray | None = None,
    shapes: Sequence[dict[str, Any]] = (),
    height: int | None = None,
    top: int = 90,
) -> go.Figure:
    """A heatmap of `z` with its numbers printed, NaN cells labelled, and optional outlines.

    `highlight` is a boolean mask of z's shape; those cells get an outline, so a reader can
    see which numbers feed a statistic without relying on colour. `shapes` are drawn after
    the outlines; `height` in pixels, or plotly's default; `top` is the top margin, which
    holds the title and, under it, the column labels.
    """
    z = np.asarray(z, dtype=np.float64)
    finite = z[np.isfinite(z)]
    bound = float(np.max(np.abs(finite))) if finite.size else 1.0
    cells = zip(*np.nonzero(np.asarray(highlight)), strict=True) if highlight is not None else ()
    trace = {
        "type": "heatmap",
        "z": np.where(np.isfinite(z), z, None).tolist(),
        "x": list(columns),
        "y": list(rows),
        "text": [[fmt(v, bound) for v in row] for row in z],
        "texttemplate": "%{text}",
        "colorscale": DIVERGING,
        "zmin": -bound or -1.0,
        "zmax": bound or 1.0,
        "hovertemplate": "%{y}, %{x}: %{text}<extra></extra>",
    }
    layout = {
        "title": {"text": title},
        "margin": {"l": 10, "r": 10, "t": top, "b": 10},
        "xaxis": {"type": "category", "side": "top"},
        "yaxis": {"type": "category", "autorange": "reversed"},
        "shapes": [
            {
                "type": "rect",
                "x0": j - 0.5,
                "x1": j + 0.5,
                "y0": i - 0.5,
                "y1": i + 0.5,
                "line": {"color": HIGHLIGHT, "width": 3},
            }
            for i, j in cells
        ]
        + list(shapes),
    }
    if height is not None:
        layout["height"] = height
    return figure([trace], layout)
