"""The visitor's place in the server's heavy-work line (lnlab.serving.heavy_work), on screen.

Shared by the pages whose runs wait in that line: the GPU page's benchmark, the training lab.
"""

from __future__ import annotations

import time
import uuid

import streamlit as st

from lnlab.serving.heavy_work import ordinal, waiting_text
from lnlab.teach.markdown import plain

_VISITOR = "_lnlab_visitor"


def visitor() -> str:
    """This session's owner name in the line: random, kept in session state, nothing personal."""
    return st.session_state.setdefault(_VISITOR, uuid.uuid4().hex)


class Line:
    """A box that shows the visitor's place while they wait: pass `on_wait` to the line."""

    def __init__(self) -> None:
        self._box = st.empty()
        self._start = time.monotonic()
        self.first: int | None = None  # the place on joining the line; None if not queued

    def on_wait(self, place: int) -> None:
        """Called by the queue on joining the line, when the place changes and now and then
        (each call lets Streamlit stop the wait of a visitor who left or changed an input)."""
        if self.first is None:
            self.first = place
        self._box.info(
            f"{waiting_text(place)} Changing an input meanwhile leaves the line.",
            icon=":material/hourglass:",
        )

    def done(self) -> str:
        """Clear the box; how long the visitor waited, or "" when they did not."""
        self._box.empty()
        if self.first is None:
            return ""
        return (
            f"You waited {time.monotonic() - self._start:.1f} s in line "
            f"({ordinal(self.first)} when you pressed Run)."
        )

    def refused(self, message: str) -> None:
        """Show why the run did not happen (line full, too long a wait, worker failed)."""
        self._box.warning(plain(message), icon=":material/hourglass:")
