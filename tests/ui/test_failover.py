"""lnlab.ui.runtime.failover on a stand-in session: which rerun requests become whole-page runs."""

from __future__ import annotations

from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime.app_session import AppSession

from lnlab.ui.runtime import failover


class FakeSession:
    def __init__(self, fragments: set[str] = frozenset()) -> None:
        self.fragments = fragments
        self.requests: list[ClientState | None] = []

    def has_fragment(self, fragment_id: str) -> bool:
        return fragment_id in self.fragments


def _patched():
    return failover._request_rerun(lambda session, state: session.requests.append(state))


def test_a_new_sessions_first_fragment_click_runs_the_whole_page():
    session, rerun = FakeSession(), _patched()
    rerun(session, ClientState(fragment_id="lesson", query_string="v=1&x=1,2"))
    (sent,) = session.requests
    assert sent.fragment_id == "" and sent.query_string == "v=1&x=1,2"


def test_after_a_whole_page_run_fragment_requests_pass_unchanged():
    session, rerun = FakeSession(), _patched()
    rerun(session, None)  # the page's first run, as a browser opening it asks
    rerun(session, ClientState(fragment_id="gone"))  # Streamlit drops it, as before
    assert session.requests[1].fragment_id == "gone"


def test_known_fragments_pass_unchanged():
    session, rerun = FakeSession({"lesson", "timer"}), _patched()
    rerun(session, ClientState(fragment_id="lesson"))
    rerun(session, ClientState(fragment_id="timer", is_auto_rerun=True))
    assert [s.fragment_id for s in session.requests] == ["lesson", "timer"]


def test_a_new_sessions_first_timed_rerun_runs_the_whole_page():
    """A live class's panel polls (a timed fragment): after a move to another process its
    first poll rebuilds the page, which finds the class again from the browser's cookies."""
    session, rerun = FakeSession(), _patched()
    rerun(session, ClientState(fragment_id="poll", is_auto_rerun=True))
    rerun(session, ClientState(fragment_id="poll", is_auto_rerun=True))
    assert [s.fragment_id for s in session.requests] == ["", "poll"]


def test_install_patches_once():
    original = AppSession.request_rerun
    try:
        failover.install()
        patched = AppSession.request_rerun
        failover.install()
        assert AppSession.request_rerun is patched is not original
    finally:
        AppSession.request_rerun = original
