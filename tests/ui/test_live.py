"""lnlab.ui.live without a browser: which sections the browser draws, and the navigation it
may send (the rest of what it sends is the lab's: tests/labs/step_through/test_live.py; the
browser itself: tests/browser/test_live_steps.py)."""

import json

import pytest
from helpers import ROOT, blocks, formulas
from streamlit.testing.v1 import AppTest

from lnlab.core.errors import InputError
from lnlab.teach.mathml import mathml
from lnlab.ui import live, served, state

STEPS = live.LiveSections("step_through", 5, dict, lambda changes: False)


def test_the_browser_draws_its_sections_alone_unless_a_question_or_a_class_needs_python():
    assert live.covers(STEPS, 0, False, quiz=False, class_on=False)
    assert live.covers(STEPS, 4, False, quiz=False, class_on=False)
    assert not live.covers(STEPS, 5, False, quiz=False, class_on=False)
    assert not live.covers(STEPS, 0, True, quiz=False, class_on=False)
    assert not live.covers(STEPS, 0, False, quiz=True, class_on=False)
    assert not live.covers(STEPS, 0, False, quiz=False, class_on=True)


def test_navigation_is_checked():
    assert live._navigation({"rev": 3}, 15) == (None, False)
    assert live._navigation({"step": 14, "all": True}, 15) == (14, True)
    for bad in ({"step": 15}, {"step": -1}, {"step": 2.0}, {"step": True}, {"all": 1}):
        with pytest.raises(InputError):
            live._navigation(bad, 15)


def test_static_files_are_served_under_the_base_path(monkeypatch):
    assert served.static_base() == "/app/static/"
    monkeypatch.setattr(served.st, "get_option", lambda name: "/course/")
    assert served.static_base() == "/course/app/static/"


def _page(lessons: live.LiveLessons | None = None) -> tuple[AppTest, dict | None]:
    """The step-through opened with `lessons` (a fresh session's if None): the app, and what
    its browser lesson was sent (None: not drawn)."""
    at = AppTest.from_file(str(ROOT / "pages" / "step_through.py"), default_timeout=60)
    if lessons is not None:
        at.session_state[state.key(live.LiveLessons)] = lessons
    at.run()
    assert not at.exception
    sent = [e for e in at.get("bidi_component") if e.key == live.KEY]
    return at, json.loads(sent[0].proto.json) if sent else None


def _fallback(at: AppTest) -> bool:
    """Whether Python's lesson is drawn in its container under the browser's."""
    return any(live.FALLBACK in getattr(b.proto, "id", "") for b in blocks(at.main))


def test_a_first_visit_draws_the_browsers_lesson_alone_with_its_formulas():
    """No second lesson under it; the first section's formulas as Python writes them, for the
    browser to take rather than load KaTeX."""
    at, sent = _page()
    assert sent is not None and sent["fallback"] is None
    assert not _fallback(at) and not at.metric  # Python's lesson is not drawn
    drawn = formulas(_page(live.LiveLessons(slow={"step_through"}))[0])  # as Python draws them
    assert r"\tfrac{1}{4}\big(2 + 4 + 6 + 8\big) = 5" in drawn[1]
    assert sent["formulas"] == [mathml(tex) for tex in drawn]


def test_a_slow_lesson_gets_pythons_under_it_and_a_failed_one_is_replaced():
    at, sent = _page(live.LiveLessons(slow={"step_through"}))
    assert sent is not None and sent["fallback"] == live.FALLBACK and sent["formulas"] == []
    assert _fallback(at) and at.metric  # today's lesson, for the browser to hide once it shows
    at, sent = _page(live.LiveLessons(slow={"step_through"}, works={"step_through": True}))
    assert sent is not None and sent["fallback"] is None and not _fallback(at)
    at, sent = _page(live.LiveLessons(works={"step_through": False}, why={"step_through": "x"}))
    assert sent is None and at.metric
    assert any("your browser could not run it (x)" in c.value for c in at.caption)


def _said(status: str) -> live.LiveLessons:
    """The session's lessons once the browser's lesson said `status`."""

    def page() -> None:
        import streamlit as st

        from lnlab.ui import live

        st.session_state[live.KEY] = {"status": st.session_state["said"]}
        live._status("step_through")

    at = AppTest.from_function(page, default_timeout=30)
    at.session_state["said"] = status
    at.run()
    assert not at.exception
    return at.session_state[state.key(live.LiveLessons)]


def test_what_the_browsers_lesson_says_is_kept_for_the_session():
    assert _said("slow").slow == {"step_through"} and _said("slow").works == {}
    assert _said("ready").works == {"step_through": True}
    failed = _said("failed: no module")
    assert failed.works == {"step_through": False} and failed.why == {"step_through": "no module"}
