"""Issue 36's examples on the step-through, each reproduced: the words around the numbers were
false on small, huge or constant tokens. Values worked out by hand: x = (0.01, 0.02, 0.03, 0.04)
has mean 0.025 and variance (0.015² + 0.005² + 0.005² + 0.015²) / 4 = 0.000125, σ = 0.01118."""

from __future__ import annotations

import numpy as np

from lnlab.labs.step_through.lesson import slides
from lnlab.labs.step_through.token import token_lesson, token_summary
from lnlab.teach.lesson import Lesson, Section


def _lesson(x: list[float], eps: float = 1e-5) -> Lesson:
    row = np.array([x])
    d = row.shape[1]
    return slides(token_lesson(row, ["t1"], 0, eps, np.ones(d), np.zeros(d)))


def _section(lesson: Lesson, key: str) -> Section:
    return lesson.sections[lesson.index(key)]


def _notes(section: Section) -> str:
    q = section.question
    assert q is not None
    return " ".join((q.explanation, *(w.note for w in q.wrong)))


def test_small_numbers_keep_their_digits():
    lesson = _lesson([0.01, 0.02, 0.03, 0.04])
    assert "from the mean 0.025: 0.000125." in _notes(_section(lesson, "var"))
    assert "σ_ε = √0.000125 = 0.01118" in _notes(_section(lesson, "x_hat"))


def test_no_nonzero_variance_prints_as_0():
    notes = _notes(_section(_lesson([1e-6, 2e-6, 3e-6, 4e-6]), "var"))
    assert "from the mean 2.5e-06: 1.25e-12." in notes
    assert ": 0." not in notes


def test_a_std_under_1_never_reads_1():
    """σ² = 1.25e8, ε = 1e-5: √(σ² / (σ² + ε)) = 1 − 4e-14, which 4 decimals print as 1."""
    finding = _section(_lesson([1e4, 2e4, 3e4, 4e4]), "check").finding
    assert "= 1 − 4e-14, under 1" in finding and "= 1," not in finding


def test_torch_std_is_bigger_only_where_it_is():
    constant = _section(_lesson([3.0, 3.0, 3.0, 3.0]), "check").finding
    assert "bigger" not in constant and "here it prints 0, as Layer Norm's 0" in constant
    one = _section(_lesson([5.0]), "check").finding
    assert "bigger" not in one and "with $D = 1$ that is 0 / 0, NaN" in one
    assert (
        "so it prints a bigger number" in _section(_lesson([2.0, 4.0, 6.0, 8.0]), "check").finding
    )


def test_forgetting_epsilon_says_what_it_divides_by():
    """The old note said "divided by a hair more than σ": at 1e-6 scale σ_ε is 2,829 σ."""
    tiny = _notes(_section(_lesson([1e-6, 2e-6, 3e-6, 4e-6]), "check"))
    assert "hair" not in tiny and "divided by σ_ε = 0.003162, not by σ = 1.118e-06" in tiny
    constant = _notes(_section(_lesson([3.0, 3.0, 3.0, 3.0]), "check"))
    assert "this token is constant, so x̂ is all 0" in constant


def test_dx_dot_x_hat_is_0_where_the_projection_is():
    """A constant token with ε > 0 has x̂ = 0, so ε Σ dx̂ x̂ / σ_ε³ = 0 even with ε."""
    finding = _section(_lesson([3.0, 3.0, 3.0, 3.0]), "dx_sums").finding
    assert "small but not 0" not in finding and "Here Σ dx̂ x̂ = 0, so it is 0" in finding


def test_autograd_says_the_differences_it_measured():
    """At 1e8 + x float32 is off by hundreds, not "about 1e-7"."""
    text = _section(_lesson([1e8 + 1, 1e8 + 2, 1e8 + 3, 1e8 + 4]), "autograd").explanation
    assert "about 1e-7" not in text and " in float32" in text


def test_the_normalized_figure_does_not_promise_std_about_1():
    summary = _section(_lesson([1e-6, 2e-6, 3e-6, 4e-6]), "prompt_normalized").figure.summary
    assert "about 1" not in summary


def test_a_token_that_is_not_constant_does_not_look_constant():
    row = np.array([[1e8 + 1, 1e8 + 2, 1e8 + 3, 1e8 + 4]])
    lesson = token_lesson(row, ["t1"], 0, 1e-5, np.ones(4), np.zeros(4))
    assert "x = (100000001, 100000002, 100000003, 100000004)" in token_summary(lesson)
