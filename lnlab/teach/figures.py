"""Colours and the heatmap every page shares, and a chart's numbers as a table.

Colour-blind safe throughout: Okabe-Ito's hues for categories and ColorBrewer's PuOr
(diverging, for signed values around 0). Every heatmap also prints its numbers, and pages put
the same numbers in a table beside it.

Readable in Streamlit's light and dark themes (WCAG 2.2, 1.4.3 and 1.4.11): every category
colour stands at least 3:1 against white and against the dark theme's background (Okabe-Ito's
orange, sky blue and yellow are darkened to get there, and its black is a grey), and each
heatmap cell prints its number in black or white, whichever stands out more on that cell's
colour (at least 4.5:1 on any colour).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import get_colorscale

from lnlab.core.numbers import fmt
from lnlab.teach.claims import claim

OKABE_ITO = (
    "#0072B2",  # blue
    "#BB8100",  # orange (Okabe-Ito's #E69F00, 2.3:1 on white, darkened)
    "#009E73",  # bluish green
    "#C870A1",  # reddish purple (#CC79A7, a shade darker)
    "#1C95D9",  # sky blue (#56B4E9, 2.3:1 on white, darkened)
    "#D55E00",  # vermillion
    "#978E0C",  # yellow (#F0E442, 1.3:1 on white, darkened)
    "#767676",  # grey, for Okabe-Ito's black, which vanishes on the dark theme
)
DIVERGING = get_colorscale("PuOr")  # as colours: plotly.js knows only a few scales by name
HIGHLIGHT = "#D55E00"  # outline of the cells that feed a statistic
BACKGROUNDS = ("#FFFFFF", "#171614")  # Streamlit 1.67's light and dark themes' page colour
INK = ("#000000", "#FFFFFF")  # a heatmap cell's number: whichever stands out more
INK_SWITCH = math.sqrt(0.0525) - 0.05  # luminance where black and white contrast equally


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


def luminance(colour: str) -> float:
    """WCAG's relative luminance of "#RRGGBB" or "rgb(r, g, b)": 0 for black, 1 for white."""
    return float(luminances(np.asarray(_rgb(colour), dtype=np.float64)))


def luminances(rgb: np.ndarray) -> np.ndarray:
    """WCAG's relative luminance of colours as RGB, 0-255, on the last axis."""
    channels = np.asarray(rgb, dtype=np.float64) / 255
    linear = np.where(channels <= 0.04045, channels / 12.92, ((channels + 0.055) / 1.055) ** 2.4)
    return linear @ np.array([0.2126, 0.7152, 0.0722])


def contrast(a: str, b: str) -> float:
    """WCAG's contrast ratio of two colours, 1 to 21 (text needs 4.5, lines and marks 3)."""
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def _rgb(colour: str) -> tuple[int, int, int]:
    if colour.startswith("#"):
        return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]
    inside = colour[colour.index("(") + 1 : colour.index(")")]
    return tuple(int(float(v)) for v in inside.split(",")[:3])  # type: ignore[return-value]


_SCALE_AT = np.array([at for at, _ in DIVERGING])
_SCALE_RGB = np.array([_rgb(c) for _, c in DIVERGING], dtype=np.float64)


def scale_colours(t: np.ndarray) -> np.ndarray:
    """The diverging scale's colours (RGB, 0-255) at positions `t` in [0, 1], interpolated
    linearly between its stops, as plotly.js draws a heatmap."""
    t = np.clip(np.asarray(t, dtype=np.float64), 0.0, 1.0)
    return np.stack([np.interp(t, _SCALE_AT, _SCALE_RGB[:, c]) for c in range(3)], axis=-1)


def ink_on(rgb: np.ndarray) -> np.ndarray:
    """Black or white for text on each colour of `rgb` (0-255, last axis), whichever has the
    higher contrast: black above the luminance where both are equal, sqrt(0.0525) - 0.05."""
    return np.where(luminances(rgb) > INK_SWITCH, INK[0], INK[1])


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
    text = [[fmt(v, bound) for v in row] for row in z]
    trace = {
        "type": "heatmap",
        "z": np.where(np.isfinite(z), z, None).tolist(),
        "x": list(columns),
        "y": list(rows),
        "text": text,
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
    fill = cell_colours(z, bound or 1.0, shapes)
    data = [trace, *_cell_numbers(z, text, rows, columns, fill)]
    if height is not None:
        layout["height"] = height
    return figure(data, layout)


def cell_colours(z: np.ndarray, bound: float, shapes: Sequence[dict[str, Any]] = ()) -> np.ndarray:
    """Each cell's colour as drawn (RGB, 0-255): the scale's colour for its value between
    -bound and bound, under any rectangle of `shapes` drawn above the cells with a fill and an
    opacity (a wash over a row). NaN cells come out NaN (they show the page's background)."""
    fill = scale_colours((np.asarray(z, dtype=np.float64) + bound) / (2 * bound))
    fill[~np.isfinite(z)] = np.nan
    for shape in shapes:
        if shape.get("layer") != "above" or "fillcolor" not in shape:
            continue
        alpha = float(shape.get("opacity", 1.0))
        rows = slice(max(0, math.ceil(shape["y0"])), max(0, math.floor(shape["y1"]) + 1))
        cols = slice(max(0, math.ceil(shape["x0"])), max(0, math.floor(shape["x1"]) + 1))
        wash = np.asarray(_rgb(shape["fillcolor"]), dtype=np.float64)
        fill[rows, cols] = (1 - alpha) * fill[rows, cols] + alpha * wash
    return fill


def _cell_numbers(
    z: np.ndarray,
    text: list[list[str]],
    rows: Sequence[str],
    columns: Sequence[str],
    fill: np.ndarray,
) -> list[dict[str, Any]]:
    """The heatmap's numbers as text traces over its cells: each finite cell's in black or
    white (ink_on its colour), NaN cells' in the page's own text colour (they are drawn on
    the page's background). plotly.js's own heatmap text takes #444 or white by brightness,
    which leaves mid-tone cells under 4.5:1."""
    finite = np.isfinite(z)
    traces = []
    for keep, coloured in ((finite, True), (~finite, False)):
        at = np.argwhere(keep)
        if not at.size:
            continue
        trace = {
            "type": "scatter",
            "mode": "text",
            "x": [columns[j] for _, j in at],
            "y": [rows[i] for i, _ in at],
            "text": [text[i][j] for i, j in at],
            "hoverinfo": "skip",
            "showlegend": False,
        }
        if coloured:
            trace["textfont"] = {"color": ink_on(fill[keep]).tolist()}
        traces.append(trace)
    return traces


def figure_table(fig: go.Figure) -> pd.DataFrame | None:
    """The numbers a chart draws, as a table a screen reader can walk: a heatmap's cells (a row
    per row, a column per column); bars and lines as a column per trace when they share their
    x values, else one row per point (trace, x, y). None for a chart of shapes alone (a
    diagram), whose lesson gives its own table."""
    spec = fig.to_plotly_json()
    layout = spec.get("layout", {})
    traces = [t for t in spec.get("data", []) if t.get("mode") != "text"]
    heatmaps = [t for t in traces if t.get("type") == "heatmap"]
    if heatmaps:
        h = heatmaps[0]
        z = np.array([[np.nan if v is None else v for v in row] for row in h["z"]], dtype=float)
        frame = pd.DataFrame(z, columns=[str(c) for c in h["x"]])
        frame.insert(0, _axis_title(layout, "yaxis", "row"), [str(r) for r in h["y"]])
        return frame
    series = [_points(t) for t in traces if t.get("type") in ("bar", "scatter")]
    series = [s for s in series if s is not None]
    if not series:
        return None
    category = _axis_title(layout, "yaxis" if series[0][3] else "xaxis", "x")
    value = _axis_title(layout, "xaxis" if series[0][3] else "yaxis", "y")
    names = _unique([name for name, _, _, _ in series])
    if all(x == series[0][1] for _, x, _, _ in series):
        frame = pd.DataFrame({category: [str(x) for x in series[0][1]]})
        for name, (_, _, y, _) in zip(names, series, strict=True):
            frame[name] = y
        return frame
    rows = [
        (name, str(x), v)
        for name, (_, xs, ys, _) in zip(names, series, strict=True)
        for x, v in zip(xs, ys, strict=True)
    ]
    return pd.DataFrame(rows, columns=["series", category, value])


def _points(trace: dict[str, Any]) -> tuple[str, list, list[float], bool] | None:
    """(name, categories, values, horizontal) of a bar or scatter trace, or None."""
    horizontal = trace.get("orientation") == "h"
    x, y = trace.get("x"), trace.get("y")
    if x is None or y is None:
        return None
    categories, values = (y, x) if horizontal else (x, y)
    numbers = [np.nan if v is None else float(v) for v in values]
    return str(trace.get("name") or "value"), list(categories), numbers, horizontal


def _axis_title(layout: dict[str, Any], axis: str, default: str) -> str:
    title = layout.get(axis, {}).get("title", {})
    text = title.get("text") if isinstance(title, dict) else title
    return str(text) if text else default


def _unique(names: list[str]) -> list[str]:
    """The names, a repeated one numbered ("f1", "f1 (2)"), so each is a column of its own."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return out


def spread(values: object) -> str:
    """A chart summary's range of numbers: "from −1.34 to 1.34" over the finite values, with
    how many are NaN; "all NaN" when none is finite."""
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    finite = v[np.isfinite(v)]
    if not finite.size:
        return "all NaN"
    nan = v.size - finite.size
    text = f"from {fmt(float(finite.min()))} to {fmt(float(finite.max()))}"
    return text + claim("figures.some_nan", nan > 0, f" ({nan} NaN)", values=v)
