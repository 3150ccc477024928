"""A student's device follows the class by its pulse (lnlab.ui.pulse): in Chromium, with the
server's own routes, the page draws the question, the tap and the reveal itself with no script
run (lnlab.ui.classroom.phone); a tap the answer route cannot take goes by the script; a
browser that cannot read pulses follows on its fragment's timer instead."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect
from streamlit.proto.BackMsg_pb2 import BackMsg

from lnlab.classroom.live import LiveOption, LiveQuestion
from lnlab.classroom.store import ClassStore, Limits, NewClass, display_code

from .conftest import APP_TIMEOUT_MS, StreamlitServer, wait_for_app

pytestmark = pytest.mark.browser

QUESTION = LiveQuestion(
    qid="pulse-q",
    page="pulse",
    prompt="What is the mean of 1, 2, 3?",
    options=(LiveOption("2", "right", "Yes."), LiveOption("6", "sum", "That is the sum.")),
    explanation="The sum over the count.",
)


class Device:
    """A student's phone: its page, the script runs it asked for and the pulses it read."""

    def __init__(self, browser: Browser, server: StreamlitServer, code: str, student: str):
        self.context = browser.new_context(viewport={"width": 390, "height": 844})
        self.context.add_cookies([{"name": "lnlab_browser", "value": student, "url": server.url}])
        self.student = student
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
    # the words on screen (Python's notice, or the phone the page draws), not the same words
    # for screen readers (lnlab.ui.assist.say), there too once the live region has them
    waiting = device.page.get_by_text("Waiting for the teacher's first question")
    expect(waiting.and_(device.page.locator(":not(.lnlab-say)")).first).to_be_visible()
    return device


def _drawn_by_page(device: Device) -> int:
    """Once the page draws the phone itself (its browser said it reads pulses): the script
    runs it has asked for so far."""
    expect(device.page.get_by_test_id("lnlabPhone")).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(device.page.get_by_test_id("stApp")).to_have_attribute(
        "data-test-script-state", "notRunning", timeout=APP_TIMEOUT_MS
    )
    return device.runs


def _callout(page: Page, text: str):
    return page.locator(".lnlab-phone-callout").filter(has_text=text)


def test_a_phone_draws_the_class_itself_and_runs_no_script(
    browser: Browser, streamlit_server: StreamlitServer, classroom
) -> None:
    """Issue 39: the question asked, a tap, the reveal with the student's feedback and score,
    all with no script run; Python runs again only once the class has ended."""
    store, new = classroom
    device = _joined(browser, streamlit_server, store, new)
    try:
        runs = _drawn_by_page(device)
        device.page.wait_for_timeout(3000)  # a window in which a 1.5 s timer would fire twice
        assert device.runs == runs, "an idle device asked for script runs"
        store.pose(new.code, new.teacher_secret, QUESTION)
        page = device.page
        expect(page.get_by_role("heading", name=QUESTION.prompt)).to_be_visible(
            timeout=APP_TIMEOUT_MS
        )
        page.get_by_role("button", name="1 2").click()
        expect(_callout(page, "Your answer: 2. Waiting for the reveal…")).to_be_visible(
            timeout=APP_TIMEOUT_MS
        )
        student = store.find_student(new.code, device.student)
        assert store.my_answer(new.code, student, QUESTION.qid) == "2"
        store.reveal(new.code, new.teacher_secret, QUESTION.qid)
        expect(_callout(page, "You answered 2: Yes.")).to_be_visible(timeout=APP_TIMEOUT_MS)
        expect(page.get_by_text("The answer: 2", exact=True)).to_be_visible()
        expect(page.locator(".lnlab-phone-score-value")).to_have_text("1 / 1")
        assert device.runs == runs, "the question, the tap or the reveal ran a script"
        store.end_class(new.code, new.teacher_secret)
        ended = f"Class {display_code(new.code)} has ended."
        expect(page.get_by_text(ended)).to_be_visible(timeout=APP_TIMEOUT_MS)
    finally:
        device.context.close()


def test_a_tap_the_route_cannot_take_goes_by_the_script(
    browser: Browser, streamlit_server: StreamlitServer, classroom
) -> None:
    store, new = classroom
    device = _joined(browser, streamlit_server, store, new)
    device.page.route("**/_lnlab/answer/**", lambda route: route.abort())
    try:
        _drawn_by_page(device)
        store.pose(new.code, new.teacher_secret, QUESTION)
        device.page.get_by_role("button", name="2 6").click()
        expect(_callout(device.page, "Your answer: 6. Waiting for the reveal…")).to_be_visible(
            timeout=APP_TIMEOUT_MS
        )
        student = store.find_student(new.code, device.student)
        assert store.my_answer(new.code, student, QUESTION.qid) == "6"
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
