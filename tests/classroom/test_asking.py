"""A lesson's question as a live class asks it, the answers chart, and the CSV download."""

from __future__ import annotations

from helpers import validated

from lnlab.classroom.asking import class_exports, live_question, right_options
from lnlab.classroom.live import LiveOption, LiveQuestion
from lnlab.classroom.plots import RIGHT_COLOUR, WRONG_COLOUR, option_bars, option_summary
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
        d = diagnose(QUESTION, option.text, picked=True)
        assert (option.group, option.feedback) == (d.group, d.message)
    assert right_options(live) == ("5",)
    assert live.groups == (RIGHT, "d_minus_1", "no_eps")  # right first, then as listed


def test_choice_questions_keep_their_choices():
    q = Question("which", "Which?", "b", "Because.", ("a", "b", "c"))
    live = live_question(q, "padding")
    assert [o.text for o in live.options] == ["a", "b", "c"]
    assert right_options(live) == ("b",)
    assert live.groups == (RIGHT, OTHER)


def test_the_answers_chart_has_a_bar_per_option_named_by_number_text_and_group():
    """Two options of one misconception stay two bars (issue 37: "Both" and "Layer Norm's
    mean of a real token" became one), each named by its number, its text and its group."""
    live = LiveQuestion(
        "pad",
        "padding",
        "Which statistics does padding change?",
        (
            LiveOption("Batch Norm's", RIGHT),
            LiveOption("Both", "pad_as_tokens"),
            LiveOption("Layer Norm's mean of a real token <x>", "pad_as_tokens"),
            LiveOption("Neither", OTHER),
        ),
    )
    fig = validated(option_bars(live, {"Batch Norm's": 2, "Both": 1, "Neither": 1}))
    (bars,) = fig.data
    group = MISCONCEPTIONS["pad_as_tokens"].name
    assert [y.split("<br>")[0] for y in bars.y] == [
        "1. Batch Norm's",
        "2. Both",
        "3. Layer Norm's mean of a real token &lt;x&gt;",  # Plotly reads tags in labels
        "4. Neither",
    ]
    assert group in bars.y[1] and group in bars.y[2]
    assert "Right" in bars.y[0] and group_name(OTHER) in bars.y[3]
    assert list(bars.x) == [2, 1, 0, 1] and list(bars.text) == ["2", "1", "0", "1"]
    assert list(bars.marker.color) == [RIGHT_COLOUR, WRONG_COLOUR, WRONG_COLOUR, WRONG_COLOUR]
    assert option_summary(live, {"Both": 1}).startswith(
        f"1. Batch Norm's (Right) 0, 2. Both ({group}) 1"
    )


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
