"""What a class's devices read of its board (lnlab.classroom.store.Board), as the pulse route
sends it: the pulse's fields, and for a phone that draws the question itself (issue 39) the
question asked now.

A phone gets the question's prompt, data and option texts as soon as it is asked; which option
is right, each option's feedback and the explanation only once the teacher has revealed it, so
that reading the route's answer gives nothing away before the projector does. Texts go as
typed: the page puts them in the page as text, never as HTML.

`stamp` is what a device waiting for a change sends back: the watched fields' values as JSON,
as the page's JavaScript writes them (JSON.stringify of the values in the fields' order), so
that the server can tell "nothing new" without knowing what the page drew.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, fields
from typing import Any

from lnlab.classroom.store import Board, Posed, Pulse

FIELDS = tuple(f.name for f in fields(Pulse))  # what a device may watch


def stamp(pulse: Mapping[str, Any], watch: Sequence[str]) -> str:
    """The watched fields' values, as the page writes them: `JSON.stringify([v1, v2, ...])`."""
    return json.dumps(
        [pulse.get(name) for name in watch], separators=(",", ":"), ensure_ascii=False
    )


def phone_question(posed: Posed) -> dict[str, Any]:
    """The question as a phone draws it: before the reveal, the prompt, the data and the
    options' texts; after it, also the places of the right options, each option's feedback
    and the explanation."""
    live = posed.question
    shown: dict[str, Any] = {
        "qid": live.qid,
        "prompt": live.prompt,
        "data": live.data,
        "options": [option.text for option in live.options],
        "revealed": posed.revealed,
    }
    if posed.revealed:
        shown["right"] = [k for k, option in enumerate(live.options) if option.correct]
        shown["feedback"] = [option.feedback for option in live.options]
        shown["explanation"] = live.explanation
    return shown


def body(board: Board, *, question: bool) -> bytes:
    """The JSON a device reads: the pulse's fields, and with `question` the phone's question
    ("question": null before the first and once the class has closed)."""
    sent: dict[str, Any] = asdict(board.pulse)
    if question:
        sent["question"] = phone_question(board.posed) if board.posed else None
    return json.dumps(sent, separators=(",", ":"), ensure_ascii=False).encode()
