"""The local cluster as students meet it: two app processes behind HAProxy on free local ports,
each student a websocket speaking Streamlit's protocol through the proxy
(harness.students.Student, no browser), with its SERVERID cookie as a browser keeps it.

In order: students are pinned to one process each and both processes serve; a graceful
restart of one process moves its student to the other with their example; HAProxy reloads
without dropping its listener; a killed process's student reconnects to the other with their
example while the other student sees nothing, and HAProxy marks the process DOWN within
seconds; a live class (checks.live_class, the driver `make compose-check` uses) goes on when
its teacher's process is killed; a flood of requests from one address gets 429.

Then, through `make cluster` itself (its default limits): a flood of new sessions from one
address gets 429 while a bystander from another address keeps opening pages, and a class of
60 behind one address, arriving and reconnecting in the same seconds, gets no 429. Timings
are printed (bench.proxy_flood measures them), never asserted. About 90 s on 2 busy cores.
"""

from __future__ import annotations

import asyncio
import http.client
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus

from checks.live_class import run_class
from harness import proxy
from harness.students import Student
from lnlab.serving import haproxy
from lnlab.serving.cluster import Cluster, free_port, main

HAPROXY = os.environ.get("LNLAB_HAPROXY", "/usr/sbin/haproxy")
REQUESTS_PER_10S = 40  # low, so that a flood is quick; the students' few requests stay under
FLOOD_FROM = "127.0.0.2"  # its own stick-table entry: the flood does not touch the students
DOWN_WITHIN_S = 5.0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[Cluster]:
    if not Path(HAPROXY).exists():
        pytest.fail(f"{HAPROXY} is missing: `make test` installs it (scripts/ensure-haproxy)")
    run_dir = tmp_path_factory.mktemp("cluster")
    limits = haproxy.Limits(requests_per_10s=REQUESTS_PER_10S)
    app_ports = [free_port(), free_port()]
    database = f"sqlite:///{run_dir / 'classes.db'}"
    with Cluster(
        2, free_port(), "127.0.0.1", app_ports, limits, run_dir, database, supervise=False
    ) as running:
        yield running


class Loop:
    """An event loop in its own thread: the students' websockets stay open on it between the
    tests, and it runs beside Playwright's sync API, whose loop holds the main thread when the
    browser tests run in the same session."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run_until_complete(self, coro, timeout_s: float = 120.0):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout_s)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture(scope="module")
def students(cluster) -> Iterator[tuple[list[Student], AsyncExitStack, Loop]]:
    """Two students, each with their own example, connected through the proxy (kept open
    between the tests)."""
    loop = Loop()
    stack = AsyncExitStack()
    pair = [Student(cluster.url, 101), Student(cluster.url, 202)]

    async def arrive() -> None:
        for s in pair:
            await s.connect(stack)
            await s.type_example()
            await s.next()

    loop.run_until_complete(arrive())
    yield pair, stack, loop
    loop.run_until_complete(stack.aclose())
    loop.close()


def _wait_for(condition, timeout_s: float, what: str) -> float:
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout_s:
            pytest.fail(f"{what} not within {timeout_s} s")
        time.sleep(0.05)
    return time.monotonic() - start


async def _closed(ws) -> None:
    """Read what is left on `ws` until it closes (within 10 s)."""
    with pytest.raises(ConnectionClosed):
        async with asyncio.timeout(10):
            while True:
                await ws.recv()


def test_each_student_is_pinned_to_one_process_and_both_serve(cluster, students):
    (a, b), stack, loop = students
    assert {a.server, b.server} == {"app1", "app2"}  # least connections: one each
    before = cluster.stats()

    async def again() -> None:
        for s in (a, b):
            cookie = s.cookie
            await s.reconnect(stack)  # reconnects: same cookie, same process, same example
            assert s.cookie == cookie
            await s.next()

    loop.run_until_complete(again())
    after = cluster.stats()
    for name in ("app1", "app2"):
        assert after[name].total_sessions == before[name].total_sessions + 1


def test_graceful_restart_moves_students_with_their_example(cluster, students):
    (a, b), stack, loop = students
    moved = a if a.server == "app2" else b
    old_ws = moved.session.ws
    restart = threading.Thread(target=cluster.restart_app, args=(2,), kwargs={"drain_s": 0.5})
    restart.start()  # drain, take out, stop, start again, put back

    async def reconnect() -> None:
        await _closed(old_ws)  # app2 stopped under it; the browser reconnects at once
        await moved.reconnect(stack)  # checks the example: numbers and section
        await moved.next()

    try:
        loop.run_until_complete(reconnect())
    finally:
        restart.join()
    assert moved.server == "app1"
    assert cluster.stats()["app2"].status.startswith("UP")


def test_proxy_reloads_without_dropping_its_listener(cluster):
    old = cluster.proxy
    cluster.reload_proxy()
    assert cluster.proxy.pid != old.pid
    conn = http.client.HTTPConnection("127.0.0.1", cluster.port, timeout=5)
    conn.request("GET", "/_stcore/health")
    assert conn.getresponse().read() == b"ok"


def test_killed_process_students_reconnect_and_others_see_nothing(cluster, students):
    (a, b), stack, loop = students
    # both students are on app1 now; a third, pinned to app2 by an earlier visit's cookie
    fresh = Student(cluster.url, 303)
    fresh.cookie = "SERVERID=app2"

    async def arrive() -> None:
        await fresh.connect(stack)
        await fresh.type_example()

    loop.run_until_complete(arrive())
    assert fresh.server == "app2"
    victim = cluster.apps[1]
    cluster.kill(2, signal.SIGKILL)
    down_s = _wait_for(
        lambda: cluster.stats()[victim.name].status.startswith("DOWN"),
        DOWN_WITHIN_S,
        "HAProxy marking the killed process DOWN",
    )
    print(f"DOWN {down_s:.2f} s after the kill")

    async def after_kill() -> None:
        await _closed(fresh.session.ws)
        await fresh.reconnect(stack)
        await fresh.next()
        for s in (a, b):  # on app1: no error, no reconnect
            await s.next()

    loop.run_until_complete(after_kill())
    assert fresh.server == "app1"


def test_a_live_class_goes_on_when_its_teachers_process_is_killed(cluster):
    """A teacher and four students from one address, as `make compose-check` runs sixty:
    the teacher's process is killed once half have answered; every student is back in the
    class with their answer, the teacher back on the question's panel, and each student's
    score follows the reveal."""
    for app in cluster.apps:  # the test before killed one
        if not app.alive():
            cluster.restart_app(app.index, drain_s=0)
    killed: list[str] = []

    async def kill(server: str) -> float:
        killed.append(server)
        cluster.kill(int(server.removeprefix("app")), signal.SIGKILL)
        return time.monotonic()

    loop = Loop()  # beside Playwright's loop, when the browser tests run in the same session
    try:
        report = loop.run_until_complete(
            run_class(cluster.url, 4, kill, think_s=(0.2, 1.0), arrive_s=0.5), 300
        )
    finally:
        loop.close()
        (name,) = killed
        cluster.restart_app(int(name.removeprefix("app")), drain_s=0)  # for the tests after
    print(f"back after the kill: {report.back_s}")
    assert report.errors == {}, report.first_errors
    assert report.joined == 4 and report.answered_seen_by_teacher == 4
    assert report.answers_shown == 4 and report.scores_right == 4
    moved = [who for who in report.back_s if who != "teacher"]
    assert len(moved) == report.servers[report.killed]  # each student of that process is back
    assert "teacher" in report.back_s


def test_a_flood_of_requests_gets_429(cluster):
    conn = http.client.HTTPConnection(
        "127.0.0.1", cluster.port, timeout=5, source_address=(FLOOD_FROM, 0)
    )
    statuses = []
    for _ in range(REQUESTS_PER_10S + 20):
        conn.request("GET", "/_stcore/health")
        reply = conn.getresponse()
        reply.read()
        statuses.append(reply.status)
        if reply.status == 429:
            assert reply.getheader("Retry-After") == "10"
    assert statuses[:REQUESTS_PER_10S] == [200] * REQUESTS_PER_10S
    assert set(statuses[REQUESTS_PER_10S + 1 :]) == {429}


def test_restart_command_without_a_running_cluster_says_so(tmp_path, capsys):
    assert main(["restart", "--run-dir", str(tmp_path)]) == 1
    assert "no cluster is running" in capsys.readouterr().err


def test_the_longest_link_the_app_makes_passes_the_proxy(cluster):
    """A page keeps its example in its link: a 64 x 64 matrix of full-precision floats is
    about 95,000 characters. HAProxy's default 16 KiB buffer answered it with 400 (bufsize)."""
    conn = http.client.HTTPConnection(
        "127.0.0.1", cluster.port, timeout=10, source_address=("127.0.0.3", 0)
    )
    x = ";".join(",".join(["-1.2345678901234567e-05"] * 64) for _ in range(64))
    conn.request("GET", f"/step_through?v=1&x={x}")
    reply = conn.getresponse()
    reply.read()
    assert len(x) > 90_000
    assert reply.status == 200


# ---------------------------------------------------------------- through `make cluster`


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Iterator[str]:
    """`make cluster N=2` with its default limits, on free ports; the proxy's URL."""
    if not Path(HAPROXY).exists():
        pytest.fail(f"{HAPROXY} is missing: `make test` installs it (scripts/ensure-haproxy)")
    with proxy.make_cluster(tmp_path_factory.mktemp("made")) as url:
        yield url


def test_a_flood_of_new_sessions_gets_429_and_a_bystander_gets_in(made):
    """Twenty clients from one address open sessions (a whole-page run each) until HAProxy
    answers 429, as reloading a page over and over does; a visitor from another address
    opens the page all along, and after."""
    loop = Loop()

    async def flood_and_visit():
        await proxy.visit(made)  # the first visits to each process are slower
        await proxy.visit(made)
        idle = [await proxy.visit(made) for _ in range(3)]
        flooding = asyncio.ensure_future(proxy.flood(made, seconds=120, until_refused=True))
        during = []
        while not flooding.done():
            during.append(await proxy.visit(made))
        during.append(await proxy.visit(made))
        return idle, during, await flooding

    try:
        idle, during, flood = loop.run_until_complete(flood_and_visit(), 300)
    finally:
        loop.close()
    print(
        f"bystander idle {proxy.spread(idle)} s, during the flood "
        f"{proxy.spread(during)} s; the flood opened {flood.opened} sessions"
    )
    assert flood.refused == proxy.FLOODERS  # each flooder ended on a 429
    assert flood.retry_after == {"10"}
    assert flood.headers_on_429 == {"Referrer-Policy", "X-Content-Type-Options"}
    assert flood.opened >= haproxy.Limits().websockets_per_10s  # refused only past the limit
    assert flood.errors == {}


def test_a_class_behind_one_address_is_never_refused(made):
    """Sixty students from one address open their sessions in the same instant, then all
    reconnect at once (their process died, say): 120 new sessions within seconds, none
    refused. The bystander's address (127.0.0.3) is not the flood's."""
    loop = Loop()

    async def open_all() -> list[int]:
        async def one() -> int:
            try:
                async with proxy.websocket(made, "127.0.0.4"):
                    return 101
            except InvalidStatus as err:
                return err.response.status_code

        first = await asyncio.gather(*(one() for _ in range(60)))
        again = await asyncio.gather(*(one() for _ in range(60)))
        return [*first, *again]

    try:
        statuses = loop.run_until_complete(open_all(), 300)
    finally:
        loop.close()
    assert statuses == [101] * 120
