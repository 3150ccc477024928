"""Figures of the "Step through one token" page: what each trace and shape holds."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import validated

from lnlab.labs.step_through.plots import prompt_heatmap, token_bars
from lnlab.teach.figures import HIGHLIGHT

X = np.array([2.0, 4.0, 6.0, 8.0])
STD = 5.00001**0.5
X_HAT = (X - 5.0) / STD
Y = 2 * X_HAT + 1


def bars(step: int, x_hat: np.ndarray = X_HAT, std: float = STD):
    return token_bars(X, x_hat, 2 * x_hat + 1, 5.0, std, step)


def shapes(fig, kind: str, axis: str) -> list[tuple[float, float]]:
    """(y0, y1) of the shapes of `kind` ("line", "rect") on the x axis `axis` ("x", "x2")."""
    return [
        (s.y0, s.y1) for s in fig.layout.shapes if s.type == kind and s.xref == f"{axis} domain"
    ]


def notes(fig) -> list[str]:
    return [a.text for a in fig.layout.annotations]


def test_step_one_shows_the_input_and_its_mean():
    fig = bars(0)
    assert [t.name for t in fig.data] == ["x"]
    assert list(fig.data[0].y) == [2.0, 4.0, 6.0, 8.0]
    assert list(fig.data[0].x) == ["f1", "f2", "f3", "f4"]
    assert shapes(fig, "line", "x") == [(5.0, 5.0)]
    assert shapes(fig, "rect", "x") == []
    assert "input x<br>dashed: μ = 5" in notes(fig)  # in the panel's title, above the bars
    assert "x̂ appears at step 4" in notes(fig)


def test_step_three_adds_the_std_band():
    fig = bars(2)
    ((y0, y1),) = shapes(fig, "rect", "x")
    assert y0 == pytest.approx(5 - STD) and y1 == pytest.approx(5 + STD)
    assert len(fig.data) == 1
    assert "input x<br>dashed: μ = 5<br>band: μ ± σ_ε, σ_ε = 2.2361" in notes(fig)


def test_labels_sit_above_the_panels_not_over_the_bars():
    """Every annotation is a panel title (paper y = 1, anchored at its bottom), so no label
    can hide a bar or a band."""
    for step in range(5):
        for note in bars(step).layout.annotations:
            if note.text.startswith("x̂ appears"):
                continue  # the empty right panel's note, in the middle of that panel
            assert (note.yref, note.y, note.yanchor) == ("paper", 1.0, "bottom")


def test_step_four_draws_x_hat_with_its_unit_band():
    fig = bars(3)
    assert [t.name for t in fig.data] == ["x", "x̂"]
    np.testing.assert_allclose(fig.data[1].y, X_HAT)
    assert fig.data[1].xaxis == "x2"
    assert shapes(fig, "line", "x2") == [(0, 0)]
    assert shapes(fig, "rect", "x2") == [(-1, 1)]
    assert "x̂ appears at step 4" not in notes(fig)


def test_step_five_adds_y():
    fig = bars(4)
    assert [t.name for t in fig.data] == ["x", "x̂", "y"]
    np.testing.assert_allclose(fig.data[2].y, Y)
    assert fig.layout.barmode == "group"


def test_nan_token_has_no_band_and_says_why():
    nan = np.full(4, np.nan)
    fig = bars(4, x_hat=nan, std=0.0)
    assert shapes(fig, "rect", "x") == []
    assert any("NaN" in n for n in notes(fig))


def test_prompt_heatmap_outlines_the_chosen_token():
    z = np.array([[1.0, -2.0, 3.0], [0.5, 0.0, -0.5]])
    fig = prompt_heatmap(z, ["a", "a"], "Input x", token=1)
    heat = fig.data[0]
    assert list(heat.y) == ["1: a", "2: a"]  # repeated labels stay two rows
    assert list(heat.x) == ["f1", "f2", "f3"]
    assert [list(row) for row in heat.z] == z.tolist()
    outlined = [(s.y0 + 0.5, s.x0 + 0.5) for s in fig.layout.shapes if s.line.color == HIGHLIGHT]
    assert outlined == [(1.0, 0.0), (1.0, 1.0), (1.0, 2.0)]
    assert fig.layout.title.text == "Input x"


def test_prompt_heatmap_labels_nan_cells():
    fig = prompt_heatmap(np.array([[np.nan, np.nan]]), ["c"], "x̂", token=0)
    assert [list(row) for row in fig.data[0].text] == [["NaN", "NaN"]]


def test_before_step_one_only_the_input_shows():
    fig = bars(-1)  # predictions on: the mean is not revealed yet
    assert [t.name for t in fig.data] == ["x"]
    assert shapes(fig, "line", "x") == []
    assert not any(n.startswith("μ") for n in notes(fig))
    assert "x̂ appears at step 4" in notes(fig)


@pytest.mark.parametrize("step", range(-1, 5))
@pytest.mark.parametrize("x_hat", [X_HAT, np.full(4, np.nan)], ids=["finite", "nan"])
def test_every_step_is_a_valid_figure_with_both_panels(step, x_hat):
    fig = validated(bars(step, x_hat=x_hat))

    assert fig.layout.xaxis.domain == (0.0, 0.44) and fig.layout.xaxis2.domain == (0.56, 1.0)
    left, right = notes(fig)[:2]
    assert left.startswith("input x") and right.startswith("x̂, then y")
    assert all(t.xaxis == ("x" if t.name == "x" else "x2") for t in fig.data)


def test_prompt_heatmap_is_a_valid_figure_sized_by_its_rows():
    z = np.array([[1.0, np.nan, 3.0], [0.5, 0.0, -np.inf], [2.0, 2.0, 2.0]])

    fig = validated(prompt_heatmap(z, ["<b>a</b>", "b", "c"], "Input x", token=2))

    assert fig.layout.height == 120 + 36 * 3
    assert (
        list(fig.data[0].text[0]) == ["1", "NaN", "3"] and fig.data[0].text[1][2] == "−∞"
    )  # lnlab.core.numbers.fmt, as everywhere
    assert fig.data[0].y[0] == "1: &lt;b&gt;a&lt;/b&gt;"
    assert [(s.y0, s.y1) for s in fig.layout.shapes] == [(1.5, 2.5)] * 3
