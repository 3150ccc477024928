"""lnlab.labs.step_through.token and lnlab.labs.step_through.grid: the "Step through one token"
page's numbers, derived by hand.

For x = [2, 4, 6, 8] with eps = 1e-5: mean 5; deviations -3, -1, 1, 3; variance
(9 + 1 + 1 + 9) / 4 = 5; sigma_eps = sqrt(5.00001); x_hat = [-3, -1, 1, 3] / sqrt(5.00001).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from lnlab.core.errors import InputError
from lnlab.core.numbers import fmt
from lnlab.core.parse import default_labels, parse_labels
from lnlab.labs.step_through import export as st_export
from lnlab.labs.step_through import grid
from lnlab.labs.step_through import questions as sq
from lnlab.labs.step_through import token as ls
from lnlab.labs.step_through.lesson import normalized_caption
from lnlab.teach.presets import token_preset
from lnlab.teach.steps import STEP_COUNT

X = np.array([[2.0, 4.0, 6.0, 8.0]])
EPS = 1e-5
STD = math.sqrt(5.00001)


def lesson_of(
    x: np.ndarray = X, token: int = 0, eps: float = EPS, gamma=1.0, beta=0.0
) -> ls.TokenLesson:
    d = x.shape[1]
    labels = default_labels(x.shape[0])
    return ls.token_lesson(x, labels, token, eps, np.full(d, gamma), np.full(d, beta))


def test_the_five_steps_of_2468():
    lesson = lesson_of()
    assert lesson.mean == 5.0
    assert lesson.var == 5.0
    assert lesson.std == pytest.approx(STD, rel=1e-15)
    np.testing.assert_allclose(lesson.x_hat, np.array([-3, -1, 1, 3]) / STD, rtol=1e-14)
    np.testing.assert_allclose(lesson.y, lesson.x_hat, rtol=0)
    assert lesson.steps[0].title == "Mean"
    assert len(lesson.steps) == STEP_COUNT
    assert r"\tfrac{1}{4}\big(2 + 4 + 6 + 8\big) = 5" in lesson.steps[0].latex


def test_gamma_and_beta_scale_and_shift():
    lesson = lesson_of(gamma=2.0, beta=-1.0)
    np.testing.assert_allclose(lesson.y, 2 * np.array([-3, -1, 1, 3]) / STD - 1, rtol=1e-14)
    np.testing.assert_array_equal(lesson.gamma, [2.0] * 4)


def test_the_check_and_bessel():
    c = lesson_of().check
    assert c.features == 4
    assert abs(c.mean) < 1e-15
    # sum of x_hat^2 is 20 / 5.00001; biased divides by 4, unbiased by 3
    assert c.std == pytest.approx(math.sqrt(5 / 5.00001), rel=1e-14)
    assert c.expected_std == pytest.approx(math.sqrt(5 / 5.00001), rel=1e-15)
    assert c.std_unbiased == pytest.approx(math.sqrt(20 / 3 / 5.00001), rel=1e-14)
    assert c.bessel == pytest.approx(math.sqrt(4 / 3), rel=1e-15)
    assert c.var_input_unbiased == pytest.approx(20 / 3, rel=1e-15)
    assert c.std_unbiased != pytest.approx(c.std, rel=0.1)


def test_one_feature_has_no_unbiased_std():
    c = lesson_of(np.array([[7.0]])).check
    assert c.features == 1
    assert c.mean == 0.0 and c.std == 0.0
    assert math.isnan(c.std_unbiased) and math.isnan(c.bessel)
    assert math.isnan(c.var_input_unbiased)


def test_undo_recovers_the_token():
    first = lesson_of()
    assert first.undo_gamma == pytest.approx(STD, rel=1e-15)
    assert first.undo_beta == 5.0
    assert not first.undoes_token
    undone = lesson_of(gamma=first.undo_gamma, beta=first.undo_beta)
    assert undone.undoes_token
    np.testing.assert_allclose(undone.y, X[0], rtol=1e-14)
    assert undone.recovery_error < 1e-13


def test_undo_is_for_one_token_only():
    x = token_preset("hello").x
    first = ls.token_lesson(x, default_labels(6), 1, EPS, np.ones(4), np.zeros(4))
    d = 4
    gamma, beta = np.full(d, first.undo_gamma), np.full(d, first.undo_beta)
    undone = ls.token_lesson(x, default_labels(6), 1, EPS, gamma, beta)
    np.testing.assert_allclose(undone.trace.y[1], x[1], atol=1e-15)
    assert not np.allclose(undone.trace.y[0], x[0], atol=1e-3)


def test_the_hello_prompt_matches_numpy():
    x = token_preset("hello").x
    lesson = ls.token_lesson(x, default_labels(6), 1, EPS, np.ones(4), np.zeros(4))
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    np.testing.assert_allclose(lesson.trace.mean, mean, rtol=1e-14)
    np.testing.assert_allclose(lesson.trace.var, var, rtol=1e-12)
    expected = (x - mean) / np.sqrt(var + EPS)
    np.testing.assert_allclose(lesson.trace.x_hat, expected, rtol=1e-12, atol=1e-15)
    # token 1 is [0.0, 0.1, 0.4, -0.1]: mean 0.1, variance (0.01 + 0 + 0.09 + 0.04) / 4
    assert lesson.mean == pytest.approx(0.1, rel=1e-14)
    assert lesson.var == pytest.approx(0.035, rel=1e-12)


def test_constant_token_with_eps_zero_is_nan():
    x = np.array([[1.0, 2.0, 3.0], [3.0, 3.0, 3.0]])
    lesson = lesson_of(x, token=1, eps=0.0)
    assert lesson.undefined
    assert lesson.undefined_tokens == (1,)
    assert np.isnan(lesson.x_hat).all() and np.isnan(lesson.y).all()
    assert math.isnan(lesson.check.mean)
    assert not lesson_of(x, token=0, eps=0.0).undefined


def test_constant_token_with_eps_gives_beta():
    lesson = lesson_of(np.array([[3.0, 3.0, 3.0]]), beta=0.5)
    assert not lesson.undefined and lesson.var == 0.0
    assert lesson.std == pytest.approx(math.sqrt(EPS), rel=1e-15)
    np.testing.assert_array_equal(lesson.x_hat, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(lesson.y, [0.5, 0.5, 0.5])


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"token": 1}, "token 2 does not exist"),
        ({"eps": -1.0}, "epsilon"),
        ({"gamma": np.ones(3)}, "gamma"),
        ({"beta": np.zeros(5)}, "beta"),
        ({"labels": ["a", "b"]}, "2 labels for 1 tokens"),
    ],
)
def test_bad_inputs_raise_input_error(kwargs, fragment):
    args = {"labels": ["t1"], "token": 0, "eps": EPS, "gamma": np.ones(4), "beta": np.zeros(4)}
    args |= kwargs
    with pytest.raises(InputError, match=fragment):
        ls.token_lesson(X, **args)


def test_labels_text_is_one_label_a_line():
    labels = token_preset("hello").labels  # ("Hello", ",", " how", ...)
    text = grid.labels_text(labels)
    assert text == "Hello\n,\nhow\nare\nyou\n?"
    assert parse_labels(text, 6) == ["Hello", ",", "how", "are", "you", "?"]


def test_a_single_comma_label_keeps_its_line_break():
    assert grid.labels_text([","]) == ",\n"  # "," alone would read as two blank labels
    assert parse_labels(grid.labels_text([","]), 1) == [","]
    assert grid.labels_text(["token"]) == "token"


def test_grid_frame_and_names():
    frame = grid.grid_frame(X)
    assert list(frame.columns) == ["f1", "f2", "f3", "f4"]
    np.testing.assert_array_equal(frame.to_numpy(), X)


def test_grid_edit_changes_a_cell():
    x, labels = grid.apply_grid_edits(X, ["a"], {"edited_rows": {0: {"f2": 10}}})
    np.testing.assert_array_equal(x, [[2.0, 10.0, 6.0, 8.0]])
    assert labels == ["a"]


def test_grid_adds_and_deletes_rows():
    edits = {"added_rows": [{"f1": 1.5}], "deleted_rows": [0], "edited_rows": {}}
    x, labels = grid.apply_grid_edits(X, ["a"], edits)
    np.testing.assert_array_equal(x, [[1.5, 0.0, 0.0, 0.0]])
    assert labels == ["t2"]


@pytest.mark.parametrize(
    ("edits", "fragment"),
    [
        ({"edited_rows": {0: {"f3": None}}}, "row 1, f3 is empty"),
        ({"edited_rows": {"0": {"f1": "abc"}}}, "is not a number"),
        ({"edited_rows": {0: {"f1": float("inf")}}}, "infinite"),
        ({"deleted_rows": [0]}, "at least one token"),
        ({"added_rows": [{}] * 64}, "too many tokens"),
    ],
)
def test_bad_grid_edits(edits, fragment):
    with pytest.raises(InputError, match=fragment):
        grid.apply_grid_edits(X, ["a"], edits)


def test_prompt_tables():
    x = token_preset("notebook-2x3").x  # [0.2, 0.1, 0.3], [0.5, 0.1, 0.1]
    lesson = ls.token_lesson(x, ["p", "q"], 0, EPS, np.ones(3), np.zeros(3))
    inputs = ls.input_table(lesson)
    assert list(inputs.columns) == ["token", "f1", "f2", "f3", "mean", "σ_ε"]
    assert list(inputs["token"]) == ["p", "q"]
    np.testing.assert_allclose(inputs["mean"], [0.2, 0.7 / 3], rtol=1e-14)
    # token q: deviations 0.5 - 0.7/3 = 0.8/3 and twice -0.4/3; variance 0.96/9/3 = 0.32/9
    var_q = 0.32 / 9
    assert inputs["σ_ε"][1] == pytest.approx(math.sqrt(var_q + EPS), rel=1e-12)
    normalized = ls.normalized_table(lesson)
    np.testing.assert_allclose(normalized["mean"], [0, 0], atol=1e-15)
    assert normalized["std"][1] == pytest.approx(math.sqrt(var_q / (var_q + EPS)), rel=1e-12)
    np.testing.assert_allclose(normalized[["f1", "f2", "f3"]].to_numpy(), lesson.trace.x_hat)


@pytest.mark.parametrize(
    ("rows", "eps", "said"),
    [
        ([[2, 4, 6, 8]], EPS, "Each row's mean is 0 and its std √(σ² / (σ² + ε)) of its token, "),
        ([[2, 4, 6, 8]], 0.0, "Each row's mean is 0 and its std 1."),
        ([[3, 3, 3, 3], [1, 0, 3, 5]], EPS, "; token 1 is constant: x̂ all 0, std 0."),
        ([[3, 3, 3, 3], [1, 0, 3, 5]], 0.0, "; token 1 is constant with ε = 0: NaN."),
        ([[1e-3, 2e-3, 3e-3, 4e-3]], 1e-5, "here 0.3333."),
    ],
)
def test_the_normalized_caption_says_what_the_rows_hold(rows, eps, said):
    """ "Each row's mean is 0 and its std 1" was said of a constant token too, whose x̂ is all
    0 (std 0), and of a token whose σ² is small next to ε: σ² = 1.25e-6 with ε = 1e-5 gives
    std √(1.25e-6 / 1.125e-5) = 1/3. The caption now says what the table's rows hold."""
    lesson = lesson_of(np.array(rows, float), eps=eps)
    caption = normalized_caption(lesson)
    assert said in caption
    table = ls.normalized_table(lesson)
    defined = table["std"].notna() & (table["std"] > 0)
    if defined.any() and eps > 0:
        low, high = table["std"][defined].min(), table["std"][defined].max()
        assert f"here {fmt(low)}" in caption and (high == low or f"to {fmt(high)}" in caption)


def test_vector_and_recovery_frames():
    frame = ls.vector_frame("x̂", np.array([1.0, 2.0]))
    assert list(frame.columns) == ["vector", "f1", "f2"]
    assert list(frame.iloc[0]) == ["x̂", 1.0, 2.0]
    recovery = ls.recovery_frame(lesson_of(gamma=2.0))
    assert list(recovery["vector"]) == ["x", "y", "y − x"]
    np.testing.assert_allclose(
        recovery.iloc[1, 1:].astype(float), 2 * np.array([-3, -1, 1, 3]) / STD
    )


def test_torch_agrees_on_layer_norm_and_on_std():
    torch = pytest.importorskip("torch")
    x = token_preset("hello").x
    gamma, beta = np.linspace(0.5, 2.0, 4), np.array([0.1, -0.2, 0.0, 0.3])
    lesson = ls.token_lesson(x, default_labels(6), 2, EPS, gamma, beta)
    t = torch.tensor(x, dtype=torch.float64)
    y = torch.nn.functional.layer_norm(
        t, (4,), torch.tensor(gamma), torch.tensor(beta), eps=EPS
    ).numpy()
    np.testing.assert_allclose(lesson.trace.y, y, rtol=1e-12, atol=1e-15)
    x_hat = torch.tensor(lesson.x_hat)
    assert float(torch.std(x_hat)) == pytest.approx(lesson.check.std_unbiased, rel=1e-12)
    assert float(torch.std(x_hat, unbiased=False)) == pytest.approx(lesson.check.std, rel=1e-12)
    assert float(torch.var(t[2])) == pytest.approx(lesson.check.var_input_unbiased, rel=1e-12)


# ---------------------------------------------------------------- links, questions, slides, exports


def test_lesson_from_text_reads_the_boxes():
    lesson = ls.lesson_from_text("1, 2, 3\n4, 6, 11", "a\n,", 1, 0.5, "2", "0, 0, 1")
    assert lesson.labels == ("a", ",")
    assert lesson.mean == 7.0 and lesson.var == pytest.approx(26 / 3)  # (9 + 1 + 16) / 3
    np.testing.assert_array_equal(lesson.beta, [0.0, 0.0, 1.0])
    x_hat = np.array([-3.0, -1.0, 4.0]) / math.sqrt(26 / 3 + 0.5)
    np.testing.assert_allclose(lesson.y, 2 * x_hat + [0, 0, 1], rtol=1e-14)


@pytest.mark.parametrize(
    ("boxes", "fragment"),
    [
        (("1, 2\n3, 4", "", 2, EPS, "1", "0"), "token 3 does not exist"),
        (("2, 4, 6, 8", "", 0, EPS, "1, 2", "0"), "gamma has 2 values"),
        (("2, 4, 6, 8", "", 0, EPS, "1", "0, 1, 2"), "beta has 3 values"),
        (("2, 4, 6, 8", "a\nb", 0, EPS, "1", "0"), "2 labels for 1 token"),
        (("2, 4; 6", "", 0, EPS, "1", "0"), "row"),
        (("2, 4, 6, 8", "", 0, -1.0, "1", "0"), "epsilon"),
    ],
)
def test_lesson_from_text_says_what_does_not_fit(boxes, fragment):
    with pytest.raises(InputError, match=fragment):
        ls.lesson_from_text(*boxes)


def test_each_step_asks_its_question():
    questions = sq.step_questions(lesson_of(gamma=2.0, beta=1.0))
    assert len(questions) == STEP_COUNT
    assert questions[2] is None  # sigma_eps is asked nowhere
    kinds = [q.qid.split("-")[0] for q in questions if q is not None]
    assert kinds == ["mean", "var", "xhat", "y"]
    answers = [q.answer for q in questions if q is not None]
    assert answers == pytest.approx([5.0, 5.0, -3 / STD, 2 * -3 / STD + 1], rel=1e-14)
    assert 'token "t1"' in questions[0].prompt


def qids(lesson: ls.TokenLesson) -> list[str]:
    return [q.qid for q in sq.step_questions(lesson) if q is not None]


def test_a_new_example_asks_new_questions():
    before = qids(lesson_of())
    assert set(before).isdisjoint(qids(lesson_of(np.array([[1.0, 2.0, 3.0, 4.0]]))))


def test_a_question_is_asked_again_only_when_its_answer_can_change():
    mean, var, x_hat, y = qids(lesson_of())
    assert qids(lesson_of(eps=0.5))[:2] == [mean, var]  # the mean does not depend on eps
    assert set(qids(lesson_of(eps=0.5))[2:]).isdisjoint([x_hat, y])
    assert qids(lesson_of(beta=1.0))[:3] == [mean, var, x_hat]
    assert qids(lesson_of(beta=1.0))[3] != y
    d = 4
    gamma = np.array([1.0, 2.0, 2.0, 2.0])  # y1 = gamma1 * x_hat1 + beta1 keeps gamma1 = 1
    same_y1 = ls.token_lesson(X, ["t1"], 0, EPS, gamma, np.zeros(d))
    assert qids(same_y1) == [mean, var, x_hat, y]


def test_token_summary():
    assert ls.token_summary(lesson_of()) == "x = (2, 4, 6, 8) · D = 4 · ε = 1e-05 · γ = 1 · β = 0"
    x = np.arange(10.0)[None, :]
    lesson = ls.token_lesson(x, ["a"], 0, 0.0, np.arange(10.0), np.zeros(10))
    assert ls.token_summary(lesson) == (
        "x = (0, 1, 2, 3, 4, 5, 6, 7, … 10 values) · D = 10 · ε = 0 · "
        "γ = (0, 1, 2, 3, 4, 5, 6, 7, … 10 values) · β = 0"
    )


def test_exports_hold_the_trace():
    lesson = ls.token_lesson(
        np.array([[2.0, 4.0, 6.0, 8.0], [1.0, 1.0, 1.0, 3.0]]),
        ["a", ","],
        1,
        EPS,
        np.full(4, 2.0),
        np.zeros(4),
    )
    lines = st_export.export_csv(lesson).splitlines()
    assert lines[0] == "token,feature,mean,var,std,x,x_hat,y"
    assert len(lines) == 1 + 2 * 4
    # token 2 is [1, 1, 1, 3]: mean 1.5, variance (3 * 0.25 + 2.25) / 4 = 0.75
    assert lines[5].startswith('",",1,1.5,0.75,')
    data = json.loads(st_export.export_json(lesson))
    assert data["settings"] == {"eps": EPS, "gamma": [2.0] * 4, "beta": [0.0] * 4, "token": 2}
    assert data["labels"] == ["a", ","]
    assert data["mean"] == [[5.0], [1.5]]
    script = st_export.export_script(lesson)
    assert "x = torch.tensor([[2, 4, 6, 8], [1, 1, 1, 3]], dtype=torch.float64)" in script
    assert "eps = 1e-05" in script and "F.layer_norm" in script
