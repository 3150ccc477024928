"""Issue 38, a room with a hostile student, through `make cluster N=2` with its default limits:
each finding's attack as a script makes it, refused or contained, and a bystander's page,
join, class or run beside it.

Every visitor is a browser tab speaking Streamlit's websocket protocol through the proxy
(checks.live_class.Tab, no rendering) from a local address of its own (127.0.0.x), so that
the proxy and the app count each attacker and bystander apart as they would count networks.
A bystander's action must succeed beside the attack; its time is printed beside the same
action's time measured in the same test before the attack (its idle time), a measurement and
not a check: no test depends on timing. The findings whose attack
is the proxy's alone (4, 6, 8: sessions in a loop, slow bodies, metrics, unreadable requests)
are in tests/serving/test_proxy.py against the same deploy/haproxy.cfg; here they are run
again against the app behind it, with 8's others (random pulse codes, the clear-cache
message). About 2 minutes on 2 busy cores.
"""

from __future__ import annotations

import asyncio
import html
import random
import re
import socket
import statistics
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.exceptions import InvalidStatus

from checks.live_class import JOIN, JOIN_LINK, START, STEP_TIMEOUT_S, Tab, texts
from harness import proxy
from harness.sessions import stream
from lnlab.classroom.links import teacher_link
from lnlab.classroom.store import CODE_ALPHABET, CODE_LENGTH, Limits, display_code
from lnlab.serving import haproxy

from .test_cluster import HAPROXY, Loop
from .test_proxy import CLIENT_TIMEOUT_S

pytestmark = pytest.mark.services

LIMITS = Limits()
NICKNAME = "live_nickname"
SWITCH_YES, SWITCH_NO = "live_switch_yes", "live_switch_no"
END, END_CONFIRM = "live_end", "live_end_confirm"
JOINING, REMOVE_PICK, REMOVE = "live_joining", "live_remove_pick", "live_remove"
TRAIN, BENCHMARK = "tr_run", "gpu_run"
STEPS = re.compile(r"(\d[\d,]*) of (\d[\d,]*) steps")
IDLE_SAMPLES = 3
BENCH_QUERY = "v=1&dev=cpu&dtype=float32&batch=4&seq=512&feat=256&s=4"  # its slide, on the CPU


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Iterator[str]:
    """`make cluster N=2` with its default limits, on free ports; the proxy's URL."""
    if not Path(HAPROXY).exists():
        pytest.fail(f"{HAPROXY} is missing: `make test` installs it (scripts/ensure-haproxy)")
    with proxy.make_cluster(tmp_path_factory.mktemp("hostile")) as url:
        yield url


@pytest.fixture(scope="module")
def loop() -> Iterator[Loop]:
    running = Loop()
    yield running
    running.close()


class Visitor(Tab):
    """A browser tab from local address `source`; its browser's cookies (a dict shared by
    the tabs of one browser); the texts its progress bars showed."""

    def __init__(
        self, base: str, path: str, query: str = "", source: str = "127.0.0.1", cookies=None
    ) -> None:
        super().__init__(base, path, query)
        self.source = source
        if cookies is not None:
            self.cookies = cookies
        self.bars: list[str] = []

    async def connect(self, stack: AsyncExitStack) -> None:
        self.ws = await stack.enter_async_context(
            stream(self.base, self.cookie, STEP_TIMEOUT_S, local_addr=(self.source, 0))
        )
        self._keep_cookie(self.ws.response.headers.get_all("Set-Cookie"))

    async def open(self, stack: AsyncExitStack) -> list[tuple[str, str]]:
        """The page's first run, as a new tab opens it; what it drew."""
        await self.connect(stack)
        return await self.run()

    async def _receive(self) -> ForwardMsg:
        msg = await super()._receive()
        if msg.WhichOneof("type") == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            if element.WhichOneof("type") == "progress" and element.progress.text:
                self.bars.append(element.progress.text)
        return msg

    async def press(self, key: str, **values: str | list[str]) -> list[tuple[str, str]]:
        """Press button `key` with these widgets' values (by user key: a text box's text, a
        multiselect's labels), as a browser sends what was typed or picked with the click."""
        states = []
        for name, value in values.items():
            state = WidgetState(id=self.widgets[name].id)
            if isinstance(value, list):
                state.string_array_value.data.extend(value)
            else:
                state.string_value = value
            states.append(state)
        button = self.widgets[key]
        states.append(WidgetState(id=button.id, trigger_value=True))
        return await self.run(states, self.fragments.get(key, ""))

    async def set(self, key: str, value: bool) -> list[tuple[str, str]]:
        """Flip toggle `key` (its on_change runs)."""
        return await self.run([WidgetState(id=self.widgets[key].id, bool_value=value)])

    def claim(self) -> tuple[str, str]:
        """The class this browser teaches, from its cookie: (code, secret)."""
        code, _, secret = self.cookies["lnlab_teacher"].partition(".")
        return code, secret


def alerts(drawn: Sequence[tuple[str, str]]) -> str:
    """The run's messages (st.error, st.warning...), their Markdown escapes dropped."""
    return "\n".join(text.replace("\\", "") for kind, text in drawn if kind == "alert")


async def timed(action: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await action()
    return time.perf_counter() - start


async def answer(url: str, source: str, request: bytes) -> bytes:
    """The proxy's whole answer to `request` from local address `source`, read until it
    closes the connection (b"": closed unanswered)."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port), local_addr=(source, 0))
    writer.write(request)
    try:
        return await reader.read()
    finally:
        writer.close()


def get(path: str, cookie: str = "") -> bytes:
    cookie = f"Cookie: {cookie}\r\n" if cookie else ""
    return f"GET {path} HTTP/1.1\r\nHost: x\r\n{cookie}Connection: close\r\n\r\n".encode()


def beside(during: Sequence[float], idle: Sequence[float], what: str, places: int = 2) -> None:
    """Print the bystander's times beside the attack and idle, and their ratio (median beside
    it over the slowest idle sample). A measurement, not a check: the suite runs on two busy
    cores and no test depends on timing; what is checked is that the bystander's action
    succeeded beside the attack. The figures are the closing note's (issue 38)."""
    ratio = statistics.median(during) / max(idle)
    print(
        f"{what}: idle {' / '.join(f'{s:.{places}f}' for s in idle)} s, beside the attack "
        f"{' / '.join(f'{s:.{places}f}' for s in during)} s ({ratio:.1f}x)"
    )


async def start_class(
    url: str, source: str, stack: AsyncExitStack, cookies: dict | None = None
) -> tuple[Visitor, str]:
    """A teacher's tab starting a class from the Class page: the tab, and the class's code
    ("" when refused: the tab's last run says why)."""
    tab = Visitor(url, "/class", source=source, cookies=cookies)
    await tab.open(stack)
    found = JOIN_LINK.search(texts(await tab.click(START)))
    return tab, found["code"] if found else ""


async def join(
    url: str, code: str, source: str, stack: AsyncExitStack, nickname: str = ""
) -> tuple[Visitor, bool]:
    """A student's tab opening the join link and pressing Join: the tab, and whether it
    is in the class (its page follows the class: a polling fragment)."""
    tab = Visitor(url, "/class", f"join={code}", source=source)
    await tab.open(stack)
    await tab.press(JOIN, **({NICKNAME: nickname} if nickname else {}))
    return tab, bool(tab.polls)


# ---------------------------------------------------------------- 1. the teacher's browser


def test_1_a_teacher_link_from_a_student_asks_before_it_takes_the_projector(made, loop):
    """Issue 38, 1: a student started class B and sent its teacher link; the teacher's
    browser opened it, and its claim and projector were B's. Now the page asks; the browser
    keeps class A (its cookie, its join card) until the teacher says otherwise, and A's
    student stays in A; a classmate joins A as fast as before."""

    async def attack() -> None:
        async with AsyncExitStack() as stack:
            teacher, mine = await start_class(made, "127.0.0.51", stack)
            _, joined = await join(made, mine, "127.0.0.52", stack)
            assert joined

            async def classmate(k: int) -> float:
                async def one() -> None:
                    _, joined = await join(made, mine, "127.0.0.54", stack, f"Mate {k}")
                    assert joined

                return await timed(one)

            idle = [await classmate(k) for k in range(IDLE_SAMPLES)]
            student, theirs = await start_class(made, "127.0.0.53", stack)  # the hostile one
            link = teacher_link(made, *student.claim())
            assert f"class={theirs}" in link
            opened = Visitor(
                made, "/class", link.split("?", 1)[1], "127.0.0.51", cookies=teacher.cookies
            )
            drawn = texts(await opened.open(stack))
            assert f"teacher's link for class {display_code(theirs)}" in drawn
            assert f"this browser teaches class {display_code(mine)}" in drawn
            assert {SWITCH_YES, SWITCH_NO} <= set(opened.widgets)
            assert teacher.claim()[0] == mine  # the browser's cookie: still A
            assert JOIN_LINK.search(drawn)["code"] == mine  # the projector: still A
            assert "teacher=" not in opened.query_string  # the secret left the address bar
            kept = texts(await opened.click(SWITCH_NO))
            assert teacher.claim()[0] == mine and JOIN_LINK.search(kept)["code"] == mine
            again, _ = await join(made, mine, "127.0.0.52", stack)  # A's student, back in A
            assert again.polls
            during = [await classmate(k) for k in range(IDLE_SAMPLES, 2 * IDLE_SAMPLES)]
            beside(during, idle, "a student joining the teacher's class after the link")

    loop.run_until_complete(attack())


# ---------------------------------------------------------------- 2. starting a class


def test_2_a_flood_of_class_starts_holds_a_share_and_a_teacher_gets_through(made, loop):
    """Issue 38, 2: from one address, 30 classes in 3.9 s, and any teacher behind it was
    refused for an hour. Now the address holds `open_per_address` open classes (five
    addresses at most half the server's), its teachers are told the way through, and a
    browser that taught a class with students there starts one past the flood; a teacher
    elsewhere starts a class as fast as before."""
    school, elsewhere = "127.0.0.61", "127.0.0.62"

    async def attack() -> None:
        async with AsyncExitStack() as stack:
            # the school's teacher taught a class with a student, and ended it
            teacher, taught = await start_class(made, school, stack)
            _, joined = await join(made, taught, "127.0.0.63", stack)
            assert joined
            await teacher.click(END)
            await teacher.click(END_CONFIRM)
            assert "lnlab_teacher" not in teacher.cookies
            assert taught in teacher.cookies["lnlab_reports"]

            async def bystander() -> float:
                return await timed(lambda: start_class(made, elsewhere, stack))

            idle = [await bystander() for _ in range(IDLE_SAMPLES)]
            started: list[str] = []
            refusals: list[str] = []

            async def flood() -> None:  # a new browser each time, as a script's
                while len(refusals) < 5:
                    tab, code = await start_class(made, school, stack)
                    if code:
                        started.append(code)
                    else:
                        refusals.append(alerts(tab.drawn))

            flooding = asyncio.ensure_future(flood())
            during = []
            while not flooding.done():
                during.append(await bystander())
            await flooding
            assert len(started) == LIMITS.open_per_address  # the flood's share, no more
            assert all("classes are open from your network" in r for r in refusals)
            assert all("goes first: start it from the browser you taught" in r for r in refusals)
            _, code = await start_class(made, school, stack, cookies=teacher.cookies)
            assert code, "the teacher who taught here was refused"
            stranger, none = await start_class(made, school, stack)
            assert not none and "goes first" in alerts(stranger.drawn)
            beside(during, idle, "a teacher elsewhere starting a class")

    loop.run_until_complete(attack())


# ---------------------------------------------------------------- 3. fake students


def test_3_fake_students_stop_at_the_class_rate_and_the_teacher_removes_them(made, loop):
    """Issue 38, 3: 120 fakes from the class's address and 80 from another filled the class,
    and the teacher could do nothing. Now a script joining fakes from several addresses
    stops at the class's join rate; a student on another network joins all the same, as fast
    as before; the teacher sees who joined when, removes the fakes and closes joining."""
    networks = [f"127.0.0.{k}" for k in range(71, 74)]  # the script's three

    async def attack() -> None:
        async with AsyncExitStack() as stack:
            teacher, code = await start_class(made, "127.0.0.70", stack)

            async def bystander(k: int) -> float:
                async def one() -> None:
                    _, joined = await join(made, code, f"127.0.1.{k}", stack, f"Real {k}")
                    assert joined

                return await timed(one)

            idle = [await bystander(k) for k in range(IDLE_SAMPLES)]
            fakes: list[bool] = []
            refused: list[str] = []

            async def script(source: str) -> None:
                while not refused:
                    tab, joined = await join(made, code, source, stack, f"fake {len(fakes)}")
                    if joined:
                        fakes.append(True)
                    else:
                        refused.append(alerts(tab.drawn))

            flooding = asyncio.gather(*(script(s) for s in networks))
            during = []
            for k in range(IDLE_SAMPLES, 2 * IDLE_SAMPLES):
                during.append(await bystander(k))  # meanwhile and after: new networks
            await flooding
            real = 2 * IDLE_SAMPLES  # those beside the script may join past the rate
            assert LIMITS.joins_per_class - real <= len(fakes) <= LIMITS.joins_per_class
            assert "in the last minute, the most a class takes in a minute" in refused[0]
            beside(during, idle, "a student on another network joining")
            drawn = await teacher.run()  # the Manage expander: who joined when
            labels = list(teacher.widgets[REMOVE_PICK].options)
            assert all(re.fullmatch(r".+ · joined \d\d:\d\d:\d\d", label) for label in labels)
            assert "in the last minute" in texts(drawn)
            fake_labels = [label for label in labels if label.startswith("fake ")]
            assert len(fake_labels) == len(fakes)
            picked = WidgetState(id=teacher.widgets[REMOVE_PICK].id)
            picked.string_array_value.data.extend(fake_labels)
            await teacher.run([picked])  # the pick, then Remove them (as a browser sends it)
            await teacher.press(REMOVE, **{REMOVE_PICK: fake_labels})
            await teacher.run()
            left = list(teacher.widgets[REMOVE_PICK].options)
            assert [label.split(" · ")[0] for label in left] == [
                f"Real {k}" for k in range(2 * IDLE_SAMPLES)
            ]
            await teacher.set(JOINING, False)
            tab, joined = await join(made, code, "127.0.1.99", stack)
            assert not joined and "closed joining" in alerts(tab.drawn)

    loop.run_until_complete(attack(), 300)


# ---------------------------------------------------------------- 5. training


def test_5_ten_trainings_pinned_to_one_process_all_finish_in_order(made, loop):
    """Issue 38, 5: ten visitors pinned to one process pressing Train with different
    settings: none finished, each restarting. Now the runs go one at a time in the order
    pressed, each to its end (its steps never go back); the ones behind see their place; a
    bystander's page on the same process opens. The bystander's GPU-page benchmark finishes:
    a training piece under way stops after its step for it (heavy_work.Turn.yielding); its
    time beside the training and idle is printed (bench.training_crowd measures the wait)."""
    trainers = 3  # enough for a line; each run two trainings (post-LN, with and without warm-up)
    query = "var=post&layers=1&steps=300&seed={seed}"

    async def attack() -> None:
        async with AsyncExitStack() as stack:
            pinned = {"SERVERID": "app1"}

            async def page() -> float:
                tab = Visitor(made, "/step_through", source="127.0.0.80", cookies=dict(pinned))
                return await timed(lambda: tab.open(stack))

            async def benchmark() -> float:
                tab = Visitor(made, "/gpu", BENCH_QUERY, "127.0.0.81", dict(pinned))
                await tab.open(stack)
                took = await timed(lambda: tab.click(BENCHMARK))
                assert "s in all with the warm-up" in texts(tab.drawn), texts(tab.drawn)[:500]
                return took

            await benchmark()  # the worker process starts
            idle_page = [await page() for _ in range(IDLE_SAMPLES)]
            idle_bench = [await benchmark() for _ in range(IDLE_SAMPLES)]
            tabs = [
                Visitor(
                    made, "/training", query.format(seed=500 + k), f"127.0.0.{90 + k}", dict(pinned)
                )
                for k in range(trainers)
            ]
            for tab in tabs:
                await tab.open(stack)
            assert all(tab.server == "app1" for tab in tabs)

            async def train(tab: Visitor, after_s: float) -> float:
                await asyncio.sleep(after_s)
                return await timed(lambda: tab.click(TRAIN))

            training = asyncio.gather(*(train(t, 0.3 * k) for k, t in enumerate(tabs)))
            await asyncio.sleep(1.0)
            during_page = [await page() for _ in range(IDLE_SAMPLES)]
            bench_beside = await benchmark()
            took = await training
            for tab in tabs:
                done = [int(d.replace(",", "")) for d, _ in STEPS.findall("\n".join(tab.bars))]
                assert done and done == sorted(done), f"a run went back: {done}"
                assert tab.widgets[TRAIN].label == "Trained (cached)", alerts(tab.drawn)
            assert any("in line" in bar for tab in tabs for bar in tab.bars)
            assert took == sorted(took)  # in the order pressed
            print(f"trainings took {' / '.join(f'{t:.1f}' for t in took)} s from the press")
            print(
                f"benchmark idle {' / '.join(f'{t:.2f}' for t in idle_bench)} s, beside the "
                f"training {bench_beside:.2f} s"
            )
            beside(during_page, idle_page, "a page on the trainers' process")

    loop.run_until_complete(attack(), 400)


# ---------------------------------------------------------------- 7. nicknames


def test_7_nicknames_past_the_cap_are_refused_and_never_on_the_roster(made, loop):
    """Issue 38, 7: 40 letters joined by zero-width joiners and a Z with 99 combining marks
    were both on the roster. Now each is refused with the reason, as is one too wide to
    show; a classmate's join is as fast as before."""
    bad = {
        "\u200d".join("abcdefghijklmnopqrstuvwxyzabcdefghijklmn"): "invisible character",
        "Z" + "\u0301" * 99: "at most 5 accents or marks",
        "\ufdfd" * 2: "too wide to show",
    }

    async def attack() -> None:
        async with AsyncExitStack() as stack:
            teacher, code = await start_class(made, "127.0.0.100", stack)

            async def classmate(k: int) -> float:
                async def one() -> None:
                    _, joined = await join(made, code, "127.0.0.102", stack, f"Mate {k}")
                    assert joined

                return await timed(one)

            idle = [await classmate(k) for k in range(IDLE_SAMPLES)]
            for name, why in bad.items():
                tab, joined = await join(made, code, "127.0.0.101", stack, name)
                assert not joined and why in alerts(tab.drawn), alerts(tab.drawn)
            during = [await classmate(k) for k in range(IDLE_SAMPLES, 2 * IDLE_SAMPLES)]
            roster = texts(await teacher.run())
            for name in bad:
                assert html.escape(name) not in roster and name not in roster
            assert f"{2 * IDLE_SAMPLES} joined" in roster
            beside(during, idle, "a classmate joining")

    loop.run_until_complete(attack())


# ---------------------------------------------------------------- 4, 6, 8: the proxy's, again


def test_4_6_8_the_proxy_s_findings_against_the_app(made, loop):
    """4: one browser's sessions in a loop are refused alone, and its classmates behind the
    same address open theirs; 6: a body sent a byte at a time is closed within the request
    timeout; 8: metrics are not public, and a page opens as fast as before through it all."""
    school = "127.0.0.110"
    host, port = made.removeprefix("http://").split(":")

    def page_cookie() -> str:
        with socket.create_connection((host, int(port)), 10, (school, 0)) as sock:
            sock.sendall(b"GET /class HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        found = re.search(rb"lnlab_client=([0-9a-f-]{36})", answer)
        assert found, answer[:300]
        return f"lnlab_client={found.group(1).decode()}"

    async def attack() -> None:
        async with AsyncExitStack() as stack:

            async def bystander() -> float:
                tab = Visitor(made, "/step_through", source="127.0.0.111")
                return await timed(lambda: tab.open(stack))

            idle = [await bystander() for _ in range(IDLE_SAMPLES)]
            looping = page_cookie()
            statuses = []
            for _ in range(haproxy.Limits().websockets_per_browser_10s + 10):
                try:
                    async with stream(made, looping, 10, local_addr=(school, 0)):
                        statuses.append(101)
                except InvalidStatus as err:
                    statuses.append(err.response.status_code)
            assert statuses[-10:] == [429] * 10
            classmates = []
            for _ in range(10):
                tab = Visitor(made, "/class", source=school, cookies={})
                tab.cookies["lnlab_client"] = page_cookie().split("=", 1)[1]
                await tab.open(stack)
                classmates.append(tab)
            slow = []

            async def slow_body() -> float:
                start = time.perf_counter()
                reader, writer = await asyncio.open_connection(
                    host, int(port), local_addr=("127.0.0.112", 0)
                )
                writer.write(b"POST /_lnlab/step/abc HTTP/1.1\r\nHost: x\r\n")
                writer.write(b"Content-Length: 1000\r\n\r\n{")
                await reader.read()
                writer.close()
                return time.perf_counter() - start

            holding = [asyncio.ensure_future(slow_body()) for _ in range(50)]
            during = [await bystander() for _ in range(IDLE_SAMPLES)]
            slow = await asyncio.gather(*holding)
            limit_s = float(haproxy.HTTP_REQUEST_TIMEOUT.removesuffix("s"))
            # closed by the request timeout, not the client's (how long past it is not checked)
            assert limit_s - 0.5 <= min(slow) and max(slow) < CLIENT_TIMEOUT_S
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(b"GET /_stcore/metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert (await reader.read()).startswith(b"HTTP/1.1 404")
            writer.close()
            beside(during, idle, "a page beside a session loop and slow bodies")

    loop.run_until_complete(attack())


# ---------------------------------------------------------------- 8. the smaller ones


def test_8_bad_requests_and_a_flood_of_random_pulse_codes_are_contained(made, loop):
    """Issue 38, 8: HAProxy's own 400 answers carried no security headers, and a flood of
    random class codes made 27-38 % of a real class's pulse reads fail with 503. Now a request
    the proxy cannot read is closed unanswered (haproxy.SILENT: its parser's fixed answer
    cannot carry the headers); the random codes get readers of their own and a count per
    address (then 429), and a class's device, pinned to the flooded process as its page is,
    reads every pulse beside the flood."""
    flooder, device, pinned = "127.0.0.130", "127.0.0.131", "SERVERID=app1"
    bad = (
        b"GET / HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n",
        b"GET /\x01 HTTP/1.1\r\nHost: x\r\n\r\n",
    )

    async def attack() -> None:
        async with AsyncExitStack() as stack:
            assert 400 in haproxy.SILENT
            for request in bad:
                assert await answer(made, flooder, request) == b""
            _, code = await start_class(made, "127.0.0.132", stack)
            failed = 0

            async def bystander() -> float:
                nonlocal failed
                start = time.perf_counter()
                got = await answer(made, device, get(f"/_lnlab/pulse/{code}", pinned))
                took = time.perf_counter() - start
                failed += not (got.startswith(b"HTTP/1.1 200") and b'"open":true' in got)
                return took

            idle = [await bystander() for _ in range(IDLE_SAMPLES)]
            assert not failed
            statuses: dict[int, int] = {}

            async def flood() -> None:
                for _ in range(30):
                    random_code = "".join(random.choices(CODE_ALPHABET, k=CODE_LENGTH))
                    got = await answer(made, flooder, get(f"/_lnlab/pulse/{random_code}", pinned))
                    status = int(got.split(b" ", 2)[1]) if got else 0
                    statuses[status] = statuses.get(status, 0) + 1

            flooding = asyncio.gather(*(flood() for _ in range(10)))
            during = []
            while not flooding.done():
                during.append(await bystander())
            await flooding
            print(f"random pulse codes answered {dict(sorted(statuses.items()))}; the class's")
            print(f"device read {len(during)} pulses beside them, {failed} failed")
            assert failed == 0
            assert 429 in statuses and set(statuses) <= {200, 429, 503}
            beside(during, idle, "a class's pulse read beside random codes", places=3)

    loop.run_until_complete(attack())


def test_8_a_browsers_clear_cache_message_clears_nothing(made, loop):
    """Issue 38, 8: any visitor's "clear cache" message (BackMsg clear_cache) emptied every
    cache of its process (a bystander 1.4-2.4x). Now it does nothing outside development: the
    sender's session keeps its state (Streamlit's handler clears it too, and the Class page
    would then write a new browser id), and a bystander's cached page on the same process
    opens beside the messages."""
    pinned = {"SERVERID": "app1"}
    clear = BackMsg(clear_cache=True).SerializeToString()

    async def attack() -> None:
        async with AsyncExitStack() as stack:

            async def bystander() -> float:
                tab = Visitor(made, "/step_through", source="127.0.0.141", cookies=dict(pinned))
                return await timed(lambda: tab.open(stack))

            await bystander()  # the page's caches filled
            idle = [await bystander() for _ in range(IDLE_SAMPLES)]
            sender = Visitor(made, "/class", source="127.0.0.140", cookies=dict(pinned))
            await sender.open(stack)
            browser = sender.cookies["lnlab_browser"]
            during = []
            for _ in range(IDLE_SAMPLES):
                for _ in range(10):
                    await sender.ws.send(clear)
                await sender.run()  # its page again: a new browser id if its state was cleared
                during.append(await bystander())
            beside(during, idle, "a cached page beside clear-cache messages")
            assert sender.server == "app1" and sender.cookies["lnlab_browser"] == browser

    loop.run_until_complete(attack())
