"""What a figure draws besides its traces: shapes, annotations (and their arrows), the legend
and a heatmap's colour bar."""

from __future__ import annotations

import math
import re
from typing import Any

from lnlab.core.numbers import fmt
from lnlab.ui.svg.axes import LINE, Axis, Frame, Sizes, esc, finite, lines_of, shown, width_of
from lnlab.ui.svg.marks import INK, Defs, dash_array, marker_path, num, scale_colour


def legend_entries(data: list[dict[str, Any]], layout: dict[str, Any]) -> list[dict[str, Any]]:
    """The traces the legend names, one per legend group."""
    entries, groups = [], set()
    for t in data:
        if t.get("type", "scatter") not in ("bar", "scatter") or t.get("mode") == "text":
            continue
        if not shown(t) or t.get("showlegend") is False or not t.get("name"):
            continue
        group = t.get("legendgroup") or t["name"]
        if group not in groups:
            groups.add(group)
            entries.append(t)
    asked = layout.get("showlegend")  # Plotly's default: a legend for two traces or more
    return entries if asked is True or (asked is not False and len(entries) >= 2) else []


def legend_rows(entries: list[dict[str, Any]], width: float, size: float) -> list[list[Any]]:
    rows: list[list[Any]] = [[]]
    x = 0.0
    for t in entries:
        w = 34 + width_of(str(t["name"]), size) + 14
        if rows[-1] and x + w > width:
            rows.append([])
            x = 0.0
        rows[-1].append((x, t))
        x += w
    return rows if rows[0] else []


def _ref(
    item: dict[str, Any],
    letter: str,
    value: Any,
    axes: dict[str, Axis],
    frame: Frame,
    note: bool = False,
) -> float | None:
    """A shape's or annotation's coordinate in px, by its reference: an axis (data), an
    axis's domain, or the paper. An annotation on a log axis is placed by log10 (Plotly's
    rule), a shape by the value."""
    ref = str(item.get(f"{letter}ref") or letter)
    number = finite(value)
    if ref == "paper":
        return None if number is None else (frame.x(number) if letter == "x" else frame.y(number))
    name, *domain = ref.split()
    axis = axes.get(name)
    if axis is None:
        return None
    if domain:
        return None if number is None else axis.fraction(number)
    if note and axis.kind == "log":
        return axis.at(number)
    return axis.px(value)


def _stroke(line: dict[str, Any], default_width: float = 2.0) -> str:
    width = float(line.get("width", default_width) or 0)
    if width <= 0:
        return 'stroke="none"'
    dashes = dash_array(line.get("dash"), width)
    dash = f' stroke-dasharray="{dashes}"' if dashes else ""
    return f'stroke="{esc(line.get("color") or INK)}" stroke-width="{num(width)}"{dash}'


def shapes(layout: dict[str, Any], axes: dict[str, Axis], frame: Frame, layer: str) -> str:
    out = []
    for s in layout.get("shapes") or []:
        if (s.get("layer") or "above") != layer:
            continue
        kind = s.get("type", "rect")
        stroke = _stroke(s.get("line") or {})
        fill = esc(s.get("fillcolor") or "none") if kind != "line" else "none"
        opacity = f' opacity="{s["opacity"]}"' if s.get("opacity") is not None else ""
        if kind == "path":
            d = _path(s, axes, frame)
            if d:
                out.append(f'<path d="{d}" fill="{fill}" {stroke}{opacity}/>')
            continue
        x0, x1 = (_ref(s, "x", s.get(k), axes, frame) for k in ("x0", "x1"))
        y0, y1 = (_ref(s, "y", s.get(k), axes, frame) for k in ("y0", "y1"))
        if None in (x0, x1, y0, y1):
            continue
        assert x0 is not None and x1 is not None and y0 is not None and y1 is not None
        if kind == "line":
            out.append(f'<path d="M{num(x0)},{num(y0)}L{num(x1)},{num(y1)}" {stroke}{opacity}/>')
        elif kind == "circle":
            out.append(
                f'<ellipse cx="{num((x0 + x1) / 2)}" cy="{num((y0 + y1) / 2)}" '
                f'rx="{num(abs(x1 - x0) / 2)}" ry="{num(abs(y1 - y0) / 2)}" fill="{fill}" '
                f"{stroke}{opacity}/>"
            )
        else:
            out.append(
                f'<rect x="{num(min(x0, x1))}" y="{num(min(y0, y1))}" width="{num(abs(x1 - x0))}" '
                f'height="{num(abs(y1 - y0))}" fill="{fill}" {stroke}{opacity}/>'
            )
    return "".join(out)


def _path(shape: dict[str, Any], axes: dict[str, Axis], frame: Frame) -> str:
    """An SVG path of absolute M, L and Z commands with data coordinates, in px."""
    out = []
    for command, args in re.findall(r"([MLZmlz])([^MLZmlz]*)", str(shape.get("path", ""))):
        numbers = [float(n) for n in re.findall(r"-?[\d.]+(?:e-?\d+)?", args)]
        if command.upper() == "Z":
            out.append("Z")
        for x, y in zip(numbers[::2], numbers[1::2], strict=False):
            px, py = _ref(shape, "x", x, axes, frame), _ref(shape, "y", y, axes, frame)
            if px is None or py is None:
                return ""
            out.append(f"{command.upper()}{num(px)},{num(py)}")
    return "".join(out)


def annotation(a: dict[str, Any], axes: dict[str, Axis], frame: Frame, sizes: Sizes) -> str:
    x = _ref(a, "x", a.get("x"), axes, frame, note=True)
    y = _ref(a, "y", a.get("y"), axes, frame, note=True)
    if x is None or y is None:
        return ""
    out = []
    if a.get("showarrow", True):
        out.append(_arrow(a, x, y, axes, frame))
    lines = [line for line in lines_of(a.get("text", "")) if line] if a.get("text") else []
    if not lines:
        return "".join(out)
    font = a.get("font") or {}
    size = float(font.get("size") or sizes.font)
    w = max(width_of(line, size) for line in lines)
    h = len(lines) * size * LINE
    angle = float(a.get("textangle") or 0)
    turned = abs(math.sin(math.radians(angle))) > 0.5
    bw, bh = (h, w) if turned else (w, h)
    xanchor, yanchor = a.get("xanchor", "auto"), a.get("yanchor", "auto")
    cx = x + {"left": bw / 2, "right": -bw / 2}.get(xanchor, 0.0)
    cy = y + {"top": bh / 2, "bottom": -bh / 2}.get(yanchor, 0.0)
    if a.get("bgcolor"):
        out.append(
            f'<rect x="{num(cx - bw / 2 - 3)}" y="{num(cy - bh / 2 - 2)}" width="{num(bw + 6)}" '
            f'height="{num(bh + 4)}" fill="{esc(a["bgcolor"])}"/>'
        )
    first = -h / 2 + size * 0.8
    spans = "".join(
        f'<tspan x="0" y="{num(first + i * size * LINE)}">{esc(line)}</tspan>'
        for i, line in enumerate(lines)
    )
    turn = f" rotate({num(angle)})" if angle else ""
    out.append(
        f'<text transform="translate({num(cx)},{num(cy)}){turn}" text-anchor="middle" '
        f'font-size="{num(size)}" fill="{esc(font.get("color") or INK)}">{spans}</text>'
    )
    return "".join(out)


def _arrow(a: dict[str, Any], x: float, y: float, axes: dict[str, Axis], frame: Frame) -> str:
    """An annotation's arrow from its tail (ax, ay: data coordinates where axref names an
    axis, else px from the head) to its head at (x, y)."""
    if str(a.get("axref", "pixel")) != "pixel":
        tx = _ref({"xref": a["axref"]}, "x", a.get("ax"), axes, frame, note=True)
        ty = _ref({"yref": a.get("ayref", "pixel")}, "y", a.get("ay"), axes, frame, note=True)
    else:
        tx, ty = x + float(a.get("ax", -10)), y + float(a.get("ay", -30))
    if tx is None or ty is None:
        return ""
    colour = esc(a.get("arrowcolor") or INK)
    width = float(a.get("arrowwidth") or 1)
    head = 3.5 * width * float(a.get("arrowsize") or 1) + 2
    length = math.hypot(x - tx, y - ty)
    if length < 1:
        return ""
    ux, uy = (x - tx) / length, (y - ty) / length
    bx, by = x - ux * head, y - uy * head
    wing = head * 0.55
    tip = (
        f"M{num(x)},{num(y)}L{num(bx - uy * wing)},{num(by + ux * wing)}"
        f"L{num(bx + uy * wing)},{num(by - ux * wing)}Z"
    )
    return (
        f'<path d="M{num(tx)},{num(ty)}L{num(bx)},{num(by)}" stroke="{colour}" '
        f'stroke-width="{num(width)}"/><path d="{tip}" fill="{colour}"/>'
    )


def colour_bar(trace: dict[str, Any], frame: Frame, sizes: Sizes, uid: str) -> str:
    """The heatmap's scale beside the plot: its colours bottom (zmin) to top (zmax)."""
    scale = trace.get("colorscale") or [[0, "#ffffff"], [1, "#000000"]]
    zmin, zmax = finite(trace.get("zmin")), finite(trace.get("zmax"))
    if zmin is None or zmax is None:
        values = [finite(v) for row in trace.get("z") or [] for v in row]
        found = [v for v in values if v is not None] or [0.0, 1.0]
        zmin, zmax = min(found), max(found)
    stops = "".join(
        f'<stop offset="{num(100 * k / 10)}%" stop-color="{scale_colour(scale, k / 10)}"/>'
        for k in range(11)
    )
    x = frame.right + 10
    top, bottom = frame.top, frame.bottom
    out = [
        f'<defs><linearGradient id="{uid}-scale" x1="0" y1="1" x2="0" y2="0">{stops}'
        "</linearGradient></defs>",
        f'<rect x="{num(x)}" y="{num(top)}" width="12" height="{num(bottom - top)}" '
        f'fill="url(#{uid}-scale)"/>',
    ]
    marks = [zmin, zmax] + ([0.0] if zmin < 0 < zmax else [])
    for v in marks:
        p = bottom - (v - zmin) / ((zmax - zmin) or 1.0) * (bottom - top)
        out.append(
            f'<text x="{num(x + 16)}" y="{num(p + sizes.ticks * 0.35)}" '
            f'font-size="{num(sizes.ticks)}">{esc(fmt(v))}</text>'
        )
    return "".join(out)


def legend(rows: list[list[Any]], x0: float, y0: float, size: float, defs: Defs) -> str:
    out = []
    step = size * LINE + 4
    for r, row in enumerate(rows):
        y = y0 + r * step + step / 2
        for dx, t in row:
            x = x0 + dx
            out.append(_swatch(t, x, y, defs))
            out.append(
                f'<text x="{num(x + 34)}" y="{num(y + size * 0.35)}" font-size="{num(size)}">'
                f"{esc(' '.join(lines_of(t['name'])))}</text>"
            )
    return "".join(out)


def _swatch(t: dict[str, Any], x: float, y: float, defs: Defs) -> str:
    """A trace's sample in the legend: a square of its fill for bars, its line and marker."""
    marker = t.get("marker") or {}
    if t.get("type") == "bar":
        colour = marker.get("color")
        colour = str(colour[0] if isinstance(colour, list) else colour or INK)
        shape = (marker.get("pattern") or {}).get("shape")
        shape = shape[0] if isinstance(shape, list) else shape
        fill = f"url(#{defs.pattern(shape, colour)})" if shape else esc(colour)
        return f'<rect x="{num(x + 9)}" y="{num(y - 6)}" width="12" height="12" fill="{fill}"/>'
    line = t.get("line") or {}
    colour = str(line.get("color") or marker.get("color") or INK)
    mode = str(t.get("mode") or "lines+markers")
    out = ""
    if "lines" in mode:
        width = float(line.get("width") or 2)
        dashes = dash_array(line.get("dash"), width)
        dash = f' stroke-dasharray="{dashes}"' if dashes else ""
        out += (
            f'<path d="M{num(x)},{num(y)}H{num(x + 30)}" stroke="{esc(colour)}" '
            f'stroke-width="{num(width)}"{dash}/>'
        )
    if "markers" in mode:
        symbol = marker.get("symbol") or "circle"
        symbol = str(symbol[0] if isinstance(symbol, list) else symbol)
        fill = marker.get("color") or colour
        fill = str(fill[0] if isinstance(fill, list) else fill)
        size = min(float(marker.get("size") or 6), 12)
        out += f'<path d="{marker_path(symbol, x + 15, y, size)}" fill="{esc(fill)}"/>'
    return out
