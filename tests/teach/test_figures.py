"""lnlab.teach.figures: colours that stand out on both of Streamlit's themes, heatmap numbers in
the ink that stands out on their cell, a chart's numbers as a table, and its summary's range."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from helpers import chart_contrast_problems, validated

from lnlab.teach import figures
from lnlab.teach.figures import (
    BACKGROUNDS,
    HIGHLIGHT,
    OKABE_ITO,
    contrast,
    figure,
    figure_table,
    heatmap,
    ink_on,
    spread,
)


def test_contrast_is_wcags_ratio():
    """Black on white 21:1 (either notation), a colour on itself 1:1, #767676 on white 4.54:1."""
    assert contrast("#000000", "#FFFFFF") == pytest.approx(21.0)
    assert contrast("#D55E00", "#D55E00") == pytest.approx(1.0)
    assert contrast("#767676", "#FFFFFF") == pytest.approx(4.54, abs=0.01)
    assert contrast("rgb(255, 255, 255)", "#000000") == pytest.approx(21.0)


@pytest.mark.parametrize("colour", [*OKABE_ITO, HIGHLIGHT])
def test_every_category_colour_stands_3_to_1_on_both_themes(colour):
    assert min(contrast(colour, page) for page in BACKGROUNDS) >= 3.0


def test_the_ink_on_any_colour_stands_at_least_4_5_to_1():
    """Black or white, whichever is better, is at least 4.58:1 on any colour (equal at
    luminance sqrt(0.0525) - 0.05): 5,000 random colours and the scale's own stops."""
    rgb = np.vstack([np.random.default_rng(0).uniform(0, 255, (5000, 3)), figures._SCALE_RGB])
    colours = ["rgb({}, {}, {})".format(*c.round()) for c in rgb]
    worst = min(contrast(ink, c) for ink, c in zip(ink_on(rgb.round()), colours, strict=True))
    assert worst >= 4.5
    assert math.isclose(figures.INK_SWITCH, 0.179, abs_tol=0.001)


def test_heatmap_numbers_stand_out_on_their_cells_washed_or_not():
    z = np.linspace(-3, 3, 7 * 5).reshape(7, 5)
    z[2, 3] = np.nan
    wash = {
        "type": "rect", "x0": -0.5, "x1": 4.5, "y0": 3.5, "y1": 4.5,
        "fillcolor": "#7F7F7F", "opacity": 0.3, "layer": "above",
    }  # fmt: skip
    fig = validated(heatmap(z, [f"r{i}" for i in range(7)], list("abcde"), "t", shapes=[wash]))
    heat, numbers, nan = fig.data
    assert heat.type == "heatmap" and heat.texttemplate is None  # plotly's own text: #444
    assert len(numbers.text) == 34 and nan.text == ("NaN",) and nan.textfont.color is None
    assert not chart_contrast_problems(fig.to_plotly_json())
    # the check itself catches the ink plotly.js would choose: #444 on a mid-tone cell
    bad = fig.to_plotly_json()
    bad["data"][1]["textfont"]["color"] = ["#444444"] * 34
    assert chart_contrast_problems(bad)


def test_a_light_line_is_caught():
    spec = {"data": [{"type": "scatter", "name": "yellow", "line": {"color": "#F0E442"}}]}
    assert chart_contrast_problems(spec) == ["yellow: line #F0E442 at 1.32:1"]


def test_a_heatmaps_numbers_as_a_table():
    z = np.array([[1.0, -2.0], [np.nan, 4.0]])
    frame = figure_table(heatmap(z, ["1: a", "2: b"], ["f1", "f2"], "t"))
    assert list(frame.columns) == ["row", "f1", "f2"]
    assert list(frame["row"]) == ["1: a", "2: b"]
    np.testing.assert_array_equal(frame[["f1", "f2"]].to_numpy(), z)


def test_bars_sharing_their_x_are_a_column_each_and_others_a_row_per_point():
    bars = [
        {"type": "bar", "name": "x", "x": ["f1", "f2"], "y": [2, 4]},
        {"type": "bar", "name": "x̂", "x": ["f1", "f2"], "y": [-1, 1]},
    ]
    layout = {"xaxis": {"title": {"text": "feature"}}}
    wide = figure_table(figure(bars, layout))
    pd.testing.assert_frame_equal(
        wide, pd.DataFrame({"feature": ["f1", "f2"], "x": [2.0, 4.0], "x̂": [-1.0, 1.0]})
    )
    lines = [
        {"type": "scatter", "name": "a", "x": [1, 2, 3], "y": [0.5, None, 0.1]},
        {"type": "scatter", "name": "a", "x": [3], "y": [7]},
        {"type": "bar", "orientation": "h", "name": "h", "x": [5], "y": ["copy"]},
    ]
    long = figure_table(figure(lines, {}))
    assert list(long.columns) == ["series", "x", "y"]
    assert list(long["series"]) == ["a", "a", "a", "a (2)", "h"]
    assert long.iloc[-1].tolist() == ["h", "copy", 5.0]
    assert np.isnan(long.iloc[1]["y"])


def test_a_diagram_of_shapes_has_no_table_of_its_own():
    assert figure_table(figure([], {"shapes": [{"type": "rect"}]})) is None


def test_spread_says_the_range_and_the_nans():
    assert spread([2, 4, 6, 8]) == "from 2 to 8"
    assert spread([[-1.3416, np.nan], [1.3416, np.nan]]) == "from -1.3416 to 1.3416 (2 NaN)"
    assert spread([np.nan]) == "all NaN"
