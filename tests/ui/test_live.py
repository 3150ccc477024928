"""lnlab.ui.live without a browser: which sections the browser draws, and the navigation it
may send (the rest of what it sends is the lab's: tests/labs/step_through/test_live.py; the
browser itself: tests/browser/test_live_steps.py)."""

import pytest

from lnlab.core.errors import InputError
from lnlab.ui import live, served

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
