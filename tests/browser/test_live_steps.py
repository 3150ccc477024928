"""The step-through's five steps computed in the page (lnlab.ui.live, static/lnlab), in Chromium.

What only a browser shows: each step's numbers and formulas equal to lnlab's (the expected
values come from lnlab itself, computed here), Previous/Next and the keys answered with no
script run, a slider dragged with the numbers following and nothing sent until release, an
edited number, the state reaching the link and the boxes above once the user lets go (a step
by the step route, with no run; as state where the route fails), and
today's lesson when the component cannot run. Nothing here waits a fixed time: a step drawn
"with no run" is read in the same task as the click, before any message could arrive.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
import pytest
from playwright.sync_api import Page, Response, Route, expect

from lnlab.core.numbers import fmt, scale_of
from lnlab.labs.step_through.token import token_lesson
from lnlab.teach.steps import STEPS

from .axe import assert_accessible
from .conftest import (
    APP_PAGES,
    LIVE,
    LIVE_FALLBACK,
    LIVE_HEADING,
    MAIN,
    SHOWN,
    StreamlitServer,
    assert_no_problems,
    expect_rerun,
    rerun_page,
    runs_finished,
    wait_for_app,
)

pytestmark = pytest.mark.browser

STEP_THROUGH = next(p for p in APP_PAGES if p.name == "step_through")
WORKED = f"{LIVE} .lnlab-live-worked .lnlab-math{SHOWN}"  # its data-tex: the LaTeX
SLIDERS = f"{LIVE} .lnlab-live-slider input"
CELLS = f"{LIVE} .lnlab-live-table tbody tr"
# the token of the default preset, and a harder one: 5 features, per-feature gamma and beta
DEFAULT = (np.array([[2.0, 4.0, 6.0, 8.0]]), 0, 1e-5, np.ones(4), np.zeros(4))
HARDER_LINK = (
    "?v=1&x=0.3,-1.25,2.5,7,1e-3;1,2,3,4,5&tok=1&eps=0.01&gamma=2,1,0.5,-1,3&beta=0.1,0,-0.2,1,0.5"
)
HARDER = (
    np.array([[0.3, -1.25, 2.5, 7, 1e-3], [1, 2, 3, 4, 5]]),
    0,
    0.01,
    np.array([2, 1, 0.5, -1, 3.0]),
    np.array([0.1, 0, -0.2, 1, 0.5]),
)
# Click a button of the lesson and read the heading and the number of finished script runs in
# the same task: the answer is on the page before any message from the server could be.
CLICK_AND_READ_JS = """([selector, heading]) => {
    const before = window.__lnlabRunsFinished;
    document.querySelector(selector).click();
    return [document.querySelector(heading).textContent, window.__lnlabRunsFinished - before];
}"""


def _open(page: Page, server: StreamlitServer, query: str = "") -> None:
    """Open the page and wait until the browser draws the lesson alone (Python has heard it
    works and no longer draws today's lesson under it)."""
    page.goto(server.page_url(STEP_THROUGH) + query)
    wait_for_app(page)
    expect(page.locator(LIVE)).to_be_visible()
    expect(page.locator(LIVE_FALLBACK)).to_have_count(0)
    wait_for_app(page)
    assert_no_problems(page)


def _expected(case: tuple, k: int) -> dict:
    """What lnlab shows at step k (0-based) for `case`: the worked formula and the numbers."""
    x, token, eps, gamma, beta = case
    labels = [f"t{i + 1}" for i in range(x.shape[0])]
    lesson = token_lesson(x, labels, token, eps, gamma, beta)
    value = lesson.steps[k].value[token]
    one = value.size == 1  # a metric; else a one-row table, each cell against its own size
    shown = [fmt(float(value[0]))] if one else [fmt(v, scale_of([v])) for v in value]
    return {"latex": lesson.steps[k].latex, "numbers": shown, "lesson": lesson}


def _shown_numbers(page: Page) -> list[str]:
    metric = page.locator(f"{LIVE} .lnlab-live-metric-value{SHOWN}")
    if metric.count():
        return [metric.inner_text()]
    return page.locator(f"{LIVE} .lnlab-live-numbers td:not(.label){SHOWN}").all_inner_texts()


def _check_step(page: Page, case: tuple, k: int) -> None:
    want = _expected(case, k)
    expect(page.locator(LIVE_HEADING)).to_have_text(f"{k + 1}. {STEPS[k].title}")
    expect(page.locator(WORKED)).to_have_attribute("data-tex", want["latex"])
    assert _shown_numbers(page) == want["numbers"]


@pytest.fixture
def steps(page: Page, streamlit_server: StreamlitServer) -> Iterator[Page]:
    _open(page, streamlit_server)
    yield page


@pytest.mark.parametrize(("query", "case"), [("", DEFAULT), (HARDER_LINK, HARDER)])
def test_each_step_shows_lnlabs_numbers_with_no_round_trip(
    page: Page, streamlit_server: StreamlitServer, query: str, case: tuple
):
    _open(page, streamlit_server, query)
    _check_step(page, case, 0)
    for k in range(1, len(STEPS)):
        next_button = f'{LIVE} button[data-go="1"]'
        heading, runs = page.evaluate(CLICK_AND_READ_JS, [next_button, LIVE_HEADING])
        assert (heading, runs) == (f"{k + 1}. {STEPS[k].title}", 0)
        _check_step(page, case, k)
    table = page.locator(CELLS)
    lesson = _expected(case, 4)["lesson"]
    for row, values in ((3, lesson.x_hat), (4, lesson.y)):
        cells = table.nth(row).locator("td").all_inner_texts()
        assert cells == [fmt(v, scale_of(values)) for v in values]
    expect(page).to_have_url(re.compile(r"[?&]step=5(&|$)"))  # once the clicks paused
    assert_no_problems(page)


VIEWS_JS = """() => [...document.querySelectorAll(
    '.lnlab-live-explanation, .lnlab-live-worked, .lnlab-live-numbers, .lnlab-live-figure > div'
)].map(place => [
    place.children.length,
    [...place.children].filter(v => !v.classList.contains('lnlab-live-kept')).length,
])"""


def test_a_step_seen_before_is_shown_again_not_drawn_again(steps: Page):
    """Each section's words, worked formula, numbers and bars are drawn once and kept (hidden,
    laid out): going back and forth shows them again, one view shown per place."""
    page = steps
    for go in ("1", "1", "1", "1", "-1", "-1", "-1", "-1"):  # every step, and back to step 1
        page.locator(f'{LIVE} button[data-go="{go}"]').click()
    expect(page.locator(LIVE_HEADING)).to_have_text(f"1. {STEPS[0].title}")
    drawn = page.evaluate(VIEWS_JS)
    assert len(drawn) == 4 and all(shown == 1 for _, shown in drawn)
    for go in ("1", "1", "-1", "-1"):
        page.locator(f'{LIVE} button[data-go="{go}"]').click()
    expect(page.locator(LIVE_HEADING)).to_have_text(f"1. {STEPS[0].title}")
    assert page.evaluate(VIEWS_JS) == drawn  # nothing drawn again
    _check_step(page, DEFAULT, 0)
    # a screen reader hears step 1 alone: the kept views' words are hidden from it too
    heard = page.locator(f"{LIVE} section").aria_snapshot()
    assert "Add the token's" in heard
    for step in STEPS[1:]:
        words = max(step.explanation.split("$")[::2], key=len).strip()[:20]  # not the math
        assert words not in heard


def test_keys_move_the_steps_and_stop_there(steps: Page):
    page = steps
    page.evaluate("document.activeElement && document.activeElement.blur()")  # no text box
    for key, k in (("ArrowRight", 2), ("PageDown", 3), ("PageUp", 2), ("ArrowLeft", 1)):
        page.keyboard.press(key)
        expect(page.locator(LIVE_HEADING)).to_have_text(f"{k}. {STEPS[k - 1].title}")
    # the page's own listeners (Streamlit's Previous/Next shortcuts) never see them
    reached = page.evaluate("""() => {
        let seen = 0;
        const count = () => { seen += 1; };
        document.addEventListener('keydown', count);
        for (const key of ['ArrowRight', 'PageDown', 'ArrowLeft', 'PageUp']) {
            document.body.dispatchEvent(new KeyboardEvent('keydown', {key, bubbles: true}));
        }
        document.removeEventListener('keydown', count);
        return seen;
    }""")
    assert reached == 0
    box = page.locator(".st-key-st_labels textarea")  # in a text box the keys stay there
    box.focus()
    page.keyboard.press("ArrowRight")
    expect(page.locator(LIVE_HEADING)).to_have_text(f"1. {STEPS[0].title}")


def test_a_dragged_slider_moves_the_numbers_and_reaches_the_link_on_release(steps: Page):
    page = steps
    for _ in range(4):
        page.locator(f'{LIVE} button[data-go="1"]').click()
    expect(page.locator(LIVE_HEADING)).to_have_text(f"5. {STEPS[4].title}")
    expect(page).to_have_url(re.compile(r"[?&]step=5(&|$)"))
    wait_for_app(page)
    slider = page.locator(SLIDERS).nth(1)  # gamma
    announced = page.locator(f"{LIVE} [aria-live]").inner_text()
    runs = runs_finished(page)
    box = slider.bounding_box()
    assert box is not None
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * 0.5, y)
    page.mouse.down()
    for share in (0.6, 0.7, 0.8, 0.9):
        page.mouse.move(box["x"] + box["width"] * share, y)
        gamma = float(slider.input_value())
        x_hat = _expected(DEFAULT, 4)["lesson"].x_hat
        want = [fmt(v, scale_of([v])) for v in gamma * x_hat]
        assert _shown_numbers(page) == want, f"gamma {gamma}"
    assert runs_finished(page) == runs, "a run while the slider was held"
    assert page.locator(f"{LIVE} [aria-live]").inner_text() == announced  # nothing per frame
    page.mouse.up()
    gamma_text = f"{float(slider.input_value()):g}"
    expect(page).to_have_url(re.compile(rf"[?&]gamma={re.escape(gamma_text)}(&|$)"))
    expect(page.locator(".st-key-st_gamma input")).to_have_value(gamma_text)
    expect(page.locator(f"{LIVE} [aria-live]")).to_contain_text(f"γ = {gamma_text}")
    expect(page.locator(LIVE_HEADING)).to_have_text(f"5. {STEPS[4].title}")  # no snap back
    assert_no_problems(page)


def test_an_edited_number_moves_every_step_and_reaches_the_text_box(steps: Page):
    page = steps
    cell = page.locator(f"{CELLS} input").nth(2)  # x, feature 3
    cell.fill("10")
    assert _shown_numbers(page) == ["6"]  # the mean of 2, 4, 10, 8, before any run
    cell.fill("1..")
    expect(cell).to_have_attribute("aria-invalid", "true")
    expect(page.locator(f"{LIVE} .lnlab-live-message")).to_contain_text('"1.." is not a number')
    assert _shown_numbers(page) == ["6"]  # the last good number stays
    cell.fill("12")
    cell.press("Enter")
    expect(page.locator(".st-key-st_text textarea")).to_have_value("2, 4, 12, 8")
    expect(page).to_have_url(re.compile(r"[?&]x=2%2C4%2C12%2C8(&|$)"))
    assert _shown_numbers(page) == ["6.5"]
    assert_no_problems(page)


def test_leaving_the_five_steps_goes_to_pythons_sections_and_back(steps: Page):
    page = steps
    for _ in range(4):
        page.locator(f'{LIVE} button[data-go="1"]').click()
    with expect_rerun(page):
        page.locator(f'{LIVE} button[data-go="1"]').click()
    expect(page.locator(MAIN)).to_contain_text("6. The check: the mean and spread of x̂")
    expect(page.locator(LIVE)).to_have_count(0)
    with expect_rerun(page):
        page.locator(".st-key-step_through_prev button").click()
    expect(page.locator(LIVE_HEADING)).to_have_text(f"5. {STEPS[4].title}")


def test_show_every_section_hands_the_lesson_to_python(steps: Page):
    page = steps
    with expect_rerun(page):
        page.locator(f"{LIVE} .lnlab-live-switch input").check()
    expect(page.locator(LIVE)).to_have_count(0)
    for k, title in ((1, STEPS[0].title), (6, "The check"), (10, "Backward")):
        expect(page.locator(MAIN)).to_contain_text(f"{k}. {title}")
    expect(page).to_have_url(re.compile(r"[?&]all=1(&|$)"))


def test_the_lesson_reads_out_on_release_and_has_names(steps: Page):
    page = steps
    nav = page.locator(f"{LIVE} .lnlab-live-nav")
    expect(nav.get_by_role("button", name="Next")).to_be_visible()
    expect(nav.get_by_role("button", name="Previous")).to_be_disabled()
    expect(nav.get_by_role("combobox", name="Section")).to_have_value("0")
    for name in ("ε (epsilon)", "γ (gamma), for every feature", "β (beta), for every feature"):
        expect(page.get_by_role("slider", name=name)).to_be_visible()
    expect(page.get_by_role("textbox", name="x, f1")).to_have_value("2")
    page.locator(f'{LIVE} button[data-go="1"]').focus()
    page.keyboard.press("Enter")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none", "the focused button shows no focus"
    expect(page.locator(f"{LIVE} [aria-live='polite']")).to_have_text(
        "Step 2 of 5, Variance: σ² = 5."
    )


STEP_ROUTE = "/_lnlab/step/"  # lnlab.ui.server.steps


def _step_posted(response: Response) -> bool:
    return STEP_ROUTE in response.url and response.request.method == "POST"


def test_steps_reach_python_and_the_link_by_the_route_with_no_run(steps: Page):
    """Each step reaches Python by the step route (lnlab.ui.server.steps), with no script run:
    the server sends the link to it, a later run draws it, Back goes to the one before, and
    a reload opens it."""
    page = steps
    runs = runs_finished(page)
    for k in (2, 3):
        with page.expect_response(_step_posted) as posted:
            page.locator(f'{LIVE} button[data-go="1"]').click()
        assert posted.value.status == 200
        expect(page).to_have_url(re.compile(rf"[?&]step={k}(&|$)"))
        expect(page.locator(f"{LIVE}[data-synced='true']")).to_have_count(1)
    assert runs_finished(page) == runs, "a step ran the script"
    share = page.locator(f"{LIVE} .lnlab-live-share")
    expect(page.get_by_text("Copy link to this example")).to_have_count(1)  # the page's own
    share.locator("summary").click()
    expect(share.locator("input")).to_have_value(re.compile(r"^http.*[?&]step=3(&|$)"))
    assert_accessible(page, "step-through, its link to copy open")
    rerun_page(page)
    expect(page.locator(LIVE_HEADING)).to_have_text(f"3. {STEPS[2].title}")
    expect(page).to_have_url(re.compile(r"[?&]step=3(&|$)"))
    page.go_back()
    expect(page.locator(LIVE_HEADING)).to_have_text(f"2. {STEPS[1].title}")
    page.reload()
    wait_for_app(page)
    expect(page.locator(LIVE_HEADING)).to_have_text(f"2. {STEPS[1].title}")
    assert_no_problems(page)


def test_a_refused_step_route_sends_each_step_as_state(steps: Page):
    page = steps
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if STEP_ROUTE in r.url else None)
    page.route(f"**{STEP_ROUTE}**", lambda route: route.abort("failed"))
    for k in (2, 3):
        with expect_rerun(page):
            page.locator(f'{LIVE} button[data-go="1"]').click()
        expect(page).to_have_url(re.compile(rf"[?&]step={k}(&|$)"))
        expect(page.locator(LIVE_HEADING)).to_have_text(f"{k}. {STEPS[k - 1].title}")
    assert len(posts) == 2  # each step tried the route first


def _block(pattern: str):
    def refuse(route: Route) -> None:
        route.abort("failed")

    return pattern, refuse


@pytest.mark.parametrize("blocked", ["**/app/static/lnlab/**", "**/app/static/katex/**"])
def test_without_the_browsers_lesson_todays_lesson_works(
    page: Page, streamlit_server: StreamlitServer, blocked: str
):
    page.route(*_block(blocked))
    page.goto(streamlit_server.page_url(STEP_THROUGH))
    wait_for_app(page)
    if "katex" in blocked:  # the first view's formulas are the page's own (static/lnlab/math.mjs):
        expect(page.locator(LIVE_HEADING)).to_have_text(f"1. {STEPS[0].title}")
        page.mouse.move(200, 200)  # KaTeX is asked for once the user starts using the page
    expect(page.locator(MAIN)).to_contain_text("computed on the server")
    expect(page.locator(LIVE)).to_have_count(0)
    expect(page.locator(MAIN)).to_contain_text("1. Mean")
    with expect_rerun(page):
        page.locator(".st-key-step_through_next button").click()
    expect(page.locator(MAIN)).to_contain_text("2. Variance")
    assert_no_problems(page)


def test_until_the_browsers_lesson_loads_todays_lesson_works(
    page: Page, streamlit_server: StreamlitServer
):
    held: list[Route] = []

    def hold(route: Route) -> None:
        held.append(route)

    page.route("**/app/static/lnlab/step_through.mjs", hold)
    page.goto(streamlit_server.page_url(STEP_THROUGH))
    wait_for_app(page)
    expect(page.locator(LIVE_FALLBACK)).to_be_visible()
    with expect_rerun(page):
        page.locator(".st-key-step_through_next button").click()
    expect(page.locator(LIVE_FALLBACK)).to_contain_text("2. Variance")
    for route in held:
        route.continue_()
    page.unroute("**/app/static/lnlab/step_through.mjs")
    expect(page.locator(LIVE_HEADING)).to_have_text(f"2. {STEPS[1].title}")
    expect(page.locator(LIVE_FALLBACK)).to_have_count(0)
    assert_no_problems(page)
