"""Predict-then-reveal questions: drawn from the example, marked within a sensible tolerance."""

import numpy as np
import pytest

import lnlab
from lnlab.core.errors import InputError
from lnlab.core.numbers import fmt
from lnlab.labs.padding.questions import PADDING_CHOICES, padding_questions
from lnlab.labs.step_through.questions import token_questions
from lnlab.teach.misconceptions import MISCONCEPTIONS
from lnlab.teach.quiz import (
    GROUP_NAMES,
    OTHER,
    RIGHT,
    Question,
    Wrong,
    diagnose,
    group_name,
    group_of,
    options,
    score,
)


def _token_questions(x, **kwargs):
    trace = lnlab.layer_norm_trace(np.array(x, dtype=float), **kwargs)
    return {q.qid.split("-")[0]: q for q in token_questions(trace, 0, "t1", **kwargs)}


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


def _padding_traces():
    x = np.array(
        [
            [[5, 1, 8], [3, 7, 2], [0, 0, 0], [0, 0, 0]],
            [[4, 2, 6], [1, 8, 3], [7, 5, 9], [2, 4, 1]],
        ],
        float,
    )
    mask = np.array([[1, 1, 0, 0], [1, 1, 1, 1]], bool)
    return lnlab.batch_norm_trace(x), lnlab.batch_norm_trace(x, mask=mask)


def test_padding_questions():
    naive, masked = _padding_traces()
    x = naive.x
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


# ---------------------------------------------------------------- misconceptions


def _all_questions():
    """Every question builder of lnlab.teach.quiz on a few examples, hard cases included."""
    examples = [
        ([[2.0, 4.0, 6.0, 8.0], [1.0, 0.0, 3.0, 5.0]], {}),
        ([[1.0, 3.0]], {"eps": 4.0}),  # D = 2, epsilon as large as the variance
        ([[3.0], [5.0]], {}),  # D = 1: D - 1 = 0
        ([[0.001, 0.003, 0.002]], {"eps": 1e-5}),  # tiny variance: epsilon matters
    ]
    for x, kwargs in examples:
        trace = lnlab.layer_norm_trace(np.array(x), 2.0, 0.5, **kwargs)
        yield from token_questions(trace, 0, "t1", gamma=2.0, beta=0.5, **kwargs)


@pytest.mark.parametrize("q", list(_all_questions()), ids=lambda q: q.qid)
def test_every_wrong_option_is_diagnosed_as_its_misconception(q):
    texts = options(q)
    assert len(set(texts)) == len(texts) == 1 + len(q.wrong)  # distinct after formatting
    assert group_of(q, fmt(q.answer)) == RIGHT
    for w in q.wrong:
        d = diagnose(q, fmt(w.answer))
        assert (d.correct, d.group) == (False, w.misconception)
        assert d.message.startswith(MISCONCEPTIONS[w.misconception].name)
        assert abs(w.answer - q.answer) > q.tolerance and np.isfinite(w.answer)


def test_feedback_names_the_mistake_with_the_students_numbers():
    q = _token_questions([[2.0, 4.0, 6.0, 8.0]])["var"]
    d = diagnose(q, "6.67")  # 20 / 3
    assert d.group == "d_minus_1"
    assert "Dividing by D − 1" in d.message and "20, divided by D − 1 = 3" in d.message
    assert "divides by D = 4" in d.message and "The answer is 5" in d.message
    assert diagnose(q, "7").group == OTHER and diagnose(q, "7").message.startswith("Not quite")


def test_wrongs_equal_to_the_truth_are_dropped():
    qs = _token_questions([[2.0, 4.0, 6.0, 8.0]])  # eps = 1e-5: forgetting it changes nothing
    groups = {w.misconception for w in qs["xhat"].wrong}
    assert "no_eps" not in groups and "eps_outside" not in groups and "d_minus_1" in groups
    one = lnlab.layer_norm_trace(np.array([[7.0]]))
    var = token_questions(one, 0, "t1")[1]
    assert var.wrong == ()  # D = 1: D - 1 = 0 gives no number
    assert options(var) == ("0",)
    trace = lnlab.layer_norm_trace(np.array([[1.0, 3.0]]), 1.0, 1.0)
    swapped = token_questions(trace, 0, "t", gamma=1.0, beta=1.0)
    assert "gamma_beta_swap" not in {w.misconception for w in swapped[3].wrong}  # γ = β


def test_eps_mistakes_show_when_epsilon_matters():
    qs = _token_questions([[1.0, 3.0]], eps=4.0)  # var 1, eps 4: sqrt(5) vs 1 vs 5 vs sqrt(6)
    answers = {w.misconception: w.answer for w in qs["xhat"].wrong}
    assert answers["no_eps"] == pytest.approx(-1.0)
    assert answers["eps_outside"] == pytest.approx(-1 / 5)
    assert answers["d_minus_1"] == pytest.approx(-1 / np.sqrt(6))
    assert qs["xhat"].answer == pytest.approx(-1 / np.sqrt(5), abs=1e-7)


def test_the_truth_wins_a_tie_and_the_nearest_wrong_wins_otherwise():
    q = Question("t-1", "?", 1.0, "", wrong=(Wrong("d_minus_1", 1.012), Wrong("no_eps", 1.04)))
    assert diagnose(q, "1.006").group == RIGHT  # within tolerance of both 1 and 1.012
    assert diagnose(q, "1.02").group == "d_minus_1"
    assert diagnose(q, "1.035").group == "no_eps"


def test_duplicate_and_unknown_wrongs():
    q = Question("t-2", "?", 1.0, "", wrong=(Wrong("no_eps", 2.0), Wrong("d_minus_1", 2.001)))
    assert [w.misconception for w in q.wrong] == ["no_eps"]  # the same option twice: first kept
    with pytest.raises(ValueError, match="unknown misconception"):
        Question("t-3", "?", 1.0, "", wrong=(Wrong("typo", 2.0),))


def test_options_keep_one_order_per_question():
    q = _token_questions([[2.0, 4.0, 6.0, 8.0], [1.0, 0.0, 3.0, 5.0]])["xhat"]
    assert options(q) == options(
        _token_questions([[2.0, 4.0, 6.0, 8.0], [1.0, 0.0, 3.0, 5.0]])["xhat"]
    )
    firsts = {options(q)[0] == fmt(q.answer) for q in _all_questions() if q.wrong}
    assert firsts == {True, False}  # the answer is not always first


def test_choice_questions_name_their_misconceptions():
    which = padding_questions(*_padding_traces(), pad_share=0.25)[0]
    assert options(which) == PADDING_CHOICES
    assert [group_of(which, c) for c in PADDING_CHOICES] == [
        RIGHT,
        "across_batch",
        "across_batch",
        OTHER,
    ]


def test_group_names():
    assert group_name(RIGHT) == "Right" and group_name(OTHER) == "Something else"
    assert group_name("pad_as_tokens") == "Counting PAD rows as tokens"
    assert GROUP_NAMES["gamma_beta_swap"] == "Mixing up gamma and beta"


def test_an_undefined_answer_is_an_option_too():
    qs = _token_questions([[3.0, 3.0], [1.0, 5.0]], eps=0.0)  # constant token, eps 0: 0 / 0
    q = qs["xhat"]
    assert np.isnan(q.answer) and "NaN" in options(q)
    assert diagnose(q, "NaN").correct
    assert [group_of(q, fmt(w.answer)) for w in q.wrong] == [w.misconception for w in q.wrong]
    assert not diagnose(q, "0.5").correct
