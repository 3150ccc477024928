"""A lesson's question as a live class asks it, and the class's answer counts as a download.

`live_question` turns a lnlab.teach.quiz Question into the store's LiveQuestion: its options in
quiz.options' order (every student sees the same), each with its group (the right answer, a
misconception's key, or "other") and the feedback quiz.diagnose gives a student who picks it.
"""

from __future__ import annotations

from lnlab.classroom.live import LiveOption, LiveQuestion
from lnlab.teach.export import Download, Exports
from lnlab.teach.quiz import Question, diagnose, options


def live_question(question: Question, page: str) -> LiveQuestion | None:
    """The question with its options grouped and each option's feedback written out; None
    when it offers fewer than two options (a number to type, no misconception fits the
    example), which a class cannot answer by tapping."""
    texts = options(question)
    if len(texts) < 2:
        return None
    found = []
    for text in texts:
        d = diagnose(question, text)
        found.append(LiveOption(text, d.group, d.message))
    return LiveQuestion(question.qid, page, question.prompt, tuple(found), question.explanation)


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
        "One row per question and answer group: how many students chose it. No names: a "
        "student is an anonymous id, and nicknames stay out of the file.",
    )
