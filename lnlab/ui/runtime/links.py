"""A link Streamlit drops is said, not silently opened on the page's default.

Streamlit 1.67 drops a query string over 512 Ki characters or 1,000 parameters before any page
sees it (`app_session.sanitize_query_string`): the page would open on its default with no word.
`mark_dropped_links()` (installed with the rest of lnlab.ui.runtime) makes such a link reach the
page as `?dropped=<characters>,<parameters>`, which lnlab.ui.links.open_link answers with the
usual notice. No upstream issue asks for a notice; the limits are Streamlit's guard against
oversized client state.
"""

from __future__ import annotations

from urllib.parse import urlencode

from streamlit.runtime import app_session
from streamlit.runtime.state import query_params

DROPPED = "dropped"  # "<characters>,<parameters>" of a query string Streamlit dropped
# What Streamlit's server does with a longer query string: it drops it
MAX_QUERY_CHARS: int = query_params.CLIENT_STATE_QUERY_STRING_MAX_LENGTH
MAX_QUERY_PARAMS: int = query_params.CLIENT_STATE_QUERY_STRING_MAX_FIELDS


def marks(query: str, kept: str) -> str:
    """What the page gets for `query` when Streamlit kept `kept` of it."""
    if query and not kept:
        return urlencode({DROPPED: f"{len(query)},{query.count('&') + 1}"})
    return kept


def mark_dropped_links() -> None:
    """Make Streamlit's server say when it drops a link's query string (idempotent)."""
    sanitize = app_session.sanitize_query_string
    if getattr(sanitize, "marks_dropped", False):
        return

    def marking(query: str) -> str:
        return marks(query, sanitize(query))

    marking.marks_dropped = True  # type: ignore[attr-defined]
    app_session.sanitize_query_string = marking
