"""A live class in real browsers: one teacher, three students on phones, each in a browser
context of their own (their own cookies, so their own Streamlit session).

The teacher starts a class on the Class page and presents the step-through lesson; the
students open the join link, join and answer; the teacher's panel counts them without a click
(it polls every second), the teacher reveals, the students see their feedback, and a reload
keeps a student's score. axe checks the teacher's Class page, each student's page when asked
and after Reveal, and the teacher's slide after Reveal.
"""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Browser, Page, expect

from .axe import assert_accessible
from .conftest import (
    MAIN,
    OUTPUT,
    POLL_MS,
    StreamlitServer,
    assert_no_problems,
    expect_rerun,
    new_app_page,
    wait_for_app,
)
from .slides import PROJECTORS, measure
from .test_phone import PHONE, phone_problems

pytestmark = pytest.mark.browser

STUDENTS = 3
LIVE_MS = 15_000  # polls are 1 to 1.5 s; two shared cores run four browsers and the server
PANEL = ".st-key-live_panel"
FEEDBACK = '[data-testid="stAlertContentSuccess"], [data-testid="stAlertContentWarning"]'
SCORE = '[data-testid="stMetricValue"]'
# The histogram's bars print their counts: they add up to the students who answered.
BARS_SUM_JS = """(n) => {
    const texts = document.querySelectorAll('.st-key-live_panel .bartext');
    return [...texts].reduce((sum, t) => sum + Number(t.textContent), 0) === n;
}"""


def _start_and_present(teacher: Page, server: StreamlitServer) -> str:
    """Start a class, go to the step-through lesson's first slide with a question; the join
    link the page shows."""
    teacher.goto(f"{server.url}/class")
    wait_for_app(teacher)
    with expect_rerun(teacher):
        teacher.locator(".st-key-live_start button").click()
    link = teacher.locator(".lnlab-join b").inner_text()
    expect(teacher.locator(".lnlab-qr")).to_be_visible()
    assert_accessible(teacher, "the teacher's Class page")
    with expect_rerun(teacher):
        teacher.locator(MAIN).get_by_role("button", name="Step through one token").click()
    expect(teacher).to_have_url(re.compile(r"/step_through\?.*present=1"))
    expect(teacher.locator(MAIN)).to_contain_text("Join at")
    ask = teacher.locator('[class*="st-key-live_ask_"] button')
    for _ in range(4):  # the first slides may have no question
        if ask.count():
            break
        with expect_rerun(teacher):
            teacher.keyboard.press("ArrowRight")
    return link


def _join_and_answer(student: Page, link: str, seat: int) -> float:
    """Join by the link and tap an option; when it was tapped (time.monotonic)."""
    student.goto(link)
    wait_for_app(student)
    assert_no_problems(student)
    if seat == 0:
        student.locator(".st-key-live_nickname input").fill("<b>Ada</b>")
    with expect_rerun(student):
        student.locator(".st-key-live_join button").click()
    expect(student).to_have_url(re.compile(r"[?&]me="))
    options = student.locator(".st-key-live_options button")
    expect(options.first).to_be_visible(timeout=LIVE_MS)
    assert not phone_problems(student)
    assert_accessible(student, f"student {seat}'s Class page, asked")
    options.nth(seat % options.count()).click()
    return time.monotonic()


def test_a_live_class(browser: Browser, streamlit_server: StreamlitServer):
    teacher = new_app_page(browser, PROJECTORS[0])
    students = [new_app_page(browser, PHONE) for _ in range(STUDENTS)]
    try:
        link = _start_and_present(teacher, streamlit_server)
        with expect_rerun(teacher):
            teacher.locator('[class*="st-key-live_ask_"] button').click()
        for seat, student in enumerate(students):
            tapped = _join_and_answer(student, link, seat)
        panel = teacher.locator(PANEL)
        expect(panel).to_contain_text(f"{STUDENTS} of {STUDENTS}", timeout=LIVE_MS)
        # a measurement, not a check (the expect above bounds it): README's "Live class"
        print(f"the teacher's panel counted the last tap {time.monotonic() - tapped:.1f} s after")
        for student in students:
            expect(student.locator(MAIN)).to_contain_text("Waiting for the reveal")
        teacher.wait_for_function(BARS_SUM_JS, arg=STUDENTS, polling=POLL_MS, timeout=LIVE_MS)
        teacher.screenshot(path=OUTPUT / "live" / "teacher.png")
        assert not measure(teacher).problems()  # the slide with its panel fits 1024 x 768
        teacher.locator('[class*="st-key-live_reveal_"] button').click()
        expect(panel).to_contain_text("Revealed", timeout=LIVE_MS)
        assert not measure(teacher).problems()  # and with the result revealed
        assert_accessible(teacher, "the teacher's slide after Reveal")
        teacher.screenshot(path=OUTPUT / "live" / "teacher-revealed.png")

        scores = []
        for seat, student in enumerate(students):
            expect(student.locator(FEEDBACK).first).to_contain_text("You answered", timeout=LIVE_MS)
            expect(student.locator(MAIN)).to_contain_text("The answer")
            scores.append(student.locator(SCORE).inner_text())
            assert_accessible(student, f"student {seat} after Reveal")
            student.screenshot(path=OUTPUT / "live" / f"student-{seat}.png")
        assert all(re.fullmatch(r"[01] / 1", s) for s in scores), scores

        student = students[0]
        student.reload()
        wait_for_app(student)
        expect(student.locator(SCORE)).to_have_text(scores[0], timeout=LIVE_MS)
        expect(student.locator(FEEDBACK).first).to_contain_text("You answered")
        assert_no_problems(teacher)
    finally:
        for page in (teacher, *students):
            page.context.close()
