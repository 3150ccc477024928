"""After class, in real browsers: a teacher at 1024 x 768 and three students on phones
(390 x 844), each in a browser context of their own.

The teacher starts a class on the Class page, the phones join with nicknames, the teacher
presents a lesson and asks two questions, each phone taps an option, the teacher reveals each,
then ends the class on the Class page. The teacher's page shows the class's report, whose
table and CSV name each student's answers and score; each phone shows its final score and its
answers, and goes back to the join form. The server restarts, and the teacher opens the same
report from their past classes (the browser's claim). Screenshots: test-output/report/.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from lnlab.classroom.links import PUBLIC_URL_ENV
from lnlab.serving.cluster import free_port

from .conftest import (
    MAIN,
    OUTPUT,
    PHONE_OPTION,
    StreamlitServer,
    assert_no_problems,
    expect_rerun,
    new_app_page,
    next_slide,
    slide_number,
    start_server,
    wait_for_app,
)
from .slides import PROJECTORS
from .test_live_class import COLD_MS, LIVE_MS, _ask, _count, _join, _reveal
from .test_phone import PHONE

pytestmark = pytest.mark.browser

NICKNAMES = ("Ana", "Bo", "Cy")
QUESTIONS = 2
SHOTS = OUTPUT / "report"
REPORT = ".st-key-live_report"
FINAL_SCORE = '[data-testid="stMetricValue"]'  # the end screen's (Python's st.metric)


@pytest.fixture
def server(tmp_path_factory) -> Iterator[list]:
    """The app on a port of its own, which the test restarts: [server, its folder]."""
    folder = tmp_path_factory.mktemp("class-report")
    port = free_port()
    running: list = [start_server(folder, port, {PUBLIC_URL_ENV: f"http://127.0.0.1:{port}"})]
    running.append(folder)
    yield running
    running[0].stop()


def _restart(server: list) -> StreamlitServer:
    old, folder = server[0], server[1]
    old.stop()
    server[0] = start_server(folder, old.port, {PUBLIC_URL_ENV: f"http://127.0.0.1:{old.port}"})
    return server[0]


def _tap(phone: Page, k: int) -> str:
    """Tap the phone's option k (modulo their number); its text."""
    options = phone.locator(PHONE_OPTION)
    expect(options.first).to_be_visible(timeout=LIVE_MS)
    option = options.nth(k % options.count())
    text = option.locator("span").nth(1).inner_text().strip()
    option.click()
    expect(phone.locator(MAIN)).to_contain_text("Waiting for the reveal", timeout=LIVE_MS)
    return text


def _next_question(teacher: Page) -> None:
    """Next until a slide the class can answer."""
    for _ in range(8):
        at, count = slide_number(teacher)
        next_slide(teacher, "ArrowRight", at + 1, count)
        if teacher.locator('[class*="st-key-live_ask_"] button').count():
            return
    raise AssertionError("no second question the class can answer")


def _csv(teacher: Page) -> list[dict[str, str]]:
    with teacher.expect_download() as download:
        teacher.locator(".st-key-live_report_csv button").click()
    text = Path(download.value.path()).read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def test_the_report_after_class(browser: Browser, server: list):
    teacher = new_app_page(browser, PROJECTORS[0])
    phones = [new_app_page(browser, PHONE) for _ in NICKNAMES]
    url = server[0].url
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        teacher.goto(url + "/class")
        wait_for_app(teacher, COLD_MS)
        with expect_rerun(teacher):
            teacher.locator(".st-key-live_start button").click()
        code = teacher.locator(".lnlab-code").inner_text().replace("-", "").strip()
        for phone, name in zip(phones, NICKNAMES, strict=True):
            _join(phone, f"{url}/class?join={code}", name)

        # two questions from a lesson's slides, each answered by every phone and revealed
        lesson = teacher.locator(MAIN).get_by_role("button", name="Step through one token")
        with expect_rerun(teacher):
            lesson.click()
        tapped: dict[str, list[str]] = {name: [] for name in NICKNAMES}
        prompts = []
        for k in range(QUESTIONS):
            if k:
                _next_question(teacher)
            _ask(teacher)
            prompts.append(teacher.locator(".lnlab-live-prompt").inner_text().strip())
            for seat, (phone, name) in enumerate(zip(phones, NICKNAMES, strict=True)):
                tapped[name].append(_tap(phone, seat + k))
            _count(teacher, len(phones), len(phones))
            _reveal(teacher, len(phones))

        # End, on the Class page: the report
        teacher.goto(url + "/class")
        wait_for_app(teacher)
        teacher.locator(".st-key-live_end button").click()
        with expect_rerun(teacher):
            teacher.locator(".st-key-live_end_confirm button").click()
        report = teacher.locator(REPORT)
        expect(report).to_contain_text("Report of class", timeout=LIVE_MS)
        for prompt in prompts:
            expect(report).to_contain_text(prompt)
        teacher.screenshot(path=SHOTS / "teacher-report-1024x768.png")
        rows = _csv(teacher)
        assert len(rows) == len(NICKNAMES) * QUESTIONS, rows
        scores = {}
        for name in NICKNAMES:
            mine = [r for r in rows if r["student"] == name]
            assert [r["answer"] for r in mine] == tapped[name], (name, mine)
            scores[name] = sum(int(r["right"]) for r in mine)
            assert {r["score"] for r in mine} == {str(scores[name])}
        report.get_by_text("Each student's answers and score").click()
        table = report.get_by_role("region", name="Each student's answers and score")
        for name in NICKNAMES:
            row = table.get_by_role("row").filter(has_text=name)
            expect(row).to_contain_text(f"{scores[name]} of {QUESTIONS}")
            for answer in tapped[name]:
                expect(row).to_contain_text(answer)
        height = teacher.evaluate(f"document.querySelector('{MAIN}').scrollHeight")
        teacher.set_viewport_size({"width": PROJECTORS[0]["width"], "height": height})
        teacher.screenshot(path=SHOTS / "teacher-report-whole.png")
        teacher.set_viewport_size(PROJECTORS[0])

        # each phone: its final score and answers, then the join form
        for phone, name in zip(phones, NICKNAMES, strict=True):
            expect(phone.locator(FINAL_SCORE)).to_have_text(
                f"{scores[name]} / {QUESTIONS}", timeout=LIVE_MS
            )
            for answer in tapped[name]:
                expect(phone.locator(MAIN)).to_contain_text(f"You answered {answer}")
            assert_no_problems(phone)
        phones[0].screenshot(path=SHOTS / "phone-end.png", full_page=True)
        with expect_rerun(phones[0]):
            phones[0].locator(".st-key-live_after_end button").click()
        expect(phones[0].locator(".st-key-live_code input")).to_be_visible(timeout=LIVE_MS)
        expect(phones[0].locator(".st-key-live_join button")).to_be_visible()

        # the server restarts; the teacher's browser lists the class and opens its report
        _restart(server)
        teacher.goto(server[0].url + "/class")
        wait_for_app(teacher, COLD_MS)
        with expect_rerun(teacher):
            teacher.locator(f".st-key-live_report_{code} button").click()
        expect(report).to_contain_text("Report of class", timeout=LIVE_MS)
        assert [r["answer"] for r in _csv(teacher)] == [a for n in NICKNAMES for a in tapped[n]]
        assert_no_problems(teacher)
    finally:
        for page in (teacher, *phones):
            page.context.close()
