"""Predict-then-reveal questions: drawn from the example, marked within a sensible tolerance."""

import numpy as np
import pytest

import lnlab
from lnlab.errors import InputError
from lnlab.quiz import PADDING_CHOICES, diagnose, padding_questions, score, token_questions


def _token_questions(x, **kwargs):
    trace = lnlab.layer_norm_steps(np.array(x, dtype=float), **kwargs)
    return {q.qid.split("-")[0]: q for q in token_questions(trace, 0, "t1")}


def test_token_questions_use_this_tokens_numbers():
    qs = _token_questions([[2.0, 4.0, 6.0, 8.0]])
    assert qs["mean"].answer == 5.0  # (2 + 4 + 6 + 8) / 4
    assert qs["var"].answer == 5.0  # (9 + 1 + 1 + 9) / 4
    assert qs["xhat"].answer == pytest.approx(-3 / np.sqrt(5 + 1e-5), abs=1e-12)
    assert qs["y"].answer == pytest.approx(-3 / np.sqrt(5 + 1e-5), abs=1e-12)


@pytest.mark.parametrize(
    ("given", "correct"),
    [("5", True), ("5.00", True), ("4.96", True), ("4.94", False), ("6", False), ("5e0", True)],
)
def test_numeric_answers_within_two_decimals(given, correct):
    assert diagnose(_token_questions([[2.0, 4.0, 6.0, 8.0]])["mean"], given).correct is correct


def test_unicode_minus_is_a_minus():
    q = _token_questions([[2.0, 4.0, 6.0, 8.0]])["xhat"]
    assert diagnose(q, "\u22121.34").correct
    assert not diagnose(q, "1.34").correct


@pytest.mark.parametrize("given", ["", "  ", "five", "1,2", "1e-400", "1e400"])
def test_bad_answers_raise_input_error(given):
    with pytest.raises(InputError):
        diagnose(_token_questions([[2.0, 4.0, 6.0, 8.0]])["mean"], given)


def test_a_new_example_gets_new_questions():
    a = _token_questions([[2.0, 4.0, 6.0, 8.0]])
    b = _token_questions([[1.0, 4.0, 6.0, 8.0]])
    assert a["mean"].qid != b["mean"].qid
    assert a["mean"].qid == _token_questions([[2.0, 4.0, 6.0, 8.0]])["mean"].qid


def test_padding_questions():
    x = np.array(
        [
            [[5, 1, 8], [3, 7, 2], [0, 0, 0], [0, 0, 0]],
            [[4, 2, 6], [1, 8, 3], [7, 5, 9], [2, 4, 1]],
        ],
        float,
    )
    mask = np.array([[1, 1, 0, 0], [1, 1, 1, 1]], bool)
    naive = lnlab.batch_norm_steps(x)
    masked = lnlab.batch_norm_steps(x, mask=mask)
    which, pad_row, shrink = padding_questions(naive, masked, pad_share=0.25)
    assert diagnose(which, PADDING_CHOICES[0]).correct
    assert not diagnose(which, PADDING_CHOICES[2]).correct
    column = x[..., 0].ravel()  # 5, 3, 0, 0, 4, 1, 7, 2: mean 22 / 8
    expected = (0 - column.mean()) / np.sqrt(column.var() + 1e-5)
    assert pad_row.answer == pytest.approx(expected, abs=1e-12)
    assert shrink.answer == pytest.approx((22 / 8) / (22 / 6), abs=1e-12)  # 1 - p = 0.75


def test_score_counts_first_tries():
    assert score({"a": True, "b": False, "c": True}) == (2, 3)
    assert score({}) == (0, 0)
