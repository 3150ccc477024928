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

`ignore_clear_cache()`, AppSession's other patch: the "clear cache" message any browser can
send (BackMsg clear_cache; the menu and the C key send it in development) empties every
st.cache_data and st.cache_resource of the process, for every visitor (issue 38: a
bystander's clicks took 1.4-2.4x as long while one visitor sent it over and over). Outside
development (`development()`) it does nothing; the visitor's own rerun still runs. Upstream,
AppSession._handle_clear_cache_request says so itself ("this cache is global, it will be
cleared for all users"). tests/ui/test_runtime.py.
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


def development() -> bool:
    """Whether the server runs for a developer: Streamlit's development mode, or `make dev`
    (rerun on save)."""
    from streamlit import config

    return bool(
        config.get_option("global.developmentMode") or config.get_option("server.runOnSave")
    )


def _clear_cache(original: Any) -> Any:
    def handle_clear_cache_request(self: AppSession) -> None:
        if development():
            original(self)

    handle_clear_cache_request.lnlab_dev_only = True  # type: ignore[attr-defined]
    return handle_clear_cache_request


def ignore_clear_cache() -> None:
    """Patch AppSession._handle_clear_cache_request (once): a browser's clear-cache message
    does nothing outside development."""
    if not getattr(AppSession._handle_clear_cache_request, "lnlab_dev_only", False):
        AppSession._handle_clear_cache_request = _clear_cache(  # type: ignore[method-assign]
            AppSession._handle_clear_cache_request
        )
