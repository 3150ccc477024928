"""Every sentence about numbers, checked on hard inputs (issue 36).

Each lab's module here (tests/claims/<lab>.py) gives its cases (tests/claims/corpus.py and its
own), builds its lessons on each, and checks each claim (lnlab.teach.claims) with its own
computation from the input: CHECKS[key](case, said) is whether the sentence's condition is
true, computed here in float64 without the lesson's code. Three things fail:

* a claim whose condition the lesson got wrong (it said "bigger" where it is not);
* a claim with no check here (a sentence added later without one);
* words outside claims that change with the input once numbers are masked (a sentence that
  depends on the input without being a claim).
"""

from __future__ import annotations

import functools
from collections import defaultdict

import numpy as np
import pytest

from claims import conventions, gpu, padding, step_through, training, transformer
from claims.prose import fields, masked
from lnlab.teach.claims import Said, recording
from lnlab.teach.lesson import Lesson

LABS = {
    m.__name__.rsplit(".", 1)[-1]: m
    for m in (step_through, padding, conventions, gpu, transformer, training)
}
# Claims made by the shared teaching code (lnlab.teach), for every lab: checked on the values
# the sentence is about, which it carries as a fact.
COMMON: dict[str, object] = {
    "figures.some_nan": lambda case, said: bool(np.isnan(said.facts["values"]).any()),
}
PAIRS = [(lab, case) for lab, m in LABS.items() for case in m.cases()]


@functools.cache
def _built(lab: str, case: object) -> tuple[list[Lesson], list[Said]]:
    with recording() as heard:
        lessons = list(LABS[lab].lessons(case))
    return lessons, heard


def problems(lab: str, case: object, heard: list[Said]) -> list[str]:
    """What is wrong with the claims `heard` on `case`: unknown keys, wrong conditions."""
    checks = {**COMMON, **LABS[lab].CHECKS}
    found = []
    for said in heard:
        check = checks.get(said.key)
        if check is None:
            found.append(f"{said.key}: no check for this claim ({said.text!r})")
            continue
        try:
            truth = check(case, said)
        except AssertionError as wrong:  # the words themselves: "= 1, under 1"
            found.append(f"{said.key} on {case!r}: {wrong}")
            continue
        if truth != said.holds:
            found.append(
                f"{said.key} on {case!r}: the lesson decided {said.holds}, the check {truth}; "
                f"it said {said.text!r} (facts {said.facts})"
            )
    return found


@pytest.mark.parametrize(("lab", "case"), PAIRS, ids=[f"{lab}-{case!r}" for lab, case in PAIRS])
def test_every_claim_is_true_of_its_numbers(lab: str, case: object) -> None:
    _, heard = _built(lab, case)
    found = problems(lab, case, heard)
    assert not found, "\n".join(found)


@pytest.mark.parametrize("lab", LABS)
def test_words_outside_claims_are_the_same_on_every_input(lab: str) -> None:
    """Masked of their numbers and claims, a lesson's words are one text per place."""
    seen: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for case in LABS[lab].cases():
        lessons, heard = _built(lab, case)
        said = [s.text for s in heard]
        for lesson in lessons:
            for where, text in fields(lesson):
                seen[lesson.key, where].setdefault(masked(text, said), repr(case))
    varying = [
        f"{key}.{where}: " + " / ".join(f"[{c}] {t!r}" for t, c in texts.items())
        for (key, where), texts in seen.items()
        if len(texts) > 1
    ]
    assert not varying, "\n".join(varying)


def test_a_false_claim_fails() -> None:
    """A claim whose condition is flipped, or one nobody checks, is reported."""
    case = step_through.cases()[0]
    _, heard = _built("step_through", case)
    assert heard, "the step-through lesson makes claims"
    flipped = [Said(s.key, not s.holds, s.text, s.facts) for s in heard]
    assert len(problems("step_through", case, flipped)) == len(heard)
    assert problems("step_through", case, [Said("new.sentence", True, "It is big.")])
