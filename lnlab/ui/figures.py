"""A lesson's figures and tables on the page (lnlab.ui.lesson draws them in their sections).

A figure is drawn as a static SVG picture (lnlab.ui.svg): a page loads no chart library to
show one.
Its interactive Plotly chart waits in a popover, whose content the browser draws only when
it opens, so Plotly's code (1.4 MiB gzipped) comes then, if ever. A table is HTML
(lnlab.teach.tables): Streamlit's data-frame grid and its code are for tables one sorts or
scrolls.
"""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from lnlab.teach.figures import figure as plain_figure
from lnlab.teach.lesson import Figure, Table
from lnlab.ui import svg
from lnlab.ui.page import presenting

SLIDE_CHART_HEIGHT = 295  # px: a slide's chart beside its text and the row under it (the
# table switch, "Interactive chart"), at 1024 x 768
SLIDE_CHART_WIDTH = 640  # px: as wide as its column on a 1366 px projector, narrower below
SLIDE_COLUMNS = 8  # a slide's table shows at most this many number columns
SLIDE_FONT = {"font": 16, "title": 18, "ticks": 15, "cells": 16}  # px, on a projector
TABLE_CELLS = 1_200  # a chart's numbers as a table: at most this many cells are drawn


def table(data: Table | pd.DataFrame, name: str = "") -> None:
    """A table as HTML (lnlab.teach.tables): every number rounded by lnlab.core.numbers.fmt against
    its column's scale, its exact value in the cell's tooltip; text as typed (escaped); in a
    region named `name` (or the table's caption). On a slide at most SLIDE_COLUMNS number
    columns show, with a note of how many more."""
    t = data if isinstance(data, Table) else Table(data)
    body, hidden = t.html(SLIDE_COLUMNS if presenting() else None, name)
    st.html(body)
    notes = [t.caption] if t.caption else []
    if hidden:
        notes.append(f"{hidden} more columns off this slide.")
    if notes:
        st.caption(" ".join(notes))


def chart(fig: Figure, key: str | None = None) -> None:
    """A figure, drawn as a static SVG picture (lnlab.ui.svg), with what it shows for a
    reader who cannot see it; the interactive Plotly chart one click away.

    Its label and one-sentence summary are the picture's text alternative (its alt) and the
    interactive chart's (Streamlit's `alt`), and stand under it with its caption (on a slide,
    the caption alone: the room sees the chart, and the slide has no room); "The numbers as
    a table" (a switch, one key press) draws what it plots as a table (at most TABLE_CELLS
    cells). "Interactive chart" opens the Plotly chart (zoom, hover, the toolbar's download
    as PNG or SVG, as chosen above it) in a popover, whose content the browser draws only
    when it opens: Plotly's code (1.4 MiB gzipped) loads then, never with the page. On a
    slide the figure is at most SLIDE_CHART_HEIGHT tall and its text projector-sized.
    """
    plot = fig.plot()
    slide = presenting()
    name = key or fig.name
    alt = ". ".join(p.rstrip(".") for p in (fig.label, fig.summary) if p)
    alt = alt and alt + "."
    st.html(_picture(plot, name, alt or fig.caption or fig.name, slide))
    label = f"**{fig.label}.**" if fig.label else ""
    words = [fig.caption] if slide else [label, fig.summary, fig.caption]
    if text := " ".join(w for w in words if w):
        st.caption(text)
    row = st.container(horizontal=True, vertical_alignment="center", gap="medium")
    with row:
        numbers = st.toggle("The numbers as a table", key=f"numbers_{name}")
        with st.popover(
            INTERACTIVE, icon=":material/zoom_in:", help=INTERACTIVE_HELP, type="tertiary"
        ):
            _interactive(_slide_sized(plot) if slide else plot, fig.name, name, alt)
    if numbers:
        _numbers_of(fig)


INTERACTIVE = "Interactive chart"
INTERACTIVE_HELP = "Zoom, hover over a mark for its value, download the chart as PNG or SVG"
INTERACTIVE_WIDTH = 640  # px: the popover is as wide as what it holds
FORMAT = "figure_format"  # the session's choice of download format for every chart
FORMATS = ("png", "svg")


def _interactive(plot: go.Figure, file_name: str, name: str, alt: str) -> None:
    """The Plotly chart, its toolbar downloading PNG or SVG as chosen above it: one choice for
    every chart, kept across pages. It stands here, not in the sidebar, so that the radio's
    code (5 KiB of JavaScript) loads with the chart, not with every page."""
    ss = st.session_state
    key = f"format_{name}"
    ss[key] = ss.setdefault(FORMAT, FORMATS[0])
    st.radio(
        "Download format",
        FORMATS,
        key=key,
        horizontal=True,
        on_change=lambda: ss.update({FORMAT: ss[key]}),
    )
    file_format = ss[FORMAT]
    config = {"toImageButtonOptions": {"format": file_format, "filename": f"lnlab-{file_name}"}}
    st.plotly_chart(
        plot, key=f"chart_{name}", config=config, alt=alt or None, width=INTERACTIVE_WIDTH
    )


# figures are built once per lesson (and lessons kept by the pages' caches) but drawn on every
# click: each picture is made once, and kept with its figure, so its id stays its own
_PICTURES: dict[tuple[int, str, bool], tuple[go.Figure, str]] = {}
_PICTURES_KEPT = 256
_LOCK = threading.Lock()


def _picture(plot: go.Figure, name: str, alt: str, slide: bool) -> str:
    """The figure as a picture named `alt`, projector-sized on a slide; kept while its
    figure lives."""
    key = (id(plot), f"{name}\n{alt}", slide)
    with _LOCK:
        kept = _PICTURES.get(key)
    if kept is not None and kept[0] is plot:
        return kept[1]
    sizes = svg.Sizes(**SLIDE_FONT) if slide else svg.Sizes()
    height = SLIDE_CHART_HEIGHT if slide else None
    width = SLIDE_CHART_WIDTH if slide else svg.WIDTH
    spec = _plain(plot.to_plotly_json())
    body = svg.picture(spec, alt=alt, width=width, max_height=height, sizes=sizes, uid=name)
    with _LOCK:
        while len(_PICTURES) >= _PICTURES_KEPT:
            _PICTURES.pop(next(iter(_PICTURES)))  # the oldest
        _PICTURES[key] = (plot, body)
    return body


def _plain(value: object) -> object:
    """Plotly JSON with numpy's arrays and numbers as Python's."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value


def _numbers_of(fig: Figure) -> None:
    """The chart's numbers as a table, cut to TABLE_CELLS cells with a note."""
    frame = fig.table()
    if frame is None:
        st.caption("This chart draws no numbers.")
        return
    rows, columns = frame.shape
    keep_columns = max(2, min(columns, TABLE_CELLS // max(rows, 1)))
    keep_rows = max(1, min(rows, TABLE_CELLS // keep_columns))
    shown = frame.iloc[:keep_rows, :keep_columns]
    table(shown, name=f"{fig.label or 'The chart'}: the numbers")
    if shown.shape != frame.shape:
        st.caption(
            f"The first {keep_rows} of {rows} rows and {keep_columns} of {columns} columns; "
            "the downloads below hold every number."
        )


def _slide_sized(fig: go.Figure) -> go.Figure:
    """A copy of `fig` for a slide: bounded height, bigger text (explicit sizes win over
    Streamlit's chart theme). Built from plain JSON, so no validation cost."""
    spec = fig.to_plotly_json()
    layout = dict(spec.get("layout", {}))
    layout["height"] = min(int(layout.get("height") or SLIDE_CHART_HEIGHT), SLIDE_CHART_HEIGHT)
    layout["font"] = {**layout.get("font", {}), "size": SLIDE_FONT["font"]}
    title = layout.get("title")
    if isinstance(title, dict):
        layout["title"] = {**title, "font": {**title.get("font", {}), "size": SLIDE_FONT["title"]}}
    for name, axis in list(layout.items()):
        if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            layout[name] = {**axis, "tickfont": {"size": SLIDE_FONT["ticks"]}}
    if layout.get("annotations"):
        layout["annotations"] = [
            {**a, "font": {**a.get("font", {}), "size": max(a.get("font", {}).get("size", 0), 14)}}
            for a in layout["annotations"]
        ]
    data = [
        {**trace, "textfont": {**trace.get("textfont", {}), "size": SLIDE_FONT["cells"]}}
        if "texttemplate" in trace or "text" in trace
        else trace
        for trace in spec.get("data", [])
    ]
    return plain_figure(data, layout)
