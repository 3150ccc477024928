"""lnlab.teach.steps: the five steps written out with one token's numbers from a trace."""

import numpy as np
from numpy.testing import assert_allclose, assert_array_equal

import lnlab
from lnlab.teach.steps import written_steps

NOTEBOOK = np.array([[[0.2, 0.1, 0.3]], [[0.5, 0.1, 0.1]]])  # (2, 1, 3)


def test_each_step_holds_its_trace_values():
    gamma, beta = np.array([1.0, 2.0, -1.0, 0.5]), np.array([0.0, 1.0, 0.0, -3.0])
    trace = lnlab.layer_norm_trace([2.0, 4.0, 6.0, 8.0], gamma, beta, 1e-5)
    values_ = [trace.mean, trace.var, trace.std, trace.x_hat, trace.y]
    for step, value in zip(written_steps(trace), values_, strict=True):
        assert_array_equal(step.value, value, err_msg=step.title)


def test_trace_titles_and_substituted_numbers():
    trace = lnlab.layer_norm_trace([2.0, 4.0, 6.0, 8.0])
    steps = written_steps(trace)
    mean, var, std, normalize, affine = steps

    assert [s.title for s in (mean, var, normalize, affine)] == [
        "Mean",
        "Variance",
        "Normalize",
        "Scale and shift",
    ]
    assert std.title.startswith("Standard deviation")
    assert r"\tfrac{1}{4}\big(2 + 4 + 6 + 8\big) = 5" in mean.latex
    assert "(2 - 5)^2 + (4 - 5)^2 + (6 - 5)^2 + (8 - 5)^2" in var.latex
    assert var.latex.endswith("= 5")
    assert r"\sqrt{5 + 10^{-5}} = 2.2361" in std.latex  # sqrt(5.00001) = 2.236070...
    assert r"\dfrac{2 - 5}{2.2361}" in normalize.latex
    # -3 / 2.236070 = -1.341637, -1 / 2.236070 = -0.447213; breakable after each comma
    assert r"[-1.3416,\allowbreak\ -0.4472,\allowbreak\ 0.4472,\allowbreak\ 1.3416]" in (
        normalize.latex
    )
    assert r"1 \cdot (-1.3416) + 0" in affine.latex
    assert all(s.formula and s.formula != s.latex for s in steps)


def test_trace_conventions_change_titles_and_formulas():
    trace = lnlab.layer_norm_trace([2.0, 4.0, 6.0, 8.0], unbiased=True, eps_outside=True)
    _, var, std, _, _ = written_steps(trace)

    assert var.title == "Variance (unbiased, D - 1)"
    assert r"\dfrac{1}{D-1}" in var.formula
    assert r"\tfrac{1}{3}\big(" in var.latex and var.latex.endswith("= 6.6667")  # 20 / 3
    assert r"\sqrt{6.6667} + 10^{-5} = 2.582" in std.latex  # 2.5819989 + 1e-5 = 2.582009
    assert_allclose(trace.std, [np.sqrt(20 / 3) + 1e-5], rtol=1e-14)


def test_trace_row_picks_the_substituted_token():
    x = [[2.0, 4.0, 6.0, 8.0], [1.0, 1.0, 1.0, 5.0]]

    trace = lnlab.layer_norm_trace(x)
    steps = written_steps(trace, row=1)

    mean, var = steps[0], steps[1]
    assert r"\tfrac{1}{4}\big(1 + 1 + 1 + 5\big) = 2" in mean.latex
    assert "(5 - 2)^2" in var.latex and var.latex.endswith("= 3")  # (1 + 1 + 1 + 9) / 4
    assert "2 + 4" not in mean.latex
    assert steps[0].value.shape == (2, 1)  # the values still hold every token


def test_trace_row_with_dims_2():
    trace = lnlab.layer_norm_trace(NOTEBOOK, dims=2)

    assert r"\tfrac{1}{3}\big(0.5 + 0.1 + 0.1\big) = 0.2333" in written_steps(trace, 1)[0].latex
