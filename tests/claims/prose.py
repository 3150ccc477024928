"""The words of a lesson, field by field, and the same words with their numbers masked.

A lesson's words are its intro and context line, and per section: the explanation, finding,
callouts, detail, table captions, metric help, the figure's caption and summary, and its
question's stem, explanation, choices and the notes of the mistakes it offers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from lnlab.teach.lesson import Lesson, Table

NUMBER = re.compile(  # Markdown may escape the sign and the point: "\\-0\\.01"
    r"(?:\\?[-−+])?(?:\d+(?:\\?[.,]\d+)*|\\?\.\d+)(?:e\\?[+-]?\d+)?|NaN|nan|−?∞|-?inf"
)
LIST = re.compile(r"#(?:,\s*(?:#|…))+")  # a list of numbers, however long


def fields(lesson: Lesson) -> Iterator[tuple[str, str]]:
    """(where, words) for every piece of prose in `lesson`: where is "section.field"."""
    yield "intro", lesson.intro
    yield "context", lesson.context
    for s in lesson.sections:
        yield f"{s.key}.explanation", s.explanation
        yield f"{s.key}.finding", s.finding
        yield f"{s.key}.detail", s.detail
        for i, c in enumerate(s.callouts):
            yield f"{s.key}.callout{i}", c.text
        for i, n in enumerate(s.numbers):
            yield f"{s.key}.numbers{i}", n.caption if isinstance(n, Table) else n.help
        if s.figure is not None:
            yield f"{s.key}.figure.caption", s.figure.caption
            yield f"{s.key}.figure.summary", s.figure.summary
        q = s.question
        if q is not None:
            yield f"{s.key}.question.prompt", q.prompt
            yield f"{s.key}.question.explanation", q.explanation
            yield f"{s.key}.question.choices", " | ".join(q.choices)
            for w in q.wrong:
                yield f"{s.key}.question.{w.misconception}", w.note


LATEX = re.compile(r"\$[^$]+\$")
WORD = re.compile(r"[^\W\d_]+|#")


def masked(text: str, said: list[str]) -> str:
    """The words of `text` without the claims `said` in it, every number as "#" and every
    list of numbers as one: what must not change with the input."""
    for s in sorted((s for s in said if s), key=len, reverse=True):
        text = text.replace(s, " ")
    text = LATEX.sub(" $ ", text)  # a formula with the example's numbers: computed, not said
    return " ".join(WORD.findall(LIST.sub("#", NUMBER.sub("#", text))))
