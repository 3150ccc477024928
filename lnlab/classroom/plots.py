"""A live class's answers as a bar chart: how many students chose each group of answers.

The groups are the right answer, each misconception a wrong option stands for, and "Something
else"; the bars carry their counts as text, so the chart reads without its colours.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from lnlab.teach.figures import OKABE_ITO, figure
from lnlab.teach.quiz import RIGHT, group_name

RIGHT_COLOUR = OKABE_ITO[2]  # bluish green
WRONG_COLOUR = OKABE_ITO[5]  # vermillion


def tally_bars(groups: Sequence[str], counts: Mapping[str, int]) -> go.Figure:
    """One horizontal bar per group in `groups` (in that order, top down), its length the
    number of students whose answer is in it; groups nobody chose show as 0. No title: it
    stands under "N of M answered", and a slide has no height to spare."""
    names = [group_name(g) for g in groups]
    values = [int(counts.get(g, 0)) for g in groups]
    trace = {
        "type": "bar",
        "orientation": "h",
        "x": values,
        "y": names,
        "text": [str(v) for v in values],
        "textposition": "auto",
        "marker": {"color": [RIGHT_COLOUR if g == RIGHT else WRONG_COLOUR for g in groups]},
        "hovertemplate": "%{y}: %{x}<extra></extra>",
    }
    layout = {
        "height": 40 + 42 * len(groups),
        "font": {"size": 16},  # read from the back of the room
        "margin": {"l": 10, "r": 10, "t": 6, "b": 10},
        "xaxis": {"rangemode": "tozero", "tickfont": {"size": 14}}
        | ({"dtick": 1} if max(values, default=0) <= 10 else {}),
        "yaxis": {
            "type": "category",
            "autorange": "reversed",
            "automargin": True,
            "tickfont": {"size": 16},
        },
        "showlegend": False,
    }
    return figure([trace], layout)


def tally_summary(groups: Sequence[str], counts: Mapping[str, int]) -> str:
    """The bars in words, in their order: "Right 2, Dividing by D − 1 1, Something else 0."."""
    return ", ".join(f"{group_name(g)} {int(counts.get(g, 0))}" for g in groups) + "."
