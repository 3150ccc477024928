"""lnlab.core.numbers.fmt: the one formatter, and lnlab.teach.latex.num built on it."""

import math

import pytest

from lnlab.core.numbers import DEFAULT_EPS, exact, fmt, is_rounding_zero, scale_of
from lnlab.teach.latex import num


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (5.0, "5"),
        (math.sqrt(5.00001), "2.2361"),  # 2.2360702...
        (-3 / math.sqrt(5.00001), "-1.3416"),  # -1.3416370...
        (0.5, "0.5"),
        (100.0, "100"),
        (0.00012345, "0.0001"),  # 4 decimals, as the tutorials print
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
    assert is_rounding_zero(tiny)
    assert fmt(tiny) == "0"
    assert exact(tiny) == "-5.551115123125783e-17"
    assert float(exact(tiny)) == tiny


def test_the_scale_decides_what_is_rounding():
    assert fmt(1e-13, scale=1e-13) == "1e-13"  # a tiny example stays itself
    assert fmt(1e-13) == "0"  # among numbers of size 1 it is rounding
    assert fmt(3e-7, scale=1e3) == "0"
    assert scale_of([0.0, -4.0, float("nan"), 2.0]) == 4.0
    assert scale_of([0.0, float("inf")]) == 1.0


def test_latex_numbers_follow_fmt():
    assert num(math.sqrt(5.00001)) == "2.2361"
    assert num(DEFAULT_EPS) == "10^{-5}"
    assert num(2.5e-7) == r"2.5 \times 10^{-7}"
    assert num(-5.551115123125783e-17) == "0"
    assert num(float("nan")) == r"\mathrm{NaN}"
    assert num(float("-inf")) == r"-\infty"
