"""The visitor's place in the server's heavy-work line (lnlab.serving.heavy_work), on screen.

Shared by the pages whose runs wait in that line: the GPU page's benchmark, the training lab.

The line's owner is the visitor's browser, not the tab (a Streamlit session is a tab): the
browser's random id (lnlab.ui.claims.browser_id, the cookie every page sets), so that every tab
the browser opens shares its one place in line. A browser that keeps no cookies is its session.
"""

from __future__ import annotations

import time

import streamlit as st

from lnlab.serving import worker
from lnlab.serving.heavy_work import ordinal, waiting_text
from lnlab.teach.markdown import plain
from lnlab.ui.claims import browser_id


def visitor() -> str:
    """The owner name of this browser in the line: its browser id."""
    return browser_id()


def worker_notice() -> None:
    """On a page whose heavy work goes to the worker process: start it now if it is not
    running (lnlab.serving.worker.Worker.warm: the visitor's first run then trains or measures
    at once), and say so while it cannot start and is being retried."""
    worker.HEAVY.warm()
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
