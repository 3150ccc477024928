"""The pulse route's held reads (lnlab.ui.server.waiting) and the phone's board
(lnlab.ui.server.board): a device that drew the class as it is waits, holding no thread, until
a watched field changes (heard at once from this process's store, within WATCH_S from another's),
HOLD_S passes or it goes away; a phone reads the question, and its answer only once revealed."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import quote

import pytest

from lnlab.classroom.live import LiveOption, LiveQuestion
from lnlab.classroom.store import CLOSED, Board, Posed, Pulse
from lnlab.ui.server import board as boards
from lnlab.ui.server import pulse as pulse_route
from lnlab.ui.server import waiting

QUESTION = LiveQuestion(
    qid="q1",
    page="Token",
    prompt="What is the mean of 2, 4, 6, 8?",
    options=(LiveOption("5", "right", "Yes: 20 / 4."), LiveOption("20", "sum", "The sum.")),
    explanation="The sum over the count.",
    data="x = (2, 4, 6, 8) · D = 4",
)
WAITING = Board(Pulse(None, False, 0, 30, True), None)
ASKED = Board(Pulse("q1", False, 0, 30, True), Posed(QUESTION, False))
REVEALED = Board(Pulse("q1", True, 1, 30, True), Posed(QUESTION, True))
CODE = "ABCDEFGHJ"
PHONE = ("qid", "revealed", "open")


class Store:
    """A class store's boards as another process changes them (`now`), and this process's
    listener (`heard`), as ClassStore.listen keeps it."""

    def __init__(self, now: Board = WAITING) -> None:
        self.now = now
        self.reads = 0
        self.heard = None

    def __call__(self, code: str) -> Board:
        self.reads += 1
        return self.now if code == CODE else Board(CLOSED, None)

    def listen(self, heard) -> None:
        self.heard = heard


def _route(store: Store) -> pulse_route.PulseRoute:
    route = pulse_route.PulseRoute(None, pulse_route.Pulses(store))
    route.waiting._listen = store.listen
    return route


def _since(board: Board, watch=PHONE) -> str:
    return quote(boards.stamp(vars(board.pulse), watch))


async def _get(route, query: str, gone: asyncio.Event | None = None) -> tuple[int, dict]:
    sent: list[dict] = []

    async def receive() -> dict:
        if gone is None:
            await asyncio.Event().wait()  # the client stays
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": f"/_lnlab/pulse/{CODE}"}
    await route({**scope, "query_string": query.encode(), "client": ("10.0.0.1", 1)}, receive, send)
    return sent[0]["status"], json.loads(sent[1]["body"])


def _run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


def test_the_stamp_is_what_the_page_writes() -> None:
    assert boards.stamp(vars(ASKED.pulse), PHONE) == '["q1",false,true]'
    assert boards.stamp({}, ("qid",)) == "[null]"  # nothing drawn
    assert boards.stamp(vars(ASKED.pulse), ("answered", "joined")) == "[0,30]"


def test_a_phone_reads_the_question_and_its_answer_only_once_revealed() -> None:
    asked = json.loads(boards.body(ASKED, question=True))
    assert asked["question"] == {
        "qid": "q1",
        "prompt": QUESTION.prompt,
        "data": QUESTION.data,
        "options": ["5", "20"],
        "revealed": False,
    }
    revealed = json.loads(boards.body(REVEALED, question=True))["question"]
    assert revealed["right"] == [0]
    assert revealed["feedback"] == ["Yes: 20 / 4.", "The sum."]
    assert revealed["explanation"] == QUESTION.explanation
    assert json.loads(boards.body(WAITING, question=True))["question"] is None
    assert "question" not in json.loads(boards.body(ASKED, question=False))  # the teacher's


def test_a_device_as_drawn_waits_until_this_process_changes_the_class() -> None:
    store = Store()
    route = _route(store)

    async def run():
        await _get(route, "question=1")  # the first read: the class is known here
        held = asyncio.ensure_future(
            _get(route, f"question=1&watch=qid,revealed,open&since={_since(WAITING)}")
        )
        for _ in range(50):
            await asyncio.sleep(0.01)
        assert not held.done() and route.waiting.held == 1
        store.now = ASKED
        store.heard(CODE)  # this process stored it (from a worker thread, say)
        status, got = await held
        assert status == 200 and got["qid"] == "q1" and got["question"]["options"] == ["5", "20"]
        assert route.waiting.held == 0

    _run(run())


def test_another_process_s_change_is_found_within_a_read(monkeypatch) -> None:
    store = Store(ASKED)
    route = _route(store)

    async def run():
        await _get(route, "")
        held = asyncio.ensure_future(_get(route, f"watch=qid,revealed,open&since={_since(ASKED)}"))
        await asyncio.sleep(0.05)
        store.now = REVEALED  # no listener hears it: the watcher's reads find it
        _status, got = await held
        assert got["revealed"] is True and "question" not in got

    _run(run())


def test_a_device_whose_drawing_is_old_is_answered_at_once() -> None:
    route = _route(Store(ASKED))

    async def run():
        await _get(route, "")
        _status, got = await _get(route, f"watch=qid,revealed,open&since={_since(WAITING)}")
        assert got["qid"] == "q1" and route.waiting.held == 0

    _run(run())


def test_the_teacher_waits_on_counts_and_the_phones_not(monkeypatch) -> None:
    """An answer moves the count: the teacher's device is answered, a phone stays held."""
    store = Store(ASKED)
    route = _route(store)

    async def run():
        await _get(route, "")
        phone = asyncio.ensure_future(_get(route, f"watch=qid,revealed,open&since={_since(ASKED)}"))
        counts = ("answered", "joined")
        teacher = asyncio.ensure_future(
            _get(route, f"watch=answered,joined&since={_since(ASKED, counts)}")
        )
        await asyncio.sleep(0.05)
        store.now = Board(Pulse("q1", False, 1, 30, True), ASKED.posed)
        store.heard(CODE)
        assert (await teacher)[1]["answered"] == 1
        await asyncio.sleep(3 * waiting.WATCH_S)
        assert not phone.done()
        phone.cancel()

    _run(run())


def test_a_held_read_ends_after_hold_s_or_when_the_device_goes(monkeypatch) -> None:
    monkeypatch.setattr(waiting, "HOLD_S", 0.3)
    store = Store(ASKED)
    route = _route(store)

    async def run():
        await _get(route, "")
        query = f"watch=qid,revealed,open&since={_since(ASKED)}"
        status, got = await _get(route, query)  # nothing new within HOLD_S: as it was
        assert status == 200 and got["qid"] == "q1" and route.waiting.held == 0
        monkeypatch.setattr(waiting, "HOLD_S", 60.0)
        gone = asyncio.Event()
        held = asyncio.ensure_future(_get(route, query, gone))
        await asyncio.sleep(0.05)
        assert route.waiting.held == 1
        gone.set()
        await held
        assert route.waiting.held == 0
        for _ in range(100):  # the class's watcher stops once nobody waits
            if not route.waiting._watchers:
                break
            await asyncio.sleep(0.01)
        assert not route.waiting._watchers

    _run(run())


def test_no_read_is_held_for_a_closed_or_unknown_class_or_past_max_held(monkeypatch) -> None:
    store = Store(Board(CLOSED, None))
    route = _route(store)
    closed = _since(Board(CLOSED, None))

    async def run():
        _, got = await _get(route, f"watch=qid,revealed,open&since={closed}")
        assert got["open"] is False and route.waiting.held == 0
        store.now = ASKED
        route.pulses.forget(CODE)
        monkeypatch.setattr(waiting, "MAX_HELD", 0)
        await _get(route, "")
        status, got = await _get(route, f"watch=qid,revealed,open&since={_since(ASKED)}")
        assert status == 200 and route.waiting.held == 0

    _run(run())


@pytest.mark.parametrize(
    "query",
    [
        "watch=secret&since=1",
        "watch=qid,qid,qid,qid,qid,qid&since=1",
        f"watch=qid&since={'1' * 301}",
    ],
)
def test_a_malformed_wait_is_refused(query: str) -> None:
    route = _route(Store(ASKED))
    status, got = _run(_get(route, query))
    assert status == 400 and got["error"]
