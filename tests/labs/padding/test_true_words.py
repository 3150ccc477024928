"""The padding lesson's sentences that issue 36 found false, each on the batch that showed it.

Every one of them is now a claim (lnlab.teach.claims) checked on hard batches in
tests/claims/padding.py; here each is pinned to the example that broke it.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from fairness import GIVE_AWAY

from lnlab.labs.padding import batch as pad
from lnlab.labs.padding import lesson
from lnlab.labs.padding.questions import page_questions
from lnlab.teach.lesson import Lesson, Section
from lnlab.teach.quiz import options

HI = pad.parse_sentences("Hi Nitish\nHow are you today")
# every feature's real tokens sum to 0: naive Batch Norm leaves the PAD rows at β
CENTRED = (
    ("Hi", (1.0, 2.0, -1.0)),
    ("Nitish", (-1.0, -2.0, 1.0)),
    ("How", (2.0, 1.0, 3.0)),
    ("are", (-2.0, -1.0, -3.0)),
    ("you", (0.5, 3.0, 2.0)),
    ("today", (-0.5, -3.0, -2.0)),
)


def section(key: str, view: lesson.View | None = None, **settings: object) -> Section:
    lab = pad.padding_lab(HI, "hi-nitish", **settings)  # type: ignore[arg-type]
    built: Lesson = lesson.slides(lab, view or lesson.View())
    return built.sections[built.index(key)]


def test_normalized_columns_have_mean_beta_not_0():
    """With β = 1.5 the figure said "Every column now has mean 0 and variance 1 (up to ε)"."""
    for key in ("columns", "rows"):
        figure = section(key, beta=1.5).figure
        assert "mean 0" not in figure.caption and "mean 0" not in figure.summary
        assert "now has mean 1.5 and variance 1 (up to ε)" in figure.caption


def test_a_large_eps_leaves_the_variances_under_1():
    t = pad.preactivation_norms(eps=1.0)
    caption = section("columns", eps=1.0).figure.caption
    listed = ", ".join(f"{v:.4f}" for v in t.bn.y.var(axis=0))
    assert "variance 1" not in caption
    assert f"variances {listed}: σ²/(σ² + ε), under 1" in caption


def test_the_gap_is_not_said_to_shrink_with_more_steps():
    """ "More steps shrink the gap but never close it": on the default batch it shrinks to
    0.088 after 38 steps, then grows towards its limit 0.1177."""
    running = pad.running_statistics(pad.padding_lab(HI, "hi-nitish"), 40)
    assert np.any(np.diff(running.gaps) > 0)
    assert running.gaps.min() < running.settled_gap
    gap = section("gap", lesson.View(steps=40))
    assert "shrink the gap" not in gap.explanation
    assert "the gap does not close: it tends to 0.1177, not 0." in gap.explanation
    assert gap.finding.startswith("Over these 40 steps the gap does not shrink at every step")
    shrinking = section("gap", lesson.View(steps=20))
    assert shrinking.finding.startswith("Over these 20 steps the gap shrinks at every step")


def test_a_batch_with_a_tenth_of_padding_is_not_mostly_zeros():
    tenth = section("calculator", lesson.View(count=pad.padding_share(32, 100, 90)))
    assert "most" not in tenth.explanation.replace("not most", "")
    assert "Here that is p = 0.1 of them, not most." in tenth.explanation
    default = section("calculator")
    assert "Here that is most of them: p = 0.7." in default.explanation


def test_pad_rows_stay_zero_where_the_real_means_are_0_and_beta_is_0():
    """ "PAD rows are no longer zero" was said where (0 − 0)/σ_ε + 0 = 0."""
    still = section("naive_out", overrides=CENTRED)
    assert "no longer zero" not in still.finding and "not zero" not in still.figure.caption
    assert "so the PAD rows stay 0" in still.finding
    assert still.question.answer == 0
    assert still.question.explanation.endswith("Zeros in, and here zeros out.")
    moved = section("naive_out", overrides=CENTRED, beta=1.5)
    assert moved.finding.endswith("PAD rows are no longer zero.")


def test_the_padded_statistics_question_cannot_be_answered_by_elimination():
    """ "By what factor does padding shrink feature 1's mean?" offered 1 (no shrink) beside the
    answer: the stem ruled it out. Its successor asks for the padded variance, and every
    option is a misconception's number."""
    question = section("closed_form").question
    assert "shrink" not in question.prompt
    assert len(options(question)) == 3
    assert {w.misconception for w in question.wrong} == {"bn_ignores_padding", "d_minus_1"}


@pytest.mark.parametrize("key", ["statistics", "outputs", "masked"])
def test_questions_offer_at_least_three_options(key):
    question = getattr(page_questions(pad.padding_lab(HI, "hi-nitish", beta=0.5)), key)
    assert len(options(question)) >= 3


def test_the_intro_does_not_answer_which_statistics_the_pad_rows_reach():
    """The intro sits above every slide: it must not say which averages run over the PAD
    rows, which the Batch Norm statistics question asks."""
    question = page_questions(pad.padding_lab(HI, "hi-nitish")).statistics
    for w in question.wrong:
        for pattern in GIVE_AWAY.get(w.misconception, ()):
            assert not re.search(pattern, lesson.INTRO), (w.misconception, pattern)
    for words in ("down a column", "own features", "cannot touch", "PAD zeros included"):
        assert words not in lesson.INTRO
