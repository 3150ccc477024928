"""The training lab's charts: lines over steps or layers, one per variant."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from lnlab.labs.training.model import VARIANTS
from lnlab.teach.figures import OKABE_ITO, figure

# Each variant keeps its colour, dash and marker on every chart, whichever variants a run has
# and whichever of them a chart shows; other series come after them.
ORDER = tuple(name for name, _, _ in VARIANTS.values())
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
    on colour alone, and a variant's are the same on every chart (ORDER)."""
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers" if markers else "lines",
            "name": name,
            "x": list(x),
            "y": list(y),
            "line": {"color": OKABE_ITO[k % 7], "dash": DASHES[k % 8], "width": 2},
            "marker": {"symbol": MARKERS[k % 8], "size": 8},
        }
        for k, (name, (x, y)) in zip(_styles(list(series)), series.items(), strict=True)
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


def _styles(names: Sequence[str]) -> list[int]:
    """Each name's style: a variant's place in ORDER, also for the first series named after
    it ("post-LN, warm-up"); any other series the next free ones."""
    chosen: list[int | None] = []
    for name in names:
        base = name if name in ORDER else name.split(",")[0]
        own = ORDER.index(base) if base in ORDER else None
        chosen.append(own if own not in chosen else None)
    free = (k for k in range(len(ORDER) + len(names)) if k not in chosen)
    return [k if k is not None else next(free) for k in chosen]
