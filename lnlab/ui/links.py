"""Shareable links: the page's state in the URL, checked like typed input."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st
from streamlit.runtime import app_session
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.state import query_params

from lnlab.classroom.links import PARAMS as CLASS_PARAMS
from lnlab.core.errors import InputError
from lnlab.teach.links import Field, decode_link, encode_link, link_state, widget_values
from lnlab.teach.markdown import plain
from lnlab.ui import step_route
from lnlab.ui.classroom import url_params
from lnlab.ui.page import PRESENT_KEY, presenting
from lnlab.ui.stale import address, record_shown

NOT_STATE = (PRESENT_KEY, *CLASS_PARAMS)  # query parameters of the app, not of a page
# What Streamlit's server does with a longer query string: it drops it (see mark_dropped_links)
STREAMLIT_MAX_QUERY_CHARS = query_params.CLIENT_STATE_QUERY_STRING_MAX_LENGTH
STREAMLIT_MAX_QUERY_PARAMS = query_params.CLIENT_STATE_QUERY_STRING_MAX_FIELDS
# Addresses a page remembers having had: a message sent before the page drew a newer one
# carries one of them, which is no link being opened (Back and Forward are: they say so)
KEPT_ADDRESSES = 16
DROPPED = "dropped"  # "<characters>,<parameters>" of a query string Streamlit dropped


def mark_dropped_links() -> None:
    """Make Streamlit's server say when it drops a link's query string.

    Streamlit 1.67 drops a query string over 512 Ki characters or 1,000 parameters before any
    page sees it; the page would open on its default with no word. From this call on (the
    launcher, lnlab.ui.serve, makes it), such a link reaches the page as
    `?dropped=<characters>,<parameters>`, which open_link answers with the usual notice.
    """
    sanitize = app_session.sanitize_query_string
    if getattr(sanitize, "marks_dropped", False):
        return

    def marking(query: str) -> str:
        kept = sanitize(query)
        if query and not kept:
            return urlencode({DROPPED: f"{len(query)},{query.count('&') + 1}"})
        return kept

    marking.marks_dropped = True  # type: ignore[attr-defined]
    app_session.sanitize_query_string = marking


def _dropped_message(value: object) -> str:
    """What to say about a link Streamlit dropped (`value` is DROPPED's, as the URL holds it)."""
    try:
        chars, params = (int(n) for n in str(value).split(","))
        size = f" ({chars:,} characters, {params:,} parameter{'s' * (params != 1)})"
    except ValueError:
        size = ""
    return (
        f"the link is too long for the server{size}: it takes at most "
        f"{STREAMLIT_MAX_QUERY_CHARS:,} characters and {STREAMLIT_MAX_QUERY_PARAMS:,} parameters"
    )


def _query() -> dict[str, str | list[str]]:
    """The URL's query parameters; a repeated one comes as a list (and is refused later)."""
    out: dict[str, str | list[str]] = {}
    for name in st.query_params:
        values = st.query_params.get_all(name)
        out[name] = values[0] if len(values) == 1 else values
    return out


def open_link(page: str, fields: tuple[Field, ...]) -> bool:
    """Put the state in the URL into the page's widgets; call before creating them.

    Only a new URL is applied, so edits are never undone on a rerun: not one this page wrote
    or had before, unless Back or Forward brought it back (a message the browser sent before
    it drew this run's address carries the older one). A bad link opens the page's default
    example with a notice saying what is wrong; it never raises. Returns True when it applied
    a newly opened link, so the page can check that the link's parts fit together.
    """
    catch_up()
    for f in fields:  # Streamlit drops the state of widgets that are not drawn (presenter mode)
        if f.key in st.session_state:
            st.session_state[f.key] = st.session_state[f.key]
    params = {k: v for k, v in _query().items() if k not in NOT_STATE}
    signature = address(
        ((k, v) for k in st.query_params for v in st.query_params.get_all(k)), NOT_STATE
    )
    if st.session_state.get(f"_link_{page}") == signature:
        return False
    if _had(page, signature) and not _history_navigation():
        return False  # sent before the page showed this run's address: no link (lnlab.ui.stale)
    _remember(page, signature)
    st.session_state[f"_link_{page}"] = signature
    st.session_state[f"_link_arrival_{page}"] = signature
    st.session_state.pop(f"_link_initial_{page}", None)  # share_link records it after the widgets
    if not params:
        return False
    try:
        if DROPPED in params:
            raise InputError(_dropped_message(params[DROPPED]))
        state = decode_link(params, tuple(f.param for f in fields))
    except InputError as err:
        for f in fields:
            st.session_state.pop(f.key, None)
        st.session_state[f"_link_arrival_{page}"] = None  # share_link replaces the bad URL
        st.warning(
            f"{plain(str(err))}. The page opened on its default example instead.",
            icon=":material/link_off:",
        )
        return False
    st.session_state.update(widget_values(state, fields))
    return True


def _had(page: str, signature: str) -> bool:
    """Whether this page's address has held `signature` (opened with it, or written)."""
    return signature in st.session_state.get(f"_link_had_{page}", ())


def catch_up() -> None:
    """Apply what this session's browser posted to the step route since its last run
    (lnlab.ui.step_route), before anything reads it: the newest step, unless a newer revision
    came since as the component's state; and every link the route sent the browser, each an
    address the page has had (so no message carrying one opens it again as a new link). The run
    writes its link again: a run under way when the route sent one may have written its own
    after it."""
    ss = st.session_state
    token = ss.get(step_route.TOKEN)
    caught = step_route.STEPS.take(token) if token else None
    if caught is None:
        return
    step = caught.step
    if step is not None and step.rev > ss.get(step_route.REV, 0):
        ss[step_route.REV], ss[caught.slide_key] = step.rev, step.step
    for signature in caught.sent:
        _remember(caught.page, signature)
    ss[f"_link_{caught.page}"] = None


def _remember(page: str, signature: str) -> None:
    had = st.session_state.setdefault(f"_link_had_{page}", [])
    if signature in had:
        had.remove(signature)
    had.append(signature)
    del had[:-KEPT_ADDRESSES]


def _history_navigation() -> bool:
    """Whether this run comes from the browser's Back or Forward."""
    ctx = get_script_run_ctx()
    return bool(ctx and ctx.is_history_navigation)


def link_params(fields: tuple[Field, ...]) -> dict[str, str]:
    """The query of the link to what is on screen: the page's `fields`, presenter mode and a
    student's class (which goes with them from page to page)."""
    params = encode_link(link_state(st.session_state, fields), tuple(f.param for f in fields))
    if presenting():
        params[PRESENT_KEY] = "1"
    return params | url_params()


SHARE_LABEL = "Copy link to this example"
SHARE_NOTE = "Anyone who opens this link sees the same example and settings."


def share_link(
    page: str,
    fields: tuple[Field, ...],
    params: dict[str, str] | None = None,
    *,
    copy: bool = True,
) -> None:
    """Keep the URL the link to what is on screen (`params`: link_params', made after the
    widgets), and (`copy`) offer it to copy; call after the widgets. A lesson the browser draws
    offers it itself (lnlab.ui.live), since its steps change the link with no run.

    Every change to the URL adds a browser history entry, so the URL is left alone until the
    visitor changes something: one press of Back still leaves a page just opened. From the
    first change on, the address bar holds the link to exactly what is on screen.
    """
    params = link_params(fields) if params is None else params
    mine = address(params.items(), NOT_STATE)
    initial = st.session_state.setdefault(f"_link_initial_{page}", mine)
    current = st.session_state.get(f"_link_{page}")  # what the URL holds now
    clean = "[]"
    untouched = st.session_state.get(f"_link_arrival_{page}") == clean == current
    if mine != current and not (untouched and mine == initial):
        st.query_params.from_dict(params)
        st.session_state[f"_link_{page}"] = mine
        _remember(page, mine)
    # what a message sent before this run is drawn echoes (lnlab.ui.stale)
    record_shown((f.key for f in fields), st.session_state.get(f"_link_{page}"), NOT_STATE)
    if not copy:
        return
    base = str(st.context.url or "").split("?")[0]
    with st.popover(SHARE_LABEL, icon=":material/link:"):
        st.caption(SHARE_NOTE)
        st.code(f"{base}?{urlencode(params)}", language=None, wrap_lines=True)
