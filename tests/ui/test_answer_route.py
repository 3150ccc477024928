"""POST .../_lnlab/answer/<code>: a phone's tap stored with no script run
(lnlab.ui.server.answers), checked as the store checks every answer, bounded per student,
per address and per process."""

from __future__ import annotations

import asyncio
import json

import pytest

from lnlab.classroom.store import ClassStore
from lnlab.ui.server import answers
from tests.classroom.test_store import question


@pytest.fixture
def store(tmp_path, monkeypatch):
    opened = ClassStore(f"sqlite:///{tmp_path / 'classes.db'}")
    monkeypatch.setattr(answers, "default_store", lambda: opened)
    yield opened
    opened.close()


@pytest.fixture
def posed(store: ClassStore):
    new = store.open_class()
    store.pose(new.code, new.teacher_secret, question())
    return new


def _post(route, code: str, body: bytes | dict, *, method="POST", address="10.0.0.1", headers=()):
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": raw, "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": method,
        "path": f"/course/_lnlab/answer/{code}",
        "headers": list(headers),
        "client": (address, 1),
    }
    asyncio.run(route(scope, receive, send))
    return sent[0]["status"], json.loads(sent[1]["body"])


def test_a_tap_is_stored_and_says_what_the_phone_draws(store: ClassStore, posed) -> None:
    route = answers.AnswerRoute(None)
    me = store.join(posed.code)
    status, got = _post(route, posed.code, {"me": me, "qid": "q1", "option": 0})
    assert status == 200
    assert got == {"stored": True, "qid": "q1"}  # the phone draws the option it sent
    assert store.my_answer(posed.code, me, "q1") == "5"
    route._last.clear()  # the pace: another moment
    status, got = _post(route, posed.code, {"me": me, "qid": "q1", "option": 1})
    assert got["stored"] is False and got["mine"] == "5"  # the first answer counts
    store.reveal(posed.code, posed.teacher_secret, "q1")
    route._last.clear()
    status, got = _post(route, posed.code, {"me": me})  # no tap: what this student has
    assert got == {"stored": None, "qid": "q1", "mine": "5", "right": 1, "answered": 1}


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (b"not json", 400, "not JSON"),
        ({"qid": "q1", "option": 0}, 400, "a tap is"),
        ({"me": "ME", "qid": "q1", "option": "0"}, 400, "whole number"),
        ({"me": "ME", "qid": "q1", "option": True}, 400, "whole number"),
        ({"me": "ME", "qid": 1, "option": 0}, 400, "qid is text"),
        ({"me": "ME", "qid": "q1", "option": 9}, 409, "not one of this question's options"),
        ({"me": "someone-else", "qid": "q1", "option": 0}, 409, "join the class first"),
    ],
)
def test_a_bad_tap_gets_a_reason(store: ClassStore, posed, body, status, says) -> None:
    me = store.join(posed.code)
    if isinstance(body, dict) and body.get("me") == "ME":
        body = {**body, "me": me}
    got_status, got = _post(answers.AnswerRoute(None), posed.code, body)
    assert got_status == status and says in got["error"]
    assert store.my_answer(posed.code, me, "q1") is None


def test_a_revealed_question_or_an_ended_class_refuses_taps(store: ClassStore, posed) -> None:
    me = store.join(posed.code)
    store.reveal(posed.code, posed.teacher_secret, "q1")
    status, got = _post(answers.AnswerRoute(None), posed.code, {"me": me, "qid": "q1", "option": 0})
    assert status == 409 and "revealed" in got["error"]
    store.end_class(posed.code, posed.teacher_secret)
    status, got = _post(answers.AnswerRoute(None), posed.code, {"me": me})
    assert status == 409 and "ended" in got["error"]
    status, got = _post(answers.AnswerRoute(None), "no!", {"me": me})
    assert status == 404


def test_only_a_small_post_is_read(store: ClassStore, posed) -> None:
    route = answers.AnswerRoute(None)
    status, _ = _post(route, posed.code, {"me": "x"}, method="GET")
    assert status == 405
    big = {"me": "x" * answers.MAX_BODY}
    status, _ = _post(route, posed.code, big)
    assert status == 413


def test_taps_are_paced_per_student_and_strangers_per_address(store: ClassStore, posed) -> None:
    route = answers.AnswerRoute(None)
    me = store.join(posed.code)
    assert _post(route, posed.code, {"me": me, "qid": "q1", "option": 0})[0] == 200
    status, got = _post(route, posed.code, {"me": me, "qid": "q1", "option": 1})
    assert status == 429 and "one tap at a time" in got["error"]  # a script re-tapping
    for n in range(answers.UNKNOWN_PER_10S):
        status, _ = _post(route, posed.code, {"me": f"guess-{n:04d}-abcdef"}, address="203.0.113.7")
        assert status == 409
    status, got = _post(route, posed.code, {"me": "guess-more-abcdef"}, address="203.0.113.7")
    assert status == 429 and "no class has" in got["error"]
    other = store.join(posed.code)
    status, _ = _post(
        route, posed.code, {"me": other, "qid": "q1", "option": 1}, address="10.9.9.9"
    )
    assert status == 200  # another address is not held back


def test_a_process_queues_at_most_queued_taps(store: ClassStore, posed, monkeypatch) -> None:
    route = answers.AnswerRoute(None)
    route.queued = answers.QUEUED
    status, got = _post(route, posed.code, {"me": store.join(posed.code)})
    assert status == 503 and "busy" in got["error"]


def test_a_tap_wakes_the_devices_waiting_on_the_class(store: ClassStore, posed) -> None:
    heard: list[str] = []
    store.listen(heard.append)
    me = store.join(posed.code)
    heard.clear()
    _post(answers.AnswerRoute(None), posed.code, {"me": me, "qid": "q1", "option": 0})
    assert heard == [posed.code]
