"""The keyboard alone, as a student who uses no mouse (WCAG 2.2: 2.1.1, 2.4.3, 2.4.7, 4.1.3).

A student goes through a lesson, answers its question and opens a chart's numbers; joins a
class and answers there; the teacher reveals. Every key press here is Tab, Shift+Tab, Enter,
Space or an arrow. After every press the focused element is framed (an outline of at least
2 px on it or on the control it belongs to), and after every action the focus is where the
user is: on the control they used, or, where the action removed it, on what replaced it
(lnlab.ui.assist). The page's live region (#lnlab-status, polite) says what changed, once.
The teacher's moves other than Reveal (start, present, ask) use the mouse: they are not
under test here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Browser, Page, expect

from .axe import STUDENT
from .conftest import (
    APP_PAGES,
    MAIN,
    PHONE_OPTION,
    POLL_MS,
    StreamlitServer,
    expect_rerun,
    new_app_page,
    rerun_page,
    wait_for_app,
)
from .slides import PROJECTORS
from .test_live_class import DIALOG, LIVE_MS
from .test_phone import PHONE

pytestmark = pytest.mark.browser

STEP_THROUGH = next(p for p in APP_PAGES if p.name == "step_through")
TRANSFORMER = next(p for p in APP_PAGES if p.name == "transformer")
CONVENTIONS = next(p for p in APP_PAGES if p.name == "conventions")
PADDING = next(p for p in APP_PAGES if p.name == "padding")
MAX_TABS = 80  # more than any page has controls before the one a test goes to
# What has the focus: its tag and text, the st-key-* names around it (innermost first), and
# whether it is framed: an outline of at least 2 px on it or on one of its 4 nearest
# ancestors (a radio's or a switch's input is hidden; its label is framed).
FOCUS_JS = """() => {
    const el = document.activeElement;
    if (!el || el === document.body) return null;
    const framed = (e) => {
        const s = getComputedStyle(e);
        return s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2;
    };
    let shown = false;
    for (let e = el, k = 0; e && k < 5 && !shown; e = e.parentElement, k++) shown = framed(e);
    const keys = [];
    for (let e = el; e; e = e.parentElement) {
        for (const c of e.classList || []) if (c.startsWith('st-key-')) keys.push(c.slice(7));
    }
    const text = (el.getAttribute('aria-label') || el.innerText || el.value || '').trim();
    return {tag: el.tagName, type: el.type || '', text: text.slice(0, 80), keys, shown};
}"""
# Everything the live region says, in order: what a screen reader would hear.
LISTEN_JS = """() => {
    window.__lnlabSaid = [];
    const region = document.getElementById('lnlab-status');
    new MutationObserver(() => {
        const text = region.textContent.trim();
        if (text) window.__lnlabSaid.push(text);
    }).observe(region, {childList: true, characterData: true, subtree: true});
}"""

Focus = dict


def focus(page: Page) -> Focus | None:
    return page.evaluate(FOCUS_JS)


def said(page: Page) -> list[str]:
    return page.evaluate("window.__lnlabSaid")


def listen(page: Page) -> None:
    """Record what the live region says from now on (`said`)."""
    page.wait_for_selector("#lnlab-status", state="attached")
    page.evaluate(LISTEN_JS)


def keyed(name: str) -> Callable[[Focus], bool]:
    """The focus is on the control keyed `name` (or one whose key starts with it + "_")."""
    return lambda f: (
        bool(f["keys"]) and (f["keys"][0] == name or f["keys"][0].startswith(name + "_"))
    )


def tab_to(page: Page, wanted: Callable[[Focus], bool], *, back: bool = False) -> Focus:
    """Press Tab (Shift+Tab with `back`) until the focus is on what `wanted` accepts; every
    stop on the way must be framed."""
    seen = []
    for _ in range(MAX_TABS):
        page.keyboard.press("Shift+Tab" if back else "Tab")
        now = focus(page)
        assert now is not None, f"Tab left the focus nowhere, after {seen[-3:]}"
        assert now["shown"], f"no visible focus on {now}"
        if wanted(now):
            return now
        seen.append((now["tag"], now["text"][:30], now["keys"][:1]))
    raise AssertionError(f"{MAX_TABS} presses of Tab never got there: {seen}")


def assert_focus(page: Page, wanted: Callable[[Focus], bool], what: str) -> None:
    """After an action: the focus is where `wanted` says, and framed."""
    page.wait_for_function(
        f"() => {{ const f = ({FOCUS_JS})(); return f && f.keys.length > 0; }}",
        polling=POLL_MS,
    )
    now = focus(page)
    assert now is not None and wanted(now), f"the focus should be {what}, not {now}"
    assert now["shown"], f"no visible focus on {now}"


def test_a_lesson_with_the_keyboard(browser: Browser, streamlit_server: StreamlitServer):
    """A question (type the answer, Check), a chart's numbers, Next: the focus stays on the
    control used, framed, and the live region says the verdict and the new section."""
    page = new_app_page(browser, STUDENT)
    try:
        page.goto(streamlit_server.page_url(STEP_THROUGH) + "?v=1&q=1")
        wait_for_app(page)
        listen(page)
        tab_to(page, keyed("q"))  # the question of "1. Mean": "Your answer", a number
        page.keyboard.type("5")
        with expect_rerun(page):
            page.keyboard.press("Enter")
        assert_focus(page, keyed("q"), "in the answer's box")
        tab_to(page, keyed("check"))
        with expect_rerun(page):
            page.keyboard.press("Enter")
        assert_focus(page, keyed("check"), "on Check")
        expect(page.locator(f"{MAIN} [data-testid='stAlert']").first).to_contain_text("answer")
        page.wait_for_function("() => window.__lnlabSaid.length > 0", polling=POLL_MS)
        assert re.search(r"Section 1 of \d+: Mean\. .*answer is", said(page)[-1]), said(page)

        tab_to(page, keyed("numbers"))  # the chart's "The numbers as a table"
        with expect_rerun(page):
            page.keyboard.press("Space")
        assert_focus(page, keyed("numbers"), "on the switch")
        expect(page.get_by_role("region", name=re.compile(r": the numbers$"))).to_be_visible()

        tab_to(page, keyed("step_through_next"), back=True)
        with expect_rerun(page):
            page.keyboard.press("Enter")
        expect(page.locator(MAIN)).to_contain_text("2. Variance")
        assert_focus(page, keyed("step_through_next"), "on Next")
        page.wait_for_function(
            "() => window.__lnlabSaid.some(t => t.startsWith('Section 2 of'))",
            polling=POLL_MS,
        )
    finally:
        page.context.close()


def test_the_last_slide_moves_the_focus_to_previous(
    browser: Browser, streamlit_server: StreamlitServer
):
    """Next goes grey on the last slide: the focus moves to Previous, not to the page."""
    page = new_app_page(browser, PROJECTORS[0])
    try:
        page.goto(streamlit_server.page_url(STEP_THROUGH) + "?v=1&present=1&step=14")
        wait_for_app(page)
        tab_to(page, keyed("step_through_next"))
        with expect_rerun(page):
            page.keyboard.press("Enter")
        expect(page.locator(".st-key-step_through_next button")).to_be_disabled()
        assert_focus(page, keyed("step_through_prev"), "on Previous")
    finally:
        page.context.close()


def test_a_menu_opens_into_its_choices_and_closes_back(
    browser: Browser, streamlit_server: StreamlitServer
):
    """A menu (lnlab.ui.inputs.menu: the section chooser): Enter opens it with the focus on
    the chosen option, an arrow chooses the next, Escape closes it onto its button."""
    page = new_app_page(browser, STUDENT)
    try:
        page.goto(streamlit_server.page_url(TRANSFORMER))
        wait_for_app(page)
        tab_to(page, lambda f: f["tag"] == "BUTTON" and "Section:" in f["text"])
        page.keyboard.press("Enter")
        assert_focus(page, keyed("tf_slide"), "on the chosen section")
        menu = page.locator('[data-testid="stPopover"] button', has_text="Section:")
        with expect_rerun(page):
            page.keyboard.press("ArrowDown")
        expect(menu).to_contain_text("Section: 2.")
        assert_focus(page, keyed("tf_slide"), "on the section chosen")
        page.keyboard.press("Escape")
        expect(page.locator('[data-testid="stPopoverBody"]')).to_have_count(0)
        now = focus(page)
        assert now is not None and now["tag"] == "BUTTON" and "Section: 2." in now["text"], now
    finally:
        page.context.close()


def test_a_wide_table_scrolls_with_the_keyboard(
    browser: Browser, streamlit_server: StreamlitServer
):
    """On a phone a wide table scrolls sideways in its own box: the box is a tab stop with a
    name, and the arrow keys scroll it."""
    page = new_app_page(browser, PHONE)
    try:
        page.goto(streamlit_server.page_url(TRANSFORMER))
        wait_for_app(page)
        box = tab_to(page, lambda f: f["tag"] == "DIV" and bool(f["text"]))
        wrap = page.locator(".lnlab-table-wrap:focus")
        expect(wrap).to_have_attribute("role", "region")
        assert box["text"], "the table's region has no name"
        before = wrap.evaluate("e => e.scrollLeft")
        for _ in range(5):
            page.keyboard.press("ArrowRight")
        page.wait_for_function(
            "n => document.activeElement.scrollLeft > n", arg=before, polling=POLL_MS
        )
    finally:
        page.context.close()


def test_a_table_is_a_tab_stop_only_while_it_scrolls(
    browser: Browser, streamlit_server: StreamlitServer
):
    """The assist script measures a table when its size changes: one in a closed expander
    becomes a tab stop once opened; one that fits the phone's width never is one."""
    page = new_app_page(browser, PHONE)
    try:
        page.goto(streamlit_server.page_url(CONVENTIONS))
        wait_for_app(page)
        hidden = page.locator("details .lnlab-table-wrap").first
        expect(hidden).not_to_have_attribute("tabindex", "0")
        hidden.locator("xpath=ancestor::details/summary").click()
        expect(hidden).to_have_attribute("tabindex", "0")
        page.goto(streamlit_server.page_url(PADDING))
        wait_for_app(page)
        fits = page.locator(".lnlab-table-wrap")
        expect(fits.first).to_be_attached()
        assert fits.evaluate_all("ws => ws.every(w => w.scrollWidth <= w.clientWidth + 1)")
        assert fits.evaluate_all("ws => ws.every(w => !w.hasAttribute('tabindex'))")
    finally:
        page.context.close()


def _start_and_present(teacher: Page, server: StreamlitServer) -> str:
    """Start a class on the Class page and present the step-through at its first question
    (with the mouse); the join link, on this machine's own address."""
    teacher.goto(f"{server.url}/class")
    wait_for_app(teacher)
    with expect_rerun(teacher):
        teacher.locator(".st-key-live_start button").click()
    code = teacher.locator(".lnlab-join b").inner_text().rsplit("=", 1)[1]
    with expect_rerun(teacher):
        teacher.locator(MAIN).get_by_role("button", name="Step through one token").click()
    expect(teacher).to_have_url(re.compile(r"/step_through\?.*present=1"))
    expect(teacher.locator('[class*="st-key-live_ask_"] button')).to_be_visible()
    return f"{server.url}/class?join={code}"


def test_a_class_with_the_keyboard(browser: Browser, streamlit_server: StreamlitServer):
    """A student joins by the link and answers with the keyboard; the teacher reveals with
    it. The focus lands on what replaced the button pressed, and each live region says what
    changed once, not at every poll."""
    teacher = new_app_page(browser, PROJECTORS[0])
    student = new_app_page(browser, PHONE)
    try:
        link = _start_and_present(teacher, streamlit_server)
        student.goto(link)
        wait_for_app(student)
        listen(student)
        tab_to(student, keyed("live_join"))
        with expect_rerun(student):
            student.keyboard.press("Enter")
        # Python's view of the class, or the page's once the browser said it reads the pulse
        in_view = lambda f: keyed("live_student")(f) or keyed("lnlab_phone")(f)  # noqa: E731
        assert_focus(student, in_view, "on the student's view")

        with expect_rerun(teacher):
            teacher.locator('[class*="st-key-live_ask_"] button').click()
        expect(student.locator(PHONE_OPTION).first).to_be_visible(timeout=LIVE_MS)
        student.wait_for_function(
            "() => window.__lnlabSaid.some(t => t.startsWith('New question'))",
            polling=POLL_MS,
            timeout=LIVE_MS,
        )
        tab_to(student, lambda f: keyed("lnlab_phone")(f) and f["tag"] == "BUTTON")
        student.keyboard.press("Enter")  # the page sends the tap: no script run
        expect(student.locator(MAIN)).to_contain_text("Waiting for the reveal", timeout=LIVE_MS)
        assert_focus(student, keyed("lnlab_phone"), "on the phone's view, drawn by the page")
        student.wait_for_function(
            "() => window.__lnlabSaid.at(-1)?.startsWith('Your answer:')",
            polling=POLL_MS,
            timeout=LIVE_MS,
        )

        listen(teacher)
        expect(teacher.locator(".lnlab-live-count")).to_contain_text("1 of 1", timeout=LIVE_MS)
        teacher.locator(MAIN).locator("h2").first.click()  # Tab from the slide's top
        tab_to(teacher, keyed("live_reveal"))
        teacher.keyboard.press("Enter")
        # the class's answers open in a dialog over the slide, the focus in it
        expect(teacher.locator(DIALOG)).to_be_visible(timeout=LIVE_MS)
        teacher.wait_for_function(
            "s => document.querySelector(s)?.contains(document.activeElement)",
            arg=DIALOG,
            polling=POLL_MS,
        )
        teacher.keyboard.press("Escape")
        expect(teacher.locator(DIALOG)).to_have_count(0)
        expect(teacher.locator(MAIN)).to_contain_text("Answer:")
        teacher.wait_for_function(
            "() => window.__lnlabSaid.some(t => t.startsWith('Revealed'))", polling=POLL_MS
        )
        student.wait_for_function(
            "() => window.__lnlabSaid.some(t => t.startsWith('The answer'))",
            polling=POLL_MS,
            timeout=LIVE_MS,
        )
        # each page drawn again with nothing new (Streamlit's R: rerun; the class's pulse
        # reruns nothing while nothing changes): nothing is said again
        for page in (teacher, student):
            for _ in range(2):
                rerun_page(page)
        assert [t for t in said(teacher) if t.startswith("Revealed")] == said(teacher)[-1:]
        assert len([t for t in said(student) if t.startswith("The answer")]) == 1, said(student)
    finally:
        teacher.context.close()
        student.context.close()
