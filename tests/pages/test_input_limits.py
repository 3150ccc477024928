"""Limits the server keeps, whatever the browser sends: text boxes over their size, grid edits
too large to apply, links Streamlit drops and runs asked for too fast (AppTest and plain
calls; the browser side is in tests/browser/test_limits.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from helpers import ROOT, page_test
from streamlit.runtime import app_session
from streamlit.testing.v1 import AppTest

from lnlab.core.parse import MAX_CHARS
from lnlab.serving.pace import BURST, RATE
from lnlab.ui import inputs
from lnlab.ui.runtime import links as runtime_links
from lnlab.ui.runtime import turns


def _errors(at) -> str:
    return " ".join(e.value for e in at.error)


def test_an_oversized_vector_is_refused_and_the_last_good_one_kept():
    """A crafted message sends 4 MB; Streamlit cuts it to the box's limit, and the page
    refuses what reaches the limit instead of reading a cut-off text."""
    at = page_test("pages/conventions.py").run()
    at.text_area(key="cv_text").input("1, 2, 3").run()
    assert not at.error
    at.text_area(key="cv_text").set_value("1, " * 1_400_000).run()  # no browser limit
    assert not at.exception
    assert f"limit of {MAX_CHARS:,} characters" in _errors(at)
    assert at.text_area(key="cv_text").value == "1, 2, 3"
    at.run()  # the message is said once; the kept text stays
    assert not at.error and at.text_area(key="cv_text").value == "1, 2, 3"


def test_an_oversized_label_text_is_refused_before_the_page_reads_it():
    at = page_test("pages/step_through.py").run()
    before = at.text_area(key="st_labels").value
    at.text_area(key="st_labels").set_value("a\n" * 100_000).run()
    assert not at.exception
    assert "Token labels" in _errors(at) and "characters" in _errors(at)
    assert at.text_area(key="st_labels").value == before


@pytest.mark.parametrize(
    ("edits", "problem"),
    [
        ({"added_rows": [{"f1": 1.0}] * 70}, "at most 64 rows"),
        ({"edited_rows": {str(i): {"f1": 1} for i in range(100)}}, "at most 64 rows"),
        ({"edited_rows": {"0": {"f1": "9" * 1000}}}, "at most 64 characters"),
        ({"added_rows": [{"f1": "9" * 1000}]}, "at most 64 characters"),
    ],
)
def test_grid_edits_too_large_to_apply_are_named(edits, problem):
    assert problem in inputs._edit_problem(edits, 4, 64)


def test_grid_edits_of_a_size_the_grid_takes_pass():
    edits = {"edited_rows": {"0": {"f1": 2.5}}, "added_rows": [{"f1": 1}], "deleted_rows": [1]}
    assert inputs._edit_problem(edits, 4, 64) is None
    assert inputs._edit_problem(None, 4, 64) is None


def test_streamlit_marks_the_links_it_drops(monkeypatch):
    monkeypatch.setattr(app_session, "sanitize_query_string", app_session.sanitize_query_string)
    runtime_links.mark_dropped_links()
    runtime_links.mark_dropped_links()  # a second call changes nothing
    mark = app_session.sanitize_query_string
    assert mark("a=1&b=2") == "a=1&b=2" and mark("") == ""
    assert mark("&".join(f"p{i}=1" for i in range(1200))) == "dropped=8489%2C1200"
    assert mark("x=" + "1" * 600_000) == "dropped=600002%2C1"


def test_a_dropped_link_opens_the_default_with_the_usual_notice():
    at = page_test("pages/conventions.py", {"dropped": "600002,1"}).run()
    assert not at.exception
    notice = " ".join(w.value for w in at.warning).replace("\\", "")  # markdown escapes
    assert "too long for the server (600,002 characters, 1 parameter)" in notice
    assert "default example" in notice
    assert "dropped" not in at.query_params


def test_a_session_running_the_page_too_fast_waits_before_the_page(monkeypatch):
    """With the clock stopped, the bucket's BURST runs go at once and each further run waits
    a tenth of a second more (lnlab.serving.pace); the page itself is drawn as always."""
    waits: list[float] = []
    monkeypatch.setattr(turns, "time", SimpleNamespace(monotonic=lambda: 0.0, sleep=waits.append))
    at = AppTest.from_file(str(ROOT / "home.py"), default_timeout=60)
    for _ in range(int(BURST) + 2):
        at.run()
    assert not at.exception and at.title
    assert waits == pytest.approx([1 / RATE, 2 / RATE])
