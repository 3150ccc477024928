"""Predict-then-reveal questions: drawn from the example, marked at the precision they show."""

import numpy as np
import pytest

import lnlab
from lnlab.core.errors import InputError
from lnlab.core.numbers import fmt
from lnlab.labs.padding import batch as pad
from lnlab.labs.padding.questions import PADDING_CHOICES, page_questions
from lnlab.labs.step_through.questions import token_questions
from lnlab.teach.misconceptions import MISCONCEPTIONS
from lnlab.teach.presets import BATCH_PRESETS
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
    std_wrongs,
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
    [
        ("5", True),
        ("5.00", True),
        ("5.00004", True),
        ("5e0", True),
        ("4.9999", False),
        ("4.96", False),
        ("5.01", False),
        ("6", False),
    ],
)
def test_numbers_are_marked_at_the_precision_shown(given, correct):
    """The mean 5 shows as "5" at 4 decimals: right is what rounds to it there."""
    q = _token_questions([[2.0, 4.0, 6.0, 8.0]])["mean"]
    assert q.unit == 1e-4 and q.precision == "4 decimals"
    assert diagnose(q, given).correct is correct


@pytest.mark.parametrize(
    ("given", "group"),
    [
        ("-1.3416", RIGHT),
        ("-1.34164", RIGHT),
        ("-1.34", RIGHT),
        ("-1.342", RIGHT),
        ("-1.3417", OTHER),
        ("-1.341", OTHER),
        ("-1.1619", "d_minus_1"),
        ("-1.16", "d_minus_1"),
    ],
)
def test_fewer_digits_are_read_at_their_own_precision(given, group):
    """x_hat1 of (2, 4, 6, 8) is -1.3416 (-1.16189... dividing by D - 1): "-1.34" has three
    significant digits, the truth rounds to it and no mistake does, so it is right; "-1.341"
    is a truncation the truth does not round to."""
    q = _token_questions([[2.0, 4.0, 6.0, 8.0]])["xhat"]
    assert diagnose(q, given).group == group


@pytest.mark.parametrize("given", ["-1.3", "-1", "−1"])
def test_too_coarse_to_tell_asks_for_the_precision(given):
    """Two significant digits or fewer: the answer and a mistake may both round to it."""
    q = _token_questions([[2.0, 4.0, 6.0, 8.0]])["xhat"]
    with pytest.raises(InputError, match="give your answer to 4 decimals"):
        diagnose(q, given)


def test_the_grader_tells_epsilon_conventions_apart():
    """x = (2, 4, 6, 8): PyTorch's σ_ε = √5.00001 = 2.2360702, √5 = 2.2360680 (no ε) and
    √5 + 1e-5 = 2.2360780 (ε outside). A question about ε's place may show the digits that
    tell them apart (refine); then 2.2361 is too coarse, and each text is its own group."""
    x, eps = np.array([2.0, 4.0, 6.0, 8.0]), 1e-5
    truth = float(np.sqrt(5 + eps))
    plain = Question("s-1", "?", truth, "", wrong=std_wrongs(x, eps))
    assert [w.misconception for w in plain.wrong] == ["d_minus_1"]  # the rest print 2.2361
    fine = Question("s-2", "?", truth, "", wrong=std_wrongs(x, eps), refine=6)
    assert fine.unit == 1e-6 and len(options(fine)) == 4
    shown = ("2.23607", "2.236068", "2.236078")  # 2.236070 shows its zero dropped
    assert [diagnose(fine, t, picked=True).group for t in shown] == [
        RIGHT,
        "no_eps",
        "eps_outside",
    ]
    assert [diagnose(fine, t).group for t in ("2.236070", "2.236068", "2.236078")] == [
        RIGHT,
        "no_eps",
        "eps_outside",
    ]
    for coarse in ("2.2361", "2.23607"):  # √5 = 2.236068 rounds to 2.23607 too (issue 36)
        with pytest.raises(InputError, match="6 decimals"):
            diagnose(fine, coarse)
    keras = Question("s-3", "?", float(np.sqrt(5.001)), "", wrong=std_wrongs(x, 1e-3))
    assert not diagnose(keras, "2.2361").correct  # PyTorch's σ_ε is not Keras's


@pytest.mark.parametrize("scale", [1e-3, 1e-200, 1.0, 1e200])
def test_precision_follows_the_size_of_the_numbers(scale):
    """The mean of scale * (1, 2, 3, 4) against the first feature's mean over two tokens:
    kept apart, and each marked as itself, at every scale."""
    x = scale * np.array([[1.0, 2.0, 3.0, 4.0], [3.0, 2.0, 5.0, 4.0]])
    q = _token_questions(x)["mean"]
    assert [w.misconception for w in q.wrong] == ["across_batch", "d_minus_1"]
    assert group_of(q, options(q)[0]) != group_of(q, options(q)[1])
    assert diagnose(q, f"{2.5 * scale:.3e}").correct  # typed to the question's precision
    assert diagnose(q, f"{2.0 * scale:.3e}").group == "across_batch"
    assert not diagnose(q, repr(2.6 * scale)).correct


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


def _padding_lab() -> pad.PaddingLab:
    preset = BATCH_PRESETS[0]
    sentences = tuple(pad.parse_sentence(t) for t in preset.sentences)
    return pad.padding_lab(sentences, preset.key)


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
    assert group_of(q, q.text(q.answer)) == RIGHT
    for w in q.wrong:
        d = diagnose(q, q.text(w.answer))
        assert (d.correct, d.group) == (False, w.misconception)
        assert d.message.startswith(MISCONCEPTIONS[w.misconception].name)
        assert abs(w.answer - q.answer) > q.unit and np.isfinite(w.answer)
        assert diagnose(q, repr(float(w.answer))).group == w.misconception


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


def test_the_nearest_text_wins():
    """Options are more than one unit apart, so each number rounds to at most one of them."""
    q = Question("t-1", "?", 1.0, "", wrong=(Wrong("d_minus_1", 1.012), Wrong("no_eps", 1.04)))
    assert q.unit == 1e-4 and len(q.wrong) == 2
    assert diagnose(q, "1.00004").group == RIGHT
    assert diagnose(q, "1.012").group == "d_minus_1"
    assert diagnose(q, "1.04").group == "no_eps"
    assert diagnose(q, "1.02").group == OTHER


def test_duplicate_and_unknown_wrongs():
    q = Question("t-2", "?", 1.0, "", wrong=(Wrong("no_eps", 2.0), Wrong("d_minus_1", 2.00005)))
    assert [w.misconception for w in q.wrong] == ["no_eps"]  # the same option twice: first kept
    near = Question("t-4", "?", 1.0, "", wrong=(Wrong("no_eps", 1.00009),))
    assert near.wrong == ()  # within a unit of the truth: the grader could not tell them apart
    with pytest.raises(ValueError, match="unknown misconception"):
        Question("t-3", "?", 1.0, "", wrong=(Wrong("typo", 2.0),))


def test_options_keep_one_order_per_question():
    q = _token_questions([[2.0, 4.0, 6.0, 8.0], [1.0, 0.0, 3.0, 5.0]])["xhat"]
    assert options(q) == options(
        _token_questions([[2.0, 4.0, 6.0, 8.0], [1.0, 0.0, 3.0, 5.0]])["xhat"]
    )
    firsts = {options(q)[0] == q.text(q.answer) for q in _all_questions() if q.wrong}
    assert firsts == {True, False}  # the answer is not always first


def test_choice_questions_name_their_misconceptions():
    """Each wrong choice of the padding page's "which statistic" question is a misconception's
    (lnlab.labs.padding.questions; the lab's own tests check its wording)."""
    which = page_questions(_padding_lab()).statistics
    assert options(which) == PADDING_CHOICES
    assert [group_of(which, c) for c in PADDING_CHOICES] == [
        RIGHT,
        "pad_as_tokens",
        "across_batch",
        "across_batch",
        "bn_ignores_padding",
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


def test_a_typed_answer_a_mistake_also_rounds_to_asks_for_digits():
    """Issue 36: −3.683 typed where the answer is −3.6833 and Keras's ε gives −3.6830: both
    round to it at four significant digits, so the grader asks for more instead of marking it
    right. Picked as an option, "−3.683" is the mistake's (here forgetting ε)."""
    q = Question("k-1", "?", -3.68330, "", wrong=(Wrong("no_eps", -3.68300),))
    assert q.text(q.wrong[0].answer) == "-3.683"
    with pytest.raises(InputError, match="4 decimals"):
        diagnose(q, "-3.683")
    assert diagnose(q, "-3.683", picked=True).group == "no_eps"
    assert diagnose(q, "-3.6833").correct
    assert diagnose(q, "-3.6830").group == "no_eps"
