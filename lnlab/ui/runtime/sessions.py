"""What the app reads of Streamlit's script run and sessions, and the two messages it sends them.

Streamlit 1.67 has no public API for these; each reader falls back to a neutral answer
(None, "", False) where there is no run (a plain call in a test) or where a later Streamlit
moved the attribute, so the app degrades to its fallbacks instead of failing.
tests/ui/test_runtime.py fails when one of them stops answering inside a real run.

- The run's identity: `session_id`, `page_hash` (the page's script hash), `fragment_id` (the
  fragment running now), `runs_fragments_alone` (a fragment's own run, not a whole page's),
  `query_string` (the address the message that started the run carried),
  `history_navigation` (the run comes from the browser's Back or Forward) and `drew_widget`
  (the widgets drawn so far in this run). `st.context` has the URL but none of these.
- `set_timer`: the browser's timer that reruns a fragment, as `st.fragment(run_every=)` sets
  it, but changed by the fragment's own run (lnlab.ui.pulse: an hour while the browser
  reads pulses, seconds when it cannot). No upstream issue found that asks to change
  run_every from inside the fragment's run.
- `tell_browser`: the page's new address sent from outside any run (the step route, on the
  event loop), as a run's `st.query_params` sends it.
"""

from __future__ import annotations

from typing import Any


def _ctx() -> Any:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    return get_script_run_ctx(suppress_warning=True)


def session_id() -> str:
    """The session running now ("" outside a run)."""
    return str(getattr(_ctx(), "session_id", "") or "")


def page_hash() -> str:
    """The script hash of the page running now ("" outside a run)."""
    return str(getattr(_ctx(), "page_script_hash", "") or "")


def query_string() -> str:
    """The query string the message that started this run carried ("" outside a run)."""
    return str(getattr(_ctx(), "query_string", "") or "")


def history_navigation() -> bool:
    """Whether this run comes from the browser's Back or Forward."""
    return bool(getattr(_ctx(), "is_history_navigation", False))


def drew_widget(key: str) -> bool:
    """Whether this run has drawn the widget keyed `key` so far (False outside a run)."""
    keys = getattr(getattr(_ctx(), "shared", None), "widget_user_keys_this_run", None)
    return keys is not None and key in keys


def runs_fragments_alone() -> bool:
    """Whether this run is a fragment's own (not a whole page's, which runs every fragment)."""
    return bool(getattr(_ctx(), "fragment_ids_this_run", None))


def fragment_id() -> str | None:
    """The fragment running now (Streamlit's own bookkeeping; None outside one)."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

    try:
        return ThreadState.get().fragment_id
    except (RuntimeError, AttributeError):  # no script run (a plain call in a test)
        return None


def set_timer(fragment: str, every_s: float) -> None:
    """Set the browser's timer that reruns `fragment` every `every_s`, as Streamlit's
    `run_every` does (the browser keeps a timer sent again unchanged)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = ForwardMsg()
    msg.auto_rerun.interval = every_s
    msg.auto_rerun.fragment_id = fragment
    if (ctx := _ctx()) is not None:
        ctx.enqueue(msg)


def send_address(query: str) -> None:
    """From a run: give its page the address `query` after what the run sent so far (in order,
    through the run's own queue)."""
    if (ctx := _ctx()) is not None:
        ctx.enqueue(address_message(query))


def address_message(query: str) -> Any:
    """The message that gives a page its new address (`query`), as st.query_params sends it."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = ForwardMsg()
    msg.page_info_changed.query_string = query
    return msg


def tell_browser(session: str, page: str, query: str) -> bool:
    """Send session `session`'s browser its new address `query`, from the event loop. False if
    the session is not on this process, or its last run started is of another page than the
    script hash `page`."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return False
    info = Runtime.instance()._session_mgr.get_active_session_info(session)
    if info is None or info.session.page_script_hash != page:
        return False
    info.session._enqueue_forward_msg(address_message(query))
    return True
