"""Predict before you see, on every lesson page: the toggle is there, a question offers the
misconceptions' answers as options, a wrong one is named, and checking reveals the section."""

import pytest
from helpers import page_test
from streamlit.testing.v1 import AppTest

from lnlab.teach.misconceptions import MISCONCEPTIONS
from lnlab.ui.quiz import TOGGLE_LABEL

LOCKED = "Check your prediction to see this step's result."
NAMES = tuple(m.name for m in MISCONCEPTIONS.values())

CASES = [  # page, link (q=1 turns the questions on), the question's id prefix
    ("pages/step_through.py", {"step": "2"}, "var"),
    ("pages/step_through.py", {"step": "6"}, "xhatstd"),
    ("pages/padding.py", {"section": "4"}, "lnmean"),
    ("pages/padding.py", {"section": "6"}, "maskedy"),
    ("pages/transformer.py", {}, "tfln"),
    ("pages/conventions.py", {"s": "4"}, "cvbessel"),
    ("pages/gpu.py", {"s": "2"}, "gpuy"),
]


def _question(at: AppTest, prefix: str):
    return next(r for r in at.radio if r.key and r.key.startswith(f"q_{prefix}-"))


def _locked(at: AppTest) -> bool:
    return any(LOCKED in h.proto.body for h in at.get("html"))  # the "?" box


@pytest.mark.parametrize(("page", "query", "prefix"), CASES, ids=[c[2] for c in CASES])
def test_wrong_options_name_their_misconception_and_checking_reveals(page, query, prefix):
    at = page_test(page, {**query, "q": "1"}, timeout=120).run()
    assert not at.exception, at.exception
    assert any(t.label == TOGGLE_LABEL and t.value for t in at.toggle)
    radio = _question(at, prefix)
    assert _locked(at) and len(radio.options) >= 2
    named, right = [], []
    for option in radio.options:
        _question(at, prefix).set_value(option)
        at.button(key="check_" + radio.key.removeprefix("q_")).click()
        at.run()
        assert not at.exception, at.exception
        if at.success:
            right.append(option)
        else:
            named.append(at.warning[-1].value)
    assert len(right) == 1 and named
    assert all(message.startswith(NAMES) for message in named), named
    assert not _locked(at)  # checked: the section's result shows
    assert list(at.session_state["quiz_marks"].values()) == [radio.options[0] == right[0]]


@pytest.mark.parametrize(
    "page", ["pages/transformer.py", "pages/conventions.py", "pages/gpu.py", "pages/training.py"]
)
def test_the_toggle_is_off_by_default_and_nothing_is_asked(page):
    at = page_test(page, timeout=120).run()
    assert any(t.label == TOGGLE_LABEL and not t.value for t in at.toggle)
    assert not [r for r in at.radio if r.key and r.key.startswith("q_")]
    assert not _locked(at)
