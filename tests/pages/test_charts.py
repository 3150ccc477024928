"""Every chart of every lesson, read without seeing it (WCAG 2.2: 1.1.1, 1.4.3, 1.4.11): it has
an accessible name (its label and a one-sentence summary with the example's numbers), its
numbers are a table one switch away, and its colours stand out on Streamlit's light and dark
pages. The training lab's charts need a run: tests/labs/training checks them the same way."""

from __future__ import annotations

import json
import re

import pytest
from helpers import chart_contrast_problems, page_test

from lnlab.ui import PAGES

LESSONS = [p for p in PAGES if p.lesson and p.path != "pages/training.py"]
SWITCH = "The numbers as a table"
NUMBERS_REGION = re.compile(r'role="region" aria-label="[^"]*: the numbers"')


@pytest.mark.parametrize("page", LESSONS, ids=lambda p: p.path)
def test_every_chart_is_named_summed_up_readable_and_has_its_numbers(page):
    at = page_test(page.path).run()
    next(t for t in at.toggle if t.label == "Show every section").set_value(True).run()
    charts = at.get("plotly_chart")
    assert charts, f"{page.path} draws no chart"
    for chart in charts:
        name = chart.proto.alt
        assert re.search(r"\. .*\d", name), f"no label and summary with numbers: {name!r}"
        spec = json.loads(chart.proto.spec)
        assert not chart_contrast_problems(spec), (name, chart_contrast_problems(spec))
    switches = [t for t in at.toggle if t.label == SWITCH]
    assert len(switches) == len(charts)
    for switch in switches:
        switch.set_value(True)
    at.run()
    tables = [h for h in at.get("html") if NUMBERS_REGION.search(h.proto.body)]
    assert len(tables) == len(charts), f"{len(tables)} tables for {len(charts)} charts"


def test_one_download_format_for_every_chart_across_pages():
    """The format chosen beside one interactive chart (in its popover, where its radio's code
    loads only when opened) is every chart's, on this page and the next."""
    at = page_test("pages/transformer.py").run()
    next(t for t in at.toggle if t.label == "Show every section").set_value(True).run()
    formats = [r for r in at.radio if (r.key or "").startswith("format_")]
    assert len(formats) == len(at.get("plotly_chart")) > 1
    formats[0].set_value("svg").run()
    formats = [r for r in at.radio if (r.key or "").startswith("format_")]
    assert {r.value for r in formats} == {"svg"}
    for chart in at.get("plotly_chart"):
        assert json.loads(chart.proto.config)["toImageButtonOptions"]["format"] == "svg"
    at.switch_page("pages/padding.py").run()
    next(t for t in at.toggle if t.label == "Show every section").set_value(True).run()
    assert {r.value for r in at.radio if (r.key or "").startswith("format_")} == {"svg"}
