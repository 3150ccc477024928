"""A question posed to a live class, and its JSON form for the class store.

Each option carries the group it stands for: "right", a misconception key, or "other". The
teacher sees how many students fell into each group; a student's group and correctness are
always read from the stored question, never from what the student's browser sends.

A question also carries its `data`: the numbers it is about, as plain text (the lesson's line
above every slide, "Token 1: t1 · x = (2, 4, 6, 8) · D = 4 · ...", lnlab.classroom.asking), so
a phone shows them with the question instead of leaving them on the projector. It lives in the
question's JSON; a question stored before it had one loads with none.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from lnlab.core.errors import InputError
from lnlab.teach.misconceptions import MISCONCEPTIONS
from lnlab.teach.quiz import OTHER, RIGHT

GROUP_ORDER = (RIGHT, *MISCONCEPTIONS, OTHER)  # the order of the teacher's bars and the CSV
MAX_OPTIONS = 12
MAX_TEXT = 2_000  # characters in a prompt, option, feedback or explanation
MAX_DATA = 600  # characters of a question's data: a few lines on a phone
MAX_KEY = 100  # characters in a qid, page or group key


def _group_rank(group: str) -> int:
    return GROUP_ORDER.index(group) if group in GROUP_ORDER else len(GROUP_ORDER)


@dataclass(frozen=True)
class LiveOption:
    """One choice: its text, the group it counts toward, and the feedback a student gets."""

    text: str
    group: str
    feedback: str = ""

    @property
    def correct(self) -> bool:
        return self.group == RIGHT


@dataclass(frozen=True)
class LiveQuestion:
    """A multiple-choice prediction; `qid` names it within a class (re-posing it keeps answers)."""

    qid: str
    page: str
    prompt: str
    options: tuple[LiveOption, ...]
    explanation: str = ""
    data: str = ""  # the numbers the question is about, as plain text ("" when it says them)

    def __post_init__(self) -> None:
        _check_text("qid", self.qid, MAX_KEY, empty=False)
        _check_text("page", self.page, MAX_KEY)
        _check_text("prompt", self.prompt, MAX_TEXT, empty=False)
        _check_text("explanation", self.explanation, MAX_TEXT)
        _check_text("data", self.data, MAX_DATA)
        if not 2 <= len(self.options) <= MAX_OPTIONS:
            raise InputError(f"a live question needs 2 to {MAX_OPTIONS} options")
        for option in self.options:
            _check_text("option", option.text, MAX_TEXT, empty=False)
            _check_text("group", option.group, MAX_KEY, empty=False)
            _check_text("feedback", option.feedback, MAX_TEXT)
        texts = [option.text for option in self.options]
        if len(set(texts)) != len(texts):
            raise InputError("the options of a live question must differ")

    def option(self, text: str) -> LiveOption | None:
        """The option whose text is `text`, or None."""
        return next((option for option in self.options if option.text == text), None)

    @property
    def groups(self) -> tuple[str, ...]:
        """The groups of the options, each once: the right answer first, then the
        misconceptions in lnlab.teach.misconceptions' order, "other" last (a group this code does
        not know, from a stored question, after them in option order)."""
        present = dict.fromkeys(option.group for option in self.options)
        return tuple(
            sorted(
                present,
                key=lambda g: GROUP_ORDER.index(g) if g in GROUP_ORDER else len(GROUP_ORDER),
            )
        )

    def to_json(self) -> str:
        return json.dumps(
            {
                "qid": self.qid,
                "page": self.page,
                "prompt": self.prompt,
                "options": [[o.text, o.group, o.feedback] for o in self.options],
                "explanation": self.explanation,
                "data": self.data,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, text: str) -> LiveQuestion:
        """The question `to_json` wrote; one stored before questions had data has none."""
        stored = json.loads(text)
        return cls(
            qid=stored["qid"],
            page=stored["page"],
            prompt=stored["prompt"],
            options=tuple(LiveOption(*option) for option in stored["options"]),
            explanation=stored["explanation"],
            data=stored.get("data", ""),
        )


def _check_text(name: str, value: object, limit: int, *, empty: bool = True) -> None:
    if not isinstance(value, str):
        raise InputError(f"the {name} of a live question must be text")
    if not empty and not value.strip():
        raise InputError(f"the {name} of a live question is empty")
    if len(value) > limit:
        raise InputError(f"the {name} of a live question is longer than {limit} characters")
    if "\x00" in value:
        raise InputError(f"the {name} of a live question contains a NUL character")
