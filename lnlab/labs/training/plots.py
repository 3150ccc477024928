"""The training lab's charts: lines over steps or layers, one per variant."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from lnlab.teach.figures import OKABE_ITO, figure

DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot", "solid", "dash")
MARKERS = ("circle", "diamond", "square", "x", "triangle-up", "cross", "star", "hexagon")


def lines(
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    title: str,
    x_title: str,
    y_title: str,
    *,
    log_y: bool = False,
    markers: bool = False,
) -> go.Figure:
    """One line per named (x, y) series; colour, dash and marker differ, so no line relies
    on colour alone."""
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers" if markers else "lines",
            "name": name,
            "x": list(x),
            "y": list(y),
            "line": {"color": OKABE_ITO[i % 7], "dash": DASHES[i % 8], "width": 2},
            "marker": {"symbol": MARKERS[i % 8], "size": 8},
        }
        for i, (name, (x, y)) in enumerate(series.items())
    ]
    layout = {
        "title": {"text": title},
        "xaxis": {"title": {"text": x_title}},
        "yaxis": {"title": {"text": y_title}, "type": "log" if log_y else "linear"},
        "legend": {"orientation": "h", "y": -0.25},
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "height": 420,
    }
    return figure(data, layout)
