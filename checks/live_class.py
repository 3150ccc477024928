"""A live class driven through the app's pages as browsers drive them: one teacher and N
students, each a browser tab speaking Streamlit's websocket protocol (harness.sessions.Session,
no rendering) through the proxy, with its SERVERID cookie as a browser keeps it.

The lesson: the teacher opens the Class page, presses "Start a class", reads the join link
and the teacher link off the page, presents the step-through lesson and goes to its first
slide with a question; every student opens the join link and presses Join; the teacher
presses "Ask the class"; each student's page, polling as the browser's timer does
(`auto_rerun`), shows the options and the student taps one after a moment's thought; the
teacher's panel counts the answers; the teacher presses Reveal; each student's page shows the
answer, their own feedback and their score. `run_class(..., kill=...)` calls `kill` once half
the class has answered: tabs whose websocket closes reconnect as Streamlit's browser does
(its back-off, the health and host-config pings, then a whole-page run, which a page with a
polling fragment asks for at once), and the driver measures when each is back in the class.

Everything the driver knows of the pages is in this module (the widget keys and the texts it
reads are the constants below; how a teacher comes back is Teacher.back), so a change to the
class pages is adapted here alone.
"""

from __future__ import annotations

import asyncio
import html
import random
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from harness.sessions import Session, WrongPage, stream

# The class pages' widget keys (lnlab/ui/classroom.py, pages/class.py, the lesson's buttons).
START = "live_start"
JOIN = "live_join"
PRESENT = "live_present_pages/step_through.py"
NEXT = "step_through_next"
ASK = "live_ask_"  # + the question's id
REVEAL = "live_reveal_"  # + the question's id
OPTION = re.compile(r"live_opt_(?P<qid>.+)_(?P<k>\d+)$")
# What the driver reads off the pages.
# "**3 of 4** answered" on the Class page, "<b>3 of 4</b> answered" on a slide asked
ANSWERED = re.compile(r"(?:\*\*|<b>)(?P<answered>\d+) of (?P<joined>\d+)(?:\*\*|</b>) answered")
JOIN_LINK = re.compile(r"<b>(?P<link>[^<]*[?&]join=(?P<code>[^<&]*)[^<]*)</b>")
WAITING = "Waiting for the reveal"
YOUR_ANSWER = re.compile(r"Your answer: \*\*(?P<text>.+?)\*\*")
NO_ANSWER = "You did not answer this one"
THE_ANSWER = re.compile(r"The answer: \*\*(?P<text>.+?)\*\*")

COOKIE = "SERVERID"  # HAProxy's: which process a browser is pinned to
BROWSER, CLAIM = "lnlab_browser", "lnlab_teacher"  # the app's (lnlab.ui.claims)
SCRIPT_COOKIE = re.compile(r'<script src="[^"]*lnlab-cookie\.js(?:\?[^"]*)?" data-cookie="([^"]*)"')
STEP_TIMEOUT_S = 60.0
RECONNECT_GIVE_UP_S = 60.0
NEXT_LIMIT = 8  # slides the teacher goes through looking for a question


class Tab(Session):
    """One browser tab: its cookie, the page's path, what the last run drew, and the fragments
    the browser reruns by itself (auto_rerun: fragment id -> interval in seconds)."""

    def __init__(self, base: str, path: str, query: str = "") -> None:
        super().__init__(None, base + path)  # type: ignore[arg-type]
        self.base = base
        self.query_string = query
        self.cookies: dict[str, str] = {}  # as the browser keeps them: HAProxy's SERVERID, ...
        self.polls: dict[str, float] = {}
        self.drawn: list[tuple[str, str]] = []  # (element kind, its text), the last run's
        self.lock = asyncio.Lock()  # one run at a time, as the browser has
        self.connected_at = 0.0
        self.pinged_at = 0.0  # when the last pings before connecting were answered

    @property
    def server(self) -> str:
        return self.cookies.get(COOKIE, "")

    @property
    def cookie(self) -> str:
        """The Cookie header the browser would send."""
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items())

    # ------------------------------------------------------------ connection
    def _keep_cookie(self, headers: Sequence[str]) -> None:
        for header in headers:
            self.cookies.update({k: m.value for k, m in SimpleCookie(header).items()})

    def _run_cookie_scripts(self, page: str) -> None:
        """What a browser does with the page's cookie scripts, `<script
        src="./lnlab-cookie.js?v=..." data-cookie="name=value; ...; Max-Age=N">`
        (lnlab.ui.claims keeps the browser's id and the teacher's claim so): keep the cookie,
        or drop it when its value is empty or its Max-Age 0."""
        for found in SCRIPT_COOKIE.findall(page):
            written = html.unescape(found)
            pair, *attributes = (part.strip() for part in written.split(";"))
            name, _, value = pair.partition("=")
            if value and "max-age=0" not in (a.lower() for a in attributes):
                self.cookies[name.strip()] = value
            else:
                self.cookies.pop(name.strip(), None)

    async def _ping(self) -> None:
        """What Streamlit's browser asks before it (re)connects: health and host-config, with
        its cookies (through the proxy, these already land on a live process)."""
        parts = urlsplit(self.base)
        for path in ("/_stcore/health", "/_stcore/host-config"):
            reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
            try:
                cookie = f"Cookie: {self.cookie}\r\n" if self.cookies else ""
                writer.write(
                    f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\n{cookie}"
                    "Connection: close\r\n\r\n".encode()
                )
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
                await reader.read()
            finally:
                writer.close()
            status, *lines = head.split("\r\n")
            self._keep_cookie(
                [v for k, _, v in (ln.partition(": ") for ln in lines) if k.lower() == "set-cookie"]
            )
            if status.split()[1] != "200":
                raise OSError(f"{path} answered {status}")

    async def connect(self, stack: AsyncExitStack) -> None:
        """Open the websocket (sending the cookie, keeping a new one)."""
        self.ws = await stack.enter_async_context(stream(self.base, self.cookie, STEP_TIMEOUT_S))
        self._keep_cookie(self.ws.response.headers.get_all("Set-Cookie"))
        self.connected_at = time.monotonic()

    async def open(self, stack: AsyncExitStack) -> None:
        """Open the page as a browser does: pings, websocket, a whole-page run."""
        await self._ping()
        await self.connect(stack)
        await self.run()

    async def reconnect(self, stack: AsyncExitStack) -> int:
        """After the websocket closed: what Streamlit's browser does (its reconnect delay, the
        pings, the websocket) until it is connected; then, with a polling fragment on the page,
        the whole-page run it asks for at once (frontend's handleConnectionStateChanged). The
        attempts it took."""
        deadline = time.monotonic() + RECONNECT_GIVE_UP_S
        attempt = 0
        while True:
            attempt += 1
            await asyncio.sleep(browser_reconnect_delay_s(attempt))
            try:
                await self._ping()
                self.pinged_at = time.monotonic()
                await self.connect(stack)
                break
            except (OSError, EOFError, InvalidHandshake, TimeoutError):
                if time.monotonic() > deadline:
                    raise
        self.cache.clear()  # a new session: nothing cached on the new process's side
        if self.polls:
            await self.run()
        return attempt

    # ------------------------------------------------------------ runs
    async def _receive(self) -> ForwardMsg:
        msg = await super()._receive()
        kind = msg.WhichOneof("type")
        if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            name = element.WhichOneof("type")
            item = getattr(element, name)
            text = next(
                (
                    str(getattr(item, f))
                    for f in ("body", "code_text", "label")
                    if getattr(item, f, "")
                ),
                "",
            )
            self.drawn.append((name, text))
            if name == "html":
                self._run_cookie_scripts(text)
            if getattr(item, "id", ""):  # a widget: $$ID-<hash>-<user key>
                key = item.id.split("-", 2)[-1]
                self.widgets[key] = item
                self.fragments[key] = msg.delta.fragment_id
        elif kind == "auto_rerun":
            self.polls[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
        elif kind == "stop_auto_rerun":
            for fragment in msg.stop_auto_rerun.fragment_ids:
                self.polls.pop(fragment, None)
        elif kind == "navigation":  # a page switch: the address bar shows the new page
            self.polls.clear()  # as the browser, which drops the old page's timers
            for page in msg.navigation.app_pages:
                if page.page_script_hash == msg.navigation.page_script_hash:
                    self.url = f"{self.base}/{page.url_pathname}"
        return msg

    def rerun_request(
        self, states: Sequence[WidgetState] = (), fragment_id: str = "", auto: bool = False
    ) -> bytes:
        """Session's request, marked as a timer's (is_auto_rerun) when `auto`."""
        back = BackMsg()
        back.ParseFromString(super().rerun_request(states, fragment_id))
        back.rerun_script.is_auto_rerun = auto
        return back.SerializeToString()

    async def run(
        self, states: Sequence[WidgetState] = (), fragment_id: str = "", auto: bool = False
    ) -> list[tuple[str, str]]:
        """One run as the browser asks for it; what it drew."""
        async with self.lock:
            self.drawn = []
            await self.ws.send(self.rerun_request(states, fragment_id, auto))
            while True:
                msg = await self._receive()
                kind = msg.WhichOneof("type")
                if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                    element = msg.delta.new_element
                    if element.WhichOneof("type") == "exception":
                        raise WrongPage(f"the page raised: {element.exception.message}")
                elif kind == "page_info_changed":
                    self.query_string = msg.page_info_changed.query_string
                elif kind == "navigation":
                    self.page_hash = msg.navigation.page_script_hash
                elif kind == "script_finished":
                    if msg.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                        continue
                    return list(self.drawn)

    async def click(self, key: str) -> list[tuple[str, str]]:
        """Press button `key` (in its fragment, if it is in one)."""
        button = self.widgets[key]
        return await self.run(
            [WidgetState(id=button.id, trigger_value=True)], self.fragments.get(key, "")
        )

    async def poll(self) -> list[tuple[str, str]]:
        """Each polling fragment once, as the browser's timers do; what they drew."""
        drawn: list[tuple[str, str]] = []
        for fragment in list(self.polls):
            drawn += await self.run(fragment_id=fragment, auto=True)
        return drawn

    def keys(self, prefix: str) -> list[str]:
        """Widget keys that start with `prefix`, among the widgets the last run drew."""
        drawn = {text for kind, text in self.drawn if kind == "button"}
        return [k for k, w in self.widgets.items() if k.startswith(prefix) and w.label in drawn]


def browser_reconnect_delay_s(attempt: int) -> float:
    """Streamlit 1.67's frontend (nextReconnectDelayMs): 250-500 ms before the first attempt,
    then up to min(4 s, 0.5 s x 2^(n-1)), at least half of it."""
    top = min(4000, 500 * 2 ** (attempt - 1))
    low = 250 if attempt == 1 else top / 2
    return (low + random.random() * (top - low)) / 1000


def texts(drawn: Sequence[tuple[str, str]]) -> str:
    return "\n".join(text for _, text in drawn)


# ---------------------------------------------------------------- the people


@dataclass
class Teacher:
    """The teacher's tab: the Class page, then the step-through lesson in presenter mode. The
    browser keeps the teacher's claim in a cookie the page sets (lnlab.ui.claims), which the
    tab sends when it reconnects."""

    tab: Tab
    code: str = ""
    join_link: str = ""
    qid: str = ""
    answered: int = 0
    joined: int = 0

    async def start(self, stack: AsyncExitStack) -> None:
        """Start a class, read its join link, present the lesson up to its first question."""
        await self.tab.open(stack)
        join = JOIN_LINK.search(texts(await self.tab.click(START)))
        if not join:
            raise WrongPage("no join link after Start a class")
        self.code, self.join_link = join["code"], html.unescape(join["link"])
        if CLAIM not in self.tab.cookies:
            raise WrongPage(f"Start a class set no {CLAIM} cookie in the browser")
        await self.tab.click(PRESENT)
        await self.find_question()

    async def find_question(self) -> None:
        for _ in range(NEXT_LIMIT):
            asks = self.tab.keys(ASK)
            if asks:
                self.qid = asks[0][len(ASK) :]
                return
            await self.tab.click(NEXT)
        raise WrongPage(f"no slide with Ask the class in {NEXT_LIMIT} slides")

    async def ask(self) -> None:
        await self.tab.click(ASK + self.qid)
        if not self.tab.keys(REVEAL):
            raise WrongPage("no Reveal button after Ask the class")

    def teaching(self) -> bool:
        """Whether the page on screen is the teacher's: the class's panel for the question."""
        return any(k == REVEAL + self.qid for k in self.tab.keys(REVEAL)) or bool(
            ANSWERED.search(texts(self.tab.drawn))
        )

    async def count(self) -> int:
        """Poll the panel once; the students who answered (as the panel says)."""
        found = ANSWERED.search(texts(await self.tab.poll()))
        if found:
            self.answered, self.joined = int(found["answered"]), int(found["joined"])
        return self.answered

    async def back(self, stack: AsyncExitStack) -> None:
        """Back on the question's panel as its teacher after a reconnect, with no click: the
        tab reconnects by itself and its whole-page run finds the teacher's class again from
        the claim's cookie."""
        await self.tab.reconnect(stack)
        if not self.teaching():
            raise WrongPage(
                "the reconnected page did not show the teacher's panel: "
                + texts(self.tab.drawn)[:300]
            )

    async def reveal(self) -> None:
        await self.tab.click(REVEAL + self.qid)


def option_text(label: str) -> str:
    """An option's text from its button's label, "2\u2003text" (numbered as the projector)."""
    return label.split("\u2003", 1)[-1]


@dataclass
class Student:
    """A student's tab on the Class page, from the join link."""

    tab: Tab
    seat: int
    joined: bool = False
    chose: str | None = None  # the option tapped (its text)
    shown_answer: str | None = None  # their answer as their page shows it
    right: str | None = None  # the right answer, once revealed
    score: str | None = None  # "1 / 1"
    seen: set[str] = field(default_factory=set)  # the options' texts, once shown

    async def join(self, stack: AsyncExitStack) -> None:
        await self.tab.open(stack)
        drawn = await self.tab.click(JOIN)
        if not self.tab.polls or not any(kind == "metric" for kind, _ in drawn):
            raise WrongPage(f"Join did not show the class: {texts(drawn)[:300]}")
        if BROWSER not in self.tab.cookies:
            raise WrongPage(f"the page set no {BROWSER} cookie in the browser")
        self.joined = True

    def options(self) -> list[str]:
        """The option buttons' keys the last run drew, in their order."""
        keys = sorted(self.tab.keys("live_opt_"), key=lambda k: int(OPTION.match(k)["k"]))
        self.seen.update(option_text(self.tab.widgets[k].label) for k in keys)
        return keys

    def read(self, drawn: Sequence[tuple[str, str]]) -> None:
        """What the student's view shows: their answer, the right one, their score."""
        text = texts(drawn)
        if found := YOUR_ANSWER.search(text):
            self.shown_answer = found["text"]
        if NO_ANSWER in text:
            self.shown_answer = None
        for option in sorted(self.seen, key=len, reverse=True):  # "1.5" before "1"
            if re.search(f"You answered {re.escape(option)}[:.] ", text):
                self.shown_answer = option
                break
        if found := THE_ANSWER.search(text):
            self.right = found["text"]
        for kind, value in drawn:
            if kind == "metric" and value:
                self.score = value

    def in_class(self) -> bool:
        """The page shows the class: the question's options, or the student's own answer."""
        return bool(self.options()) or self.shown_answer is not None

    async def answer(self) -> None:
        """Tap option seat mod n (every option gets some students)."""
        options = self.options()
        key = options[self.seat % len(options)]
        self.chose = option_text(self.tab.widgets[key].label)
        self.read(await self.tab.click(key))


# ---------------------------------------------------------------- the lesson


class Closed(Exception):
    """A tab's websocket closed while it waited (a browser notices at once)."""


async def pause(tab: Tab, seconds: float) -> None:
    """Wait `seconds`, or raise Closed as soon as the tab's websocket closes."""
    closed = asyncio.ensure_future(tab.ws.wait_closed())
    done, _ = await asyncio.wait({closed}, timeout=seconds)
    if not done:
        closed.cancel()
        return
    raise Closed()


GONE = (ConnectionClosed, Closed)
FAILED = (WrongPage, InvalidHandshake, OSError, EOFError, TimeoutError)


@dataclass
class ClassReport:
    """What happened: counts, and seconds by the driver's clock."""

    students: int
    joined: int = 0
    answered_seen_by_teacher: int = 0
    answers_shown: int = 0  # students whose page, after the reveal, showed their own choice
    answers_wrong: list[str] = field(default_factory=list)  # "seat: chose X, shown Y"
    retapped: int = 0  # taps in flight at the kill: the options came back, the student tapped again
    scores_right: int = 0  # students whose score matches their choice and the answer
    killed: str = ""  # the process killed (its SERVERID), if any
    back_s: dict[str, float] = field(default_factory=dict)  # who -> kill to back in the class
    closed_s: dict[str, float] = field(default_factory=dict)  # who -> kill to their tab closing
    pinged_s: dict[str, float] = field(default_factory=dict)  # who -> kill to pings answered
    connected_s: dict[str, float] = field(default_factory=dict)  # who -> kill to reconnected
    reconnect_attempts: list[int] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    servers: dict[str, int] = field(default_factory=dict)  # students per process on joining
    timings_s: dict[str, float] = field(default_factory=dict)

    first_errors: list[str] = field(default_factory=list)  # "who: kind: message"

    def error(self, err: BaseException, who: str = "") -> None:
        name = type(err).__name__
        if isinstance(err, InvalidStatus):
            name = f"HTTP {err.response.status_code}"
        self.errors[name] = self.errors.get(name, 0) + 1
        self.first_errors.append(f"{who}: {name}: {str(err)[:200]}")


@dataclass
class Lesson:
    """What the people of a class share while it runs."""

    students: int
    answered: int = 0
    half: asyncio.Event = field(default_factory=asyncio.Event)
    killed: asyncio.Event = field(default_factory=asyncio.Event)
    over: asyncio.Event = field(default_factory=asyncio.Event)
    kill_at: float = 0.0  # time.monotonic of the kill


async def run_class(
    url: str,
    students: int = 60,
    kill: Callable[[str], Awaitable[float]] | None = None,
    think_s: tuple[float, float] = (1.0, 8.0),
    arrive_s: float = 10.0,
    seed: int = 1,
    lesson_timeout_s: float = 300.0,
) -> ClassReport:
    """A whole lesson through the proxy at `url`. With `kill`, `await kill(server)` with the
    teacher's SERVERID once half the class has answered; it returns when (time.monotonic) it
    killed the process, from which the tabs' reconnections are timed."""
    rng = random.Random(seed)
    report = ClassReport(students)
    clock = time.monotonic
    start = clock()
    async with AsyncExitStack() as stack:
        teacher = Teacher(Tab(url, "/class"))
        async with asyncio.timeout(STEP_TIMEOUT_S):
            await teacher.start(stack)
        report.timings_s["teacher on the question's slide"] = clock() - start
        link = urlsplit(teacher.join_link)
        pupils = [Student(Tab(url, link.path, link.query), seat) for seat in range(students)]

        async def arrive(pupil: Student, at_s: float) -> None:
            await asyncio.sleep(at_s)
            try:
                async with asyncio.timeout(STEP_TIMEOUT_S):
                    await pupil.join(stack)
            except (*GONE, *FAILED) as err:
                report.error(err, f"student {pupil.seat} joining")

        arrivals = sorted(rng.uniform(0, arrive_s) for _ in pupils)
        await asyncio.gather(*(arrive(p, t) for p, t in zip(pupils, arrivals, strict=True)))
        present = [p for p in pupils if p.joined]
        report.joined = len(present)
        for p in present:
            report.servers[p.tab.server] = report.servers.get(p.tab.server, 0) + 1
        report.timings_s["class joined"] = clock() - start
        async with asyncio.timeout(STEP_TIMEOUT_S):
            await teacher.ask()
        lesson = Lesson(len(present))
        closed_at: dict[str, float] = {}  # who -> when their tab closed (time.monotonic)
        pinged_at: dict[str, float] = {}
        connected_at: dict[str, float] = {}
        back_at: dict[str, float] = {}
        if kill is None:
            lesson.half.set()

        async def back(who: str, tab: Tab) -> None:
            closed_at[who] = clock()
            report.reconnect_attempts.append(await tab.reconnect(stack))
            pinged_at[who] = tab.pinged_at
            connected_at[who] = tab.connected_at
            back_at[who] = clock()

        async def student_life(p: Student) -> None:
            think, seen_at, moved = rng.uniform(*think_s), None, False
            while not lesson.over.is_set():
                try:
                    async with asyncio.timeout(STEP_TIMEOUT_S):
                        p.read(await p.tab.poll())
                        if p.chose is None and p.options():
                            seen_at = seen_at or clock()
                            if clock() - seen_at >= think:
                                await p.answer()
                                lesson.answered += 1
                                if lesson.answered * 2 >= lesson.students:
                                    lesson.half.set()
                    if p.right is not None:
                        return
                    await pause(p.tab, min(p.tab.polls.values(), default=1.5))
                except GONE as err:
                    if not lesson.killed.is_set() or moved:
                        report.error(err, f"student {p.seat}")
                        return
                    moved = True
                    try:
                        async with asyncio.timeout(STEP_TIMEOUT_S):
                            await moved_student(p)
                    except (*GONE, *FAILED) as err2:
                        report.error(err2, f"student {p.seat} reconnecting")
                        return
                except FAILED as err:
                    report.error(err, f"student {p.seat}")
                    return

        async def moved_student(p: Student) -> None:
            await back(f"student {p.seat}", p.tab)
            shown, p.shown_answer = p.shown_answer, None
            p.read(p.tab.drawn)
            if not p.in_class():
                raise WrongPage(f"student {p.seat} is not back in the class")
            if p.chose is not None and p.shown_answer is None:
                if shown is not None:  # stored, then no longer shown: an answer lost
                    report.answers_wrong.append(f"{p.seat}: {shown!r} gone after reconnecting")
                else:  # tapped as the process died: the options are back, tap again
                    report.retapped += 1
                    p.chose = None
                    lesson.answered -= 1

        async def teacher_life() -> None:
            moved = False
            while True:
                try:
                    async with asyncio.timeout(STEP_TIMEOUT_S):
                        counted = await teacher.count()
                    if counted >= lesson.students:  # the store's count, shown on the panel
                        break
                    await pause(teacher.tab, min(teacher.tab.polls.values(), default=1.0))
                except GONE:
                    if not lesson.killed.is_set() or moved:
                        raise
                    moved = True
                    closed_at["teacher"] = clock()
                    async with asyncio.timeout(STEP_TIMEOUT_S):
                        await teacher.back(stack)
                    back_at["teacher"] = clock()
            report.timings_s["teacher's panel counted every answer"] = clock() - start
            async with asyncio.timeout(STEP_TIMEOUT_S):
                await teacher.reveal()

        async def killer() -> None:
            await lesson.half.wait()
            report.killed = teacher.tab.server
            lesson.killed.set()
            lesson.kill_at = await kill(report.killed)
            report.timings_s["killed"] = lesson.kill_at - start

        tasks = [teacher_life(), *(student_life(p) for p in present)]
        if kill is not None:
            tasks.append(killer())
        try:
            async with asyncio.timeout(lesson_timeout_s):
                results = await asyncio.gather(*tasks, return_exceptions=True)
        except TimeoutError as err:
            results = [err]
        lesson.over.set()
        for measured, at in (
            (report.closed_s, closed_at),
            (report.pinged_s, pinged_at),
            (report.connected_s, connected_at),
            (report.back_s, back_at),
        ):
            measured.update({who: t - lesson.kill_at for who, t in at.items()})
        for r in results:
            if isinstance(r, BaseException):
                report.error(r, "lesson")
        report.answered_seen_by_teacher = teacher.answered
        report.timings_s["everyone saw the reveal"] = clock() - start
        for p in present:
            if p.chose is not None and p.shown_answer == p.chose:
                report.answers_shown += 1
            elif f"{p.seat}:" not in "".join(report.answers_wrong):
                report.answers_wrong.append(
                    f"{p.seat}: chose {p.chose!r}, shown {p.shown_answer!r}"
                )
            expected = "1 / 1" if p.chose == p.right else "0 / 1"
            report.scores_right += p.score == expected
    return report
