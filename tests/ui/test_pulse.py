"""lnlab.ui.pulse, the server's side: GET .../_lnlab/pulse/<code> answered from a short cache,
without a script run, and every other request passed on."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest
import streamlit as st
from helpers import run_coroutine

from lnlab.classroom.store import CLOSED, Pulse, StoreDown
from lnlab.ui import pulse, state
from lnlab.ui.server import pulse as pulse_route

ASKED = Pulse("q1", False, 3, 30, True)


@pytest.fixture
def fake_st(monkeypatch):
    """pulse's Streamlit, its fragments plain calls; a session whose browser has said nothing
    of pulses yet."""
    monkeypatch.setattr(pulse, "st", SimpleNamespace(fragment=lambda fn: fn))
    st.session_state.pop(state.key(pulse.Pulses), None)
    yield
    st.session_state.pop(state.key(pulse.Pulses), None)


class Reads:
    """A store's pulse, counted."""

    def __init__(self, result: Pulse | Exception = ASKED) -> None:
        self.codes: list[str] = []
        self.result = result

    def __call__(self, code: str) -> Pulse:
        self.codes.append(code)
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


def test_only_pulse_paths_are_answered() -> None:
    pulses = pulse_route.Pulses(Reads())
    for other in ("/", "/class", "/_stcore/health", "/_lnlab/pulse/", "/_lnlab/pulse/a/b"):
        assert pulse_route.answer(pulses, other) is None
    assert pulse_route.answer(pulses, "/_lnlab/pulse/abc-def-ghj") == (0, {"code": "ABCDEFGHJ"})
    assert pulse_route.answer(pulses, "/course/_lnlab/pulse/ABCDEFGHJ")[0] == 0  # under a base path


def test_a_malformed_code_is_refused_with_a_reason() -> None:
    status, body = pulse_route.answer(pulse_route.Pulses(Reads()), "/_lnlab/pulse/no!")
    assert status == 404
    assert "has no" in body["error"]


def test_one_read_answers_a_whole_class_for_a_moment(monkeypatch) -> None:
    reads = Reads()
    pulses = pulse_route.Pulses(reads)
    clock = [100.0]
    monkeypatch.setattr(pulse_route.time, "monotonic", lambda: clock[0])
    for _ in range(30):  # 30 devices at once
        assert pulse_route.respond(pulses, "/_lnlab/pulse/ABCDEFGHJ") == (200, vars(ASKED))
    assert reads.codes == ["ABCDEFGHJ"]
    clock[0] += pulse_route.CACHE_S
    pulse_route.respond(pulses, "/_lnlab/pulse/ABCDEFGHJ")
    assert len(reads.codes) == 2


def test_the_cache_stays_bounded() -> None:
    pulses = pulse_route.Pulses(Reads(CLOSED))
    codes = [f"{n:09d}".translate(str.maketrans("0123456789", "23456789AB")) for n in range(1100)]
    for code in codes:
        pulses.read(code)
    assert len(pulses._kept) <= pulse_route.CACHE_CLASSES


def test_a_database_that_is_down_gets_503_and_is_asked_again_only_after_a_moment() -> None:
    reads = Reads(StoreDown("the class's database is not answering"))
    pulses = pulse_route.Pulses(reads)
    for _ in range(30):
        status, body = pulse_route.respond(pulses, "/_lnlab/pulse/ABCDEFGHJ")
        assert status == 503
        assert "not answering" in body["error"]
    assert len(reads.codes) == 1


def test_devices_asking_at_once_share_one_read() -> None:
    release = threading.Event()

    class Slow(Reads):
        def __call__(self, code: str) -> Pulse:
            release.wait(30)
            return super().__call__(code)

    reads = Slow()
    pulses = pulse_route.Pulses(reads)
    with ThreadPoolExecutor(8) as pool:
        answers = [pool.submit(pulses.read, "ABCDEFGHJ") for _ in range(8)]
        release.set()
        assert {a.result(timeout=30) for a in answers} == {ASKED}
    assert reads.codes == ["ABCDEFGHJ"]


def test_a_pulse_is_only_read_and_waiting_reads_are_bounded() -> None:
    async def app(scope, receive, send) -> None:
        raise AssertionError("passed on")

    route = pulse_route.PulseRoute(app, pulse_route.Pulses(Reads()))
    start, body = _request(route, "/_lnlab/pulse/ABCDEFGHJ", method="POST")
    assert start["status"] == 405
    route.reading = pulse_route.READERS  # as many requests as allowed wait on the database
    start, body = _request(route, "/_lnlab/pulse/ABCDEFGHJ")
    assert start["status"] == 503 and b"busy" in body["body"]


def test_a_following_view_that_fails_before_it_watches_goes_back_to_its_timer(monkeypatch, fake_st):
    timers: list[tuple[str, float]] = []
    monkeypatch.setattr(pulse.sessions, "fragment_id", lambda: "frag-1")
    monkeypatch.setattr(
        pulse.sessions, "set_timer", lambda fragment, every: timers.append((fragment, every))
    )

    @pulse.following(1.5)
    def view(fail: bool) -> None:
        if fail:
            raise RuntimeError("the database said something odd")

    with pytest.raises(RuntimeError):
        view(True)
    assert timers == [("frag-1", 1.5)]  # it tries again on the timer, as before pulses
    view(False)  # ends without watching (nothing to follow): no timer started
    assert timers == [("frag-1", 1.5)]


def test_a_view_keeps_an_hours_timer_while_its_browser_reads_pulses(monkeypatch, fake_st):
    """Streamlit's browser asks a new process for a run when it reconnects only where a timer
    runs (or the last run was a fragment's): a view whose browser reads pulses keeps a timer of
    an hour, not none; one whose browser has not said so yet keeps its own."""
    timers: list[tuple[str, float]] = []
    monkeypatch.setattr(pulse.sessions, "fragment_id", lambda: "frag-1")
    monkeypatch.setattr(
        pulse.sessions, "set_timer", lambda fragment, every: timers.append((fragment, every))
    )
    monkeypatch.setattr(pulse, "_component", lambda **kwargs: None)

    @pulse.following(1.5)
    def view() -> None:
        pulse.watch("count", "ABCDEFGHJ", pulse.COUNTS, 1.0, seen=pulse.UNKNOWN)

    view()
    assert timers == [("frag-1", 1.5)]
    state.of(pulse.Pulses).works = True  # the browser said it reads pulses
    view()
    assert timers == [("frag-1", 1.5), ("frag-1", pulse.FOLLOWING_TIMER_S)]


def _request(route: pulse_route.PulseRoute, path: str, method: str = "GET") -> list[dict]:
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b""}

    async def send(message: dict) -> None:
        sent.append(message)

    run_coroutine(route({"type": "http", "path": path, "method": method}, receive, send))
    return sent


def test_the_route_answers_json_that_no_one_caches() -> None:
    passed: list[str] = []

    async def app(scope, receive, send) -> None:
        passed.append(scope["path"])

    route = pulse_route.PulseRoute(app, pulse_route.Pulses(Reads()))
    start, body = _request(route, "/_lnlab/pulse/ABCDEFGHJ")
    headers = dict(start["headers"])
    assert start["status"] == 200
    assert headers[b"content-type"] == b"application/json"
    assert headers[b"cache-control"] == b"no-store"
    assert int(headers[b"content-length"]) == len(body["body"])
    assert json.loads(body["body"]) == vars(ASKED)
    assert _request(route, "/class") == [] and passed == ["/class"]


@pytest.mark.parametrize(
    ("state", "word"),
    [
        ({"status": "ready"}, True),
        ({"status": "failed: the server answered 404"}, False),
        ({}, None),
        (None, None),
        ({"status": 3}, None),
    ],
)
def test_the_browsers_word_on_pulses(state, word) -> None:
    assert pulse.status_of(state) is word
