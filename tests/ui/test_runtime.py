"""lnlab.ui.runtime: what it patches and reads of Streamlit is where the patches expect it.

Streamlit is pinned (requirements.txt); an upgrade that moves any of these fails here first,
by name, instead of as a silent fallback in the browser. Each patch's own behaviour is tested
beside it (test_stale, test_rerun, test_failover, test_input_limits's dropped links)."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

from helpers import ROOT
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime import app_session
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.scriptrunner import exec_code, script_runner
from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext
from streamlit.runtime.session_manager import SessionManager
from streamlit.runtime.state import query_params
from streamlit.runtime.state.session_state import SessionState
from streamlit.testing.v1 import AppTest

from lnlab.ui.runtime import links, sessions

PATCHED = {  # what install() replaces: (owner, name) -> its parameters
    "stale": (SessionState, "set_widgets_from_proto", ["self", "widget_states"]),
    "turns": (script_runner, "exec_func_with_error_handling", ["func", "ctx"]),
    "failover": (AppSession, "request_rerun", ["self", "client_state"]),
    "links": (app_session, "sanitize_query_string", ["query_string"]),
    "clear_cache": (AppSession, "_handle_clear_cache_request", ["self"]),
}


def test_every_patched_function_is_there_with_the_parameters_the_patch_passes_on():
    for owner, name, params in PATCHED.values():
        original = getattr(owner, name)
        assert list(inspect.signature(original).parameters) == params, name
    # turns wraps the function script_runner calls, which is exec_code's
    assert script_runner.exec_func_with_error_handling is exec_code.exec_func_with_error_handling
    # a browser's clear-cache message reaches the handler failover.ignore_clear_cache patches
    dispatch = inspect.getsource(AppSession.handle_backmsg)
    assert (
        'msg_type == "clear_cache":\n                self._handle_clear_cache_request()' in dispatch
    )


def test_install_patches_each_once_in_a_served_process():
    """In a fresh interpreter, as the app's lifespan does, twice: each patch is in place once,
    and Streamlit's once-a-process REPL check is done with."""
    code = """
import json
from lnlab.ui import runtime
from streamlit.runtime import app_session
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.scriptrunner import script_runner
from streamlit.runtime.state.session_state import SessionState
import streamlit.delta_generator as dg
runtime.install()
first = (SessionState.set_widgets_from_proto, script_runner.exec_func_with_error_handling,
         AppSession.request_rerun, app_session.sanitize_query_string,
         AppSession._handle_clear_cache_request)
runtime.install()
again = (SessionState.set_widgets_from_proto, script_runner.exec_func_with_error_handling,
         AppSession.request_rerun, app_session.sanitize_query_string,
         AppSession._handle_clear_cache_request)
print(json.dumps([
    first == again,
    getattr(first[0], "leaves_stale_out", False),
    getattr(first[1], "takes_turns", False),
    getattr(first[2], "lnlab_failover", False),
    getattr(first[3], "marks_dropped", False),
    getattr(first[4], "lnlab_dev_only", False),
    dg._use_warning_has_been_displayed,
]))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [True] * 7


def test_a_browsers_clear_cache_message_clears_nothing_outside_development():
    """Issue 38: any visitor's clear-cache message (BackMsg clear_cache) emptied every cache
    of the process. Sent through Streamlit's own dispatch (AppSession.handle_backmsg) in a
    served process: a cached function stays cached and the session's state is kept; with
    `make dev`'s rerun on save, the message clears both as Streamlit's does."""
    code = """
import json, types
import streamlit as st
from streamlit import config
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.runtime.app_session import AppSession
from lnlab.ui import runtime

runtime.install()
calls = []

@st.cache_data
def cached(x):
    calls.append(x)
    return x

class Session:  # what Streamlit's dispatch and handler touch of an AppSession
    def __init__(self):
        self._session_state = {"kept": 1}
        self._handle_clear_cache_request = types.MethodType(
            AppSession._handle_clear_cache_request, self)

    def handle_backmsg_exception(self, e):
        raise e

session, msg = Session(), BackMsg()
msg.clear_cache = True
cached(1)
AppSession.handle_backmsg(session, msg)
cached(1)
visitor = [len(calls), dict(session._session_state)]
config.set_option("server.runOnSave", True)
AppSession.handle_backmsg(session, msg)
cached(1)
print(json.dumps([*visitor, len(calls), session._session_state]))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [1, {"kept": 1}, 2, {}]


def test_what_sessions_reads_and_sends_is_there():
    fields = set(ScriptRunContext.__dataclass_fields__)
    read = ("session_id", "page_script_hash", "query_string", "is_history_navigation")
    missing = [
        n
        for n in (*read, "fragment_ids_this_run")
        if not (n in fields or hasattr(ScriptRunContext, n))
    ]
    assert not missing
    assert callable(AppSession._enqueue_forward_msg) and callable(AppSession.has_fragment)
    assert isinstance(inspect.getattr_static(AppSession, "page_script_hash"), property)
    assert callable(SessionManager.get_active_session_info)
    msg = sessions.address_message("a=1")
    assert msg.page_info_changed.query_string == "a=1"
    timer = ForwardMsg()
    timer.auto_rerun.interval, timer.auto_rerun.fragment_id = 1.5, "f"
    assert links.MAX_QUERY_CHARS == query_params.CLIENT_STATE_QUERY_STRING_MAX_LENGTH > 0


def _reads() -> None:  # an AppTest script: what lnlab.ui.runtime.sessions reads in a real run
    import streamlit as st

    from lnlab.ui.runtime import sessions

    st.session_state.page = [sessions.session_id(), sessions.page_hash()]
    st.session_state.alone = sessions.runs_fragments_alone()
    st.session_state.outside = sessions.fragment_id()
    st.session_state.drawn = [sessions.drew_widget("box")]
    st.text_input("Box", key="box")
    st.session_state.drawn.append(sessions.drew_widget("box"))

    @st.fragment
    def part() -> None:
        st.session_state.inside = sessions.fragment_id()

    part()


def test_the_readers_answer_inside_a_run():
    at = AppTest.from_function(_reads, default_timeout=30).run()
    assert not at.exception
    session, page = at.session_state.page
    assert session and page
    assert at.session_state.alone is False and at.session_state.outside is None
    assert at.session_state.inside  # the fragment's own id
    assert at.session_state.drawn == [False, True]


def test_the_readers_answer_neutrally_outside_a_run():
    assert (sessions.session_id(), sessions.page_hash(), sessions.query_string()) == ("", "", "")
    assert sessions.fragment_id() is None and not sessions.runs_fragments_alone()
    assert not sessions.history_navigation() and not sessions.drew_widget("box")
    assert sessions.tell_browser("no-session", "page", "a=1") is False
