"""The visitor's place in the server's heavy-work line (lnlab.serving.heavy_work), on screen.

Shared by the pages whose runs wait in that line: the GPU page's benchmark, the training lab.

The line's owner is the visitor's browser, not the tab (a Streamlit session is a tab): a
random id in the cookie COOKIE, which the first tab that needs it sets, so that every tab
the browser opens afterwards sends it and shares its one place in line. A browser that sends
no cookie (cookies off, or the first tab, which sets it) is its session. The id is random and
says nothing about the visitor; the cookie lasts until the browser closes.
"""

from __future__ import annotations

import re
import time
import uuid

import streamlit as st

from lnlab.serving import worker
from lnlab.serving.heavy_work import ordinal, waiting_text
from lnlab.teach.markdown import plain

COOKIE = "lnlab_visitor"
_ID = re.compile(r"[0-9a-f]{32}")
_VISITOR = "_lnlab_visitor"
_COOKIE_SET = "_lnlab_visitor_cookie_set"
_SET_COOKIE_JS = (
    "<script>document.cookie = '{name}={value}; path=/; SameSite=Strict'"
    " + (location.protocol === 'https:' ? '; Secure' : '');</script>"
)


def sent_visitor() -> str:
    """The visitor id the browser sent in its cookie (when it is one of ours), else ""."""
    value = st.context.cookies.get(COOKIE)
    return value if isinstance(value, str) and _ID.fullmatch(value) else ""


def visitor() -> str:
    """The owner name of this browser in the line: the id its cookie sent, else this session's
    own random id (kept in session state)."""
    return st.session_state.setdefault(_VISITOR, sent_visitor() or uuid.uuid4().hex)


def remember_visitor() -> None:
    """Have the browser keep this session's visitor id in its cookie, once per session, when
    it did not send it: the browser's later tabs then share this tab's place in line."""
    if sent_visitor() == visitor() or st.session_state.get(_COOKIE_SET):
        return
    st.session_state[_COOKIE_SET] = True
    st.sidebar.html(
        _SET_COOKIE_JS.format(name=COOKIE, value=visitor()), unsafe_allow_javascript=True
    )


def worker_notice() -> None:
    """Say so while the worker process for heavy work cannot start and is being retried."""
    if trouble := worker.HEAVY.trouble():
        st.warning(f"{plain(trouble[0].upper() + trouble[1:])}.", icon=":material/sync_problem:")


class Line:
    """A box that shows the visitor's place while they wait: pass `on_wait` to the line.

    It also adds up the time spent waiting: from the first call of a wait to `clear` (the run
    went on) or, at the end, to the last call (the line calls at least every HEARTBEAT_S while
    a visitor waits, so that is the wait to within that)."""

    def __init__(self) -> None:
        self._box = st.empty()
        self.first: int | None = None  # the place on joining the line; None if not queued
        self.waited_s = 0.0  # waits that ended
        self._since: float | None = None  # when the wait under way began
        self._last = 0.0  # the last call of that wait

    def on_wait(self, place: int, expected_s: float | None = None) -> None:
        """Called by the line on joining it, when the place changes and now and then (each
        call lets Streamlit stop the wait of a visitor who left or changed an input)."""
        now = time.monotonic()
        if self.first is None:
            self.first = place
        if self._since is None:
            self._since = now
        self._last = now
        self._box.info(
            f"{waiting_text(place, expected_s)} Changing an input meanwhile leaves the line.",
            icon=":material/hourglass:",
        )

    def clear(self) -> None:
        """Clear the box: the run went on after a wait."""
        if self._since is not None:
            self.waited_s += time.monotonic() - self._since
            self._since = None
        self._box.empty()

    def done(self) -> str:
        """Clear the box; how long the visitor waited in all, or "" when they did not."""
        self._box.empty()
        if self._since is not None:
            self.waited_s += self._last - self._since
            self._since = None
        if self.first is None:
            return ""
        return (
            f"You waited {self.waited_s:.1f} s in line "
            f"({ordinal(self.first)} when you pressed Run)."
        )

    def refused(self, message: str) -> None:
        """Show why the run did not happen (line full, too long a wait, worker failed)."""
        self._box.warning(plain(message), icon=":material/hourglass:")
