"""What a page tells assistive technology, through the assist script (lnlab/ui/assets/assist.js,
put into every page by the app's server, lnlab.ui.server.shell): WCAG 2.2, 4.1.3, 2.4.3 and 1.1.1.

- `say(slot, text)`: what changed, for the page's polite live region. The script speaks a
  slot's text when it changes after the page has shown it once (so a page that opens says
  nothing, and a poll that finds nothing new says nothing): after Next, the new slide; after
  Check, the verdict; on a student's phone, a new question; on the teacher's panel, Reveal.
- `land(key)`: after an action that removes what had the focus (an answer's button, Join,
  Reveal), where the focus goes next: the element with that key. Without it, the script
  gives the focus back to the element with the same key once it is drawn again, or to the
  nearest enclosing keyed container that is still there.
- `chart_text(label, summary)`: a chart's name and one-sentence summary, beside it in the
  same keyed container; the script names the chart with it (role "img").

Each is a bit of HTML the script reads; the page's CSS (lnlab.ui.style) gives the first two
no room.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import streamlit as st

from lnlab.ui import state


@dataclass
class Landing:
    """Where a session's focus goes after its actions (land; lnlab.ui.state)."""

    request: tuple[str, bool, int] | None = None  # the action just taken's: (key, itself, count)
    count: int = 0  # how many requests this session made: each is carried out once


def say(slot: str, text: str) -> None:
    """Tell the live region `text` if it differs from what `slot` said before (the page's
    first words are not spoken: the page itself is read)."""
    st.html(
        f'<div class="lnlab-say" data-slot="{html.escape(slot, quote=True)}">'
        f"{html.escape(text)}</div>"
    )


def land(key: str, *, itself: bool = False) -> None:
    """After this action, put the focus on the element keyed `key` once it is drawn (with
    `itself`, on that container, not on the first control inside it). Call it from the
    action's callback; `landing()` draws the request in the run that follows."""
    landed = state.of(Landing)
    landed.count += 1
    landed.request = (key, itself, landed.count)


def landing() -> None:
    """Draw the focus request of the action just taken, if any (every run and fragment that
    follows an action calls this; the first one takes it)."""
    landed = state.of(Landing)
    request, landed.request = landed.request, None
    if request is None:
        return
    key, itself, count = request
    st.html(
        f'<div class="lnlab-land" data-key="{html.escape(key, quote=True)}" '
        f'data-itself="{int(itself)}" data-n="{count}"></div>'
    )


def chart_text(label: str, summary: str, *, shown: bool = True) -> None:
    """A chart's name and summary, under it (`shown`) or for screen readers alone; the script
    makes it the chart's accessible name."""
    hidden = "" if shown else " lnlab-sr-only"
    text = f"<strong>{html.escape(label)}.</strong> {html.escape(summary)}" if label else ""
    if not label:
        text = html.escape(summary)
    st.html(f'<p class="lnlab-figure-text{hidden}">{text}</p>')
