"""The Class page on a 1024 x 768 projector, the class run from presenter mode, and a question's
data on a phone (issue 37, items 4, 6 and 7), in real browsers.

The teacher starts a class on the Class page: the code stands on one line, the QR code is
whole on the screen and the page has not scrolled (bounding boxes). The home page leads the
teacher's browser back to the class. A lesson opens in presenter mode at its first question:
the slide says what Ask sends (the question and the lesson's line of the example), Show how to
join fits the screen, and the top row counts the phone that joins. Asked, the question reaches
the phone (390 x 844) with its data above the options, readable: 16 px or more, nothing past
the screen's edge. The teacher ends the class from presenter mode's Class menu and stays on the
slide, with a link to the report. Screenshots: test-output/class-fit/.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from lnlab.classroom.links import PUBLIC_URL_ENV
from lnlab.serving.cluster import free_port

from .conftest import (
    MAIN,
    OUTPUT,
    PHONE_OPTION,
    POLL_MS,
    StreamlitServer,
    assert_no_problems,
    expect_rerun,
    new_app_page,
    start_server,
    wait_for_app,
)
from .slides import PROJECTORS
from .test_live_class import COLD_MS, DIALOG, LIVE_MS, _join
from .test_phone import PHONE, phone_problems

pytestmark = pytest.mark.browser

PROJECTOR = PROJECTORS[0]  # 1024 x 768
SHOTS = OUTPUT / "class-fit"
BAR = ".st-key-present_bar"

# An element's box, and whether the screen shows all of it: it lies within the window, and at
# points near its four corners (a tenth of the way in: a button's corners are rounded) the
# element, or something inside it, is what is drawn, not a box over it or a scroller's edge.
BOX_JS = """(e) => {
    const r = e.getBoundingClientRect();
    const vw = window.innerWidth, vh = window.innerHeight;
    const dx = r.width / 10, dy = r.height / 10;
    const corners = [[r.left + dx, r.top + dy], [r.right - dx, r.top + dy],
                     [r.left + dx, r.bottom - dy], [r.right - dx, r.bottom - dy]];
    const inside = r.left >= 0 && r.top >= 0 && r.right <= vw && r.bottom <= vh;
    const shown = inside && corners.every(([x, y]) => {
        if (x < 0 || y < 0 || x > vw || y > vh) return false;
        const hit = document.elementFromPoint(x, y);
        return hit !== null && (hit === e || e.contains(hit));
    });
    const style = getComputedStyle(e);
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width,
            height: r.height, shown, lineHeight: parseFloat(style.lineHeight),
            fontSize: parseFloat(style.fontSize), scrollWidth: e.scrollWidth,
            clientWidth: e.clientWidth};
}"""
SCROLLED_JS = "document.querySelector('[data-testid=\"stMain\"]').scrollTop"
# The dialog has finished opening: nothing in it is still animated.
DIALOG_STILL_JS = """() => document.getAnimations().every((a) => {
    const target = a.effect && a.effect.target;
    return !(target && target.closest && target.closest('[role="dialog"]'))
        || a.playState !== 'running';
})"""


@pytest.fixture
def server(tmp_path_factory) -> Iterator[StreamlitServer]:
    folder = tmp_path_factory.mktemp("class-fit")
    port = free_port()
    running = start_server(folder, port, {PUBLIC_URL_ENV: f"http://127.0.0.1:{port}"})
    yield running
    running.stop()


def _box(page: Page, selector: str) -> dict:
    return page.locator(selector).first.evaluate(BOX_JS)


def _one_line(box: dict, what: str) -> None:
    assert box["height"] < 1.5 * box["lineHeight"], f"{what} wraps: {box}"
    assert box["scrollWidth"] <= box["clientWidth"] + 1, f"{what} is cut: {box}"


def _whole(box: dict, what: str, height: int = PROJECTOR["height"]) -> None:
    assert box["shown"], f"{what} is not whole on the screen: {box}"
    assert box["top"] >= 0 and box["bottom"] <= height, f"{what}: {box}"


def test_the_class_page_fits_a_projector_and_the_phone_gets_the_data(
    browser: Browser, server: StreamlitServer
):
    teacher = new_app_page(browser, PROJECTOR)
    phone = new_app_page(browser, PHONE)
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        # the Class page, just started: code on one line, QR code whole, no scroll
        teacher.goto(server.url + "/class")
        wait_for_app(teacher, COLD_MS)
        with expect_rerun(teacher):
            teacher.locator(".st-key-live_start button").click()
        teacher.screenshot(path=SHOTS / "class-1024x768.png")
        code = _box(teacher, ".lnlab-code")
        _one_line(code, "the class code")
        _whole(code, "the class code")
        _whole(_box(teacher, ".lnlab-qr"), "the QR code")
        for button in (".st-key-live_end button", '[class*="st-key-live_present_"] button'):
            _whole(_box(teacher, button), button)
        assert teacher.evaluate(SCROLLED_JS) == 0, "the Class page opened scrolled"
        print(
            f"1024 x 768: code {code['width']:.0f} x {code['height']:.0f} px at "
            f"{code['fontSize']:.1f} px, QR {_box(teacher, '.lnlab-qr')['width']:.0f} px"
        )
        link = teacher.locator(".lnlab-join b").inner_text().strip()

        # the home page leads the teacher's browser back to its class
        teacher.goto(server.url + "/")
        wait_for_app(teacher)
        running = teacher.locator(".st-key-live_running")
        expect(running).to_contain_text("is running · 0 joined")
        running.get_by_role("link", name="Back to your class").click()
        expect(teacher).to_have_url(re.compile(r"/class$"))
        wait_for_app(teacher)
        expect(teacher.locator(".lnlab-code")).to_be_visible()

        # a lesson in presenter mode, at its first question: what Ask sends, before it
        lesson = teacher.locator(MAIN).get_by_role("button", name="Step through one token")
        with expect_rerun(teacher):
            lesson.click()
        expect(teacher).to_have_url(re.compile(r"/step_through\?.*present=1"))
        context = teacher.locator(f"{MAIN} p").filter(has_text=re.compile(r"^Token 1: "))
        line = context.first.inner_text().strip()  # the lesson's line of the example
        expect(teacher.locator(MAIN)).to_contain_text(f"With: {line}")
        with expect_rerun(teacher):
            teacher.locator(".st-key-live_show_join button").click()
        dialog = teacher.locator(DIALOG)
        expect(dialog.locator(".lnlab-qr")).to_be_visible()
        teacher.wait_for_function(DIALOG_STILL_JS, polling=POLL_MS)
        teacher.screenshot(path=SHOTS / "show-how-to-join-1024x768.png")
        _whole(dialog.evaluate(BOX_JS), "the join dialog")
        _whole(_box(teacher, f"{DIALOG} .lnlab-qr"), "the dialog's QR code")
        _one_line(_box(teacher, f"{DIALOG} .lnlab-code"), "the dialog's code")
        print(f"the join dialog: {dialog.evaluate(BOX_JS)['height']:.0f} px tall")
        teacher.keyboard.press("Escape")
        expect(dialog).to_have_count(0)

        # a phone joins: the top row counts it; Ask: the phone gets the data
        expect(teacher.locator(BAR)).to_contain_text("0 joined")
        _join(phone, link, "Ana")
        expect(teacher.locator(BAR)).to_contain_text("1 joined", timeout=LIVE_MS)
        with expect_rerun(teacher):
            teacher.locator('[class*="st-key-live_ask_"] button').click()
        data = phone.locator(".lnlab-live-data")
        expect(data).to_be_visible(timeout=LIVE_MS)
        assert data.inner_text().split() == line.split()  # the slide's line, word for word
        box = data.evaluate(BOX_JS)
        options = phone.locator(PHONE_OPTION)
        assert box["bottom"] <= options.first.bounding_box()["y"], "the data is not above"
        assert box["fontSize"] >= 16 and box["right"] <= PHONE["width"], box
        for k in range(data.locator("span").count()):  # each part readable, none cut
            part = data.locator("span").nth(k).evaluate(BOX_JS)
            assert part["right"] <= PHONE["width"] and part["fontSize"] >= 16, part
        assert not phone_problems(phone)
        phone.screenshot(path=SHOTS / "phone-data-390.png", full_page=True)

        # End, from presenter mode's Class menu: the slide stays, with a link to the report
        teacher.locator(".st-key-live_class_menu button").click()
        teacher.locator(".st-key-live_end_present button").click()
        with expect_rerun(teacher):
            teacher.locator(".st-key-live_end_confirm button").click()
        bar = teacher.locator(BAR)
        expect(bar.get_by_role("link", name=re.compile("^Report of class"))).to_be_visible()
        expect(teacher).to_have_url(re.compile(r"/step_through\?.*present=1"))
        expect(phone.locator(MAIN)).to_contain_text("has ended", timeout=LIVE_MS)
        for page in (teacher, phone):
            assert_no_problems(page)
    finally:
        for page in (teacher, phone):
            page.context.close()
