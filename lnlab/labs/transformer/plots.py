"""Figures of the Transformer page: the block's data flow and the depth experiment."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from lnlab.labs.transformer.model import (
    NO_NORM,
    POST_NORM,
    PRE_NORM,
    VARIANTS,
    BlockStep,
    DepthExperiment,
    block_steps,
)
from lnlab.teach.figures import OKABE_ITO, figure

# Okabe-Ito, one colour per kind of box; the labels say the same thing in words.
KIND_COLOURS = {
    "io": OKABE_ITO[7],
    "sublayer": OKABE_ITO[0],
    "norm": OKABE_ITO[1],
    "add": OKABE_ITO[2],
    "add-norm": OKABE_ITO[1],
}
RESIDUAL_COLOUR = OKABE_ITO[3]
VARIANT_STYLES = {  # colour, dash and marker differ, so no line relies on colour alone
    NO_NORM: (OKABE_ITO[5], "dot", "x"),  # vermillion
    POST_NORM: (OKABE_ITO[0], "solid", "circle"),  # blue
    PRE_NORM: (OKABE_ITO[2], "dash", "diamond"),  # bluish green
}
TITLES = {
    POST_NORM: "Post-norm block (original Transformer)",
    PRE_NORM: "Pre-norm block (GPT-2 style)",
}

_HALF_WIDTH = 1.1  # of a box, in data units; boxes sit one unit apart, top to bottom
_HALF_HEIGHT = 0.3
_SKIP_X = 1.7  # where the residual connections run, right of the boxes
_PIXELS_PER_STEP = 62


def _y(index: int) -> float:
    return -float(index)


def _fill(colour: str) -> str:
    """The colour at 18% opacity, as a light box fill."""
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red}, {green}, {blue}, 0.18)"


def _arrow(
    tail: tuple[float, float],
    head: tuple[float, float],
    *,
    name: str = "flow",
    colour: str = OKABE_ITO[7],
    width: float = 1.5,
) -> dict[str, Any]:
    return {
        "name": name,
        "x": head[0],
        "y": head[1],
        "ax": tail[0],
        "ay": tail[1],
        "xref": "x",
        "yref": "y",
        "axref": "x",
        "ayref": "y",
        "text": "",
        "showarrow": True,
        "arrowhead": 2,
        "arrowsize": 1.2,
        "arrowwidth": width,
        "arrowcolor": colour,
    }


def _box(index: int, step: BlockStep) -> tuple[dict[str, Any], dict[str, Any]]:
    """The box of step `index` and its label."""
    colour = KIND_COLOURS[step.kind]
    y = _y(index)
    box = {
        "type": "rect",
        "x0": -_HALF_WIDTH,
        "x1": _HALF_WIDTH,
        "y0": y - _HALF_HEIGHT,
        "y1": y + _HALF_HEIGHT,
        "line": {"color": colour, "width": 2},
        "fillcolor": _fill(colour),
        "layer": "below",
    }
    label = {
        "name": "box",
        "x": 0,
        "y": y,
        "text": step.label,
        "showarrow": False,
        "font": {"size": 14},  # the theme's text colour: readable on the light fill either way
    }
    return box, label


def _residual(index: int, skip_from: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """From the stream entering step `skip_from`, around the right, into the add at `index`:
    the path and the dot where it branches off, and the arrow into the add."""
    branch = _y(skip_from) + 0.5
    target = _y(index)
    line = {"color": RESIDUAL_COLOUR, "width": 2}
    path = {
        "type": "path",
        "path": f"M 0,{branch} L {_SKIP_X},{branch} L {_SKIP_X},{target}",
        "line": line,
    }
    dot = {
        "type": "circle",
        "x0": -0.06,
        "x1": 0.06,
        "y0": branch - 0.06,
        "y1": branch + 0.06,
        "fillcolor": RESIDUAL_COLOUR,
        "line": line,
    }
    arrow = _arrow(
        (_SKIP_X, target), (_HALF_WIDTH, target), name="residual", colour=RESIDUAL_COLOUR
    )
    return [path, dot], arrow


def _repeat(steps: tuple[BlockStep, ...]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A dashed frame around the boxes that repeat once per layer, labelled × N."""
    inside = [i for i, s in enumerate(steps) if s.repeated]
    top, bottom = _y(inside[0]) + 0.5, _y(inside[-1]) - 0.45
    frame = {
        "type": "rect",
        "x0": -_HALF_WIDTH - 0.35,
        "x1": _SKIP_X + 0.3,
        "y0": bottom,
        "y1": top,
        "line": {"color": OKABE_ITO[7], "width": 1, "dash": "dash"},
    }
    label = {
        "name": "repeat",
        "x": -_HALF_WIDTH - 0.45,
        "y": (top + bottom) / 2,
        "text": "× N layers",
        "textangle": -90,
        "showarrow": False,
        "xanchor": "right",
        "font": {"size": 13},
    }
    return frame, label


def block_diagram(norm_position: str) -> go.Figure:
    """The data flow through one block, boxes top to bottom, residual connections on the right.

    Annotations named "box" hold the box labels in flow order; "flow" and "residual" are the
    arrows; "repeat" labels the frame around the part that repeats per layer.
    """
    steps = block_steps(norm_position)
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for i, step in enumerate(steps):
        box, label = _box(i, step)
        shapes.append(box)
        notes.append(label)
        if i + 1 < len(steps):
            notes.append(_arrow((0, _y(i) - _HALF_HEIGHT), (0, _y(i + 1) + _HALF_HEIGHT)))
        if step.skip_from is not None:
            lines, arrow = _residual(i, step.skip_from)
            shapes += lines
            notes.append(arrow)
    frame, label = _repeat(steps)
    shapes.append(frame)
    notes.append(label)
    layout = {
        "xaxis": {"visible": False, "range": [-2.4, 2.3], "fixedrange": True},
        "yaxis": {"visible": False, "range": [_y(len(steps) - 1) - 0.6, 0.6], "fixedrange": True},
        "shapes": shapes,
        "annotations": notes,
        "title": {"text": TITLES[norm_position], "font": {"size": 14}},
        "height": _PIXELS_PER_STEP * len(steps) + 70,
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "plot_bgcolor": "rgba(0,0,0,0)",
        "showlegend": False,
    }
    return figure([], layout)


def depth_chart(result: DepthExperiment) -> go.Figure:
    """RMS of the residual stream after each layer, one line per variant, log y axis."""
    lines = [
        {
            "type": "scatter",
            "x": result.layers.tolist(),
            "y": result.rms[variant].tolist(),
            "name": variant,
            "mode": "lines+markers",
            "line": {"color": colour, "dash": dash, "width": 2},
            "marker": {"symbol": symbol, "size": 6},
            "hovertemplate": f"{variant}, layer %{{x}}: RMS %{{y:.4g}}<extra></extra>",
        }
        for variant in VARIANTS
        for colour, dash, symbol in [VARIANT_STYLES[variant]]
    ]
    final = {
        "type": "scatter",
        "x": [result.depth],
        "y": [result.pre_norm_final_rms],
        "name": "pre-norm, after the final LN",
        "mode": "markers",
        "marker": {
            "symbol": "star",
            "size": 14,
            "color": VARIANT_STYLES[PRE_NORM][0],
            "line": {"width": 1},
        },
        "hovertemplate": "after the final LN: RMS %{y:.4g}<extra></extra>",
    }
    layout = {
        "xaxis": {"title": {"text": "layer (0 = the input)"}},
        # one tick per power of ten, so the log scale cannot be misread
        "yaxis": {
            "type": "log",
            "dtick": 1,
            "exponentformat": "power",
            "title": {"text": "RMS of the residual stream (log scale)"},
        },
        "height": 460,
        "margin": {"l": 10, "r": 10, "t": 10, "b": 10},
        # above the plot, where it can cover no line and no axis title
        "legend": {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
    }
    return figure([*lines, final], layout)
