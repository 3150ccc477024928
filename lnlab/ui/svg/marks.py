"""A figure's traces as SVG: heatmap cells, bars (grouped, horizontal, on a log axis, with a
base, a pattern or a printed value), lines, markers and text, each from Plotly's JSON."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lnlab.teach.figures import OKABE_ITO
from lnlab.ui.svg.axes import Axis, esc, finite, lines_of

INK = "currentColor"  # the page's text colour, in the light theme and the dark
BAR_GAP = 0.2  # Plotly's bargap: the share of a category left between groups


def num(v: float) -> str:
    """A coordinate, to a tenth of a pixel."""
    text = f"{v:.1f}"
    return text[:-2] if text.endswith(".0") else text


def listed(value: Any, i: int, default: Any = None) -> Any:
    """A per-point property: the i-th of a list, or the one value for every point."""
    if isinstance(value, list | tuple):
        return value[i] if i < len(value) else default
    return default if value is None else value


# ---------------------------------------------------------------- colours


def rgb(colour: str) -> tuple[float, float, float]:
    """ "#rrggbb", "#rgb" or "rgb(a)(r, g, b...)" as three 0-255 numbers."""
    colour = colour.strip()
    if colour.startswith("#"):
        digits = colour[1:]
        if len(digits) == 3:
            digits = "".join(c * 2 for c in digits)
        return tuple(float(int(digits[i : i + 2], 16)) for i in (0, 2, 4))  # type: ignore[return-value]
    inside = colour[colour.index("(") + 1 : colour.index(")")]
    return tuple(float(v) for v in inside.split(",")[:3])  # type: ignore[return-value]


def scale_colour(scale: Sequence[Sequence[Any]], t: float) -> str:
    """The colour at `t` in [0, 1] of a Plotly colorscale ([[at, colour], ...]), interpolated
    linearly between its stops as plotly.js does."""
    t = min(max(t, 0.0), 1.0)
    stops = [(float(at), rgb(str(c))) for at, c in scale]
    for (a0, c0), (a1, c1) in itertools.pairwise(stops):
        if t <= a1:
            w = 0.0 if a1 == a0 else (t - a0) / (a1 - a0)
            mixed = [round(x0 + w * (x1 - x0)) for x0, x1 in zip(c0, c1, strict=True)]
            return "#{:02x}{:02x}{:02x}".format(*mixed)
    return "#{:02x}{:02x}{:02x}".format(*(round(x) for x in stops[-1][1]))


# ---------------------------------------------------------------- markers and lines


def dash_array(dash: str | None, width: float) -> str:
    """Plotly's named dashes as a stroke-dasharray, scaled by the line's width as it does."""
    w = max(width, 3.0)
    pattern = {
        "dot": (1, 1),
        "dash": (3, 3),
        "longdash": (5, 5),
        "dashdot": (3, 1, 1, 1),
        "longdashdot": (5, 2, 1, 2),
    }.get(dash or "solid")
    return "" if pattern is None else ",".join(num(p * w) for p in pattern)


def _polygon(points: Sequence[tuple[float, float]], x: float, y: float) -> str:
    return "M" + "L".join(f"{num(x + px)},{num(y + py)}" for px, py in points) + "Z"


def _star(r: float) -> list[tuple[float, float]]:
    points = []
    for k in range(10):
        radius = r if k % 2 == 0 else r * 0.45
        angle = math.pi / 5 * k - math.pi / 2
        points.append((radius * math.cos(angle), radius * math.sin(angle)))
    return points


def _cross(r: float, turn: float) -> list[tuple[float, float]]:
    """A plus of arm width r/2.5 (turned by `turn` radians: an x)."""
    t = r / 2.5
    arm = [(t, -r), (t, -t), (r, -t), (r, t), (t, t), (t, r)]
    arm += [(-t, r), (-t, t), (-r, t), (-r, -t), (-t, -t), (-t, -r)]
    c, s = math.cos(turn), math.sin(turn)
    return [(px * c - py * s, px * s + py * c) for px, py in arm]


def marker_path(symbol: str, x: float, y: float, size: float) -> str:
    """The outline of Plotly's marker `symbol` of diameter `size` at (x, y), as path data."""
    r = size / 2
    shapes = {
        "square": [(-r, -r), (r, -r), (r, r), (-r, r)],
        "diamond": [(0, -1.3 * r), (1.3 * r, 0), (0, 1.3 * r), (-1.3 * r, 0)],
        "triangle-up": [(0, -1.2 * r), (1.1 * r, 0.8 * r), (-1.1 * r, 0.8 * r)],
        "cross": _cross(1.2 * r, 0.0),
        "x": _cross(1.2 * r, math.pi / 4),
        "star": _star(1.4 * r),
        "hexagon": [
            (1.1 * r * math.cos(a), 1.1 * r * math.sin(a))
            for a in (math.pi / 3 * k + math.pi / 6 for k in range(6))
        ],
    }
    if symbol in shapes:
        return _polygon(shapes[symbol], x, y)
    return (  # a circle, as two arcs
        f"M{num(x - r)},{num(y)}a{num(r)},{num(r)} 0 1,0 {num(2 * r)},0"
        f"a{num(r)},{num(r)} 0 1,0 {num(-2 * r)},0Z"
    )


# ---------------------------------------------------------------- patterns


@dataclass
class Defs:
    """What the figure's marks refer to by id: the bars' fill patterns."""

    uid: str
    patterns: dict[tuple[str, str], str] = field(default_factory=dict)

    def pattern(self, shape: str, colour: str) -> str:
        """The id of a fill of `colour` lines in Plotly's pattern `shape` ("/", "x", ...)."""
        key = (shape, colour)
        if key not in self.patterns:
            self.patterns[key] = f"{self.uid}-p{len(self.patterns)}"
        return self.patterns[key]

    def markup(self) -> str:
        parts = []
        for (shape, colour), name in self.patterns.items():
            strokes = {
                "/": "M-2,2L2,-2M0,8L8,0M6,10L10,6",
                "\\": "M-2,6L2,10M0,0L8,8M6,-2L10,2",
                "x": "M0,8L8,0M0,0L8,8",
                "-": "M0,4H8",
                "|": "M4,0V8",
                "+": "M0,4H8M4,0V8",
                ".": "M3,4H5",
            }.get(shape, "M0,8L8,0")
            parts.append(
                f'<pattern id="{name}" width="8" height="8" patternUnits="userSpaceOnUse">'
                f'<rect width="8" height="8" fill="{esc(colour)}" fill-opacity="0.25"/>'
                f'<path d="{strokes}" stroke="{esc(colour)}" stroke-width="2"/></pattern>'
            )
        return f"<defs>{''.join(parts)}</defs>" if parts else ""


# ---------------------------------------------------------------- traces


def heatmap(trace: dict[str, Any], xa: Axis, ya: Axis) -> str:
    """The cells, coloured by the trace's colorscale between zmin and zmax; NaN cells left out
    (the page's background shows, as in Plotly)."""
    z = trace.get("z") or []
    scale = trace.get("colorscale") or [[0, "#ffffff"], [1, "#000000"]]
    values = [v for row in z for v in row if finite(v) is not None]
    zmin = finite(trace.get("zmin"))
    zmax = finite(trace.get("zmax"))
    zmin = min(values, default=0.0) if zmin is None else zmin
    zmax = max(values, default=1.0) if zmax is None else zmax
    w, h = xa.step, ya.step
    cells = []
    columns, rows = trace.get("x") or [], trace.get("y") or []
    for i, row in enumerate(z):
        cy = ya.px(rows[i] if i < len(rows) else i)
        for j, v in enumerate(row):
            cx = xa.px(columns[j] if j < len(columns) else j)
            value = finite(v)
            if value is None or cx is None or cy is None:
                continue
            colour = scale_colour(scale, (value - zmin) / ((zmax - zmin) or 1.0))
            cells.append(
                f'<rect x="{num(cx - w / 2)}" y="{num(cy - h / 2)}" width="{num(w)}" '
                f'height="{num(h)}" fill="{colour}"/>'
            )
    return f'<g shape-rendering="crispEdges">{"".join(cells)}</g>'


def text_points(trace: dict[str, Any], xa: Axis, ya: Axis, size: float) -> str:
    """A text trace (mode "text"): each point's text centred on it, in its textfont colour."""
    font = trace.get("textfont") or {}
    size = float(font.get("size") or size)
    out = []
    texts = trace.get("text") or []
    for i, (x, y) in enumerate(zip(trace.get("x") or [], trace.get("y") or [], strict=False)):
        px, py = xa.px(x), ya.px(y)
        if px is None or py is None or i >= len(texts):
            continue
        colour = listed(font.get("color"), i, INK)
        words = esc(" ".join(lines_of(texts[i])))
        out.append(
            f'<text x="{num(px)}" y="{num(py + size * 0.35)}" text-anchor="middle" '
            f'font-size="{num(size)}" fill="{esc(colour)}">{words}</text>'
        )
    return "".join(out)


@dataclass(frozen=True)
class Slot:
    """Where a bar trace stands in its group: k of n, in a band of `band` axis units."""

    k: int = 0
    n: int = 1
    band: float = 1.0


def bar_base(trace: dict[str, Any], i: int, value_axis: Axis) -> float | None:
    """Where the i-th bar starts, in axis units: its base (0 by default), or the axis's
    bottom on a log axis without one."""
    base = listed(trace.get("base"), i, None)
    if base is None and value_axis.kind == "log":
        return min(value_axis.lo, value_axis.hi)
    return value_axis.units(0.0 if base is None else base)


def bars(
    trace: dict[str, Any], xa: Axis, ya: Axis, slot: Slot, defs: Defs, size: float, k: int
) -> str:
    """One bar trace: a rect per finite value, with its pattern and printed text."""
    horizontal = trace.get("orientation") == "h"
    cat_axis, val_axis = (ya, xa) if horizontal else (xa, ya)
    categories = (trace.get("y") if horizontal else trace.get("x")) or []
    values = (trace.get("x") if horizontal else trace.get("y")) or []
    marker = trace.get("marker") or {}
    pattern = (marker.get("pattern") or {}).get("shape")
    texts = trace.get("text")
    width = slot.band * (1 - BAR_GAP) / slot.n
    out = []
    for i, (c, v) in enumerate(zip(categories, values, strict=False)):
        value, centre = finite(v), cat_axis.units(c)
        start = bar_base(trace, i, val_axis)
        if value is None or centre is None or start is None:
            continue
        base = listed(trace.get("base"), i, None)
        end = val_axis.units(value + (finite(base) or 0.0))
        if end is None:
            continue
        middle = centre - slot.band * (1 - BAR_GAP) / 2 + (slot.k + 0.5) * width
        p0, p1 = cat_axis.at(middle - width / 2), cat_axis.at(middle + width / 2)
        q0, q1 = val_axis.at(start), val_axis.at(end)
        assert p0 is not None and p1 is not None and q0 is not None and q1 is not None
        (x0, x1), (y0, y1) = ((q0, q1), (p0, p1)) if horizontal else ((p0, p1), (q0, q1))
        colour = str(listed(marker.get("color"), i, OKABE_ITO[k % len(OKABE_ITO)]))
        shape = listed(pattern, i, "")
        fill = f"url(#{defs.pattern(shape, colour)})" if shape else esc(colour)
        stroke = f' stroke="{esc(colour)}" stroke-width="1"' if shape else ""
        out.append(
            f'<rect x="{num(min(x0, x1))}" y="{num(min(y0, y1))}" width="{num(abs(x1 - x0))}" '
            f'height="{num(abs(y1 - y0))}" fill="{fill}"{stroke}/>'
        )
        text = listed(texts, i, None)
        if text is not None and trace.get("textposition", "outside") in ("outside", "auto"):
            out.append(_bar_text(str(text), horizontal, x1, y1, (p0 + p1) / 2, size, end >= start))
    return "".join(out)


def _bar_text(
    text: str, horizontal: bool, x1: float, y1: float, middle: float, size: float, up: bool
) -> str:
    """A bar's value printed past its end."""
    if horizontal:
        x, y = x1 + (4 if up else -4), middle + size * 0.35
        anchor = "start" if up else "end"
    else:
        x, y = middle, y1 - 4 if up else y1 + size
        anchor = "middle"
    return (
        f'<text x="{num(x)}" y="{num(y)}" text-anchor="{anchor}" font-size="{num(size)}" '
        f'fill="{INK}">{esc(" ".join(lines_of(text)))}</text>'
    )


def scatter(trace: dict[str, Any], xa: Axis, ya: Axis, k: int) -> str:
    """A scatter trace: its line (broken at missing points, as Plotly's connectgaps=false) and
    its markers."""
    mode = str(trace.get("mode") or "lines+markers")
    line = trace.get("line") or {}
    marker = trace.get("marker") or {}
    colour = str(line.get("color") or marker.get("color") or OKABE_ITO[k % len(OKABE_ITO)])
    points = [
        (xa.px(x), ya.px(y), x, y)
        for x, y in zip(trace.get("x") or [], trace.get("y") or [], strict=False)
    ]
    out = []
    if "lines" in mode:
        width = float(line.get("width") or 2)
        runs, run = [], []
        for px, py, _, _ in points:
            if px is None or py is None:
                runs, run = runs + [run] * bool(run), []
            else:
                run.append(f"{num(px)},{num(py)}")
        runs += [run] * bool(run)
        dashes = dash_array(line.get("dash"), width)
        dash = f' stroke-dasharray="{dashes}"' if dashes else ""
        for r in runs:
            out.append(
                f'<path d="M{"L".join(r)}" fill="none" stroke="{esc(colour)}" '
                f'stroke-width="{num(width)}" stroke-linejoin="round"{dash}/>'
            )
    if "markers" in mode:
        size = float(marker.get("size") or 6)
        fill = marker.get("color") or colour
        edge = marker.get("line") or {}
        outline = ""
        if edge.get("width"):
            outline = f' stroke="{esc(edge.get("color") or INK)}" stroke-width="{edge["width"]}"'
        for i, (px, py, _, _) in enumerate(points):
            if px is None or py is None:
                continue
            symbol = str(listed(marker.get("symbol"), i, "circle"))
            colour_i = esc(listed(fill, i, colour))
            out.append(
                f'<path d="{marker_path(symbol, px, py, size)}" fill="{colour_i}"{outline}/>'
            )
    return "".join(out)
