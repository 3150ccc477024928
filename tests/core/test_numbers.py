"""lnlab.core.numbers.fmt: the one formatter, and lnlab.teach.latex.num built on it."""

import math

import pytest

from lnlab.core.numbers import (
    DEFAULT_EPS,
    exact,
    fmt,
    fmt_apart,
    is_rounding_zero,
    scale_of,
    shortest,
)
from lnlab.teach.latex import num


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (5.0, "5"),
        (math.sqrt(5.00001), "2.2361"),  # 2.2360702...
        (-3 / math.sqrt(5.00001), "-1.3416"),  # -1.3416370...
        (0.5, "0.5"),
        (100.0, "100"),
        (0.00012345, "0.0001234"),  # 4 significant digits where 4 decimals would lose them
        (0.000125, "0.000125"),  # a variance of (0.01, 0.02, 0.03, 0.04), not "0.0001"
        (0.011180339887498949, "0.01118"),  # its σ, not "0.0112"
        (0.0999, "0.0999"),
        (0.1, "0.1"),
        (1e-10, "1e-10"),  # no nonzero number prints as 0 without a scale to be rounding of
        (1e-5, "1e-05"),  # below 1e-4: scientific, never "0"
        (-1e-5, "-1e-05"),
        (3.2e7, "3.2e+07"),
        (1234567.0, "1.235e+06"),
        (float("nan"), "NaN"),
        (float("inf"), "∞"),
        (float("-inf"), "−∞"),
        (-0.0, "0"),
        (-0.00001, "-1e-05"),
        (-0.00004, "-4e-05"),
    ],
)
def test_fmt(value, text):
    assert fmt(value) == text


def test_zero_up_to_rounding_shows_as_zero_and_keeps_its_exact_value():
    tiny = -5.551115123125783e-17  # the mean of x_hat for [2, 4, 6, 8], as float64 leaves it
    assert is_rounding_zero(tiny, 1.0)
    assert fmt(tiny, 1.0) == "0"
    assert not is_rounding_zero(tiny) and fmt(tiny) == "-5.551e-17"  # its own scale
    assert exact(tiny) == "-5.551115123125783e-17"
    assert float(exact(tiny)) == tiny


def test_the_scale_decides_what_is_rounding():
    assert fmt(1e-13, scale=1e-13) == "1e-13"  # a tiny example stays itself
    assert fmt(1e-13, 1.0) == "0"  # among numbers of size 1 it is rounding
    assert fmt(3e-7, scale=1e3) == "0"
    assert scale_of([0.0, -4.0, float("nan"), 2.0]) == 4.0
    assert scale_of([0.0, float("inf")]) == 1.0


def test_latex_numbers_follow_fmt():
    assert num(math.sqrt(5.00001)) == "2.2361"
    assert num(DEFAULT_EPS) == "10^{-5}"
    assert num(2.5e-7) == r"2.5 \times 10^{-7}"
    assert num(-5.551115123125783e-17, 1.0) == "0"
    assert num(float("nan")) == r"\mathrm{NaN}"
    assert num(float("-inf")) == r"-\infty"


def test_values_that_would_read_the_same_are_written_exactly():
    """1e8 + x printed at 4 significant digits looks constant (issue 36)."""
    assert fmt_apart([1e8 + 1, 1e8 + 2, 1e8 + 3]) == ["100000001", "100000002", "100000003"]
    assert fmt_apart([1e6 + 0.5, 1e6 + 1]) == ["1000000.5", "1000001"]
    assert fmt_apart([3.0, 3.0]) == ["3", "3"]  # equal values may read the same
    assert fmt_apart([2.0, 4.0]) == ["2", "4"]
    assert shortest(1e-7) == "1e-07" and shortest(0.1) == "0.1" and shortest(-2.0) == "-2"
