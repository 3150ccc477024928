"""A Plotly figure (its JSON: data and layout) as one static SVG: axes, gridlines, traces,
shapes, annotations, legend, colour bar and title, laid out from what they hold.

It draws the subset of Plotly the lessons use (lnlab.labs.*.plots, lnlab.teach.figures): bar,
scatter (lines, markers, text) and heatmap traces; linear, log and category axes, side by side
in domains, reversed, on top; rect, line, path and circle shapes in data, domain or paper
coordinates; annotations with arrows, angles and backgrounds; a horizontal legend. Anything
else is left out, never an error: the interactive chart stays one click away.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from lnlab.core.numbers import fmt
from lnlab.ui.svg.axes import (
    LINE,
    Axis,
    Frame,
    Sizes,
    autorange,
    esc,
    finite,
    is_text,
    lines_of,
    shown,
    width_of,
)
from lnlab.ui.svg.marks import (
    INK,
    Defs,
    Slot,
    bars,
    heatmap,
    num,
    scatter,
    text_points,
)
from lnlab.ui.svg.notes import annotation, colour_bar, legend, legend_entries, legend_rows, shapes

PAD = 8  # px around everything
WIDTH = 480  # px: a figure's column at 1366 px, about; narrower columns scale it down
# Text and axes in Streamlit's text colour (1.67's light and dark themes): a picture (an <img>)
# sees the page's colour scheme as its own prefers-color-scheme; the page's font where the
# reader has it, else their sans-serif (an image loads no web font)
INKS = ("#2F2D2B", "#EDEBE8")
SVG_STYLE = (
    f'svg{{color:{INKS[0]};font-family:"Source Sans","Source Sans Pro",sans-serif}}'
    f"@media (prefers-color-scheme:dark){{svg{{color:{INKS[1]}}}}}"
)
PLAIN = Sizes()
DEFAULT_HEIGHT = 450  # Plotly's, where a figure gives none
GRID = 'stroke="currentColor" stroke-opacity="0.14"'
ZERO = 'stroke="currentColor" stroke-opacity="0.4"'
_AXIS_KEY = re.compile(r"^([xy])axis(\d*)$")


def _axis_of(trace: dict[str, Any], letter: str) -> str:
    return str(trace.get(f"{letter}axis") or letter)


def _key(name: str) -> str:
    return f"{name[0]}axis{name[1:]}"


def _along(trace: dict[str, Any], letter: str) -> list[Any]:
    """A trace's coordinates along x or y (a heatmap's column and row labels)."""
    return list(trace.get(letter) or [])


def _axes(data: list[dict[str, Any]], layout: dict[str, Any]) -> dict[str, Axis]:
    """Every axis the traces, shapes, annotations and layout name, with kind and range."""
    names = {m.group(1) + m.group(2) for k in layout if (m := _AXIS_KEY.match(k))}
    for trace in data:
        names |= {_axis_of(trace, "x"), _axis_of(trace, "y")}
    for item in [*(layout.get("shapes") or []), *(layout.get("annotations") or [])]:
        for letter in "xy":
            ref = str(item.get(f"{letter}ref") or letter).split()[0]
            if ref != "paper":
                names.add(ref)
    axes = {}
    for name in sorted(names or {"x", "y"}):
        spec = dict(layout.get(_key(name)) or {})
        on = [t for t in data if _axis_of(t, name[0]) == name]
        kind = spec.get("type")
        if kind not in ("linear", "log", "category"):
            kind = "category" if any(is_text(_along(t, name[0])) for t in on) else "linear"
        if not on and spec.get("range") is None:
            spec["visible"] = False  # as Plotly: an axis with nothing on it is not drawn
        axis = Axis(name, spec, kind)
        if kind == "category":
            for t in on:
                for v in _along(t, name[0]):
                    if str(v) not in axis.categories and isinstance(v, str):
                        axis.categories.append(str(v))
        axis.lo, axis.hi = _range(axis, on, layout)
        axes[name] = axis
    return axes


def _range(axis: Axis, on: list[dict[str, Any]], layout: dict[str, Any]) -> tuple[float, float]:
    given = axis.spec.get("range")
    if given is not None and len(given) == 2 and all(finite(v) is not None for v in given):
        return float(given[0]), float(given[1])
    if axis.kind == "category":
        return -0.5, max(len(axis.categories), 1) - 0.5
    values, has_bars, markers = [], False, False
    for t in on:
        kind = t.get("type", "scatter")
        horizontal = t.get("orientation") == "h"
        value_side = (axis.letter == "x") == horizontal
        if kind == "bar" and value_side:
            has_bars = True
            for i, v in enumerate(_along(t, axis.letter)):
                base = t.get("base")
                start = finite(base[i] if isinstance(base, list) else base) or 0.0
                if (number := finite(v)) is not None:
                    values += [axis.units(start + number), axis.units(start) if base else None]
                    values.append(axis.units(0.0) if base is None else None)
        else:
            markers = markers or kind == "bar" or "markers" in str(t.get("mode", "markers"))
            values += [axis.units(v) for v in _along(t, axis.letter)]
    for shape in layout.get("shapes") or []:
        if str(shape.get(f"{axis.letter}ref") or axis.letter) == axis.name:
            values += [axis.units(shape.get(f"{axis.letter}{k}")) for k in (0, 1)]
    found = [v for v in values if v is not None]
    pad = 0.05 if (markers or has_bars or axis.letter == "y") else 0.0
    lo, hi = autorange(found, log=axis.kind == "log", bars=has_bars, pad=pad)
    return lo, hi


def _place(axes: dict[str, Axis], frame: Frame) -> None:
    """Each axis's pixels, from its domain within the frame."""
    for axis in axes.values():
        d0, d1 = axis.domain
        if axis.letter == "x":
            axis.a, axis.b = frame.x(d0), frame.x(d1)
        else:
            axis.a, axis.b = frame.y(d0), frame.y(d1)
        if axis.reversed:
            axis.a, axis.b = axis.b, axis.a


def _anchor(axis: Axis, axes: dict[str, Axis]) -> Axis | None:
    other = "y" if axis.letter == "x" else "x"
    return axes.get(str(axis.spec.get("anchor") or other)) or axes.get(other)


def _rotated(axis: Axis, sizes: Sizes) -> bool:
    """Whether an x axis's category labels overlap and so stand at 45 degrees."""
    ticks = axis.ticks()
    if axis.letter != "x" or len(ticks) < 2 or not axis.labelled:
        return False
    room = abs(axis.b - axis.a) / len(ticks)
    return max(width_of(t.text, sizes.ticks) for t in ticks) > room * 0.95


def _text(lines: list[str], x: float, y: float, size: float, **attrs: Any) -> str:
    """Lines of text, the first line's baseline at y."""
    extra = "".join(f' {k.replace("_", "-")}="{esc(v)}"' for k, v in attrs.items() if v)
    if len(lines) == 1:
        return (
            f'<text x="{num(x)}" y="{num(y)}" font-size="{num(size)}"{extra}>{esc(lines[0])}</text>'
        )
    spans = "".join(
        f'<tspan x="{num(x)}" dy="{num(0 if i == 0 else size * LINE)}">{esc(line)}</tspan>'
        for i, line in enumerate(lines)
    )
    return f'<text x="{num(x)}" y="{num(y)}" font-size="{num(size)}"{extra}>{spans}</text>'


def _paper_notes_above(layout: dict[str, Any], sizes: Sizes) -> float:
    """The height the annotations above the plot area (paper y >= 1) need."""
    need = 0.0
    for a in layout.get("annotations") or []:
        if a.get("yref") == "paper" and (finite(a.get("y")) or 0.0) >= 1.0:
            size = float((a.get("font") or {}).get("size") or sizes.font)
            need = max(need, len(lines_of(a.get("text", ""))) * size * LINE + 4)
    return need


@dataclass(frozen=True)
class Drawing:
    """A figure drawn: a standalone SVG document and its size in px."""

    svg: str
    width: int
    height: float


def render(
    spec: dict[str, Any],
    *,
    width: int = WIDTH,
    max_height: int | None = None,
    sizes: Sizes = PLAIN,
    uid: str = "fig",
) -> Drawing:
    """The figure as an SVG document `width` px wide (shown narrower where its column is).
    Its text and axes take Streamlit's text colour of the theme the page shows (SVG_STYLE);
    `uid` keeps its ids apart from other figures'."""
    data = [t for t in spec.get("data") or [] if shown(t)]
    layout = dict(spec.get("layout") or {})
    axes = _axes(data, layout)
    height = float(layout.get("height") or DEFAULT_HEIGHT)
    if max_height:
        height = min(height, max_height)
    title = layout.get("title") or {}
    title_text = title.get("text") if isinstance(title, dict) else title
    title_size = float(
        ((title.get("font") or {}) if isinstance(title, dict) else {}).get("size") or sizes.title
    )
    title_lines = lines_of(title_text) if title_text else []
    entries = legend_entries(data, layout)
    rows_of_legend = legend_rows(entries, width - 2 * PAD, sizes.font)
    legend_h = len(rows_of_legend) * (sizes.font * LINE + 4)
    legend_above = (finite((layout.get("legend") or {}).get("y")) or -1.0) >= 1.0
    heatmaps = [t for t in data if t.get("type") == "heatmap" and t.get("showscale") is not False]
    scale_w = 0.0
    if heatmaps:
        zs = [finite(heatmaps[0].get(k)) for k in ("zmin", "zmax")]
        scale_w = (
            26 + max(width_of(fmt(z), sizes.ticks) for z in zs if z is not None)
            if all(z is not None for z in zs)
            else 60
        )
    xs = [a for a in axes.values() if a.letter == "x"]
    ys = [a for a in axes.values() if a.letter == "y"]
    # first pass: rough pixels, for the ticks the margins depend on
    _place(axes, Frame(PAD + 40, width - PAD - scale_w, PAD + 40, height - PAD - 40))
    tick_h = sizes.ticks * LINE + 4
    left = 0.0
    for y in ys:
        x = _anchor(y, axes)
        if x is None or x.domain[0] == 0.0:
            gap = (y.tick_width(sizes.ticks) + 6) if y.labelled else 0.0
            left = max(left, gap + (sizes.font * LINE + 4 if y.title and y.visible else 0.0))
    top_axes = [x for x in xs if x.spec.get("side") == "top" and x.labelled]
    top = PAD + len(title_lines) * title_size * LINE + (6 if title_lines else 0)
    top += (legend_h if legend_above else 0.0) + _paper_notes_above(layout, sizes)
    top += tick_h if top_axes else 0.0
    frame = Frame(PAD + left, width - PAD - scale_w, top, height)
    _place(axes, frame)
    bottom = 0.0
    for x in xs:
        if not x.visible or x.spec.get("side") == "top":
            continue
        labels = x.ticks() if x.labelled else []
        need = tick_h if labels else 0.0
        if labels and _rotated(x, sizes):
            need = max(width_of(t.text, sizes.ticks) for t in labels) * 0.72 + sizes.ticks
        bottom = max(bottom, need + (sizes.font * LINE + 4 if x.title else 0.0))
    bottom += PAD + (0.0 if legend_above else legend_h)
    rows = max((len(y.categories) for y in ys if y.kind == "category"), default=0)
    least = max(120.0, rows * (sizes.cells * 1.9))
    height = max(height, top + bottom + least)
    frame.bottom = height - bottom
    _place(axes, frame)
    uid = re.sub(r"[^A-Za-z0-9_-]", "-", uid)
    defs = Defs(uid)
    body = [_grid(axes), shapes(layout, axes, frame, "below")]
    body += _traces(data, layout, axes, defs, sizes)
    body += [shapes(layout, axes, frame, "above"), _tick_labels(axes, sizes, frame)]
    body += [annotation(a, axes, frame, sizes) for a in layout.get("annotations") or []]
    if heatmaps:
        body.append(colour_bar(heatmaps[0], frame, sizes, uid))
    if rows_of_legend:
        y0 = top - legend_h - _paper_notes_above(layout, sizes) - (tick_h if top_axes else 0)
        y0 = y0 if legend_above else height - PAD - legend_h
        body.append(legend(rows_of_legend, PAD + left, y0, sizes.font, defs))
    if title_lines:
        body.append(
            _text(
                title_lines, width / 2, PAD + title_size, title_size, text_anchor="middle", fill=INK
            )
        )
    size = f'width="{width}" height="{num(height)}" viewBox="0 0 {width} {num(height)}"'
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" {size} fill="{INK}"><style>{SVG_STYLE}</style>'
        f"{defs.markup()}{''.join(body)}</svg>"
    )
    return Drawing(svg, width, height)


def _grid(axes: dict[str, Axis]) -> str:
    """Gridlines at a value axis's ticks, and its zero line, across its anchor's span."""
    out = []
    for axis in axes.values():
        other = _anchor(axis, axes)
        if not axis.visible or axis.kind == "category" or other is None:
            continue
        if axis.spec.get("tickvals") is not None:  # categories drawn on a numbered axis
            continue
        for tick in axis.ticks():
            p = axis.at(tick.at)
            style = ZERO if axis.kind == "linear" and tick.at == 0 else GRID
            out.append(_line(axis, other, p, style))
    return "".join(out)


def _line(axis: Axis, other: Axis, p: float | None, style: str) -> str:
    if p is None:
        return ""
    if axis.letter == "y":
        return f'<path d="M{num(other.a)},{num(p)}H{num(other.b)}" {style}/>'
    return f'<path d="M{num(p)},{num(other.a)}V{num(other.b)}" {style}/>'


def _traces(
    data: list[dict[str, Any]],
    layout: dict[str, Any],
    axes: dict[str, Axis],
    defs: Defs,
    sizes: Sizes,
) -> list[str]:
    """Heatmaps first, then bars (grouped per subplot), then lines, markers and text."""
    group = layout.get("barmode", "group") == "group"
    out: list[str] = []
    for layer in ("heatmap", "bar", "scatter"):
        for k, t in enumerate(data):
            if t.get("type", "scatter") != layer:
                continue
            xa, ya = axes[_axis_of(t, "x")], axes[_axis_of(t, "y")]
            if layer == "heatmap":
                out.append(heatmap(t, xa, ya))
            elif layer == "bar":
                same = [
                    u
                    for u in data
                    if u.get("type") == "bar"
                    and (_axis_of(u, "x"), _axis_of(u, "y")) == (xa.name, ya.name)
                ]
                slot = Slot(same.index(t), len(same)) if group else Slot()
                out.append(bars(t, xa, ya, slot, defs, sizes.ticks, k))
            elif t.get("mode") == "text":
                out.append(text_points(t, xa, ya, sizes.cells))
            else:
                out.append(scatter(t, xa, ya, k))
    return out


def _tick_labels(axes: dict[str, Axis], sizes: Sizes, frame: Frame) -> str:
    out = []
    s = sizes.ticks
    for axis in axes.values():
        other = _anchor(axis, axes)
        if not axis.visible or other is None:
            continue
        ticks = axis.ticks() if axis.labelled else []
        if axis.letter == "y":
            edge = min(other.a, other.b)
            for t in ticks:
                p = axis.at(t.at)
                if p is not None:
                    out.append(_tick(t, edge - 6, p + s * 0.35, s, "end"))
            if axis.title:
                x = edge - axis.tick_width(s) - 10
                out.append(
                    f'<text transform="translate({num(x)},{num((axis.a + axis.b) / 2)}) '
                    f'rotate(-90)" text-anchor="middle" font-size="{num(sizes.font)}">'
                    f"{esc(' '.join(lines_of(axis.title)))}</text>"
                )
            continue
        on_top = axis.spec.get("side") == "top"
        edge = min(other.a, other.b) if on_top else max(other.a, other.b)
        rotate = not on_top and _rotated(axis, sizes)
        for t in ticks:
            p = axis.at(t.at)
            if p is None:
                continue
            if rotate:
                out.append(
                    f'<text transform="translate({num(p)},{num(edge + s)}) rotate(-45)" '
                    f'text-anchor="end" font-size="{num(s)}">{esc(t.text)}</text>'
                )
            else:
                out.append(_tick(t, p, edge - 6 if on_top else edge + s + 2, s, "middle"))
        if axis.title and not on_top:
            depth = (
                max((width_of(t.text, s) for t in ticks), default=0) * 0.72 + s
                if rotate
                else s * LINE + 4
            )
            out.append(
                f'<text x="{num((axis.a + axis.b) / 2)}" y="{num(edge + depth + sizes.font)}" '
                f'text-anchor="middle" font-size="{num(sizes.font)}">'
                f"{esc(' '.join(lines_of(axis.title)))}</text>"
            )
    return "".join(out)


def _tick(t: Any, x: float, y: float, size: float, anchor: str) -> str:
    raised = (
        f'<tspan dy="{num(-size * 0.4)}" font-size="{num(size * 0.75)}">{esc(t.power)}</tspan>'
        if t.power
        else ""
    )
    return (
        f'<text x="{num(x)}" y="{num(y)}" text-anchor="{anchor}" font-size="{num(size)}">'
        f"{esc(t.text)}{raised}</text>"
    )
