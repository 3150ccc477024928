"""A lesson's question as a live class asks it, the answers chart, and the CSV download."""

from __future__ import annotations

from helpers import validated

from lnlab.classroom.asking import class_exports, live_question, right_options
from lnlab.classroom.plots import RIGHT_COLOUR, WRONG_COLOUR, tally_bars
from lnlab.teach.misconceptions import MISCONCEPTIONS
from lnlab.teach.quiz import OTHER, RIGHT, Question, Wrong, diagnose, group_name, options

QUESTION = Question(
    "var-test",
    "What is the variance of 2, 4, 6, 8?",
    5.0,
    "Average the squared distances from the mean 5.",
    wrong=(Wrong("d_minus_1", 20 / 3, "That is / (D - 1)."), Wrong("no_eps", 5.5)),
)


def test_live_question_carries_every_option_with_its_group_and_feedback():
    live = live_question(QUESTION, "step_through")
    assert (live.qid, live.page, live.prompt) == (QUESTION.qid, "step_through", QUESTION.prompt)
    assert tuple(o.text for o in live.options) == options(QUESTION)  # the same order for all
    for option in live.options:
        d = diagnose(QUESTION, option.text)
        assert (option.group, option.feedback) == (d.group, d.message)
    assert right_options(live) == ("5",)
    assert live.groups == (RIGHT, "d_minus_1", "no_eps")  # right first, then as listed


def test_choice_questions_keep_their_choices():
    q = Question("which", "Which?", "b", "Because.", ("a", "b", "c"))
    live = live_question(q, "padding")
    assert [o.text for o in live.options] == ["a", "b", "c"]
    assert right_options(live) == ("b",)
    assert live.groups == (RIGHT, OTHER)


def test_the_answers_chart_names_groups_by_misconception_and_shows_zeros():
    fig = validated(tally_bars((RIGHT, "d_minus_1", OTHER), {RIGHT: 2, OTHER: 1}))
    (bars,) = fig.data
    assert list(bars.y) == ["Right", MISCONCEPTIONS["d_minus_1"].name, group_name(OTHER)]
    assert list(bars.x) == [2, 0, 1] and list(bars.text) == ["2", "0", "1"]
    assert list(bars.marker.color) == [RIGHT_COLOUR, WRONG_COLOUR, WRONG_COLOUR]


def test_the_counts_download():
    files = class_exports("ABCDEFGHJ", "question,prompt,group,count\n")
    (download,) = files.downloads
    assert download.file_name == "lnlab-class-ABCDEFGHJ.csv" and download.mime == "text/csv"
    assert download.data == "question,prompt,group,count\n"


def test_the_tally_in_words_follows_the_bars():
    from lnlab.classroom.plots import tally_summary
    from lnlab.teach.quiz import OTHER, RIGHT

    text = tally_summary([RIGHT, "d_minus_1", OTHER], {RIGHT: 2, "d_minus_1": 1})
    assert text == "Right 2, Dividing by D − 1 1, Something else 0."
