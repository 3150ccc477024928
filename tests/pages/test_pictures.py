"""What a page shows first loads only what it shows (issue 40): every lesson figure is a
static picture (lnlab.ui.svg) named like its chart, the interactive Plotly chart and the
exports' highlighted script wait in popovers, whose content the browser draws only when one
opens, so neither Plotly's code (1.4 MiB gzipped) nor the highlighter's (0.5 MiB) comes with a
page. The picture's SVG carries what the chart says: its title and its labels."""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from urllib.parse import unquote

import pytest
from helpers import ROOT, page_test
from streamlit.testing.v1 import AppTest

from lnlab.ui import PAGES

LESSONS = [p for p in PAGES if p.lesson and p.path != "pages/training.py"]
PICTURE = re.compile(r'<img class="lnlab-figure" src="data:image/svg\+xml,([^"]*)" alt="([^"]*)"')
LAZY = ("plotly_chart", "code")  # elements whose code a page must not load before asked


def nodes(node, above: tuple[str, ...] = ()) -> Iterator[tuple[object, tuple[str, ...]]]:
    """Every node of the page with the types of the blocks it sits in."""
    yield node, above
    for child in getattr(node, "children", {}).values():
        yield from nodes(child, (*above, node.type))


def pictures(at: AppTest) -> list[tuple[str, str]]:
    """(SVG, alt) of every picture on the page, in order."""
    found = []
    for h in at.get("html"):
        for src, alt in PICTURE.findall(h.proto.body):
            found.append((unquote(src), html.unescape(alt)))
    return found


def plain(text: str) -> list[str]:
    """Plotly's markup as the picture writes it: tags dropped, entities read."""
    return html.unescape(re.sub(r"<[^>]*>", " ", text)).split()


def svg_words(svg: str) -> str:
    return " ".join("".join(t.itertext()) for t in ET.fromstring(svg).iter() if t.text)


def assert_charts_wait_in_popovers(at: AppTest) -> None:
    for node, above in nodes(at.main):
        if getattr(node, "type", "") in LAZY:
            assert "popover" in above, f"a {node.type} outside a popover: {above}"


@pytest.mark.parametrize("page", LESSONS, ids=lambda p: p.path)
def test_every_figure_is_a_picture_named_as_its_chart_with_its_chart_one_click_away(page):
    at = page_test(page.path).run()
    next(t for t in at.toggle if t.label == "Show every section").set_value(True).run()
    charts = at.get("plotly_chart")
    drawn = pictures(at)
    assert charts and len(drawn) == len(charts)
    for chart, (svg, alt) in zip(charts, drawn, strict=True):
        assert alt == chart.proto.alt
        spec = json.loads(chart.proto.spec)
        words = svg_words(svg)
        title = spec["layout"].get("title", {}).get("text", "")
        for word in plain(title):
            assert word in words, (alt, word)
        for trace in spec["data"]:
            if trace.get("type") == "heatmap":  # every row and column named
                for label in [*trace["y"], *trace["x"]]:
                    assert " ".join(plain(str(label))) in words, (alt, label)
    assert_charts_wait_in_popovers(at)


def test_the_home_pages_diagram_is_a_picture_too():
    at = AppTest.from_file(str(ROOT / "home.py"), default_timeout=60).run()
    (svg, alt), *more = pictures(at)
    assert not more and alt.startswith("Post-norm")
    assert "Multi-Head Attention" in svg_words(svg)
    assert_charts_wait_in_popovers(at)


def test_the_exports_script_waits_in_a_popover():
    at = page_test("pages/transformer.py").run()
    assert at.get("code")  # the script is on the page, for AppTest and for a reader who asks
    assert_charts_wait_in_popovers(at)
