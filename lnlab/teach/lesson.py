"""The lesson model: a lesson is an ordered list of sections, and each section is one slide.

A section holds what a slide shows, in reading order: its explanation, its formulas (LaTeX,
one per line), its finding (the result in words), the worked formulas with the example's
numbers, its numbers (metrics and tables), its figure, and an optional question that must be
answered before the finding, the worked formulas, the numbers and the figure are revealed.
Pages build a `Lesson` from their inputs with plain functions (lnlab.lessons.*); lnlab.ui
draws any lesson, on the page or as slides in presenter mode. Parts marked `on_slide=False`
are details for a student exploring alone; presenter mode leaves them out so that every
slide fits one screen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import pandas as pd
import plotly.graph_objects as go

from lnlab.teach.figures import figure_table
from lnlab.teach.quiz import Question
from lnlab.teach.tables import table_html


@dataclass(frozen=True)
class Metric:
    """One number with its label; `scale` is what "zero up to rounding" is measured against
    (None: the value itself, so only 0 shows as 0; lnlab.core.numbers.fmt)."""

    label: str
    value: float
    help: str = ""
    scale: float | None = None


@dataclass(frozen=True)
class Table:
    """A table of numbers; the first column may hold row labels (text)."""

    frame: pd.DataFrame
    caption: str = ""
    on_slide: bool = True
    _html: dict = field(default_factory=dict, compare=False, repr=False)

    def html(self, max_numbers: int | None = None, name: str = "") -> tuple[str, int]:
        """The table as HTML (lnlab.teach.tables.table_html) with at most `max_numbers` number
        columns, and how many were left out; its region is called `name`, else its caption.
        Kept once made: a lesson is built once and drawn on every click."""
        if (max_numbers, name) not in self._html:
            frame = self.frame
            numeric = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])]
            hidden = numeric[max_numbers:] if max_numbers is not None else []
            body = table_html(frame.drop(columns=hidden), name or self.caption)
            self._html[max_numbers, name] = (body, len(hidden))
        return self._html[max_numbers, name]


@dataclass(frozen=True)
class Figure:
    """A Plotly figure, the file name its toolbar downloads under, and what it shows.

    `figure` may be a function that builds it: a lesson has a chart in many sections, a click
    shows one, and each is built the first time it is drawn, then kept.

    For a reader who cannot see it (WCAG 2.2, 1.1.1): `label` names the chart, `summary` says
    in one sentence what it shows, written by the lesson from the example's numbers ("x's mean
    5 is marked; ..."), and `data` is what it draws as a table (default: read off the figure,
    lnlab.teach.figures.figure_table; a diagram gives its own).
    """

    figure: go.Figure | Callable[[], go.Figure]
    name: str
    caption: str
    on_slide: bool = True
    label: str = ""
    summary: str = ""
    data: pd.DataFrame | Callable[[], pd.DataFrame] | None = None
    _built: list = field(default_factory=list, compare=False, repr=False)

    def plot(self) -> go.Figure:
        """The figure, built now if it was given as a function."""
        if isinstance(self.figure, go.Figure):
            return self.figure
        if not self._built:
            self._built.append(self.figure())
        return self._built[0]

    def table(self) -> pd.DataFrame | None:
        """The chart's numbers as a table: `data`, or read off the figure."""
        if isinstance(self.data, pd.DataFrame):
            return self.data
        if self.data is not None:
            return self.data()
        return figure_table(self.plot())


@dataclass(frozen=True)
class Callout:
    """A boxed remark: a warning about NaN, a note on what the example shows."""

    kind: Literal["info", "warning", "success"]
    text: str  # Markdown


@dataclass(frozen=True)
class Section:
    """One idea, one slide."""

    key: str  # stable: links name the slide by its position, tests by its key
    title: str
    explanation: str = ""  # Markdown
    finding: str = ""  # Markdown with the example's result: shown with the numbers
    formulas: tuple[str, ...] = ()  # LaTeX, one line each, always shown
    worked: tuple[str, ...] = ()  # LaTeX with the example's numbers: shown with the numbers
    numbers: tuple[Metric | Table, ...] = ()
    figure: Figure | None = None
    question: Question | None = None
    callouts: tuple[Callout, ...] = ()
    detail: str = ""  # Markdown shown off-slide only, after everything else
    definitions: tuple[tuple[str, str], ...] = ()  # (name, LaTeX): named formulas, off-slide
    # only, after the detail


@dataclass(frozen=True)
class Lesson:
    """A page's lesson: a title, one line of introduction, and its sections in order."""

    key: str
    title: str
    intro: str
    sections: tuple[Section, ...] = field(default_factory=tuple)
    context: str = ""  # Markdown: the example on screen, above every slide

    def index(self, key: str) -> int:
        """The position of the section called `key` (ValueError if none)."""
        for i, section in enumerate(self.sections):
            if section.key == key:
                return i
        raise ValueError(f"no section {key!r} in lesson {self.key!r}")
