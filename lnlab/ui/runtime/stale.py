"""A widget value the page sent before it saw the server change it is not the visitor's.

Every message a Streamlit page sends carries every widget's value as the page shows it then.
When a run changes a widget itself (typed embeddings make the preset "Custom"; a preset
rewrites the embeddings), the page shows the new value only once that run's reply arrives. A
message sent in between (a second click, the browser's lesson saying it is ready, a class's
pulse) still carries the old value, and Streamlit takes it for the visitor setting it back:
the preset's callback then loads the preset over the embeddings just typed, and the class
loses them.

`install()` (lnlab.ui.runtime.install, at the server's start) makes the server leave out such a
value, for the widgets that hold a page's link (lnlab.ui.links). A value is left out when the page
sent it unchanged since its last message while the server holds another one the page cannot have
seen: one set since the last finished run, or one of a run whose address (share_link writes it
whenever the link's state changes) the message does not carry yet. A visitor who sets a widget back
after seeing the server's value is heard: their message carries that address.
Upstream: no issue for this echo; streamlit/streamlit#4836 and PR #16765 fixed neighbouring races
(widget state dropped by an interrupted run, coalesced callback reruns), not this one.
tests/ui/test_stale.py, tests/browser/test_stale.py.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import streamlit as st
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.state.session_state import SessionState, WStates

from lnlab.ui import state


@dataclass(frozen=True)
class Seen:
    """After the last finished run: the address the page holds (as `address(..., ignore)`
    makes it) and the values of its link's widgets it showed, by key."""

    address: str | None = None
    ignore: tuple[str, ...] = ()
    shown: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Echoes:
    """What a session's page has seen and sent of its link's widgets (lnlab.ui.state)."""

    seen: Seen = field(default_factory=Seen)  # replaced whole at the end of every run
    sent: dict[str, bytes] = field(default_factory=dict)  # widget id -> its state as last sent


def address(params: Iterable[tuple[str, str]], ignore: Collection[str]) -> str:
    """An address as its link's state: its parameters but the `ignore`d ones (a repeated one as
    a list), in order. lnlab.ui.links compares addresses by it."""
    values: dict[str, list[str]] = {}
    for name, value in params:
        if name not in ignore:
            values.setdefault(name, []).append(value)
    return repr(sorted((k, v[0] if len(v) == 1 else v) for k, v in values.items()))


def record_shown(keys: Iterable[str], shown_address: str | None, ignore: Collection[str]) -> None:
    """At the end of a page's run: the values of its link's widgets `keys`, and the address
    (`address(..., ignore)`) the page holds once this run is drawn: the one this run wrote,
    or the last one written or opened (not the one a late message carried)."""
    ss = st.session_state
    shown = {k: ss[k] for k in keys if k in ss}
    state.of(Echoes).seen = Seen(shown_address, tuple(ignore), shown)


def is_stale(*, unchanged: bool, value: Any, server: Any, shown: Any, address_seen: bool) -> bool:
    """Whether `value`, from the page, only echoes what it showed before the server set `server`:
    the page sent it `unchanged`, the server holds another value, and the page cannot have seen
    that one (the last finished run showed `shown`, or the page's address is not that run's)."""
    return unchanged and not same(value, server) and not (same(server, shown) and address_seen)


def install() -> None:
    """Make the server leave stale link values out of every message a page sends."""
    original = SessionState.set_widgets_from_proto
    if getattr(original, "leaves_stale_out", False):
        return

    def guarded(self: SessionState, widget_states: WidgetStates) -> None:
        _leave_stale_out(self, widget_states)
        original(self, widget_states)

    guarded.leaves_stale_out = True  # type: ignore[attr-defined]
    SessionState.set_widgets_from_proto = guarded  # type: ignore[method-assign]


def _leave_stale_out(session: SessionState, widget_states: WidgetStates) -> None:
    echoes = state.of(Echoes, session)
    seen, before = echoes.seen, echoes.sent
    ctx = get_script_run_ctx()
    sent_from = ctx and address(parse_qsl(ctx.query_string, keep_blank_values=True), seen.ignore)
    address_seen = sent_from == seen.address
    keys = session._key_id_mapper.id_key_mapping
    sent: dict[str, bytes] = {}
    for i in reversed(range(len(widget_states.widgets))):
        widget = widget_states.widgets[i]
        key = keys.get(widget.id)
        if key not in seen.shown:
            continue
        sent[widget.id] = raw = widget.SerializeToString()
        try:
            value, server = _value(session, widget), session[key]
        except KeyError:  # a widget the server no longer knows: Streamlit decides
            continue
        if is_stale(
            unchanged=before.get(widget.id) == raw,
            value=value,
            server=server,
            shown=seen.shown[key],
            address_seen=address_seen,
        ):
            del widget_states.widgets[i]
    echoes.sent = sent  # only this message's link widgets: it never grows


def _value(session: SessionState, widget: WidgetState) -> Any:
    """The widget's value in `widget`, deserialized as Streamlit would."""
    metadata = session._new_widget_state.widget_metadata.get(widget.id)
    if metadata is None:
        raise KeyError(widget.id)
    probe = WStates(widget_metadata={widget.id: metadata})
    probe.set_widget_from_proto(widget)
    return probe[widget.id]


def same(a: Any, b: Any) -> bool:
    """a == b as one truth value; False where there is none (arrays and the like)."""
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # arrays and the like: not comparable as one truth value
        return False
