"""A class's report: what a teacher keeps and grades from once the class has ended.

When a class ends (its teacher's End, or it closes by itself), the class store
(lnlab.classroom.store) copies what the report needs into tables of its own: the questions
asked, in order; the students as their nicknames, in the order they joined; and each
student's answer to each question. Nothing else about a student: no id, browser, network
address or time. From those, a `Report` gives per question the spread over the options and
over the groups (right, each misconception, something else), the share right and who did not
answer; per student their answers and score (right answers out of the questions asked); the
whole class's scores; and all of it as CSV (one row per student and question) and JSON.

The store keeps a report for REPORT_DAYS days after the class ended, then deletes it itself;
set LNLAB_REPORT_DAYS to another number of days (a fraction is fine: 0.01 is under 15
minutes). A teacher can delete a report before.

A student's `Final` is their own part of it, for their phone's end screen: every question of
the class with their answer.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from lnlab.classroom.asking import right_options
from lnlab.classroom.live import LiveOption, LiveQuestion
from lnlab.classroom.nicknames import shown_apart
from lnlab.core.errors import InputError
from lnlab.teach.quiz import RIGHT, group_name

REPORT_DAYS_ENV = "LNLAB_REPORT_DAYS"
REPORT_DAYS = 30.0
MAX_REPORT_DAYS = 3660.0  # ten years: a number beyond is a typo
# A spreadsheet runs a cell that starts with one of these as a formula: a nickname such as
# "=HYPERLINK(...)" must stay text (a number such as "-0.5" stays a number).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
CSV_COLUMNS = (
    "class",
    "student",
    "score",
    "questions",
    "question",
    "qid",
    "prompt",
    "answer",
    "option",
    "group",
    "group_name",
    "right",
)


def keep_days(environ: Mapping[str, str] = os.environ) -> float:
    """How many days reports are kept: $LNLAB_REPORT_DAYS, else REPORT_DAYS."""
    text = environ.get(REPORT_DAYS_ENV, "").strip()
    if not text:
        return REPORT_DAYS
    try:
        days = float(text)
    except ValueError:
        days = math.nan
    if not 0 < days <= MAX_REPORT_DAYS:  # NaN fails too
        raise InputError(
            f"{REPORT_DAYS_ENV} is {text!r}: it must be a number of days over 0 and at most "
            f"{MAX_REPORT_DAYS:.0f}, like 30"
        )
    return days


def chosen(question: LiveQuestion, option: str | None) -> LiveOption | None:
    """The option a student chose (None: no answer)."""
    return question.option(option) if option is not None else None


def right_text(question: LiveQuestion) -> str:
    """The right option(s), as the report and the phone say them."""
    return ", ".join(right_options(question))


@dataclass(frozen=True)
class Final:
    """A student's own answers once their class has ended: every question asked, in order,
    and the option they chose for each (a question missing from `mine`: no answer)."""

    questions: tuple[LiveQuestion, ...]
    mine: Mapping[str, str]

    @property
    def right(self) -> int:
        return sum(
            bool((c := chosen(q, self.mine.get(q.qid))) and c.correct) for q in self.questions
        )


@dataclass(frozen=True)
class PastClass:
    """A line of a teacher's past classes: its report's code, times and size."""

    code: str
    opened_at: float
    ended_at: float
    kept_until: float
    students: int
    questions: int


@dataclass(frozen=True)
class Spread:
    """One question's answers: students per option text and per group (every option and
    group of the question, 0 where nobody chose it), how many answered and how many were
    right, and who did not answer (their names)."""

    by_option: dict[str, int]
    by_group: dict[str, int]
    answered: int
    right: int
    missing: tuple[str, ...]

    @property
    def percent_right(self) -> float | None:
        """The share of the answers that were right, in %; None when nobody answered."""
        return 100 * self.right / self.answered if self.answered else None


@dataclass(frozen=True)
class Report:
    """A class's report (see the module's docstring). `nicknames` are in the order the
    students joined ("" for none); a student is their place in it, and `answers` maps
    (place, qid) to the option chosen."""

    code: str
    opened_at: float
    ended_at: float
    kept_until: float
    questions: tuple[LiveQuestion, ...]
    nicknames: tuple[str, ...]
    answers: Mapping[tuple[int, str], str]

    @functools.cached_property
    def names(self) -> tuple[str, ...]:
        """Each student's name in the report: their nickname, or "Anonymous k" for the k-th
        without one; names a teacher could not tell apart numbered apart."""
        labels, anonymous = [], 0
        for nickname in self.nicknames:
            if not nickname:
                anonymous += 1
            labels.append(nickname or f"Anonymous {anonymous}")
        return tuple(shown_apart(labels))

    def choice(self, student: int, question: LiveQuestion) -> LiveOption | None:
        """The option `student` chose for `question` (None: no answer)."""
        return chosen(question, self.answers.get((student, question.qid)))

    def score(self, student: int) -> int:
        """How many of the questions asked `student` answered right."""
        return sum(bool((c := self.choice(student, q)) and c.correct) for q in self.questions)

    def spread(self, question: LiveQuestion) -> Spread:
        by_option = dict.fromkeys((o.text for o in question.options), 0)
        by_group = dict.fromkeys(question.groups, 0)
        missing = []
        for student, name in enumerate(self.names):
            option = self.choice(student, question)
            if option is None:
                missing.append(name)
                continue
            by_option[option.text] += 1
            by_group[option.group] += 1
        answered = len(self.names) - len(missing)
        return Spread(by_option, by_group, answered, by_group.get(RIGHT, 0), tuple(missing))

    def scores(self) -> dict[int, int]:
        """How many students got each score, from all questions right down to none."""
        counts = dict.fromkeys(range(len(self.questions), -1, -1), 0)
        for student in range(len(self.names)):
            counts[self.score(student)] += 1
        return counts

    def mean_score(self) -> float | None:
        """The class's mean score (None: nobody joined)."""
        if not self.names:
            return None
        return sum(self.score(s) for s in range(len(self.names))) / len(self.names)

    def to_csv(self) -> str:
        """One row per student and question (CSV_COLUMNS): the student's score beside each of
        their answers, the option's number as the phones showed it, its group and whether it
        was right (a question not answered: an empty answer, right 0)."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for student, name in enumerate(self.names):
            score = self.score(student)
            for k, question in enumerate(self.questions, 1):
                option = self.choice(student, question)
                number = question.options.index(option) + 1 if option else ""
                row = [
                    self.code,
                    name,
                    score,
                    len(self.questions),
                    k,
                    question.qid,
                    question.prompt,
                ]
                row += (
                    [option.text, number, option.group, group_name(option.group)]
                    if option
                    else ["", "", "", ""]
                )
                row.append(int(bool(option and option.correct)))
                writer.writerow([_cell(v) for v in row])
        return out.getvalue()

    def to_json(self) -> str:
        """The whole report: the class, each question with its spread, each student with
        their answers and score, and the class's scores."""
        questions = []
        for k, question in enumerate(self.questions, 1):
            spread = self.spread(question)
            questions.append(
                {
                    "number": k,
                    "qid": question.qid,
                    "page": question.page,
                    "prompt": question.prompt,
                    "answer": right_text(question),
                    "options": [
                        {
                            "number": n,
                            "text": o.text,
                            "group": o.group,
                            "group_name": group_name(o.group),
                            "right": o.correct,
                            "students": spread.by_option[o.text],
                        }
                        for n, o in enumerate(question.options, 1)
                    ],
                    "groups": [
                        {"group": g, "name": group_name(g), "students": n}
                        for g, n in spread.by_group.items()
                    ],
                    "answered": spread.answered,
                    "right": spread.right,
                    "percent_right": spread.percent_right,
                    "not_answered": list(spread.missing),
                }
            )
        students = []
        for student, name in enumerate(self.names):
            answers = []
            for k, question in enumerate(self.questions, 1):
                option = self.choice(student, question)
                answers.append(
                    {
                        "question": k,
                        "qid": question.qid,
                        "answer": option.text if option else None,
                        "group": option.group if option else None,
                        "right": bool(option and option.correct),
                    }
                )
            students.append({"name": name, "score": self.score(student), "answers": answers})
        report = {
            "class": self.code,
            "opened": _iso(self.opened_at),
            "ended": _iso(self.ended_at),
            "kept_until": _iso(self.kept_until),
            "questions": questions,
            "students": students,
            "scores": {
                "questions": len(self.questions),
                "students": len(self.names),
                "mean": self.mean_score(),
                "distribution": [{"score": s, "students": n} for s, n in self.scores().items()],
            },
        }
        return json.dumps(report, ensure_ascii=False, indent=1)


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _cell(value: object) -> object:
    """A CSV cell a spreadsheet reads as text or a number, never runs as a formula."""
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS):
        return value
    try:
        float(value)
    except ValueError:
        return "'" + value
    return value
