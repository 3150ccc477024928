"""The step-through page in class: shareable links, presenter mode, predictions and exports.

Numbers are worked out by hand. The default token [2, 4, 6, 8] (eps = 1e-5) has mean 5 and
variance (9 + 1 + 1 + 9) / 4 = 5. The link example x = [[1, 2, 3], [4, 6, 11]] has, for
token 2, mean 21 / 3 = 7 and variance (9 + 1 + 16) / 3 = 26 / 3.
"""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
import sys
from urllib.parse import parse_qsl

import numpy as np
import pytest
import streamlit.testing.v1.app_test as app_test_module
from helpers import formulas, html_tables, page_test, question_key
from helpers import metric_value as metric
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

PAGE = "pages/step_through.py"
DEFAULT_LINK = {
    "v": "1",
    "preset": "token-2468",
    "x": "2,4,6,8",
    "labels": "token",
    "tok": "1",
    "eps": "1e-05",
    "gamma": "1",
    "beta": "0",
    "step": "1",
    "all": "0",
    "q": "0",
}


def open_page(query: dict[str, str] | None = None) -> AppTest:
    at = page_test(PAGE, query).run()
    assert not at.exception, at.exception
    return at


def has_metric(at: AppTest, label: str) -> bool:
    return any(m.label.startswith(label) for m in at.metric)


def step_titles(at: AppTest) -> list[str]:
    """The titles of the sections on screen: "1. Mean", ..."""
    return [h.value for h in at.header if h.value[0].isdigit()]


def token_heading(at: AppTest) -> str:
    """The chosen token above every section: "Token 2: ,"."""
    context = next(m.value for m in at.markdown if m.value.startswith("**Token "))
    return context.split("**")[1].replace("\\", "")


SECTIONS = ("mean", "var", "std", "x_hat", "y", "check", "undo", "prompt_input")


def go_to(at: AppTest, key: str) -> AppTest:
    """Choose the section called `key` from the section chooser."""
    return at.radio(key="st_step").set_value((*SECTIONS, "prompt_normalized").index(key)).run()


def vector(at: AppTest, name: str) -> np.ndarray:
    """The one-row table of `name` ("x̂" or "y") shown as a step's result."""
    table = next(t for t in html_tables(at) if list(t.iloc[:, 0]) == [name])
    return table.iloc[0, 1:].astype(float).to_numpy()


def input_table(at: AppTest):
    return next(t for t in html_tables(at) if t.columns[-1] == "σ_ε")


def shown(at: AppTest) -> tuple:
    """Every number the page shows: tables, metrics and formulas."""
    tables = tuple(t.to_json() for t in html_tables(at))
    return tables, tuple((m.label, m.value) for m in at.metric), tuple(formulas(at))


def link(at: AppTest) -> dict[str, str]:
    """The query of the "Copy link to this example" popover: the link a teacher shares."""
    code = next(c.value for c in at.code if "?v=1" in c.value)
    return dict(parse_qsl(code.split("?", 1)[1], keep_blank_values=True))


def is_default(at: AppTest) -> bool:
    return (
        metric(at, "μ") == 5.0
        and at.text_area(key="st_text").value == "2, 4, 6, 8"
        and at.session_state["st_eps"] == 1e-5
        and step_titles(at) == ["1. Mean"]
        and link(at) == DEFAULT_LINK
    )


def notice(at: AppTest) -> str:
    """The bad-link notice, markdown escapes removed."""
    return next(w.value for w in at.warning if "default example" in w.value).replace("\\", "")


# ---------------------------------------------------------------- links


def test_the_default_example_has_a_link():
    at = open_page()
    assert is_default(at)
    assert not at.warning
    assert dict(at.query_params) in ({}, DEFAULT_LINK)  # the URL is left alone or says the same


def test_a_link_opens_its_example():
    at = open_page(
        {
            "preset": "hello",  # the link's own embeddings win over the preset's
            "x": "1,2,3;4,6,11",
            "labels": "a\n,",
            "tok": "2",
            "eps": "0.5",
            "gamma": "2",
            "beta": "0,0,1",
            "step": "2",
        }
    )
    assert not at.warning and not at.error
    assert token_heading(at) == "Token 2: ,"  # a label may be a comma
    assert step_titles(at) == ["2. Variance"]
    assert metric(at, "σ²") == pytest.approx(26 / 3)
    inputs = input_table(go_to(at, "prompt_input"))
    assert list(inputs["token"]) == ["a", ","]
    np.testing.assert_allclose(inputs["mean"], [2.0, 7.0])
    np.testing.assert_allclose(inputs["σ_ε"], [math.sqrt(2 / 3 + 0.5), math.sqrt(26 / 3 + 0.5)])
    assert at.text_input(key="st_gamma").value == "2"
    assert at.text_input(key="st_beta").value == "0, 0, 1"
    assert at.radio(key="st_preset").value == "hello"
    assert at.text_area(key="st_labels").value == "a\n,"


def test_a_preset_link_keeps_its_token_and_step():
    # "hello" token 2 is [0, 0.1, 0.4, -0.1]: mean 0.1, variance (0.01 + 0 + 0.09 + 0.04) / 4
    at = open_page({"preset": "hello", "tok": "2", "step": "3"})
    assert not at.warning
    assert token_heading(at) == "Token 2: ,"
    assert metric(at, "σ_ε") == pytest.approx(math.sqrt(0.035 + 1e-5), rel=1e-5)


def test_a_link_with_its_own_embeddings_and_no_labels_names_tokens_t1_t2():
    at = open_page({"x": "1,2;3,5", "tok": "2"})
    assert not at.warning and not at.error
    assert token_heading(at) == "Token 2: t2"
    assert metric(at, "μ") == 4.0


def test_round_trip_state_link_state_shows_the_same_numbers():
    first = open_page()
    first.radio(key="st_preset").set_value("hello").run()
    first.text_area(key="st_labels").input("Hi\n,\nhow\nare\nyou\n?").run()
    first.radio(key="st_token").set_value(2).run()
    first.number_input(key="st_eps").set_value(0.01).run()
    first.text_input(key="st_gamma").input("1, 2, 0.5, 1").run()
    first.text_input(key="st_beta").input("0.1").run()
    for _ in range(4):
        first.button(key="step_through_next").click().run()
    assert not first.exception and not first.error
    shared = link(first)
    assert dict(first.query_params) == shared  # after an edit the address bar is the link too
    assert (shared["preset"], shared["tok"], shared["eps"], shared["step"]) == (
        "hello",
        "3",
        "0.01",
        "5",
    )
    assert (shared["gamma"], shared["beta"]) == ("1,2,0.5,1", "0.1")
    second = open_page(shared)
    assert not second.warning
    assert shown(second) == shown(first)
    assert link(second) == shared
    # and the numbers are right: token 3 is [0.5, -0.3, 0.2, 0.6], mean 0.25
    x = np.array([0.5, -0.3, 0.2, 0.6])
    x_hat = (x - 0.25) / math.sqrt(x.var() + 0.01)
    np.testing.assert_allclose(vector(second, "y"), x_hat * [1, 2, 0.5, 1] + 0.1, rtol=1e-12)


def test_typed_embeddings_travel_exactly():
    first = open_page()
    first.text_area(key="st_text").input("[[0.1, 0.3, -0.2], [1e-3, 2.5, 7]]").run()
    assert first.query_params["x"] == "0.1,0.3,-0.2;0.001,2.5,7"
    first.toggle(key="step_through_all").set_value(True).run()
    assert first.query_params["all"] == "1"
    second = open_page(link(first))
    assert shown(second) == shown(first)
    assert len(step_titles(second)) == 15


def test_a_link_applies_once_so_edits_after_it_stay():
    at = open_page({"eps": "0.5", "step": "2"})
    at.number_input(key="st_eps").set_value(0.25).run()
    at.button(key="step_through_prev").click().run()
    assert at.session_state["st_eps"] == 0.25
    assert (at.query_params["eps"], at.query_params["step"]) == ("0.25", "1")


BAD_LINKS = {
    "bad matrix": {"x": "1,2;3,x"},
    "ragged matrix": {"x": "1,2,3;4,5"},
    "overflow": {"x": "1e309,1"},
    "nan eps": {"eps": "nan"},
    "negative eps": {"eps": "-0.1"},
    "eps above 1": {"eps": "2"},
    "token beyond the embeddings": {"tok": "2"},
    "token beyond its own embeddings": {"x": "1,2;3,4", "tok": "3"},
    "token out of bounds": {"tok": "99"},
    "token not whole": {"tok": "1.5"},
    "gamma of the wrong length": {"gamma": "1,2"},
    "beta of the wrong length": {"x": "1,2,3", "beta": "0,1"},
    "step 16": {"step": "16"},
    "step 0": {"step": "0"},
    "unknown version": {"v": "9"},
    "unknown parameter": {"junk": "1"},
    "oversized": {"x": "1," * 25_000},
    "labels for another count": {"labels": "a\nb"},
    "a 41-character label": {"labels": "a" * 41},
    "65 label lines": {"labels": "\n".join("l" * 65)},
    "control character": {"labels": "a\x07b"},
    "unknown preset": {"preset": "nope"},
    "bool not 0 or 1": {"all": "maybe"},
    "one bad among good": {"eps": "0.5", "gamma": "nan"},
}


@pytest.mark.parametrize("query", BAD_LINKS.values(), ids=BAD_LINKS.keys())
def test_bad_links_open_the_default_example_with_a_notice(query):
    at = open_page(query)
    assert "could not be opened" in notice(at)
    assert is_default(at)
    assert not at.error


def test_a_bad_link_says_what_is_wrong():
    assert "token 2 does not exist" in notice(open_page({"tok": "2"}))
    assert "gamma has 2 values" in notice(open_page({"gamma": "1,2"}))
    assert "step: 16 is outside 1..15" in notice(open_page({"step": "16"}))


# ---------------------------------------------------------------- presenter mode


def test_presenter_mode_shows_one_step_and_next_moves_on():
    at = open_page({"present": "1", "all": "1"})
    assert step_titles(at) == ["1. Mean"]  # one section per slide, even with "all"
    assert token_heading(at) == "Token 1: token"  # the token's numbers on top of the slide
    assert any("2, 4, 6, 8" in m.value for m in at.markdown if m.value.startswith("**Token"))
    assert any(m.value.startswith("**Slide 1 of 15**") for m in at.markdown)
    keys = {w.key for w in [*at.text_area, *at.text_input, *at.toggle, *at.radio]}
    assert not keys & {"st_text", "st_labels", "st_gamma", "st_beta", "step_through_all", "st_quiz"}
    assert "st_step" not in keys  # the section chooser is off-slide
    assert not at.data_editor and not at.get("download_button")
    assert at.button(key="step_through_next").proto.shortcut == "right"
    assert at.button(key="step_through_prev").proto.shortcut == "left"
    assert at.button(key="step_through_next_pgdn").proto.shortcut == "pagedown"
    assert at.button(key="step_through_prev_pgup").proto.shortcut == "pageup"
    at.button(key="step_through_next").click().run()
    assert step_titles(at) == ["2. Variance"]
    assert metric(at, "σ²") == 5.0
    assert (at.query_params["step"], at.query_params["present"]) == ("2", "1")
    at.run()
    assert step_titles(at) == ["2. Variance"]
    for _ in range(13):
        at.button(key="step_through_next_pgdn").click().run()
    assert step_titles(at) == ["15. Check beside torch autograd"]
    assert at.button(key="step_through_next").disabled
    at.button(key="step_through_prev_pgup").click().run()
    assert step_titles(at) == ["14. Adding up dx, and dx · x̂"]


def test_every_part_of_the_lesson_is_a_slide():
    """The check, the undo and the whole prompt are slides too, each with its numbers."""
    at = open_page({"present": "1", "step": "6"})
    assert step_titles(at) == ["6. The check: the mean and spread of x̂"]
    assert metric(at, "torch.std") == pytest.approx(math.sqrt(20 / 3 / 5.00001), rel=1e-12)
    at.button(key="step_through_next").click().run()
    assert step_titles(at) == ["7. Let γ and β undo it"]
    at.button(key="st_undo").click().run()
    assert "The input is back" in at.success[0].value
    at.button(key="step_through_next").click().run()
    np.testing.assert_allclose(input_table(at)["mean"], [5.0])


def test_hidden_inputs_keep_their_values_through_presenter_mode():
    at = open_page({"x": "1,2,3;4,6,11", "tok": "2", "gamma": "3"})
    at.toggle(key="present_toggle").set_value(True).run()
    assert not [t for t in at.text_area if t.key == "st_text"]
    at.button(key="step_through_next").click().run()
    assert metric(at, "σ²") == pytest.approx(26 / 3)
    at.button(key="present_exit").click().run()
    assert at.text_area(key="st_text").value == "1, 2, 3\n4, 6, 11"
    assert at.text_input(key="st_gamma").value == "3"
    assert step_titles(at) == ["2. Variance"]
    assert "Take the numbers with you" in [h.value for h in at.header]


# ---------------------------------------------------------------- predict, then reveal


def answer(at: AppTest, kind: str, value: str) -> None:
    """Type `value` (pick it on a slide, where there is no box) and check it."""
    key = question_key(at, kind)
    boxes = [w for w in at.text_input if w.key in (key, f"{key}_typed")]
    if boxes:
        boxes[0].input(value).run()
    else:
        at.radio(key=key).set_value(value).run()
    at.button(key="check_" + key.removeprefix("q_")).click().run()


def prompt(at: AppTest) -> str:
    """The open question's text."""
    return next(m.value for m in at.markdown if m.value.startswith("**Predict:**"))


def score(at: AppTest) -> str:
    return next(m.value for m in at.sidebar.metric if m.label.startswith("Predictions right"))


def test_predict_then_reveal_scores_and_survives_reruns():
    at = open_page()
    at.toggle(key="st_quiz").set_value(True).run()
    assert not has_metric(at, "μ")  # the mean waits for the prediction
    assert "What mean does Layer Norm subtract from token" in prompt(at)
    assert not formulas(at)  # nor the formula: it is the rule that gives the answer
    assert not at.get("plotly_chart")  # no chart, and so no mean line, yet

    answer(at, "mean", "5")
    assert metric(at, "μ") == 5.0
    assert "Right" in at.success[0].value
    marks = at.session_state["quiz_marks"]
    assert list(marks.values()) == [True] and next(iter(marks)).startswith("mean-")
    at.run()
    assert at.session_state["quiz_marks"] == marks
    assert score(at) == "1 / 1"
    assert metric(at, "μ") == 5.0  # still revealed after a rerun


def test_every_question_in_turn_then_the_rest_of_the_page():
    std = math.sqrt(5.00001)
    at = open_page({"q": "1"})
    answer(at, "mean", "4")  # wrong first
    assert "Not quite" in at.warning[0].value
    assert metric(at, "μ") == 5.0  # checked, so revealed
    at.button(key="step_through_next").click().run()
    assert not has_metric(at, "σ²")
    answer(at, "var", "5")
    at.button(key="step_through_next").click().run()
    assert metric(at, "σ_ε") == pytest.approx(std)  # step 3 asks nothing
    at.button(key="step_through_next").click().run()
    answer(at, "xhat", f"{-3 / std:.3f}")
    np.testing.assert_allclose(vector(at, "x̂"), np.array([-3, -1, 1, 3]) / std)
    at.button(key="step_through_next").click().run()
    assert not at.get("plotly_chart")
    answer(at, "y", f"{-3 / std:.3f}")
    assert at.get("plotly_chart")
    at.run()
    assert sorted(at.session_state["quiz_marks"].values()) == [False, True, True, True]
    assert score(at) == "3 / 4"


def test_a_step_further_on_asks_its_own_question():
    at = open_page({"q": "1", "step": "4"})
    assert step_titles(at) == ["4. Normalize"]
    question_key(at, "xhat")
    assert not any(list(t.iloc[:, 0]) == ["x̂"] for t in html_tables(at))
    answer(at, "xhat", "-1.34")
    assert any(list(t.iloc[:, 0]) == ["x̂"] for t in html_tables(at))


def test_all_sections_at_once_each_wait_for_their_own_question():
    at = open_page({"q": "1", "all": "1"})
    assert len(step_titles(at)) == 15
    assert not has_metric(at, "μ") and not has_metric(at, "σ²")
    assert has_metric(at, "σ_ε")  # step 3 asks nothing
    answer(at, "mean", "5")
    assert metric(at, "μ") == 5.0 and not has_metric(at, "σ²")


def test_a_custom_example_gets_its_own_questions():
    default = open_page({"q": "1"})
    custom = open_page({"q": "1", "x": "1,2,3,4,5"})
    assert question_key(custom, "mean") != question_key(default, "mean")
    assert 'subtract from token "t1"' in prompt(custom)
    answer(custom, "mean", "3")
    assert list(custom.session_state["quiz_marks"].values()) == [True]


def test_changing_epsilon_keeps_the_answered_mean():
    at = open_page({"q": "1"})
    answer(at, "mean", "5")
    at.number_input(key="st_eps").set_value(0.5).run()
    assert metric(at, "μ") == 5.0  # the mean does not depend on ε: no new question
    at.text_area(key="st_text").input("1, 2, 3").run()
    assert not has_metric(at, "μ")  # a new token: a new question
    question_key(at, "mean")


def test_questions_show_on_the_slides_too():
    at = open_page({"q": "1", "present": "1", "step": "2"})
    question_key(at, "var")
    answer(at, "var", "5")
    assert metric(at, "σ²") == 5.0


# ---------------------------------------------------------------- exports


@pytest.fixture
def served(monkeypatch) -> dict[str, str]:
    """The files the page's download buttons serve, by file name."""
    files: dict[str, str] = {}

    class Recording(MemoryMediaFileStorage):
        def load_and_get_id(self, path_or_data, mimetype, kind, filename=None):
            files[filename] = bytes(path_or_data).decode()
            return super().load_and_get_id(path_or_data, mimetype, kind, filename)

    monkeypatch.setattr(app_test_module, "MemoryMediaFileStorage", Recording)
    return files


EXAMPLE = {"preset": "hello", "tok": "3", "eps": "0.01", "gamma": "1,2,0.5,1", "beta": "0.1"}


def test_the_pytorch_script_reproduces_the_numbers_on_the_page(served):
    at = open_page(EXAMPLE | {"all": "1"})
    assert set(served) == {"lnlab-steps.csv", "lnlab-steps.json", "lnlab_steps.py"}
    script = next(c.value for c in at.code if c.value.startswith('"""Reproduces'))
    assert served["lnlab_steps.py"].strip() == script.strip()
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    result = json.loads(done.stdout)
    inputs = input_table(at)
    np.testing.assert_allclose(result["mean"], inputs["mean"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.sqrt(np.array(result["var"]) + 0.01), inputs["σ_ε"], rtol=1e-12)
    np.testing.assert_allclose(result["y"][2], vector(at, "y"), rtol=1e-12)


def test_csv_and_json_hold_the_numbers_on_the_page(served):
    at = open_page(EXAMPLE | {"all": "1"})
    y = vector(at, "y")
    rows = list(csv.DictReader(io.StringIO(served["lnlab-steps.csv"])))
    assert len(rows) == 6 * 4
    token = [r for r in rows if r["token"] == "how"]
    assert [int(r["feature"]) for r in token] == [1, 2, 3, 4]
    np.testing.assert_allclose([float(r["y"]) for r in token], y, rtol=1e-12)
    np.testing.assert_allclose([float(r["x"]) for r in token], [0.5, -0.3, 0.2, 0.6])
    data = json.loads(served["lnlab-steps.json"])
    assert data["settings"] == {
        "eps": 0.01,
        "gamma": [1.0, 2.0, 0.5, 1.0],
        "beta": [0.1] * 4,
        "token": 3,
    }
    assert data["labels"] == ["Hello", ",", "how", "are", "you", "?"]
    np.testing.assert_allclose(data["y"][2], y, rtol=1e-12)
    np.testing.assert_allclose(np.ravel(data["mean"]), input_table(at)["mean"], rtol=1e-12)
