"""Sentences that check themselves: a sentence about the example's numbers names the condition
that makes it true.

A lesson writes such a sentence as `claim(key, holds, text, otherwise)`: `text` where the
condition `holds` on the numbers on screen, else `otherwise` (other words, or nothing). Every
call is noted while `recording()` is open, so the corpus test (tests/claims) can build every
lesson on hard inputs (tiny and huge scales, constant tokens, D = 1, ε = 0, β ≠ 0, float16)
and check each condition against its own computation, from the input, in float64. A key the
test has no check for fails it: a sentence added later cannot skip its check.

Words that are the same on every input (the explanation of a step) need no claim; a test
also fails when such words change with the input outside a claim. That test finds a claim in
the lesson's text by its words, so a claim is a whole phrase, never a lone word ("x").
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Said:
    """One claim as a lesson made it: its key, whether its condition held, what it said, and
    the numbers it was decided on (for a failing test's message)."""

    key: str
    holds: bool
    text: str
    facts: dict[str, object] = field(default_factory=dict)


_heard: ContextVar[list[Said] | None] = ContextVar("lnlab_claims", default=None)


def claim(key: str, holds: bool, text: str, otherwise: str = "", **facts: object) -> str:
    """`text` if `holds` else `otherwise`; noted under `key` while recording."""
    said = text if holds else otherwise
    heard = _heard.get()
    if heard is not None:
        heard.append(Said(key, bool(holds), said, facts))
    return said


@contextmanager
def recording() -> Iterator[list[Said]]:
    """Note every claim made inside the block, in order."""
    heard: list[Said] = []
    token = _heard.set(heard)
    try:
        yield heard
    finally:
        _heard.reset(token)
