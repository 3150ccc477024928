"""lnlab.ui.line: the visitor is the browser (its cookie), else the session; the cookie is set
once by a tab that lacks it; a worker that cannot start is said on the page."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from lnlab.serving import worker
from lnlab.ui import line

ID = "0123456789abcdef0123456789abcdef"


def _page() -> None:
    import streamlit as st

    from lnlab.ui.line import remember_visitor, visitor, worker_notice

    remember_visitor()
    worker_notice()
    st.write(f"visitor {visitor()}")


def _open(monkeypatch: pytest.MonkeyPatch, cookie: object) -> AppTest:
    """The page as a browser that sends `cookie` (None: no cookie) would get it."""
    monkeypatch.setattr(line.st.context.__class__, "cookies", {line.COOKIE: cookie}, raising=False)
    at = AppTest.from_function(_page).run()
    assert not at.exception, at.exception
    return at


def _visitor(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("visitor ")).split()[1]


def _scripts(at: AppTest) -> list[str]:
    return [h.proto.body for h in at.get("html") if "<script>" in h.proto.body]


def test_a_browser_that_sends_its_id_is_that_visitor_and_is_not_asked_again(monkeypatch):
    at = _open(monkeypatch, ID)
    assert _visitor(at) == ID and not _scripts(at)


@pytest.mark.parametrize("cookie", [None, "", "x' ; alert(1)", ID.upper(), ID + "0", 7])
def test_without_a_valid_id_the_tab_is_its_own_visitor_and_sets_the_cookie_once(
    monkeypatch, cookie
):
    at = _open(monkeypatch, cookie)
    mine = _visitor(at)
    assert re.fullmatch("[0-9a-f]{32}", mine) and mine != ID
    (script,) = _scripts(at)
    assert f"document.cookie = '{line.COOKIE}={mine}; path=/; SameSite=Strict'" in script
    at.run()
    assert _visitor(at) == mine and not _scripts(at)  # once per session


def test_two_tabs_without_a_cookie_are_two_visitors(monkeypatch):
    assert _visitor(_open(monkeypatch, None)) != _visitor(_open(monkeypatch, None))


def test_a_worker_being_retried_is_said_on_the_page(monkeypatch):
    assert not _open(monkeypatch, ID).warning
    monkeypatch.setattr(worker.HEAVY, "trouble", lambda: "the worker could not start; soon")
    (warning,) = _open(monkeypatch, ID).warning
    assert warning.value == "The worker could not start; soon."
