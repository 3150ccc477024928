"""lnlab.ui.line: the visitor is the browser (the browser id every page keeps in a cookie,
lnlab.ui.claims), else the session; a worker that cannot start is said on the page."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from streamlit.testing.v1 import AppTest

from lnlab.serving import worker
from lnlab.ui import claims, line

ID = "0123456789abcdef0123456789abcdef"


def _page() -> None:
    import streamlit as st

    from lnlab.ui import claims
    from lnlab.ui.line import visitor, worker_notice

    claims.browser_id()  # what every page's set-up does (ui.classroom.take_link)
    claims.write_cookies()
    worker_notice()
    st.write(f"visitor {visitor()}")


def _open(monkeypatch: pytest.MonkeyPatch, cookie: object) -> AppTest:
    """The page as a browser that sends `cookie` (None: no cookie) would get it."""
    cookies = {claims.BROWSER_COOKIE: cookie}
    monkeypatch.setattr(line.st.context.__class__, "cookies", cookies, raising=False)
    at = AppTest.from_function(_page).run()
    assert not at.exception, at.exception
    return at


def _visitor(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("visitor ")).split()[1]


def _scripts(at: AppTest) -> list[str]:
    return [h.proto.body for h in at.get("html") if "<script" in h.proto.body]


def test_a_browser_that_sends_its_id_is_that_visitor_and_is_not_asked_again(monkeypatch):
    at = _open(monkeypatch, ID)
    assert _visitor(at) == ID and not _scripts(at)


@pytest.mark.parametrize("cookie", [None, "", "x' ; alert(1)", "short", ID + "$", 7])
def test_without_a_valid_id_the_tab_is_its_own_visitor_and_sets_the_cookie(monkeypatch, cookie):
    at = _open(monkeypatch, cookie)
    mine = _visitor(at)
    assert re.fullmatch("[A-Za-z0-9_-]{16,64}", mine) and mine != ID
    (script,) = _scripts(at)
    assert f"{claims.BROWSER_COOKIE}={mine}; Path=/; SameSite=Strict" in script
    at.run()
    assert _visitor(at) == mine and _scripts(at) == [script]  # the same element, unchanged


def test_two_tabs_without_a_cookie_are_two_visitors(monkeypatch):
    assert _visitor(_open(monkeypatch, None)) != _visitor(_open(monkeypatch, None))


def test_a_worker_being_retried_is_said_on_the_page(monkeypatch):
    assert not _open(monkeypatch, ID).warning
    monkeypatch.setattr(worker.HEAVY, "trouble", lambda: "the worker could not start; soon")
    (warning,) = _open(monkeypatch, ID).warning
    assert warning.value == "The worker could not start; soon."


def test_the_time_waited_counts_the_waits_not_the_runs(monkeypatch):
    """A wait from 0 to 1.5 s of a fake clock (when the run went on), a run, then a wait from
    4 s that ends with the run: counted to its last call, 4.5 s. 2 s waited in all."""
    clock = iter([0.0, 0.5, 1.5, 4.0, 4.5])
    monkeypatch.setattr(line.time, "monotonic", lambda: next(clock))
    box = line.Line.__new__(line.Line)
    box._box = SimpleNamespace(info=lambda *a, **k: None, empty=lambda: None)
    box.first, box.waited_s, box._since, box._last = None, 0.0, None, 0.0
    box.on_wait(2, None)  # 0.0
    box.on_wait(1, None)  # 0.5
    box.clear()  # 1.5: the run goes on
    assert box.waited_s == 1.5
    box.clear()  # no wait under way: nothing added
    box.on_wait(1, 3.0)  # 4.0: waiting between two pieces
    box.on_wait(1, 2.0)  # 4.5
    assert box.done() == "You waited 2.0 s in line (2nd when you pressed Run)."
