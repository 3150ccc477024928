"""The conventions lesson's words are true at every scale, and its questions worth asking
(issue 36): each false sentence the issue found, reproduced on its input, and what it says now.
"""

from __future__ import annotations

import contextlib
import re

import numpy as np
import pytest

from lnlab.core.errors import InputError
from lnlab.labs.conventions.checker import check_claims
from lnlab.labs.conventions.compare import compare_axes, compare_conventions
from lnlab.labs.conventions.lesson import answerable, difference_question, factor_text, slides
from lnlab.teach.lesson import Lesson
from lnlab.teach.quiz import RIGHT, diagnose, options

BASE = np.array([1.0, 2.0, 3.0, 4.0])


def lesson(x: np.ndarray, token: int = 0) -> Lesson:
    x = np.atleast_2d(x)
    return slides(compare_conventions(x), token, compare_axes(x), check_claims("1, 2"))


def section(x: np.ndarray, key: str):
    built = lesson(x)
    return built.sections[built.index(key)]


def annotated_over_pytorch(row: np.ndarray) -> float:
    """|y_Annotated| / |y_PyTorch| = PyTorch's denominator over the Annotated's, in numpy."""
    return np.sqrt(row.var() + 1e-5) / (row.std(ddof=1) + 1e-6)


# ---------------------------------------------------------------- the six conventions


def test_the_overlap_caption_is_gone_where_bert_and_numpy_stand_apart():
    """At 1e-3 scale BERT is 0.89 from PyTorch: "PyTorch, BERT and the NumPy class overlap"
    was false. The caption now gives the gaps."""
    x = 1e-3 * BASE
    caption = section(x, "six").figure.caption
    pytorch = (x - x.mean()) / np.sqrt(x.var() + 1e-5)
    bert = (x - x.mean()) / np.sqrt(x.var() + 1e-12)
    assert np.max(np.abs(bert - pytorch)) == pytest.approx(0.8944, abs=1e-4)
    assert "overlap" not in caption
    assert "BERT's bars stand up to 0.8944 from PyTorch's" in caption
    assert "overlap" in section(2 * BASE, "six").figure.caption


# ---------------------------------------------------------------- ε's size


@pytest.mark.parametrize("scale", [1e-8, 1e-3, 1.0, 1e3, 1e8])
def test_no_factor_under_1_reads_1(scale):
    """σ/σ_ε is under 1 for every ε > 0: BERT's 1 − 4e-13 at σ² = 1.25e6 printed as "1"."""
    finding = section(scale * BASE, "eps_size").finding
    assert not re.search(r"(PyTorch|Keras|BERT) 1(?![ \d.])", finding), finding
    assert not re.search(r"(PyTorch|Keras|BERT) 1\.(?!\d)", finding), finding


def test_factor_text_says_how_far_from_1():
    assert factor_text(0.9996, 4e-4) == "0.9996"
    assert factor_text(1 - 4e-13, 4e-13) == "1 − 4e-13"
    assert factor_text(1 + 2e-9, -2e-9) == "1 + 2e-09"
    assert factor_text(1.0, 0.0) == "1"


def test_a_constant_token_s_eps_slide_says_its_outputs_are_0():
    finding = section(np.array([3.0, 3.0, 3.0, 3.0]), "eps_size").finding
    assert "This token is constant" in finding and "times what ε = 0" not in finding


# ---------------------------------------------------------------- ε's place


def test_the_denominators_gap_never_prints_as_0():
    """At 1e4 scale the gap is 1e-6 (the NumPy class's ε): read against the denominators'
    size it printed as 0, and so did its share."""
    finding = section(1e4 * BASE, "eps_place").finding
    x = 1e4 * BASE
    gap = abs((x.std() + 1e-6) - np.sqrt(x.var() + 1e-5))
    assert gap == pytest.approx(1e-6, rel=1e-3)
    assert "differ by 9.996e-07" in finding and "differ by 0," not in finding
    assert " 0%" not in finding


# ---------------------------------------------------------------- Bessel


@pytest.mark.parametrize(("scale", "ratio"), [(1e-3, "2.5961"), (1e-4, "24.3218")])
def test_where_eps_weighs_more_the_annotated_outputs_are_larger(scale, ratio):
    """The slide said the Annotated Transformer's outputs are smaller, and the formula
    y_Annotated ≈ √((D−1)/D) y_PyTorch: at 1e-3 scale they are 2.6 times larger, at 1e-4
    24 times (torch in float64 agrees; the issue's audit said 18)."""
    row = scale * BASE
    assert f"{annotated_over_pytorch(row):.4f}" == ratio
    s = section(row, "bessel")
    assert "smaller" not in s.finding
    assert f"its outputs are larger: {ratio} times PyTorch's" in s.finding
    assert any(r"\text{ when } \epsilon \ll \sigma^2" in w for w in s.worked)


def test_where_sigma_is_large_the_annotated_outputs_are_smaller():
    row = 2 * BASE
    assert annotated_over_pytorch(row) == pytest.approx(np.sqrt(3 / 4), rel=1e-5)
    finding = section(row, "bessel").finding
    assert "its outputs are smaller: 0.866 times PyTorch's" in finding


@pytest.mark.parametrize(
    ("x", "said"),
    [
        (np.array([[5.0], [-2.0]]), "With D = 1"),
        (np.array([3.0, 3.0, 3.0, 3.0]), "This token is constant"),
    ],
)
def test_bessel_says_what_happens_where_neither_is_smaller(x, said):
    finding = section(x, "bessel").finding
    assert said in finding and "smaller" not in finding and "larger" not in finding


# ---------------------------------------------------------------- questions


@pytest.mark.parametrize("x", [1e6 + BASE, 1e8 + BASE, 100 + 0.1 * BASE])
def test_stems_show_x_with_enough_digits_to_answer(x):
    """At 1e6 + x the stem read x = (1e+06, 1e+06, 1e+06, 1e+06): constant-looking, while
    the answer is 1.1185. The stem's numbers now give every option's value back."""
    comparison = compare_conventions(np.atleast_2d(x))
    for key in ("eps_size", "eps_place", "bessel"):
        q = difference_question(comparison, 0, "token 1", key)
        shown = re.search(r"x = \(([^)]*)\)", q.prompt).group(1)
        values = np.array([float(v) for v in shown.split(", ")])
        assert len(set(values)) == 4, q.prompt
        again = difference_question(compare_conventions(values[None]), 0, "token 1", key)
        assert options(again) == options(q)


def test_answerable_keeps_short_numbers_short():
    comparison = compare_conventions(np.array([[0.1, 0.3, -0.2, 0.8]]))
    q = difference_question(comparison, 0, "token 1", "eps_size")
    assert "x = (0.1, 0.3, -0.2, 0.8)" in q.prompt
    assert answerable(np.array([2.0, 4.0]), lambda v: q) == "(2, 4)"


@pytest.mark.parametrize("x", [2 * BASE, 1e-2 * BASE, 1e-3 * BASE, np.array([0.1, 0.3, -0.2, 0.8])])
def test_the_bessel_question_is_no_coin_flip(x):
    """It asked σ before ε with one mistake, D − 1: two options. PyTorch's output, with
    D − 1, forgetting ε and ε outside the root, has at least three."""
    q = difference_question(compare_conventions(np.atleast_2d(x)), 0, "token 1", "bessel")
    assert len(options(q)) >= 3
    assert "d_minus_1" in {w.misconception for w in q.wrong}


@pytest.mark.parametrize("x", [2 * BASE, 1e-3 * BASE, 1e6 + BASE, np.array([0.1, 0.3, -0.2, 0.8])])
@pytest.mark.parametrize("key", ["eps_size", "eps_place", "bessel"])
def test_no_mistake_is_marked_right_at_fewer_digits(x, key):
    """The ε questions: √5 = 2.23607 (no ε) was accepted for PyTorch's 2.2360702 on
    (2, 4, 6, 8). A mistake's value rounded to fewer digits is never right where the truth
    rounds the same: the grader marks it the mistake's or asks for more digits."""
    q = difference_question(compare_conventions(np.atleast_2d(x)), 0, "token 1", key)
    answer = float(q.answer)
    for w in q.wrong:
        for digits in range(1, 9):
            typed = f"{float(w.answer):.{digits}f}"
            if f"{answer:.{digits}f}" != typed:
                continue
            with contextlib.suppress(InputError):  # it asks for the question's precision
                assert diagnose(q, typed).group != RIGHT, (typed, w.misconception)
