"""Shareable links: the page's state in the URL, checked like typed input."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

import streamlit as st

from lnlab.classroom.links import PARAMS as CLASS_PARAMS
from lnlab.core.errors import InputError
from lnlab.teach.links import Field, decode_link, encode_link, link_state, widget_values
from lnlab.teach.markdown import plain
from lnlab.ui import state
from lnlab.ui.classroom.common import url_params
from lnlab.ui.page import PRESENT_KEY, presenting
from lnlab.ui.runtime import sessions
from lnlab.ui.runtime.links import DROPPED, MAX_QUERY_CHARS, MAX_QUERY_PARAMS
from lnlab.ui.runtime.stale import address, record_shown
from lnlab.ui.server import steps as step_route

NOT_STATE = (PRESENT_KEY, *CLASS_PARAMS)  # query parameters of the app, not of a page
# Addresses a page remembers having had: a message sent before the page drew a newer one
# carries one of them, which is no link being opened (Back and Forward are: they say so)
KEPT_ADDRESSES = 16


@dataclass
class PageLink:
    """A page's link in a session, each address as lnlab.ui.runtime.stale.address makes it."""

    current: str | None = None  # what the URL holds now (None: unknown, written again)
    arrival: str | None = None  # the address the page was opened with (None: none to keep)
    initial: str | None = None  # the link to what the page first showed (share_link's)
    had: list[str] = field(default_factory=list)  # addresses it has had, the newest last


@dataclass
class Links:
    """A session's pages' links (lnlab.ui.state)."""

    pages: dict[str, PageLink] = field(default_factory=dict)  # page -> its link


def page_link(page: str) -> PageLink:
    """This session's link of `page`."""
    return state.of(Links).pages.setdefault(page, PageLink())


def forget_arrival(page: str) -> None:
    """The page now shows something other than the address it was opened with (a class's
    first question's slide): share_link writes the link to it even if nothing else changes."""
    page_link(page).arrival = None


def _dropped_message(value: object) -> str:
    """What to say about a link Streamlit dropped (`value` is DROPPED's, as the URL holds it)."""
    try:
        chars, params = (int(n) for n in str(value).split(","))
        size = f" ({chars:,} characters, {params:,} parameter{'s' * (params != 1)})"
    except ValueError:
        size = ""
    return (
        f"the link is too long for the server{size}: it takes at most "
        f"{MAX_QUERY_CHARS:,} characters and {MAX_QUERY_PARAMS:,} parameters"
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
    link = page_link(page)
    if link.current == signature:
        return False
    if _had(page, signature) and not _history_navigation():
        return False  # sent before the page showed this run's address: no link (runtime.stale)
    _remember(page, signature)
    link.current = link.arrival = signature
    link.initial = None  # share_link records it after the widgets
    if not params:
        return False
    try:
        if DROPPED in params:
            raise InputError(_dropped_message(params[DROPPED]))
        decoded = decode_link(params, tuple(f.param for f in fields))
    except InputError as err:
        for f in fields:
            st.session_state.pop(f.key, None)
        link.arrival = None  # share_link replaces the bad URL
        st.warning(
            f"{plain(str(err))}. The page opened on its default example instead.",
            icon=":material/link_off:",
        )
        return False
    st.session_state.update(widget_values(decoded, fields))
    return True


def _had(page: str, signature: str) -> bool:
    """Whether this page's address has held `signature` (opened with it, or written)."""
    return signature in page_link(page).had


def catch_up() -> None:
    """Apply what this session's browser posted to the step route since its last run
    (lnlab.ui.server.steps), before anything reads it: the newest step, unless a newer revision
    came since as the component's state; and every link the route sent the browser, each an
    address the page has had (so no message carrying one opens it again as a new link). The run
    writes its link again: a run under way when the route sent one may have written its own
    after it."""
    route = state.of(step_route.LessonRoute)
    token = route.token
    caught = step_route.STEPS.take(token) if token else None
    if caught is None:
        return
    step = caught.step
    if step is not None and step.rev > route.rev:
        route.rev, st.session_state[caught.slide_key] = step.rev, step.step
    for signature in caught.sent:
        _remember(caught.page, signature)
    page_link(caught.page).current = None


def _remember(page: str, signature: str) -> None:
    had = page_link(page).had
    if signature in had:
        had.remove(signature)
    had.append(signature)
    del had[:-KEPT_ADDRESSES]


def _history_navigation() -> bool:
    """Whether this run comes from the browser's Back or Forward."""
    return sessions.history_navigation()


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
    link = page_link(page)
    if link.initial is None:
        link.initial = mine
    initial = link.initial
    current = link.current  # what the URL holds now
    clean = "[]"
    untouched = link.arrival == clean == current
    if mine != current and not (untouched and mine == initial):
        st.query_params.from_dict(params)
        link.current = mine
        _remember(page, mine)
    # what a message sent before this run is drawn echoes (lnlab.ui.runtime.stale)
    record_shown((f.key for f in fields), link.current, NOT_STATE)
    if not copy:
        return
    base = str(st.context.url or "").split("?")[0]
    with st.popover(SHARE_LABEL, icon=":material/link:"):
        st.caption(SHARE_NOTE)
        st.code(f"{base}?{urlencode(params)}", language=None, wrap_lines=True)
