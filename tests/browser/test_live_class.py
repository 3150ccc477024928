"""A whole live lesson in real browsers: a teacher at 1024 x 768 and six students on phones
(390 x 844), each in a browser context of their own (their own cookies, so their own
Streamlit session and their own browser id).

The teacher starts a class from the sidebar of the home page and the Class page shows the
join link and QR code; the students scan it (the test reads the QR code off the screen with
zxing-cpp) and join; the teacher opens a lesson at its first question and asks it (three
clicks from the home page, no scrolling); the projector shows the question and "N of 6
answered", never which option is right; the teacher reveals; the students get their
feedback; the teacher reloads, opens a new tab and the server restarts, and each time the
class comes back as it was; the next question is asked and answered; a student leaves and
rejoins with the same score. Each slide, asked and revealed, fits 1024 x 768. axe checks
the teacher's Class page, each student's page when asked and after Reveal, and the teacher's
slide after Reveal.
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import Iterator

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import Browser, Page, expect

from lnlab.classroom.links import PUBLIC_URL_ENV
from lnlab.serving.cluster import free_port

from .axe import assert_accessible
from .conftest import (
    MAIN,
    OUTPUT,
    PHONE_OPTION,
    PHONE_SCORE,
    POLL_MS,
    SIDEBAR,
    StreamlitServer,
    assert_no_problems,
    expect_rerun,
    new_app_page,
    next_slide,
    runs_finished,
    slide_drawn,
    slide_number,
    start_server,
    wait_for_app,
)
from .slides import PROJECTORS, measure
from .test_phone import PHONE, phone_problems

pytestmark = pytest.mark.browser

STUDENTS = 6
NICKNAMES = ("Ana", "\u0410na", "👩🏽\u200d💻 Dev", "", "", "")  # the second with a Cyrillic А
COLD_MS = 120_000  # the first page of a new server, on two cores shared with other work
LIVE_MS = 20_000  # polls are 1 to 1.5 s; two shared cores run seven browsers and the server
COUNT = ".lnlab-live-count"
# the phone's feedback after Reveal (static/lnlab/phone.mjs): right, or not
FEEDBACK = '.lnlab-phone-callout[data-kind="success"], .lnlab-phone-callout[data-kind="warning"]'
DIALOG = '[role="dialog"]'
# The distribution's bars print their counts: they add up to the students who answered.
BARS_SUM_JS = """(n) => {
    const texts = document.querySelectorAll('[role="dialog"] .bartext');
    return [...texts].reduce((sum, t) => sum + Number(t.textContent), 0) === n;
}"""


@pytest.fixture
def server(tmp_path_factory) -> Iterator[list[StreamlitServer]]:
    """The app on a port of its own whose public address is that port on this machine (the
    QR code holds it: phones in the test reach only loopback). A list, so the test can
    restart it: the same port and database."""
    folder = tmp_path_factory.mktemp("live-class")
    port = free_port()
    running = [start_server(folder, port, {PUBLIC_URL_ENV: f"http://127.0.0.1:{port}"})]
    running.append(folder)  # type: ignore[arg-type]
    yield running
    running[0].stop()


def _restart(server: list) -> None:
    old, folder = server[0], server[1]
    old.stop()
    server[0] = start_server(folder, old.port, {PUBLIC_URL_ENV: f"http://127.0.0.1:{old.port}"})


def _qr_link(page: Page) -> str:
    """The QR code on screen, read as a phone's camera would (zxing-cpp)."""
    import zxingcpp

    shot = Image.open(io.BytesIO(page.locator(".lnlab-qr").screenshot())).convert("L")
    (found,) = zxingcpp.read_barcodes(np.asarray(shot))
    assert found.format == zxingcpp.BarcodeFormat.QRCode
    return found.text


def _fits(page: Page, what: str) -> None:
    problems = measure(page).problems()
    page.screenshot(path=OUTPUT / "live" / f"teacher-{what}.png")
    assert not problems, f"{what}: {problems}"


def _join(student: Page, link: str, nickname: str) -> None:
    student.goto(link)
    wait_for_app(student)
    assert_no_problems(student)
    expect(student.locator(SIDEBAR)).to_have_attribute("data-collapsed", "true")  # closed
    if nickname:
        student.locator(".st-key-live_nickname input").fill(nickname)
    with expect_rerun(student):
        student.locator(".st-key-live_join button").click()
    assert "me=" not in student.url  # a student is their browser, not a link


def _answer(student: Page, seat: int) -> float:
    options = student.locator(PHONE_OPTION)
    expect(options.first).to_be_visible(timeout=LIVE_MS)
    assert not phone_problems(student)
    height = options.first.bounding_box()["height"]
    assert height >= 44, f"an option is a {height} px tap target"
    assert_accessible(student, f"student {seat}'s Class page, asked")
    options.nth(seat % options.count()).click()
    return time.monotonic()


def _ask(teacher: Page) -> None:
    with expect_rerun(teacher):
        teacher.locator('[class*="st-key-live_ask_"] button').click()
    expect(teacher.locator(".lnlab-live-prompt")).to_be_visible()
    expect(teacher.locator(".lnlab-live-options li").first).to_be_visible()


def _count(teacher: Page, answered: int, joined: int = STUDENTS) -> None:
    expect(teacher.locator(COUNT)).to_contain_text(
        f"{answered} of {joined} answered", timeout=LIVE_MS
    )


def _reveal(teacher: Page, answered: int) -> None:
    teacher.locator('[class*="st-key-live_reveal_"] button').click()
    expect(teacher.locator(DIALOG)).to_be_visible(timeout=LIVE_MS)
    teacher.wait_for_function(BARS_SUM_JS, arg=answered, polling=POLL_MS, timeout=LIVE_MS)
    expect(teacher.locator(DIALOG)).to_contain_text("Right")
    teacher.screenshot(path=OUTPUT / "live" / "teacher-answers.png")
    teacher.keyboard.press("Escape")
    expect(teacher.locator(DIALOG)).to_have_count(0)
    expect(teacher.locator(MAIN)).to_contain_text("Answer:")


def test_a_whole_live_lesson(browser: Browser, server: list):
    teacher = new_app_page(browser, PROJECTORS[0])
    students = [new_app_page(browser, PHONE) for _ in range(STUDENTS)]
    url = server[0].url
    try:
        # 1. Start a live class (the sidebar of the home page): the Class page opens
        teacher.goto(url + "/")
        wait_for_app(teacher, COLD_MS)
        teacher.locator(SIDEBAR).get_by_role("button", name="Start a live class").click()
        expect(teacher).to_have_url(re.compile(r"/class$"))
        wait_for_app(teacher)
        link = _qr_link(teacher)
        code = link.rsplit("=", 1)[1]
        assert link == f"{url}/class?join={code}"
        assert link in teacher.locator(".lnlab-join").inner_text()
        assert_accessible(teacher, "the teacher's Class page")
        lesson = teacher.locator(MAIN).get_by_role("button", name="Step through one token")
        box = lesson.bounding_box()
        assert box["y"] + box["height"] <= PROJECTORS[0]["height"], "the lessons need a scroll"
        # 2. the lesson, at its first question
        with expect_rerun(teacher):
            lesson.click()
        expect(teacher).to_have_url(re.compile(r"/step_through\?.*present=1"))
        expect(teacher.locator(".lnlab-unknown")).to_be_visible()  # the value asked: "?"
        _fits(teacher, "before-ask")
        # 3. Ask the class
        _ask(teacher)
        _count(teacher, 0, 0)
        _fits(teacher, "asked")

        for seat, student in enumerate(students):
            _join(student, link, NICKNAMES[seat])
            tapped = _answer(student, seat)
        _count(teacher, STUDENTS)
        # a measurement, not a check (the expect above bounds it): README's "Live class"
        print(f"the projector counted the last tap {time.monotonic() - tapped:.1f} s after")
        shown = teacher.locator(MAIN).inner_text()
        assert "Right" not in shown and not teacher.locator(".bartext").count()
        for student in students:
            expect(student.locator(MAIN)).to_contain_text("Waiting for the reveal")
        _fits(teacher, "answered")

        _reveal(teacher, STUDENTS)
        _fits(teacher, "revealed")
        assert_accessible(teacher, "the teacher's slide after Reveal")
        scores = []
        for seat, student in enumerate(students):
            expect(student.locator(FEEDBACK).first).to_contain_text("You answered", timeout=LIVE_MS)
            scores.append(student.locator(PHONE_SCORE).inner_text())
            assert_accessible(student, f"student {seat} after Reveal")
            student.screenshot(path=OUTPUT / "live" / f"student-{seat}.png")
        assert all(re.fullmatch(r"[01] / 1", s) for s in scores), scores

        # the teacher reloads, opens a new tab, and the server restarts: the class is there
        teacher.reload()
        wait_for_app(teacher)
        expect(teacher.locator(MAIN)).to_contain_text("Answer:", timeout=LIVE_MS)
        expect(teacher.locator(MAIN)).to_contain_text(f"code {code[:3]}-{code[3:6]}-{code[6:]}")
        tab = teacher.context.new_page()
        tab.goto(url + "/class")
        wait_for_app(tab)
        expect(tab.locator(".lnlab-join")).to_contain_text(code, timeout=LIVE_MS)
        expect(tab.locator(".lnlab-roster")).to_contain_text("Ana, \u0410na (2), 👩🏽\u200d💻 Dev")
        tab.close()

        ran = runs_finished(teacher)
        _restart(server)
        healthy = time.monotonic()
        teacher.wait_for_function("n => window.__lnlabRunsFinished > n", arg=ran, polling=POLL_MS)
        # a measurement, not a check: README's "Live class"
        print(f"after the restart the teacher's page ran {time.monotonic() - healthy:.1f} s later")
        wait_for_app(teacher)
        expect(teacher.locator(MAIN)).to_contain_text("Answer:", timeout=LIVE_MS)
        # the next question: Next until a slide the class can answer
        for _ in range(6):
            at, count = slide_number(teacher)
            next_slide(teacher, "ArrowRight", at + 1, count)
            slide_drawn(teacher, at + 1, count)
            if teacher.locator('[class*="st-key-live_ask_"] button').count():
                break
        _ask(teacher)
        for seat, student in enumerate(students):  # each reconnected to the new server
            _answer(student, seat + 1)
        _count(teacher, STUDENTS)
        _fits(teacher, "second-answered")
        _reveal(teacher, STUDENTS)
        _fits(teacher, "second-revealed")

        # a student leaves (asked first) and rejoins: the same student, the same score
        student = students[0]
        expect(student.locator(PHONE_SCORE)).to_have_text(re.compile(r"[012] / 2"), timeout=LIVE_MS)
        score = student.locator(PHONE_SCORE).inner_text()
        student.locator(".st-key-live_leave button").click()
        with expect_rerun(student):
            student.locator(".st-key-live_leave_confirm button").click()
        with expect_rerun(student):
            student.locator(".st-key-live_code input").fill(code)
            student.locator(".st-key-live_code input").press("Enter")
        with expect_rerun(student):
            student.locator(".st-key-live_join button").click()
        expect(student.locator(PHONE_SCORE)).to_have_text(score, timeout=LIVE_MS)
        for page in (teacher, *students):
            assert_no_problems(page)
    finally:
        for page in (teacher, *students):
            page.context.close()
