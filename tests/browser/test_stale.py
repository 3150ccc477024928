"""A message the page sends before the server's reply arrives keeps what the visitor did
(lnlab.ui.runtime.stale): the replies are held back here, as a slow server or network would."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from playwright.sync_api import Locator, Page, WebSocketRoute, expect

from lnlab.teach.presets import CUSTOM_PRESET, TOKEN_PRESETS

from .conftest import (
    APP_PAGES,
    LIVE_FALLBACK,
    MAIN,
    StreamlitServer,
    expect_rerun,
    wait_for_app,
)

pytestmark = pytest.mark.browser

STEP_THROUGH = next(p for p in APP_PAGES if p.name == "step_through")
TEXT = ".st-key-st_text textarea"
PRESET = ".st-key-st_preset"
EPS = ".st-key-st_eps input"
NEXT = ".st-key-step_through_next button"  # Next on a section Python draws
EPS_UP = ".st-key-st_eps button[data-testid='stNumberInputStepUp']"
PRESET_TITLE = TOKEN_PRESETS[0].title  # the default: 2, 4, 6, 8


def _preset_menu(page: Page) -> Locator:
    """The preset's menu (lnlab.ui.inputs.menu): a button that reads "Preset: <title>"."""
    return page.locator('[data-testid="stPopover"] button', has_text="Preset:").locator("p")


HOLD_MS = 1500  # long enough for the server to finish the run whose reply is held


@dataclass
class Replies:
    """The app's websocket, with the server's messages held back while `holding`."""

    page: Page
    route: WebSocketRoute | None = None
    holding: bool = False
    held: list[str | bytes] = field(default_factory=list)

    def connect(self, route: WebSocketRoute) -> None:
        self.route = route
        server = route.connect_to_server()
        server.on_message(self._from_server)

    def _from_server(self, message: str | bytes) -> None:
        if self.holding:
            self.held.append(message)
        else:
            self.route.send(message)

    def release(self) -> None:
        self.holding = False
        for message in self.held:
            self.route.send(message)
        self.held.clear()


@pytest.fixture
def replies(page: Page) -> Iterator[Replies]:
    held = Replies(page)
    page.route_web_socket("**/_stcore/stream", held.connect)
    yield held


def _open(page: Page, server: StreamlitServer) -> None:
    """The page, once the lesson drawn in the page has told Python that it works: that message
    reruns the page too, and each test here sets which messages cross. (One of them failed once
    in a rehearsal of CI, its edit not applied; the cause was not found.)"""
    page.goto(server.page_url(STEP_THROUGH))
    wait_for_app(page)
    expect(page.locator(LIVE_FALLBACK)).to_have_count(0)
    wait_for_app(page)


def _then_eps_before_the_reply(page: Page, replies: Replies, action: Callable[[], None]) -> None:
    """Do `action`, then click ε's + before its reply arrives; then let the replies through.
    The click counts too."""
    eps = float(page.locator(EPS).input_value())
    replies.holding = True
    action()
    page.wait_for_timeout(HOLD_MS)
    page.locator(EPS_UP).click()
    page.wait_for_timeout(HOLD_MS)
    replies.release()
    wait_for_app(page)
    expect(page.locator(EPS)).not_to_have_value(f"{eps:g}")


def test_a_click_before_the_reply_keeps_the_typed_embeddings(
    page: Page, streamlit_server: StreamlitServer, replies: Replies
):
    """The embeddings make the preset "Custom" on the server; a click on ε sent before that
    reply arrives carries the old preset, which must not load the preset over the text."""
    _open(page, streamlit_server)

    def edit() -> None:
        page.locator(TEXT).fill("1, 2, 3, 10")
        page.locator(TEXT).press("Control+Enter")

    _then_eps_before_the_reply(page, replies, edit)
    expect(page.locator(TEXT)).to_have_value("1, 2, 3, 10")
    expect(_preset_menu(page)).to_have_text(f"Preset: {CUSTOM_PRESET.title}")


def test_the_preset_chosen_again_after_an_edit_loads(
    page: Page, streamlit_server: StreamlitServer, replies: Replies
):
    """Choosing the preset the page showed before an edit, once the edit's reply is in, is
    the visitor's choice: it loads the preset."""
    _open(page, streamlit_server)
    with expect_rerun(page):
        page.locator(TEXT).fill("1, 2, 3, 10")
        page.locator(TEXT).press("Control+Enter")
    expect(_preset_menu(page)).to_have_text(f"Preset: {CUSTOM_PRESET.title}")
    _preset_menu(page).click()
    with expect_rerun(page):
        page.locator(PRESET).get_by_role("radio", name=PRESET_TITLE).click(force=True)
    expect(page.locator(TEXT)).to_have_value("2, 4, 6, 8")
    expect(_preset_menu(page)).to_have_text(f"Preset: {PRESET_TITLE}")


def test_a_click_before_the_reply_keeps_the_section_moved_to(
    page: Page, streamlit_server: StreamlitServer, replies: Replies
):
    """Next on a section Python draws writes the new section into the address; a click on ε
    sent before that reply arrives carries the old address, which is no link being opened."""
    page.goto(streamlit_server.page_url(STEP_THROUGH) + "?v=1&step=7")
    wait_for_app(page)
    expect(page.locator(MAIN)).to_contain_text("7. Let γ and β undo it")
    _then_eps_before_the_reply(page, replies, page.locator(NEXT).click)
    expect(page.locator(MAIN)).to_contain_text("8. The whole prompt: input")
