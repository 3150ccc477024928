"""A lesson's question as a live class asks it, and the class's answer counts as a download.

`live_question` turns a lnlab.teach.quiz Question into the store's LiveQuestion: its options in
quiz.options' order (every student sees the same), each with its group (the right answer, a
misconception's key, or "other") and the feedback quiz.diagnose gives a student who picks it,
and its data: the lesson's line above every slide (lnlab.teach.lesson.Lesson.context, the
example the question is about) as plain text, `question_data`.
"""

from __future__ import annotations

import re

from lnlab.classroom.live import MAX_DATA, LiveOption, LiveQuestion
from lnlab.teach.export import Download, Exports
from lnlab.teach.quiz import Question, diagnose, options

MIN_OPTIONS = 3  # issue 36: three of the four questions a class met had two options


def live_question(question: Question, page: str, context: str = "") -> LiveQuestion | None:
    """The question with its options grouped and each option's feedback written out, and
    `context` (the lesson's Markdown line of the example) as its data; None when it offers
    fewer than MIN_OPTIONS (a number to type, or too few misconceptions that differ on the
    example): with two, a class would be tossing a coin."""
    texts = options(question)
    if len(texts) < MIN_OPTIONS:
        return None
    found = []
    for text in texts:
        d = diagnose(question, text, picked=True)
        found.append(LiveOption(text, d.group, d.message))
    return LiveQuestion(
        question.qid,
        page,
        question.prompt,
        tuple(found),
        question.explanation,
        data=question_data(context),
    )


_MARKDOWN = re.compile(r"\\(.)|\*\*|__|\s+", re.S)


def question_data(context: str) -> str:
    """A lesson's Markdown line of the example as plain text for the phones: escapes read
    (lnlab.teach.markdown.plain writes them), bold marks dropped, white space one space, and
    at most MAX_DATA characters (a longer line ends in "…")."""

    def read(found: re.Match[str]) -> str:
        if found.group(1) is not None:
            return found.group(1)
        return " " if found.group(0).isspace() else ""

    text = _MARKDOWN.sub(read, context).strip().replace("\x00", "")
    return text if len(text) <= MAX_DATA else text[: MAX_DATA - 1].rstrip() + "…"


def right_options(question: LiveQuestion) -> tuple[str, ...]:
    """The texts of the options that are right (one, for every lesson's questions)."""
    return tuple(o.text for o in question.options if o.correct)


def class_exports(code: str, counts_csv: str) -> Exports:
    """The class's answer counts as CSV (a small query: made with the page)."""
    return Exports(
        (
            Download(
                "Answer counts (CSV)",
                counts_csv,
                f"lnlab-class-{code}.csv",
                "text/csv",
                "live_counts_csv",
                "table_view",
            ),
        ),
        "One row per question and option: how many students chose it, and the group it "
        "counts toward (right, a misconception). No names: the class's report, after End, "
        "has each student's answers.",
    )
