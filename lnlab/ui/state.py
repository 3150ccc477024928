"""A session's own data, one typed dataclass per concern: `of(Kind)` is this session's `Kind`.

Streamlit keeps a session's data in st.session_state, a mapping of string keys to anything.
The app's modules used to keep theirs there under keys of their own (`_lnlab_pace`,
`_link_arrival_<page>`, ...): nothing said what each held, a typo read None, and what one
concern kept was spread over keys found only by reading every module. Now each concern is one
dataclass, defined in the module that owns it (lnlab.ui.runtime.turns.Turns, lnlab.ui.links.Links,
...), its fields typed and each with its default: the module reads and writes it as
`state.of(Turns).pace`, with one key per class in the session's state (`key`), made with
`Kind()` the first time the session asks. A module reloaded in development (make dev) starts
its state afresh rather than meet an instance of its old class.

Widget keys stay strings: Streamlit owns them. `of(Kind, session)` reads any session's state
(Streamlit's own SessionState, as lnlab.ui.runtime.stale's hook gets it, or an AppTest's).
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

import streamlit as st

T = TypeVar("T")
PREFIX = "_lnlab."  # every key `key` makes begins so


class Session(Protocol):
    """What `of` needs of a session's state: st.session_state, Streamlit's SessionState, an
    AppTest's session_state (a missing key raises KeyError)."""

    def __getitem__(self, key: str) -> Any: ...

    def __setitem__(self, key: str, value: Any) -> None: ...


def key(kind: type) -> str:
    """The session state key of dataclass `kind`: `_lnlab.<module>.<class>`."""
    return f"{PREFIX}{kind.__module__}.{kind.__qualname__}"


def of(kind: type[T], session: Session | None = None) -> T:
    """This session's `kind` (in `session`, else st.session_state): made with `kind()` the first
    time, then the same instance, which its callers change in place."""
    ss: Session = st.session_state if session is None else session
    name = key(kind)
    try:
        found = ss[name]
    except KeyError:
        found = None
    if not isinstance(found, kind):
        found = ss[name] = kind()
    return found
