"""The step-through lesson's backward slides: the lesson (plain), the dy box's state rules, and
the page in AppTest (the dy box, its link field, predictions).

Numbers by hand. The default token x = (2, 4, 6, 8), eps = 1e-5, gamma = 1: sigma_eps = s =
sqrt(5.00001), x_hat = (-3, -1, 1, 3) / s. The default dy = (1, -2, 0.5, 3), so dbeta = dy,
dgamma = (-3, 2, 0.5, 9) / s, dx_hat = dy, mean(dx_hat) = 2.5 / 4 = 0.625, sum(dx_hat x_hat) =
8.5 / s, mean(dx_hat x_hat) = 2.125 / s and dx = (dy - 0.625 - (-3, -1, 1, 3) 2.125 / s^2) / s.
dx . x_hat = eps sum(dx_hat x_hat) / s^3 = 8.5e-5 / s^4.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import formulas, html_tables
from helpers import metric_value as metric

from lnlab.core.errors import InputError
from lnlab.labs.step_through import backward, state
from lnlab.labs.step_through import lesson as st_slides
from lnlab.labs.step_through.token import TokenInputs, token_lesson
from lnlab.teach.lesson import Metric, Section, Table

from .test_teaching import (
    answer,
    has_metric,
    is_default,
    link,
    notice,
    open_page,
    step_titles,
)

S = math.sqrt(5.00001)
X_HAT = np.array([-3.0, -1.0, 1.0, 3.0]) / S
DY = np.array([1.0, -2.0, 0.5, 3.0])
DX = (DY - 0.625 - X_HAT * 2.125 / S) / S
DOT = 8.5e-5 / S**4


def lesson_of(x, eps=1e-5, gamma=None):
    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    d = x.shape[1]
    g = np.ones(d) if gamma is None else np.asarray(gamma, dtype=np.float64)
    return token_lesson(x, ["t"] * x.shape[0], 0, eps, g, np.zeros(d))


def by_key(sections: tuple[Section, ...]) -> dict[str, Section]:
    return {s.key: s for s in sections}


def rows(section: Section, k: int = 0) -> dict[str, np.ndarray]:
    """Table k of a section as {row name: values}."""
    frame = [n for n in section.numbers if isinstance(n, Table)][k].frame
    return {r.iloc[0]: r.iloc[1:].to_numpy(dtype=np.float64) for _, r in frame.iterrows()}


def metrics(section: Section) -> dict[str, float]:
    return {m.label: m.value for m in section.numbers if isinstance(m, Metric)}


# ---------------------------------------------------------------- the lesson


def test_the_backward_slides_follow_the_forward_ones():
    lesson = st_slides.slides(lesson_of([2.0, 4.0, 6.0, 8.0]))
    keys = tuple(s.key for s in lesson.sections)
    assert keys[-len(backward.KEYS) :] == backward.KEYS
    assert keys[8] == "prompt_normalized"  # old links' slides 1-9 are where they were
    assert len(keys) == state.SECTION_COUNT == 15


def test_default_dy_is_not_all_equal_and_fits_any_width():
    np.testing.assert_array_equal(backward.default_dy(4), DY)
    assert backward.default_dy(1).tolist() == [1.0]
    assert backward.default_dy(20).shape == (20,)
    assert all(len(set(backward.default_dy(d))) > 1 for d in range(2, 65))


def test_the_default_token_by_hand():
    s = by_key(backward.sections(lesson_of([2.0, 4.0, 6.0, 8.0])))
    np.testing.assert_allclose(rows(s["dy"])["dy"], DY)
    grads = rows(s["dbeta_dgamma"])
    np.testing.assert_allclose(grads["dγ"], np.array([-3.0, 2.0, 0.5, 9.0]) / S, rtol=1e-14)
    np.testing.assert_array_equal(grads["dβ"], DY)
    np.testing.assert_array_equal(rows(s["dx_hat"])["dx̂"], DY)
    np.testing.assert_allclose(rows(s["dx"])["dx"], DX, rtol=1e-13)
    worked = " ".join(s["dx"].worked)
    assert r"\overline{d\hat{x}} = \tfrac{1}{4}\big(1 + (-2) + 0.5 + 3\big) = 0.625" in worked
    assert r"\tfrac{1}{2.2361}" in worked and "= 0.9503" in worked  # 2.125 / s
    sums = metrics(s["dx_sums"])
    assert abs(sums["Σ dx"]) < 1e-15
    assert sums["dx · x̂"] == pytest.approx(DOT, rel=1e-9)
    assert sums["ε Σ dx̂ x̂ / σ_ε³"] == pytest.approx(DOT, rel=1e-12)
    assert "it is 3.4e-06, not 0" in s["dx_sums"].finding  # ε Σ dx̂ x̂ / σ_ε³, measured


def test_the_questions_and_their_answers():
    s = by_key(backward.sections(lesson_of([2.0, 4.0, 6.0, 8.0])))
    dgamma, total = s["dbeta_dgamma"].question, s["dx_sums"].question
    assert dgamma.answer == pytest.approx(-3 / S) and dgamma.qid.startswith("dgamma-")
    assert total.answer == 0.0 and total.qid.startswith("sumdx-")
    other = by_key(backward.sections(lesson_of([2.0, 4.0, 6.0, 8.0]), np.ones(4)))
    assert other["dbeta_dgamma"].question.qid != dgamma.qid  # a new dy, a new question


def test_eps_0_makes_dx_orthogonal_to_x_hat():
    s = by_key(backward.sections(lesson_of([2.0, 4.0, 6.0, 8.0], eps=0.0)))
    sums = metrics(s["dx_sums"])
    assert sums["ε Σ dx̂ x̂ / σ_ε³"] == 0.0
    assert abs(sums["dx · x̂"]) < 1e-15
    assert "exactly 0" in s["dx_sums"].finding


def test_the_autograd_table():
    s = by_key(backward.sections(lesson_of([2.0, 4.0, 6.0, 8.0])))["autograd"]
    values = rows(s)
    assert list(values) == ["dx formula, float64", "dx autograd, float64", "dx autograd, float32"]
    for v in values.values():
        np.testing.assert_allclose(v, DX, rtol=1e-6)
    diffs = rows(s, 1)
    assert list(diffs) == ["dx", "dγ", "dβ"]
    assert (diffs["dx"] <= [1e-15, 1e-6]).all()
    assert [t.caption for t in s.numbers] == ["", ""]  # no NaN to explain


def test_a_constant_token_with_eps_0_says_why_everything_is_nan():
    s = by_key(backward.sections(lesson_of([3.0, 3.0, 3.0], eps=0.0)))
    assert "0 / 0 = NaN" in s["dx"].callouts[0].text
    assert np.isnan(rows(s["dx"])["dx"]).all()
    assert math.isnan(metrics(s["dx_sums"])["Σ dx"])
    np.testing.assert_array_equal(rows(s["autograd"], 1)["dx"], [0.0, 0.0])  # NaN in both
    assert "NaN" in s["autograd"].numbers[1].caption
    with_eps = by_key(backward.sections(lesson_of([3.0, 3.0, 3.0])))
    assert not with_eps["dx"].callouts
    assert np.isfinite(rows(with_eps["dx"])["dx"]).all()


def test_one_feature_has_dx_0():
    s = by_key(backward.sections(lesson_of([5.0])))
    np.testing.assert_array_equal(rows(s["dx"])["dx"], [0.0])
    assert metrics(s["dx_sums"])["Σ dx"] == 0.0


def test_64_features_elide_the_formulas():
    x = np.arange(64.0) ** 1.5
    s = by_key(backward.sections(lesson_of(x)))
    for key in ("dbeta_dgamma", "dx_hat", "dx", "dx_sums"):
        assert any(r"\dots" in w for w in s[key].worked), key
    assert rows(s["dx"])["dx"].shape == (64,)
    assert abs(metrics(s["dx_sums"])["Σ dx"]) < 1e-12


# ---------------------------------------------------------------- the dy box's state


def test_parse_dy():
    assert state.parse_dy("  ", 4) is None
    np.testing.assert_array_equal(state.parse_dy("2", 3), [2.0, 2.0, 2.0])
    with pytest.raises(InputError, match="dy has 2 values but the token has 4 features"):
        state.parse_dy("1, 2", 4)
    with pytest.raises(InputError, match="dy"):
        state.parse_dy("1, nan, 2, 3", 4)


def test_read_dy_keeps_the_last_good_value():
    s = {"st_dy": ""}
    np.testing.assert_array_equal(state.read_dy(s, 4), DY)
    assert s["st_dy_error"] == "" and s["st_good_dy"] is None
    s["st_dy"] = "0, 1, 0, 0"
    assert state.read_dy(s, 4).tolist() == [0.0, 1.0, 0.0, 0.0]
    s["st_dy"] = "0, 1, x, 0"
    assert state.read_dy(s, 4).tolist() == [0.0, 1.0, 0.0, 0.0]
    assert "x" in s["st_dy_error"]
    np.testing.assert_array_equal(state.read_dy(s, 5), backward.default_dy(5))  # other width


def test_the_dy_link_field_travels_the_dy_on_the_slides():
    inputs = TokenInputs(np.zeros((1, 4)), ("t",), 0, 1e-5, np.ones(4), np.zeros(4))
    s = {"st_dy": "", "st_inputs": inputs}
    state.read_dy(s, 4)
    field = next(f for f in state.link_fields(s) if f.param.name == "dy")
    assert field.from_widget("") is None  # the default stays out of the link
    s["st_dy"] = "3"
    state.read_dy(s, 4)
    assert field.from_widget("3").tolist() == [3.0]
    s["st_dy"] = "1,2,3,4"
    state.read_dy(s, 4)
    s["st_dy"] = "1,2"  # a typo: the link keeps what the slides show
    state.read_dy(s, 4)
    assert field.from_widget("1,2").tolist() == [1.0, 2.0, 3.0, 4.0]
    assert field.to_widget(np.array([1.0, -0.5])) == "1, -0.5"
    assert state.preset_inputs("hello")["st_dy"] == ""


# ---------------------------------------------------------------- the page


def table(at, first_row: str) -> dict[str, np.ndarray]:
    """The table on screen whose first row is called `first_row`, as {row: values}."""
    frame = next(t for t in html_tables(at) if t.iloc[0, 0] == first_row)
    return {r.iloc[0]: r.iloc[1:].astype(float).to_numpy() for _, r in frame.iterrows()}


def test_the_dy_slide_shows_the_default_and_takes_a_typed_dy():
    at = open_page({"step": "10"})
    assert step_titles(at) == ["10. Backward: the upstream gradient dy"]
    box = at.text_input(key="st_dy")
    assert box.value == "" and box.placeholder == "1, -2, 0.5, 3"
    np.testing.assert_array_equal(table(at, "y")["dy"], DY)
    assert "dy" not in link(at)

    box.input("0, 1, 0, 0").run()
    assert not at.exception and not at.error
    np.testing.assert_array_equal(table(at, "y")["dy"], [0.0, 1.0, 0.0, 0.0])
    assert at.query_params["dy"] == "0,1,0,0" and link(at)["dy"] == "0,1,0,0"
    at.button(key="step_through_next").click().run()
    np.testing.assert_allclose(table(at, "dy")["dγ"], [0.0, -1 / S, 0.0, 0.0], rtol=1e-14)

    at.radio(key="st_step").set_value(9).run()
    at.text_input(key="st_dy").input("1, 2").run()  # a typo keeps the last good dy
    assert "dy has 2 values but the token has 4 features" in at.error[0].value
    assert "keeps the last valid input" in at.error[0].value
    np.testing.assert_array_equal(table(at, "y")["dy"], [0.0, 1.0, 0.0, 0.0])
    assert link(at)["dy"] == "0,1,0,0"


def test_a_dy_link_opens_its_numbers_and_shares_them_again():
    at = open_page({"dy": "0,1,0,0", "step": "13"})
    assert not at.warning and not at.error
    assert step_titles(at) == ["13. Back through μ and σ_ε: dx"]
    dx_hat = np.array([0.0, 1.0, 0.0, 0.0])
    want = (dx_hat - 0.25 - X_HAT * (-1 / S) / 4) / S
    np.testing.assert_allclose(table(at, "dx̂")["dx"], want, rtol=1e-12)
    again = open_page(link(at))
    assert formulas(again) == formulas(at)


BAD_DY_LINKS = {
    "dy of the wrong length": {"dy": "1,2"},
    "dy not a number": {"dy": "1,x,2,3"},
    "dy nan": {"dy": "nan"},
    "dy empty": {"dy": ""},
    "dy too long": {"dy": "1," * 30_000},
}


@pytest.mark.parametrize("query", BAD_DY_LINKS.values(), ids=BAD_DY_LINKS.keys())
def test_a_bad_dy_link_opens_the_default_with_a_notice(query):
    at = open_page(query)
    assert "could not be opened" in notice(at)
    assert is_default(at)
    assert at.session_state["st_dy"] == ""


def test_the_slides_ask_before_they_show():
    at = open_page({"q": "1", "step": "11"})
    assert not any(t.iloc[0, 0] == "dy" for t in html_tables(at))
    answer(at, "dgamma", "-1.34")
    assert "Right" in at.success[0].value
    np.testing.assert_allclose(table(at, "dy")["dγ"][0], -3 / S, rtol=1e-12)
    at.radio(key="st_step").set_value(13).run()
    assert not has_metric(at, "Σ dx")
    answer(at, "sumdx", "0")
    assert "Right" in at.success[0].value
    assert metric(at, "dx · x̂") == pytest.approx(DOT, rel=1e-9)


def test_presenter_mode_has_the_dy_box_on_its_slide():
    at = open_page({"present": "1", "step": "10", "dy": "2"})
    assert at.text_input(key="st_dy").value == "2"
    np.testing.assert_array_equal(table(at, "y")["dy"], [2.0] * 4)
    at.button(key="step_through_next").click().run()
    assert any(m.value.startswith("**Slide 11 of 15**") for m in at.markdown)
