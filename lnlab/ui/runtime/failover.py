"""A visitor moved to another server process keeps working: its first click runs the page.

When a process goes away (killed, restarted, scaled down), the browser reconnects through the
proxy to another process, which starts a new, empty session and runs nothing until the
browser asks. Streamlit's browser asks for a whole-page run on reconnecting only where a
fragment has a timer or the last run was a fragment's (a live class's views keep a timer for
this: lnlab.ui.pulse). Otherwise its next click on a lesson's Previous or Next asks to rerun
the lesson's fragment, which the new session has never run, and Streamlit 1.67 drops that
request (AppSession.request_rerun: "The fragment ... does not exist anymore"): the click does
nothing. `install()` turns such a request, in a session that has not run the page yet, into a
run of the whole page with the same widget states and URL, so the click takes effect and the
page is rebuilt from its link (tests/browser/test_cluster_failover.py). The same goes for a
fragment's timed rerun or a pulse's (a live class's views): the first one after the move runs
the page, which finds the teacher's class or the student's place again from the browser's
cookies.
Fragment ids are hashes of the fragment's definition and place, so after that run the
browser's fragment ids are the session's own again.
Upstream: streamlit/streamlit#11660 ("missing fragment after reconnect"), fixed by PR #11890 for
a reconnect whose last run had fragments or timers (the browser asks for a whole run); a click
on a fragment after a reconnect whose last run was a whole page's is still dropped, which this
covers. tests/ui/test_failover.py.
"""

from __future__ import annotations

from typing import Any

from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime.app_session import AppSession

_RAN = "_lnlab_ran_page"  # set on a session once it has been asked for a whole-page run


def _request_rerun(original: Any) -> Any:
    def request_rerun(self: AppSession, client_state: ClientState | None) -> None:
        if client_state is not None and client_state.fragment_id:
            first = not getattr(self, _RAN, False)
            if first and not self.has_fragment(client_state.fragment_id):
                whole = ClientState()
                whole.CopyFrom(client_state)
                whole.fragment_id = ""
                whole.is_auto_rerun = False  # a whole run: the page's, not a timer's
                client_state = whole
        if client_state is None or not client_state.fragment_id:
            setattr(self, _RAN, True)
        original(self, client_state)

    request_rerun.lnlab_failover = True  # type: ignore[attr-defined]
    return request_rerun


def install() -> None:
    """Patch AppSession.request_rerun (once) in this server process."""
    if not getattr(AppSession.request_rerun, "lnlab_failover", False):
        AppSession.request_rerun = _request_rerun(AppSession.request_rerun)  # type: ignore[method-assign]
