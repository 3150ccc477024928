"""lnlab.ui.server.steps: a step the browser posts, checked and kept for the session's next run,
without a script run (the page's side: tests/labs/step_through/test_page.py; the browser's:
tests/browser/test_live_steps.py)."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qsl

import pytest
import uvicorn

from lnlab.labs.padding import links as padding_links
from lnlab.labs.step_through.state import link_fields
from lnlab.ui.links import NOT_STATE
from lnlab.ui.runtime.stale import address
from lnlab.ui.server import asgi
from lnlab.ui.server import steps as step_route

FIELDS = link_fields({})
LINK = {"v": "1", "x": "2,4,6,8", "tok": "1", "eps": "1e-05", "step": "1", "all": "0", "q": "0"}


def lane(count: int = 5, rev: int = 0, params: dict | None = None) -> step_route.Lane:
    link = dict(params or LINK)
    return step_route.Lane(
        "session-1", "step_through", "hash-1", "st_step", count, link, FIELDS, NOT_STATE, rev
    )


def telling(told: list) -> step_route.Tell:
    return lambda session, page, query: told.append((session, page, query)) or True


@pytest.fixture
def told() -> list[tuple[str, str]]:
    return []


class Clock:
    now = 100.0

    def __call__(self) -> float:
        self.now += 1.0  # a second between steps, unless a test says otherwise
        return self.now


@pytest.fixture
def steps(told) -> step_route.Steps:
    made = step_route.Steps(telling(told), Clock())
    made.offer("token", lane())
    return made


def post(steps: step_route.Steps, body: object, token: str = "token") -> tuple[int, dict]:
    return steps.post(token, body if isinstance(body, bytes) else json.dumps(body).encode())


def test_a_step_is_kept_for_the_next_run_and_the_browser_told_its_link(steps, told):
    code, answer = post(steps, {"rev": 3, "step": 2})
    ((session, page, query),) = told
    assert (code, answer) == (200, {"rev": 3, "query": query})
    sent = dict(parse_qsl(query))
    assert (session, page) == ("session-1", "hash-1")
    assert sent == {**LINK, "step": "3"}  # one-based in the link, the other parameters kept
    assert list(sent) == list(LINK)  # in their places
    caught = steps.take("token")
    assert caught == step_route.Caught(
        "step_through", "st_step", step_route.Step(3, 2), (address(sent.items(), NOT_STATE),)
    )
    assert steps.take("token") is None  # once


def test_every_link_sent_before_the_next_run_is_remembered_the_newest_step_applied(steps, told):
    for rev, step in ((1, 1), (2, 2), (3, 3)):
        assert post(steps, {"rev": rev, "step": step})[0] == 200
    caught = steps.take("token")
    assert caught.step == step_route.Step(3, 3)
    links = [dict(parse_qsl(query)) for _, _, query in told]
    assert caught.sent == tuple(address(link.items(), NOT_STATE) for link in links)


def test_an_older_revision_is_refused_and_changes_nothing(steps, told):
    post(steps, {"rev": 5, "step": 3})
    assert post(steps, {"rev": 4, "step": 1})[0] == 409
    assert post(steps, {"rev": 5, "step": 1})[0] == 409
    assert len(told) == 1 and steps.take("token").step.step == 3


def test_a_run_that_applied_a_newer_revision_makes_older_steps_old(told):
    steps = step_route.Steps(telling(told))
    steps.offer("token", lane(rev=9))
    assert post(steps, {"rev": 8, "step": 1}) == (
        409,
        {"error": "a newer revision came first", "rev": 9},
    )
    assert steps.take("token") is None


def test_a_run_offering_its_lane_returns_a_step_posted_meanwhile_to_send_again(steps, told):
    post(steps, {"rev": 7, "step": 4})
    again = steps.offer("token", lane(rev=6, params={**LINK, "eps": "0.5"}))  # began before
    assert dict(parse_qsl(again)) == {**LINK, "eps": "0.5", "step": "5"}  # from the run's link
    assert len(told) == 1  # the run sends it, after its own link
    caught = steps.take("token")
    assert caught.step == step_route.Step(7, 4) and len(caught.sent) == 2
    post(steps, {"rev": 8, "step": 1})
    assert steps.offer("token", lane(rev=9)) is None  # a run that applied a newer revision
    caught = steps.take("token")
    assert caught.step is None and len(caught.sent) == 1  # the step is old; its link was had


def test_another_pages_lane_carries_nothing_over(steps):
    post(steps, {"rev": 7, "step": 4})
    other = lane(rev=0)
    other.page_hash = "hash-2"
    assert steps.offer("token", other) is None
    assert steps.take("token") is None


def test_a_closed_lane_takes_no_steps_but_keeps_what_its_run_catches_up_on(steps, told):
    post(steps, {"rev": 1, "step": 1})
    steps.close("token")
    assert post(steps, {"rev": 2, "step": 2})[0] == 404
    assert steps.take("token").step == step_route.Step(1, 1)
    steps.offer("token", lane(rev=1))  # the browser draws the lesson again
    assert post(steps, {"rev": 2, "step": 2})[0] == 200


def test_a_long_link_gets_no_lane(told):
    steps = step_route.Steps(telling(told))
    long_link = {**LINK, "x": "1," * step_route.MAX_LINK_CHARS}
    steps.offer("token", lane(params=long_link))
    assert post(steps, {"rev": 1, "step": 1})[0] == 404
    assert not step_route.fits(long_link) and step_route.fits(LINK)


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"", 400),
        (b"not json", 400),
        (b"\xff\xfe", 400),
        (b"[1, 2]", 400),
        ({"rev": 1}, 400),
        ({"rev": 1, "step": 1, "gamma": 2}, 400),
        ({"rev": True, "step": 1}, 400),
        ({"rev": 1, "step": 1.0}, 400),
        ({"rev": 0, "step": 1}, 400),
        ({"rev": 1, "step": -1}, 400),
        ({"rev": 1, "step": 5}, 400),  # the browser draws sections 0..4
        ({"rev": 1, "step": 10**30}, 400),
        (b'{"rev": 1, "step": 1, "pad": "' + b"x" * 300 + b'"}', 400),
    ],
)
def test_a_bad_step_is_refused_with_a_reason_and_changes_nothing(steps, told, body, status):
    code, answer = post(steps, body)
    assert code == status and answer["error"]
    assert not told and steps.take("token") is None


def test_steps_faster_than_a_person_makes_them_are_refused_for_a_while(told):
    clock = Clock()
    steps = step_route.Steps(telling(told), clock)
    steps.offer("token", lane())
    assert post(steps, {"rev": 1, "step": 1})[0] == 200
    clock.now -= 1.0 - step_route.EVERY_S / 2  # the next comes half of EVERY_S later
    assert post(steps, {"rev": 2, "step": 2})[0] == 429
    steps.offer("token", lane(rev=1))  # a run in between does not reset it
    clock.now -= 1.0 - step_route.EVERY_S / 4
    assert post(steps, {"rev": 3, "step": 2})[0] == 429
    assert post(steps, {"rev": 4, "step": 3})[0] == 200  # a second later
    assert len(told) == 2 and steps.take("token").step.step == 3


def test_a_session_that_ended_or_left_the_page_is_not_told_and_sends_the_step_as_state():
    steps = step_route.Steps(lambda session, page, query: False)
    steps.offer("token", lane())
    assert post(steps, {"rev": 1, "step": 1}, token="other")[0] == 404
    assert post(steps, {"rev": 1, "step": 1})[0] == 410
    assert post(steps, {"rev": 2, "step": 1})[0] == 410
    assert steps.take("token") is None


def test_the_process_keeps_a_bounded_number_of_lanes(monkeypatch):
    monkeypatch.setattr(step_route, "KEPT_LANES", 3)
    steps = step_route.Steps(lambda session, page, query: True)
    for k in range(5):
        steps.offer(f"t{k}", lane())
    assert [post(steps, {"rev": 1, "step": 1}, f"t{k}")[0] for k in range(5)] == [
        404,
        404,
        200,
        200,
        200,
    ]


def test_the_padding_lessons_link_moves_its_section_and_leaves_the_old_slide_out():
    params = {"v": "1", "section": "1", "batch": "4"}
    told: list = []
    steps = step_route.Steps(telling(told))
    fields = padding_links.FIELDS
    lane = step_route.Lane("s", "padding", "h", "pad_slide", 3, params, fields, NOT_STATE, 0)
    steps.offer("t", lane)
    assert post(steps, {"rev": 1, "step": 2}, "t")[0] == 200
    assert dict(parse_qsl(told[0][2])) == {"v": "1", "section": "3", "batch": "4"}


# ---------------------------------------------------------------- over HTTP (ASGI)


def call(route: step_route.StepRoute, method: str, path: str, chunks: list[bytes]) -> tuple:
    """Drive the middleware as the server would: the status and JSON it answers, or None if it
    passed the request on."""
    sent: list[dict] = []
    passed: list[str] = []
    pieces = list(chunks) or [b""]

    async def receive() -> dict:
        body = pieces.pop(0)
        return {"type": "http.request", "body": body, "more_body": bool(pieces)}

    async def send(message: dict) -> None:
        sent.append(message)

    async def app(scope, receive, send) -> None:
        passed.append(scope["path"])

    route.app = app
    scope = {"type": "http", "method": method, "path": path}
    with ThreadPoolExecutor(1) as thread:  # a loop of its own (a browser test may run one here)
        thread.submit(asyncio.run, route(scope, receive, send)).result()
    if passed:
        return None
    return sent[0]["status"], json.loads(sent[1]["body"])


def test_the_route_answers_posts_to_its_path_and_passes_the_rest_on(steps, told):
    route = step_route.StepRoute(None, steps)
    body = json.dumps({"rev": 1, "step": 3}).encode()
    assert call(route, "POST", "/_lnlab/step/token", [body[:5], body[5:]])[:2][0] == 200
    assert call(route, "POST", "/course/_lnlab/step/token", [b'{"rev": 2, "step": 1}'])[0] == 200
    assert call(route, "GET", "/_lnlab/step/token", [])[0] == 405
    assert call(route, "POST", "/_lnlab/step/token", [b"x" * 150, b"x" * 150])[0] == 413
    assert call(route, "POST", "/_lnlab/step/a/b", [body]) is None
    assert call(route, "GET", "/step_through", []) is None
    assert len(told) == 2


def test_the_route_is_offered_only_where_it_is_installed(monkeypatch):
    monkeypatch.setattr(step_route, "_INSTALLED", False)
    assert step_route.route("tok", "/", LINK) is None
    monkeypatch.setattr(step_route, "_INSTALLED", True)
    assert step_route.route("tok", "/course/", LINK) == "/course/_lnlab/step/tok"
    assert step_route.route("tok", "/", {"x": "1" * step_route.MAX_LINK_CHARS}) is None
    assert len({step_route.new_token() for _ in range(100)}) == 100


def _answer(route: step_route.StepRoute, scope: dict, receive) -> tuple[list[dict], float]:
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    async def timed() -> float:
        start = asyncio.get_running_loop().time()
        await route({"type": "http", "method": "POST", **scope}, receive, send)
        return asyncio.get_running_loop().time() - start

    with ThreadPoolExecutor(1) as thread:
        took = thread.submit(asyncio.run, timed()).result(timeout=30)
    return sent, took


def test_a_body_that_does_not_come_in_time_gets_408_and_closes_the_connection(steps, monkeypatch):
    """Issue 38: a body promised and sent a byte at a time held each connection 60 s."""
    monkeypatch.setattr(asgi, "BODY_S", 0.3)
    pieces = [b"{"]

    async def receive() -> dict:
        if pieces:
            return {"type": "http.request", "body": pieces.pop(), "more_body": True}
        await asyncio.sleep(3600)  # the rest never comes
        raise AssertionError

    headers = [(b"content-length", b"30")]
    sent, took = _answer(
        step_route.StepRoute(None, steps),
        {"path": "/_lnlab/step/token", "headers": headers},
        receive,
    )
    assert sent[0]["status"] == 408 and (b"connection", b"close") in sent[0]["headers"]
    assert took >= 0.3  # the deadline's answer (the body never comes; no bound past it)
    assert steps.take("token") is None  # nothing taken


def test_a_body_promised_too_long_is_refused_unread(steps):
    async def receive() -> dict:
        raise AssertionError("read")

    for length, status in ((b"1000", 413), (b"10000000000000000000000", 413), (b"x", 400)):
        scope = {"path": "/_lnlab/step/token", "headers": [(b"content-length", length)]}
        sent, _ = _answer(step_route.StepRoute(None, steps), scope, receive)
        assert sent[0]["status"] == status and (b"connection", b"close") in sent[0]["headers"]


def test_a_client_that_leaves_gets_no_answer(steps):
    async def receive() -> dict:
        return {"type": "http.disconnect"}

    sent, _ = _answer(step_route.StepRoute(None, steps), {"path": "/_lnlab/step/token"}, receive)
    assert sent == []


def test_a_slow_body_over_http_is_cut_off_and_a_bystander_answered(steps, told, monkeypatch):
    """The route served by uvicorn, as the app is. Issue 38's client (1 byte sent of 1,000
    promised) is answered 413 at once; one that promises a step's length and sends 1 byte of
    it gets 408 after BODY_S; both connections closed by the server. A step posted meanwhile
    on another connection is answered at once."""
    monkeypatch.setattr(asgi, "BODY_S", 1.0)
    route = step_route.StepRoute(None, steps)

    async def other(scope, receive, send) -> None:
        await asgi.send_json(send, 404, {})

    route.app = other
    config = uvicorn.Config(route, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    head = b"POST /_lnlab/step/token HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"

    async def attack() -> dict[str, tuple[bytes, float]]:
        serving = asyncio.ensure_future(server.serve())
        while not server.started:
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        loop = asyncio.get_running_loop()
        start = loop.time()

        async def client(length: int, body: bytes, until_closed: bool) -> tuple[bytes, float]:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(head % length + body)
            await writer.drain()
            if until_closed:  # read to the end: the server closes
                answer = await asyncio.wait_for(reader.read(), 10)
            else:
                answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            writer.close()
            return answer, loop.time() - start

        step = b'{"rev": 1, "step": 1}'
        answers = await asyncio.gather(
            client(1000, b"{", True), client(30, b"{", True), client(len(step), step, False)
        )
        server.should_exit = True
        await serving
        return dict(zip(("promised 1000", "promised 30", "bystander"), answers, strict=True))

    with ThreadPoolExecutor(1) as thread:
        answers = thread.submit(asyncio.run, attack()).result(60)
    print({who: f"{answer[:12].decode()} after {s:.3f} s" for who, (answer, s) in answers.items()})
    (long, long_s), (slow, slow_s), (bystander, bystander_s) = answers.values()
    assert long.startswith(b"HTTP/1.1 413") and b"connection: close" in long.lower()
    assert slow.startswith(b"HTTP/1.1 408") and b"connection: close" in slow.lower()
    # refused before the body's deadline; the slow one answered at it, not held until the
    # client gives up (uvicorn would); the bystander answered while the slow one was held
    assert long_s < slow_s and slow_s >= asgi.BODY_S
    assert bystander.startswith(b"HTTP/1.1 200") and bystander_s < slow_s
