"""A live class's answers as a bar chart: how many students chose each option of a question.

One bar per option, in the order the phones numbered them, each named by its number, its text
and the group it stands for (the right answer, the misconception it comes from, or "Something
else"): two options of one misconception stay two bars, and the teacher sees which was picked.
The bars carry their counts as text, so the chart reads without its colours; `tally_summary`
says the counts by group in words.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from lnlab.classroom.live import LiveQuestion
from lnlab.teach.figures import OKABE_ITO, figure
from lnlab.teach.quiz import group_name

RIGHT_COLOUR = OKABE_ITO[2]  # bluish green
WRONG_COLOUR = OKABE_ITO[5]  # vermillion
LABEL_CHARS = 40  # an option's text on its bar's label, at most (then "…")


def option_label(number: int, text: str, group: str) -> str:
    """A bar's label: "2. 0.4000" over its group's name, smaller (Plotly's own markup)."""
    short = text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"
    return (
        f"{number}. {html.escape(short, quote=False)}<br>"
        f'<span style="font-size:13px">{html.escape(group_name(group), quote=False)}</span>'
    )


def option_bars(question: LiveQuestion, counts: Mapping[str, int]) -> go.Figure:
    """One horizontal bar per option of `question` (top down, as numbered), its length the
    number of students who chose it (`counts`: option text -> students; missing ones are 0).
    No title: it stands under "N of M answered", and a slide has no height to spare."""
    options = question.options
    values = [int(counts.get(o.text, 0)) for o in options]
    trace = {
        "type": "bar",
        "orientation": "h",
        "x": values,
        "y": [option_label(k, o.text, o.group) for k, o in enumerate(options, 1)],
        "text": [str(v) for v in values],
        "textposition": "auto",
        "marker": {"color": [RIGHT_COLOUR if o.correct else WRONG_COLOUR for o in options]},
        "hovertemplate": "%{y}: %{x}<extra></extra>",
    }
    layout = {
        "height": 40 + 56 * len(options),
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


def option_summary(question: LiveQuestion, counts: Mapping[str, int]) -> str:
    """The bars in words, in their order: "1. 5 (Right) 2, 2. 6.6667 (Dividing by D − 1) 1."."""
    return (
        ", ".join(
            f"{k}. {o.text} ({group_name(o.group)}) {int(counts.get(o.text, 0))}"
            for k, o in enumerate(question.options, 1)
        )
        + "."
    )


def tally_summary(groups: Sequence[str], counts: Mapping[str, int]) -> str:
    """The counts by group in words, in `groups`' order: "Right 2, Dividing by D − 1 1,
    Something else 0."."""
    return ", ".join(f"{group_name(g)} {int(counts.get(g, 0))}" for g in groups) + "."
