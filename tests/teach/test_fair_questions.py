"""Every question of every lesson, on every preset and on random inputs from 1e-200 to 1e200:
nothing before its answer gives it away, and the grader tells every offered mistake from the
answer (tests/fairness.py says what counts). The training lab's questions are checked on
seeds 0-19 in tests/labs/training/test_claims.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from fairness import give_aways, indistinct, unfair

from lnlab.core.numbers import DEFAULT_EPS
from lnlab.labs.conventions.checker import check_claims
from lnlab.labs.conventions.compare import compare_axes, compare_conventions
from lnlab.labs.conventions.lesson import slides as conventions_slides
from lnlab.labs.gpu.lesson import slides as gpu_slides
from lnlab.labs.gpu.parity import parity
from lnlab.labs.padding import batch as pad
from lnlab.labs.padding.lesson import View
from lnlab.labs.padding.lesson import slides as padding_slides
from lnlab.labs.step_through.lesson import slides as token_slides
from lnlab.labs.step_through.token import token_lesson
from lnlab.labs.transformer import model as tf
from lnlab.labs.transformer.lesson import slides as transformer_slides
from lnlab.teach.lesson import Lesson, Section
from lnlab.teach.presets import BATCH_PRESETS, TOKEN_PRESETS
from lnlab.teach.quiz import Question, Wrong

SCALES = (1e-200, 1e-6, 1e-3, 1.0, 1e3, 1e200)


def _random_tokens() -> list[tuple[str, np.ndarray]]:
    """Random tokens at every scale and of many shapes, with the hard cases: a constant
    token, one feature, two features, 16 features, and a large mean over a small spread."""
    rng = np.random.default_rng(21)
    cases = []
    for scale in SCALES:
        for shape in ((3, 4), (2, 2), (1, 16)):
            cases.append((f"{scale:g}x{shape}", scale * rng.standard_normal(shape)))
    cases.append(("constant", np.array([[3.0, 3.0, 3.0, 3.0], [1.0, 2.0, 4.0, 8.0]])))
    cases.append(("one feature", np.array([[3.0], [5.0], [-1.0]])))
    cases.append(("offset", 1e4 + rng.standard_normal((2, 4))))
    return cases


TOKENS = [(p.key, p.x) for p in TOKEN_PRESETS] + _random_tokens()
SETTINGS = ((DEFAULT_EPS, 1.0, 0.0), (0.0, 2.0, 0.5), (1e-3, 1.0, 1.0))


def _assert_fair(lesson: Lesson) -> None:
    problems = unfair(lesson)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("name", "x"), TOKENS, ids=[n for n, _ in TOKENS])
def test_step_through_questions_are_fair(name: str, x: np.ndarray) -> None:
    """Every token of the example, three settings of ε, γ and β: the steps, the check and the
    backward pass."""
    labels = [f"t{i}" for i in range(1, x.shape[0] + 1)]
    d = x.shape[1]
    for eps, gamma, beta in SETTINGS:
        for token in range(x.shape[0]):
            lesson = token_lesson(x, labels, token, eps, np.full(d, gamma), np.full(d, beta))
            _assert_fair(token_slides(lesson))


@pytest.mark.parametrize(("name", "x"), TOKENS, ids=[n for n, _ in TOKENS])
def test_conventions_questions_are_fair(name: str, x: np.ndarray) -> None:
    comparison = compare_conventions(x)
    axes = compare_axes(np.array([[0.2, 0.1, 0.3], [0.5, 0.1, 0.1]]))
    check = check_claims("2, 4, 6, 8", mean_text="5")
    for token in range(x.shape[0]):
        _assert_fair(conventions_slides(comparison, token, axes, check))


@pytest.mark.parametrize(("name", "x"), TOKENS, ids=[n for n, _ in TOKENS])
def test_gpu_questions_are_fair(name: str, x: np.ndarray) -> None:
    if np.abs(x).max() > 1e30:  # float32 holds at most 3.4e38: the page refuses more
        pytest.skip("beyond float32")
    labels = [f"t{i}" for i in range(1, x.shape[0] + 1)]
    for token in range(x.shape[0]):
        result = parity(x, "cpu", "float32", row=token)
        _assert_fair(gpu_slides(result, labels, token, "CPU", (1, 4, 8), None))


def _padding_labs() -> list[tuple[str, pad.PaddingLab]]:
    """Each preset with two settings, random embeddings at three scales, and sentences of
    one length (no PAD row)."""
    rng = np.random.default_rng(21)
    labs = []
    for preset in BATCH_PRESETS:
        sentences = tuple(pad.parse_sentence(s) for s in preset.sentences)
        for eps, beta in ((DEFAULT_EPS, 0.0), (0.0, 2.0)):
            labs.append(
                (
                    f"{preset.key} eps={eps} beta={beta}",
                    pad.padding_lab(sentences, preset.key, eps=eps, beta=beta),
                )
            )
        words = pad.vocabulary(sentences)
        for scale in (1e-3, 1.0, 1e3):
            overrides = tuple((w, tuple(scale * rng.standard_normal(pad.DIM))) for w in words)
            labs.append(
                (
                    f"{preset.key} random x{scale:g}",
                    pad.padding_lab(sentences, preset.key, overrides),
                )
            )
    even = tuple(pad.parse_sentence(s) for s in ("Hi Nitish", "How are"))
    labs.append(("no padding", pad.padding_lab(even, BATCH_PRESETS[0].key)))
    return labs


PADDING = _padding_labs()


@pytest.mark.parametrize(("name", "lab"), PADDING, ids=[n for n, _ in PADDING])
def test_padding_questions_are_fair(name: str, lab: pad.PaddingLab) -> None:
    _assert_fair(padding_slides(lab, View()))


@pytest.mark.parametrize("position", [tf.POST_NORM, tf.PRE_NORM])
def test_transformer_questions_are_fair(position: str) -> None:
    _assert_fair(transformer_slides(tf.transformer_lesson(position, 12, 6)))


# ---------------------------------------------------------------- the checks catch what they should


def test_a_give_away_is_caught() -> None:
    """Each kind of give-away the issue found, on a made-up slide: a formula before the
    answer, the answer's value, the rule against an offered mistake, a rule in the stem."""
    q = Question(
        "t-1",
        "What is its variance (divide by D)?",
        5.0,
        "",
        wrong=(Wrong("d_minus_1", 20 / 3),),
    )
    assert any("the rule against d_minus_1" in p for p in give_aways(Section("s", "S", question=q)))
    assert give_aways(Section("s", "S", formulas=(r"\sigma^2",), question=q))
    sums = Question("t-2", "What is the sum of dx?", 0.0, "")
    assert give_aways(Section("s", "Why dx sums to 0", question=sums))
    std = Question("t-3", "What is σ_ε?", 2.2360702, "", wrong=(Wrong("no_eps", 2.236068),))
    assert give_aways(Section("s", "S", explanation="σ_ε = 2.23607 here.", question=std))
    padding = Question("t-4", "?", 1.0, "", wrong=(Wrong("bn_ignores_padding", 0.5),))
    shown = Section("s", "S", explanation="The zeros pull the mean towards 0.", question=padding)
    assert give_aways(shown)


def test_an_indistinct_option_is_caught() -> None:
    """A Question drops what its grader cannot tell apart, so only a question whose options
    are marked wrongly can fail: here, one built around the check."""
    q = Question("t-5", "?", 1.0, "", wrong=(Wrong("no_eps", 1.5),))
    assert not indistinct(q)
    object.__setattr__(q, "unit", 1.0)  # as a grader at whole numbers would: 1 and 1.5 merge
    assert indistinct(q)
