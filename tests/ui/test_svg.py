"""lnlab.ui.svg: a figure's Plotly JSON drawn as a static SVG picture (what the lessons show
first, so that no page loads a chart library before a chart is asked for)."""

from __future__ import annotations

import html
import math
import re
import xml.etree.ElementTree as ET
from urllib.parse import unquote

import numpy as np
import pytest

from lnlab.teach.figures import BACKGROUNDS, OKABE_ITO, contrast, figure, heatmap
from lnlab.ui import svg
from lnlab.ui.svg.axes import Axis, nice_step, tick_text
from lnlab.ui.svg.draw import INKS, WIDTH

NS = "{http://www.w3.org/2000/svg}"


def drawn(fig, **kwargs) -> ET.Element:
    """The SVG of `fig` (a plotly Figure or its JSON), parsed: it must be well-formed XML."""
    spec = fig if isinstance(fig, dict) else fig.to_plotly_json()
    root = ET.fromstring(svg.render(spec, **kwargs).svg)
    assert root.tag == f"{NS}svg"
    return root


def texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()).strip() for t in root.iter(f"{NS}text")]


def numbers_in(root: ET.Element) -> list[float]:
    """Every coordinate the picture draws with: none may be NaN or infinite."""
    found = []
    for el in root.iter():
        for name, value in el.attrib.items():
            if name in ("x", "y", "width", "height", "x1", "x2", "y1", "y2", "cx", "cy", "d"):
                found += [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", value)]
            if "nan" in value.lower() and name != "d":
                raise AssertionError(f"{el.tag} {name}={value}")
    return found


def test_a_heatmap_draws_every_finite_cell_in_its_scale_colour_and_leaves_nan_out():
    z = np.array([[-2.0, 0.0, 2.0], [1.0, np.nan, -1.0]])
    root = drawn(heatmap(z, ["a", "b"], ["f1", "f2", "f3"], "Outputs"))
    cells = [r for r in root.iter(f"{NS}rect") if r.get("fill", "").startswith("#")]
    # five finite cells; the colour bar is one more rect, filled by its gradient
    assert len(cells) == 5
    fills = {r.get("fill") for r in cells}
    assert "#2d004b" in fills and "#7f3b08" in fills  # PuOr's ends: +2 and -2
    words = texts(root)
    assert "Outputs" in words and {"a", "b", "f1", "f2", "f3"} <= set(words)
    assert "NaN" in words  # the NaN cell's label, in the page's text colour
    assert all(math.isfinite(v) for v in numbers_in(root))


def test_row_labels_typed_by_a_user_show_as_typed_never_as_markup():
    """The labs escape what a user typed, as Plotly needs (lnlab.labs.padding.plots.safe_labels);
    the picture shows it as typed, as text."""
    label = '<script>alert("x")</script> & <b>bold</b>'
    root = drawn(heatmap(np.ones((1, 2)), [html.escape(label, quote=False)], ["f1", "f2"], "t"))
    assert label in texts(root)
    assert not list(root.iter(f"{NS}script")) and not list(root.iter(f"{NS}b"))


def test_grouped_bars_share_each_category_and_keep_their_colours():
    bars = [
        {"type": "bar", "name": n, "x": ["y1", "y2"], "y": [1.0, -0.5], "marker": {"color": c}}
        for n, c in (("a", OKABE_ITO[0]), ("b", OKABE_ITO[1]), ("c", OKABE_ITO[2]))
    ]
    root = drawn(figure(bars, {"barmode": "group", "title": {"text": "Outputs"}}))
    rects = [r for r in root.iter(f"{NS}rect") if r.get("fill") in OKABE_ITO[:3]]
    assert len(rects) == 9  # 6 bars and 3 legend swatches
    widths = {round(float(r.get("width")), 1) for r in rects if r.get("width") != "12"}
    assert len(widths) == 1  # every bar as wide, a third of its group
    assert {"a", "b", "c", "y1", "y2"} <= set(texts(root))


def test_a_log_axis_has_a_labelled_tick_per_decade_and_bars_from_its_bottom():
    fig = figure(
        [{"type": "bar", "x": ["μ", "σ²"], "y": [1e-7, 1e-5]}],
        {"yaxis": {"type": "log", "dtick": 1, "exponentformat": "power", "range": [-8, -4]}},
    )
    root = drawn(fig)
    powers = [t for t in texts(root) if t.startswith("10")]
    assert powers == ["10−8", "10−7", "10−6", "10−5", "10−4"]
    bars = [r for r in root.iter(f"{NS}rect") if r.get("fill") == OKABE_ITO[0]]
    heights = sorted(float(b.get("height")) for b in bars)
    assert heights[1] == pytest.approx(3 * heights[0], rel=0.02)  # 3 decades against 1


def test_lines_markers_dashes_and_a_legend():
    fig = figure(
        [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": name,
                "x": [0, 1, 2],
                "y": [1.0, None, 3.0],
                "line": {"color": OKABE_ITO[k], "dash": dash},
                "marker": {"symbol": symbol, "size": 8},
            }
            for k, (name, dash, symbol) in enumerate(
                (("post", "solid", "circle"), ("pre", "dash", "diamond"))
            )
        ],
        {"legend": {"orientation": "h", "y": -0.2}},
    )
    root = drawn(fig)
    paths = list(root.iter(f"{NS}path"))
    dashed = [p for p in paths if p.get("stroke") == OKABE_ITO[1] and p.get("stroke-dasharray")]
    assert dashed  # the dashed line, and its legend sample
    markers = [p for p in paths if p.get("fill") == OKABE_ITO[0]]
    assert len(markers) == 3  # two points (the None leaves a gap) and the legend's
    assert {"post", "pre"} <= set(texts(root))


def test_shapes_in_domain_and_data_coordinates_and_an_arrow():
    fig = figure(
        [{"type": "bar", "x": ["a", "b"], "y": [1.0, 3.0]}],
        {
            "shapes": [
                {"type": "line", "xref": "x domain", "x0": 0, "x1": 1, "y0": 2, "y1": 2},
                {"type": "rect", "x0": -0.5, "x1": 0.5, "y0": 0, "y1": 1, "fillcolor": "#D55E00"},
            ],
            "annotations": [
                {"x": 1, "y": 3, "ax": 0, "ay": 2, "axref": "x", "ayref": "y", "text": ""},
                {
                    "x": 0.5,
                    "y": 1.0,
                    "xref": "paper",
                    "yref": "paper",
                    "text": "top<br>two lines",
                    "showarrow": False,
                    "yanchor": "bottom",
                },
            ],
        },
    )
    root = drawn(fig)
    assert [r for r in root.iter(f"{NS}rect") if r.get("fill") == "#D55E00"]
    assert "toptwo lines" in texts(root)
    assert all(math.isfinite(v) for v in numbers_in(root))


def test_ticks_are_nice_numbers_with_plotlys_minus():
    assert nice_step(10, 5) == 2
    assert nice_step(3.4, 6) == 0.5
    assert tick_text(-0.5, 0.5) == "−0.5" and tick_text(1.0, 0.5) == "1"
    axis = Axis("y", {}, "linear", lo=-1.3, hi=1.9, a=300, b=0)
    assert [t.text for t in axis.ticks()] == ["−1", "−0.5", "0", "0.5", "1", "1.5"]


def test_the_picture_is_an_img_named_by_its_alt_with_its_svg_in_the_url():
    fig = heatmap(np.eye(2), ["a", "b"], ["f1", "f2"], 'Q & "A" #1')
    html = svg.picture(fig.to_plotly_json(), alt='Chart "x" & y.', uid="t")
    src = re.search(r'src="([^"]*)"', html).group(1)
    assert src.startswith("data:image/svg+xml,")
    assert not re.search(r'[&#"<>]', src)  # all escaped: the URL reads the same in any parser
    ET.fromstring(unquote(src.split(",", 1)[1]))
    assert 'alt="Chart &quot;x&quot; &amp; y."' in html
    width, height = (int(re.search(f'{k}="(\\d+)"', html).group(1)) for k in ("width", "height"))
    assert width == WIDTH and height > 100  # the page keeps its place before it is decoded


def test_text_takes_the_themes_text_colour_which_reads_on_both_backgrounds():
    style = svg.render(figure([], {"title": {"text": "t"}}).to_plotly_json()).svg
    assert all(ink in style for ink in INKS)
    assert "prefers-color-scheme:dark" in style
    for ink, background in zip(INKS, BACKGROUNDS, strict=True):
        assert contrast(ink, background) >= 4.5


def test_a_slide_caps_the_height_and_enlarges_the_text():
    fig = heatmap(np.ones((3, 3)), ["a", "b", "c"], ["x", "y", "z"], "t", height=600)
    plain = svg.render(fig.to_plotly_json())
    slide = svg.render(
        fig.to_plotly_json(), max_height=340, sizes=svg.Sizes(font=16, title=18, ticks=15, cells=16)
    )
    assert plain.height == 600 and slide.height <= 340
    assert 'font-size="15"' in slide.svg and 'font-size="15"' not in plain.svg


@pytest.mark.parametrize(
    "spec",
    [
        {},
        {"data": [], "layout": {}},
        {"data": [{"type": "bar", "x": ["a"], "y": [None]}], "layout": {}},
        {"data": [{"type": "bar", "x": ["a", "b"], "y": [0.0, 0.0]}], "layout": {}},
        {"data": [{"type": "scatter", "x": [1], "y": [2]}], "layout": {}},
        {
            "data": [{"type": "scatter", "x": [1, 2], "y": [-1, 0]}],
            "layout": {"yaxis": {"type": "log"}},
        },
        {
            "data": [{"type": "heatmap", "z": [[None, None]], "x": ["a", "b"], "y": ["r"]}],
            "layout": {},
        },
        {"data": [{"type": "scatter", "x": [0, 1], "y": [1e300, -1e300]}], "layout": {}},
        {"data": [{"type": "scatter", "x": [0, 1], "y": [1e-12, 2e-12]}], "layout": {}},
        {"data": [{"type": "pie", "values": [1, 2]}], "layout": {"title": {"text": "unknown"}}},
    ],
    ids=range(10),
)
def test_a_figure_with_nothing_to_draw_or_odd_numbers_still_draws(spec):
    """Empty, NaN, one point, no positive value on a log axis, extreme ranges, a kind of
    trace it does not know: a picture all the same (the interactive chart has the rest)."""
    root = drawn(spec)
    assert all(math.isfinite(v) for v in numbers_in(root))
