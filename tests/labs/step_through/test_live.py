"""lnlab.labs.step_through.live: what the page sends the browser, and what it takes back.

Anything the browser sends comes over the websocket, so it is checked like typed input: the
tests send wrong types, lengths, non-finite and out-of-range values, and unknown names.
"""

import json
import math

import numpy as np
import pytest

from lnlab.core.errors import InputError
from lnlab.core.parse import parse_embeddings
from lnlab.labs.step_through import live, state
from lnlab.labs.step_through.token import TokenInputs, token_lesson
from lnlab.teach.presets import CUSTOM
from lnlab.teach.steps import STEPS


def page_state(text: str = "1, 2, 3, 4\n10, 20, 30, 40", token: int = 1) -> dict:
    s = {"st_text": text, "st_preset": "token-2468"}
    state.set_defaults(s)
    x = parse_embeddings(text)
    d = x.shape[1]
    labels = tuple(f"t{i + 1}" for i in range(x.shape[0]))
    s["st_inputs"] = TokenInputs(x, labels, token, 1e-5, np.ones(d), np.zeros(d))
    return s


def test_the_browser_gets_the_token_and_pythons_own_numbers():
    lesson = token_lesson(
        np.array([[2.0, 4.0, 6.0, 8.0]]), ["tok"], 0, 1e-5, np.full(4, 2.0), np.full(4, 0.5)
    )
    data = live.browser_data(lesson)
    json.dumps(data, allow_nan=False)  # what Streamlit sends must be JSON a browser reads
    assert data["x"] == [2, 4, 6, 8] and data["eps"] == 1e-5
    assert data["gamma"] == [2, 2, 2, 2] and data["beta"] == [0.5] * 4
    assert data["token"] == {"index": 0, "label": "tok"}
    r = data["result"]
    std = math.sqrt(5 + 1e-5)
    assert (r["mean"], r["var"], r["std"]) == (5.0, 5.0, pytest.approx(std, rel=1e-15))
    assert r["xHat"] == pytest.approx([v / std for v in (-3, -1, 1, 3)], rel=1e-15)
    assert r["y"] == pytest.approx([2 * v / std + 0.5 for v in (-3, -1, 1, 3)], rel=1e-15)
    assert [s["key"] for s in data["steps"]] == [s.key for s in STEPS]
    assert data["steps"][0]["metric"] == "μ (mean)"


def test_nan_goes_as_text():
    lesson = token_lesson(np.array([[3.0, 3.0]]), ["t1"], 0, 0.0, np.ones(2), np.zeros(2))
    data = live.browser_data(lesson)
    json.dumps(data, allow_nan=False)
    assert data["result"]["xHat"] == ["NaN", "NaN"] and data["result"]["std"] == 0.0


def test_a_slider_sets_the_box_it_stands_for():
    s = page_state()
    assert live.apply_changes(s, {"eps": 0.1, "gamma": [1.5] * 4, "beta": [0.0, 1.0, 2.0, 3.0]})
    assert s["st_eps"] == 0.1
    assert s["st_gamma"] == "1.5"  # one value for every feature, as the link writes it
    assert s["st_beta"] == "0, 1, 2, 3"
    assert not live.apply_changes(s, {"eps": 0.1})  # nothing new


def test_an_edited_number_rewrites_the_tokens_row_of_the_text():
    s = page_state(token=1)
    assert live.apply_changes(s, {"x": [10.0, 20.0, 35.5, 40.0]})
    assert s["st_text"] == "1, 2, 3, 4\n10, 20, 35.5, 40"
    assert s["st_preset"] == CUSTOM


@pytest.mark.parametrize(
    "changes",
    [
        {"eps": -1e-5},
        {"eps": 2.0},
        {"eps": float("nan")},
        {"eps": "0.1"},
        {"eps": True},
        {"eps": None},
        {"gamma": [1.0, 1.0]},
        {"gamma": "1, 1, 1, 1"},
        {"beta": [0.0, 0.0, 0.0, float("inf")]},
        {"beta": [0, 0, 0, [1]]},
        {"x": [1.0] * 65},
        {"x": [1e308, 1e308, 1e308, {"a": 1}]},
        {"step": 3},  # navigation is lnlab.ui.live's, not an input
        {"labels": "a"},
    ],
)
def test_anything_else_is_refused_and_changes_nothing(changes):
    s = page_state()
    before = dict(s)
    with pytest.raises(InputError):
        live.apply_changes(s, {"eps": 0.5, **changes})
    assert s == before
