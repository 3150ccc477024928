"""A student of the step-through lesson through the local cluster's proxy: one browser tab (a
harness.sessions.Session) with its SERVERID cookie as a browser keeps it, its own example
"1, 2, 3, 4, k", its clicks on Next, and its reconnection when its process dies.

Used by tests/serving/test_cluster.py and bench.load.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from http.cookies import SimpleCookie
from urllib.parse import parse_qs

from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.exceptions import ConnectionClosed, InvalidStatus

from harness.sessions import LNLAB, Run, Session, WrongPage, stream

# The step-through lesson (pages/step_through.py): its sections and its buttons' widget keys.
SECTIONS = 9
PREV, NEXT = "step_through_prev", "step_through_next"
STEP_TIMEOUT_S = 60.0
RECONNECT_TRIES = 20  # a browser retries; so does a student here, RECONNECT_PAUSE_S apart
RECONNECT_PAUSE_S = 0.5


def section_number(run: Run) -> int:
    """The lesson's section on screen: its title starts "k. "."""
    if not run.sections:
        raise WrongPage(f"no section title in {run.headings}")
    return int(run.sections[0].split(".", 1)[0])


class Student:
    """One browser tab through the proxy: its cookie, its session, its example `k`."""

    def __init__(self, url: str, k: int) -> None:
        self.url = url
        self.k = k
        self.cookie = ""  # SERVERID=app1, as HAProxy set it
        self.session: Session | None = None
        self.at = 1  # the section on screen

    @property
    def server(self) -> str:
        return self.cookie.partition("=")[2]

    async def connect(self, stack: AsyncExitStack) -> Run:
        """Open the websocket and run the page, as opening it in a browser does; then, with
        no JavaScript to draw the lesson in the page, get Python's (Session.python_lesson)."""
        await self._open(stack)
        assert self.session is not None
        return await self.session.python_lesson(await self.session.rerun())

    async def _open(self, stack: AsyncExitStack) -> None:
        """Open the websocket (sending the cookie, keeping a new one): a new session."""
        ws = await stack.enter_async_context(stream(self.url, self.cookie, STEP_TIMEOUT_S))
        for header in ws.response.headers.get_all("Set-Cookie"):
            cookie = SimpleCookie(header)
            if "SERVERID" in cookie:
                self.cookie = f"SERVERID={cookie['SERVERID'].value}"
        self.session = Session(ws, self.url + LNLAB.path)

    async def type_example(self) -> Run:
        """Type "1, 2, 3, 4, k" (checked by Session.edit); the URL holds it afterwards."""
        assert self.session is not None
        run = await self.session.edit(self.k)
        if f"1,2,3,4,{self.k}" not in "".join(parse_qs(self.session.query_string).get("x", [])):
            raise WrongPage(f"the URL does not hold the example: {self.session.query_string}")
        return run

    async def next(self) -> float:
        """Press Next (Previous on the last section): the click's ms, its section checked."""
        assert self.session is not None
        forward = self.at < SECTIONS
        key = NEXT if forward else PREV
        button = self.session.widgets[key]
        run = await self.session.rerun(
            [WidgetState(id=button.id, trigger_value=True)], self.session.fragments.get(key, "")
        )
        expected = self.at + (1 if forward else -1)
        if section_number(run) != expected:
            raise WrongPage(f"section {section_number(run)} after {key}, not {expected}")
        self.at = expected
        return run.finished_ms

    async def reconnect(self, stack: AsyncExitStack) -> None:
        """As the browser does when its websocket drops: connect again (the cookie names the
        dead process; HAProxy sends the tab to another), run nothing, and on the student's
        next click send what the browser sends: Next, a rerun of the lesson's fragment, which
        the new process has never run (lnlab.ui.runtime.failover makes it a run of the whole page).
        The example must survive: the same numbers, section and URL. The click itself is
        absorbed (the page reopens its link, which names the section), as in Chromium."""
        old = self.session
        assert old is not None
        for attempt in range(RECONNECT_TRIES):
            try:
                await self._open(stack)
                break
            except (ConnectionClosed, InvalidStatus, OSError):
                if attempt == RECONNECT_TRIES - 1:
                    raise
                await asyncio.sleep(RECONNECT_PAUSE_S)
        new = self.session
        new.query_string, new.page_hash = old.query_string, old.page_hash
        new.widgets, new.fragments = dict(old.widgets), dict(old.fragments)
        key = NEXT if self.at < SECTIONS else PREV
        run = await new.rerun(
            [WidgetState(id=old.widgets[key].id, trigger_value=True)], old.fragments.get(key, "")
        )
        run = await new.python_lesson(run)  # a new process's session: Python's lesson again
        if section_number(run) != self.at:
            raise WrongPage(f"reconnected on section {section_number(run)}, not {self.at}")
        if new.query_string != old.query_string:
            raise WrongPage(f"the URL changed on reconnecting: {new.query_string}")
        typed = new.widgets[LNLAB.text_key].value
        if typed != f"1, 2, 3, 4, {self.k}":
            raise WrongPage(f"reconnected with {typed!r} in the text box, not the example")
