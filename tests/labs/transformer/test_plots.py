"""Tests for lnlab.labs.transformer.plots: what the block diagram and the depth chart draw."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import validated

from lnlab.core.errors import InputError
from lnlab.labs.transformer.model import NO_NORM, POST_NORM, PRE_NORM, depth_experiment
from lnlab.labs.transformer.plots import block_diagram, depth_chart
from lnlab.teach.figures import OKABE_ITO

POST_BOXES = ["Input", "Multi-Head Attention", "Add & Norm", "Feed-Forward", "Add & Norm", "Output"]
PRE_BOXES = [
    "Input",
    "LayerNorm",
    "Multi-Head Attention",
    "Add",
    "LayerNorm",
    "Feed-Forward",
    "Add",
    "Final LayerNorm",
    "Output",
]


def _annotations(fig, name: str) -> list:
    return [a for a in fig.layout.annotations if a.name == name]


@pytest.mark.parametrize(("mode", "boxes"), [(POST_NORM, POST_BOXES), (PRE_NORM, PRE_BOXES)])
def test_block_diagram_boxes_in_flow_order(mode, boxes):
    fig = block_diagram(mode)
    labels = _annotations(fig, "box")
    assert [a.text for a in labels] == boxes
    ys = [a.y for a in labels]
    assert ys == sorted(ys, reverse=True)  # top to bottom
    assert len(_annotations(fig, "flow")) == len(boxes) - 1
    assert len(_annotations(fig, "residual")) == 2
    assert [a.text for a in _annotations(fig, "repeat")] == ["× N layers"]
    assert mode in fig.layout.title.text.lower()


def test_residual_paths_branch_before_each_sublayer_and_end_at_its_add():
    fig = block_diagram(PRE_NORM)
    paths = [s.path for s in fig.layout.shapes if s.type == "path"]
    # Pre-norm: the stream entering LayerNorm (box 1, y=-1) skips to Add (box 3, y=-3), and
    # the one entering the second LayerNorm (box 4) skips to the second Add (box 6).
    assert paths == ["M 0,-0.5 L 1.7,-0.5 L 1.7,-3.0", "M 0,-3.5 L 1.7,-3.5 L 1.7,-6.0"]
    heads = [(a.x, a.y) for a in _annotations(fig, "residual")]
    assert heads == [(1.1, -3.0), (1.1, -6.0)]


def test_box_colours_are_okabe_ito_and_norms_share_one():
    fig = block_diagram(POST_NORM)
    boxes = [s for s in fig.layout.shapes if s.type == "rect" and s.line.dash != "dash"]
    colours = [s.line.color for s in boxes]
    assert len(boxes) == len(POST_BOXES)
    assert set(colours) <= set(OKABE_ITO)
    assert colours[2] == colours[4] == OKABE_ITO[1]  # both Add & Norm boxes
    assert colours[1] == colours[3] != colours[2]  # sublayers differ from norms
    pre = block_diagram(PRE_NORM)
    pre_colours = [
        s.line.color for s in pre.layout.shapes if s.type == "rect" and s.line.dash != "dash"
    ]
    assert pre_colours[1] == pre_colours[4] == pre_colours[7] == OKABE_ITO[1]


@pytest.mark.parametrize("mode", [POST_NORM, PRE_NORM])
def test_block_diagram_is_a_valid_figure_with_hidden_fixed_axes(mode):
    fig = validated(block_diagram(mode))

    assert not fig.layout.xaxis.visible and fig.layout.xaxis.fixedrange
    boxes = [a for a in fig.layout.annotations if a.name == "box"]
    assert fig.layout.height == 62 * len(boxes) + 70


def test_block_diagram_refuses_an_unknown_position():
    with pytest.raises(InputError):
        block_diagram("peri-norm")


def test_depth_chart_plots_the_experiment_on_a_log_axis():
    result = depth_experiment(7)
    fig = depth_chart(result)
    assert fig.layout.yaxis.type == "log"
    names = [t.name for t in fig.data]
    assert names == [NO_NORM, POST_NORM, PRE_NORM, "pre-norm, after the final LN"]
    for trace, variant in zip(fig.data[:3], (NO_NORM, POST_NORM, PRE_NORM), strict=True):
        assert list(trace.x) == list(range(8))
        np.testing.assert_array_equal(trace.y, result.rms[variant])
    assert len({t.line.dash for t in fig.data[:3]}) == 3  # told apart without colour
    assert len({t.marker.symbol for t in fig.data[:3]}) == 3
    assert fig.data[3].x == (7,)
    assert fig.data[3].y[0] == pytest.approx(1.0, abs=1e-5)


def test_depth_chart_is_a_valid_figure():
    fig = validated(depth_chart(depth_experiment(5)))

    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.dtick == 1
    assert fig.data[-1].x == (5,)


def test_depth_chart_lines_have_distinct_okabe_ito_colours():
    fig = depth_chart(depth_experiment(5))
    colours = [t.line.color for t in fig.data[:3]]
    assert len(set(colours)) == 3 and set(colours) <= set(OKABE_ITO)
    assert OKABE_ITO[1] not in colours  # orange would sit too close to no norm's vermillion
    assert fig.data[3].marker.color == colours[2]  # the star is pre-norm's
