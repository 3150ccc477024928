"""A student's device follows the class by its pulse (lnlab.ui.pulse): in Chromium, with the
server's own route, idle devices run no script at all and still show a question the moment
it is asked; a browser that cannot read pulses follows on its fragment's timer instead."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect
from streamlit.proto.BackMsg_pb2 import BackMsg

from lnlab.classroom.live import LiveOption, LiveQuestion
from lnlab.classroom.store import ClassStore, Limits, NewClass

from .conftest import APP_TIMEOUT_MS, StreamlitServer, wait_for_app

pytestmark = pytest.mark.browser

QUESTION = LiveQuestion(
    qid="pulse-q",
    page="pulse",
    prompt="What is the mean of 1, 2, 3?",
    options=(LiveOption("2", "right", "Yes."), LiveOption("6", "sum", "That is the sum.")),
    explanation="The sum over the count.",
)
IDLE_READS = 4  # pulse reads watched for script runs: a 1.5 s timer would fire in them


class Device:
    """A student's phone: its page, the script runs it asked for and the pulses it read."""

    def __init__(self, browser: Browser, server: StreamlitServer, code: str, student: str):
        self.context = browser.new_context(viewport={"width": 390, "height": 844})
        self.context.add_cookies([{"name": "lnlab_browser", "value": student, "url": server.url}])
        self.page: Page = self.context.new_page()
        self.runs = 0
        self.reads = 0
        self.page.on("websocket", lambda ws: ws.on("framesent", self._sent))
        self.page.on("requestfinished", self._finished)
        self.url = f"{server.url}/class?join={code}"

    def _sent(self, payload: str | bytes) -> None:
        if isinstance(payload, bytes):
            msg = BackMsg()
            msg.ParseFromString(payload)
            self.runs += msg.WhichOneof("type") == "rerun_script"

    def _finished(self, request) -> None:
        self.reads += "/_lnlab/pulse/" in request.url

    def wait_reads(self, more: int) -> None:
        """Until the page has read `more` pulses (60 s at most: it reads one a second)."""
        target = self.reads + more
        for _ in range(600):
            if self.reads >= target:
                return
            self.page.wait_for_timeout(100)  # a poll of a bounded wait for what must happen
        raise AssertionError(f"only {self.reads} pulse reads of {target}")


@pytest.fixture
def classroom(streamlit_server: StreamlitServer) -> Iterator[tuple[ClassStore, NewClass]]:
    db = streamlit_server.log_path.parent / f"classes-{streamlit_server.port}.db"
    store = ClassStore(f"sqlite:///{db}", limits=Limits(joins_per_address=1000))
    yield store, store.open_class()
    store.close()


def _joined(browser, server, store, new) -> Device:
    student = secrets.token_urlsafe(18)
    store.join(new.code, browser=student)
    device = Device(browser, server, new.code, student)
    device.page.goto(device.url)
    wait_for_app(device.page)
    waiting = device.page.get_by_test_id("stAlertContentInfo")
    expect(waiting).to_contain_text("Waiting for the teacher's first question")
    return device


def test_an_idle_device_runs_nothing_and_shows_a_question_once_asked(
    browser: Browser, streamlit_server: StreamlitServer, classroom
) -> None:
    store, new = classroom
    device = _joined(browser, streamlit_server, store, new)
    try:
        device.wait_reads(2)  # it has said it reads pulses: its timer is set to an hour
        runs = device.runs
        device.wait_reads(IDLE_READS)
        assert device.runs == runs, "an idle device asked for script runs"
        store.pose(new.code, new.teacher_secret, QUESTION)
        expect(device.page.get_by_role("heading", name=QUESTION.prompt)).to_be_visible(
            timeout=APP_TIMEOUT_MS
        )
        assert device.runs == runs + 1  # one run: the one that draws the question
        store.reveal(new.code, new.teacher_secret, QUESTION.qid)
        answer = device.page.get_by_test_id("stMarkdownContainer").filter(has_text="The answer:")
        expect(answer).to_be_visible(timeout=APP_TIMEOUT_MS)
    finally:
        device.context.close()


def test_a_browser_that_cannot_read_pulses_follows_on_a_timer(
    browser: Browser, streamlit_server: StreamlitServer, classroom
) -> None:
    store, new = classroom
    student = secrets.token_urlsafe(18)
    store.join(new.code, browser=student)
    device = Device(browser, streamlit_server, new.code, student)
    device.page.route("**/_lnlab/pulse/**", lambda route: route.abort())
    try:
        device.page.goto(device.url)
        wait_for_app(device.page)
        store.pose(new.code, new.teacher_secret, QUESTION)
        expect(device.page.get_by_role("heading", name=QUESTION.prompt)).to_be_visible(
            timeout=APP_TIMEOUT_MS
        )
        assert device.reads == 0
    finally:
        device.context.close()
