"""lnlab.labs.padding.plots: what each figure draws, read back from the Plotly figure."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import validated

from lnlab.labs.padding import batch as pad
from lnlab.labs.padding import plots
from lnlab.teach.figures import HIGHLIGHT

HI = pad.parse_sentences("Hi Nitish\nHow are you today")


@pytest.fixture(scope="module")
def lab() -> pad.PaddingLab:
    return pad.padding_lab(HI, "hi-nitish")


def outlines(fig) -> list:
    return [s for s in fig.layout.shapes if s.line.color == HIGHLIGHT]


def pad_washes(fig) -> list:
    return [s for s in fig.layout.shapes if s.fillcolor == plots.PAD_FILL]


def test_batch_figure_outlines_exactly_the_masked_feature_column(lab):
    cells = pad.highlight_mask(lab, pad.PICK_MASKED, 1)
    fig = plots.batch_figure(lab, cells, "batch")
    assert [t.type for t in fig.data] == ["heatmap", "scatter"]  # the cells, their numbers
    np.testing.assert_array_equal(np.array(fig.data[0].z, dtype=float), lab.tokens)
    boxes = outlines(fig)
    # column f2 (x from 0.5 to 1.5) of the six real rows 0, 1, 4, 5, 6, 7
    assert {(s.x0, s.x1) for s in boxes} == {(0.5, 1.5)}
    assert sorted(s.y0 + 0.5 for s in boxes) == [0, 1, 4, 5, 6, 7]


def test_batch_figure_outlines_a_token_row(lab):
    fig = plots.batch_figure(lab, pad.highlight_mask(lab, pad.PICK_TOKEN, 2), "batch")
    boxes = outlines(fig)
    assert {s.y0 for s in boxes} == {1.5}
    assert sorted(s.x0 for s in boxes) == [-0.5, 0.5, 1.5]


def test_pad_rows_are_washed_across_every_feature(lab):
    fig = plots.batch_figure(lab, pad.highlight_mask(lab, pad.PICK_NAIVE, 0), "batch")
    washes = pad_washes(fig)
    assert sorted(s.y0 + 0.5 for s in washes) == [2, 3]
    assert all((s.x0, s.x1) == (-0.5, 2.5) for s in washes)
    assert list(fig.data[0].y)[2] == "1.3 [PAD]"


def test_user_words_are_escaped_for_plotly():
    lab = pad.padding_lab(pad.parse_sentences("<b>bold</b> &amp\nx"), "hi-nitish")
    fig = plots.batch_figure(lab, pad.highlight_mask(lab, pad.PICK_NAIVE, 0), "batch")
    labels = list(fig.data[0].y)
    assert labels[0] == "1.1 &lt;b&gt;bold&lt;/b&gt;"
    assert labels[1] == "1.2 &amp;amp"
    assert not any("<" in label for label in labels)


def test_output_figures_show_the_three_outputs(lab):
    figures = plots.output_figures(lab)
    expected = (lab.norms.naive_bn.y, lab.norms.masked_bn.y, lab.norms.ln.y)
    assert [f.layout.title.text for f in figures] == [
        "Batch Norm, naive",
        "Batch Norm, masked",
        "Layer Norm",
    ]
    for fig, y in zip(figures, expected, strict=True):
        np.testing.assert_allclose(np.array(fig.data[0].z, dtype=float), y.reshape(-1, 3))
        assert len(pad_washes(fig)) == 2
        assert not outlines(fig)


def test_nan_outputs_are_labelled_nan():
    lab = pad.padding_lab(HI, "hi-nitish", eps=0.0)
    ln_fig = plots.output_figures(lab)[2]
    assert list(ln_fig.data[0].z[2]) == [None, None, None]
    assert list(ln_fig.data[0].text[2]) == ["NaN", "NaN", "NaN"]
    assert list(ln_fig.data[0].text[0]) != ["NaN", "NaN", "NaN"]


def test_closed_form_figure_puts_the_computed_point_on_the_curve(lab):
    fig = plots.closed_form_figure(lab, 0, 0.7)
    names = [t.name for t in fig.data]
    assert names == ["closed form", "computed from this batch", "calculator's share"] * 2
    mean_line, computed, calculator = fig.data[:3]
    mu = 22 / 6  # feature 1 over the six real tokens
    np.testing.assert_allclose(mean_line.y, (1 - np.array(mean_line.x)) * mu)
    assert computed.x == (0.25,) and computed.y[0] == pytest.approx(22 / 8)
    assert calculator.x == (0.7,) and calculator.y[0] == pytest.approx(0.3 * mu)
    var_line = fig.data[3]
    sigma2 = float(np.var([5, 3, 4, 1, 7, 2]))
    p = np.array(var_line.x)
    np.testing.assert_allclose(var_line.y, (1 - p) * sigma2 + p * (1 - p) * mu**2)
    assert fig.data[4].y[0] == pytest.approx(43.5 / 8)


def test_closed_form_figure_without_calculator(lab):
    assert len(plots.closed_form_figure(lab, 2).data) == 4


def test_batch_and_output_figures_are_valid(lab):
    cells = pad.highlight_mask(lab, pad.PICK_MASKED, 1)
    figures = (plots.batch_figure(lab, cells, "batch"), *plots.output_figures(lab))

    for fig in figures:
        checked = validated(fig)
        assert len(pad_washes(checked)) == int((~lab.real).sum())
        assert checked.layout.height == 120 + plots.ROW_HEIGHT * lab.real.size


@pytest.mark.parametrize("share", [None, 0.7])
def test_closed_form_figure_is_valid_with_two_titled_panels(lab, share):
    fig = validated(plots.closed_form_figure(lab, 1, share))

    assert [a.text for a in fig.layout.annotations] == [
        "padded mean of f2",
        "padded variance of f2",
    ]
    assert {t.xaxis for t in fig.data} == {"x", "x2"}
    assert fig.layout.xaxis2.title.text == "share of PAD rows p"


def test_running_figure_draws_each_feature_s_steps_against_the_batch(lab):
    running = pad.running_statistics(lab, 5)
    fig = validated(plots.running_figure(running))
    assert [a.text for a in fig.layout.annotations] == ["running mean", "running variance"]
    mean_f1, batch_f1 = fig.data[0], fig.data[1]
    assert list(mean_f1.x) == [0, 1, 2, 3, 4, 5]
    np.testing.assert_allclose(mean_f1.y, running.mean[:, 0])
    assert list(batch_f1.y) == [running.batch_mean[0]] * 2 and batch_f1.line.dash == "dash"
    variance_f3 = fig.data[-2]
    assert variance_f3.xaxis == "x2"
    np.testing.assert_allclose(variance_f3.y, running.var[:, 2])


def test_table_heatmap_prints_the_5_by_3_outputs():
    table = pad.preactivation_norms()
    fig = validated(plots.table_heatmap(table.ln.y, table.rows, table.columns, "Layer Norm"))
    assert list(fig.data[0].y) == list(table.rows) and list(fig.data[0].x) == ["z1", "z2", "z3"]
    np.testing.assert_allclose(np.array(fig.data[0].z, float), table.ln.y)
