"""Server CPU per step of the browser's lesson: by the step route, as the component's state (a
script run), and the one-button app's click, over the websocket protocol with no browser.

Run: `.venv/bin/python -m bench.step_cpu [--steps N] [--rounds R]`. Serves the app (as `make run`
does: the launcher, which installs the step route) and bench/minimal_next.py, opens the
step-through over Streamlit's websocket (bench.sessions) and has its lesson say it is ready, then
sends N steps 50 ms apart each way, R rounds, measuring the server process's CPU (/proc) with
its idle CPU, measured for 3 s before and after each phase, left out:

- route: `POST /_lnlab/step/<token>` as the page sends it (lnlab.ui.server.steps), until the
  browser's new address arrives over the websocket;
- state: the same step as the component's state (what the page sends where the route is
  missing or refuses it, and every step before the route): one run of the lesson's fragment;
- floor: Next or Previous of bench/minimal_next.py, a whole run of a one-button app.

Less noisy than bench.live's 24 paced steps in Chromium, which measures the same thing as a
visitor's browser does. Prints a table and appends it to bench/results/step_cpu.md.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import statistics
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack

from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench.browser import Server, serve
from bench.live import FLOOR_NEXT, STEP_PAGE, _cpu_ms
from bench.report import load_average, record
from bench.sessions import page_session
from harness.sessions import Session
from lnlab.ui.live import KEY

PAUSE_S = 0.05
IDLE_S = 3.0
WALK = (1, 2, 3, 4, 3, 2, 1, 0)  # the sections stepped to, in turn


class LessonSession(Session):
    """A session that keeps the data the lesson's component was last drawn with."""

    data: dict | None = None

    async def _receive(self):
        msg = await super()._receive()
        if msg.WhichOneof("type") == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            if element.WhichOneof("type") == "bidi_component":
                self.data = json.loads(element.bidi_component.json)
        return msg

    async def until_address(self) -> None:
        """Read messages until the server sends the page a new address."""
        while (await self._receive()).WhichOneof("type") != "page_info_changed":
            pass


async def paced(send: Callable[[int], Awaitable[None]], steps: int) -> None:
    """`send` each step, PAUSE_S apart."""
    for i in range(steps):
        await send(i)
        await asyncio.sleep(PAUSE_S)


class Poster:
    """POSTs to the step route over one kept-alive connection (a new one once it closed)."""

    def __init__(self, server: Server, route: str) -> None:
        self.host, self.route = server.url.split("//", 1)[1], route
        self.connection = http.client.HTTPConnection(self.host)

    def post(self, body: str) -> int:
        headers = {"content-type": "application/json"}
        try:
            self.connection.request("POST", self.route, body, headers)
        except OSError:
            self.connection = http.client.HTTPConnection(self.host)
            self.connection.request("POST", self.route, body, headers)
        answer = self.connection.getresponse()
        answer.read()
        return answer.status


async def measure(steps: int, rounds: int) -> list[tuple[float, float, float]]:
    async with AsyncExitStack() as stack:
        app = await stack.enter_async_context(serve(STEP_PAGE))
        floor = await stack.enter_async_context(serve(FLOOR_NEXT))
        lesson, _ = await page_session(stack, app, STEP_PAGE.path, kind=LessonSession)
        component, fragment = lesson.widgets[KEY], lesson.fragments[KEY]
        ready = {"status": "ready"}
        await lesson.rerun([WidgetState(id=component.id, json_value=json.dumps(ready))], fragment)
        if not lesson.data or not lesson.data.get("route"):
            raise SystemExit("the page offers no step route: is the launcher serving it?")
        poster = Poster(app, lesson.data["route"])
        buttons, _ = await page_session(stack, floor, "/")
        revision = 0

        async def by_route(i: int) -> None:
            nonlocal revision
            revision += 1
            body = json.dumps({"rev": revision, "step": WALK[i % len(WALK)]})
            if (status := poster.post(body)) != 200:
                raise SystemExit(f"the step route answered {status}")
            await lesson.until_address()

        async def as_state(i: int) -> None:
            nonlocal revision
            revision += 1
            state = {**ready, "lesson": {"rev": revision, "step": WALK[i % len(WALK)]}}
            sent = WidgetState(id=component.id, json_value=json.dumps(state))
            await lesson.rerun([sent], fragment)

        async def click(i: int) -> None:
            button = buttons.widgets["mini_next" if (i // 4) % 2 == 0 else "mini_prev"]
            await buttons.rerun([WidgetState(id=button.id, trigger_value=True)])

        for i in range(8):  # warm every path
            await by_route(i)
            await as_state(i)
            await click(i)
        results = []
        for r in range(rounds):
            row = (
                await _cpu_ms(app, paced(by_route, steps), steps, IDLE_S),
                await _cpu_ms(app, paced(as_state, steps), steps, IDLE_S),
                await _cpu_ms(floor, paced(click, steps), steps, IDLE_S),
            )
            print(f"round {r + 1}: route {row[0]:.2f}, state {row[1]:.2f}, floor {row[2]:.2f} ms")
            results.append(row)
        return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    before = os.getloadavg()
    results = asyncio.run(measure(args.steps, args.rounds))
    route, state, floor = zip(*results, strict=True)

    def spread(values: tuple[float, ...]) -> str:
        return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"

    record(
        "step_cpu",
        "Server CPU per step of the browser's lesson: by the route, as state, and the floor",
        [
            ("server CPU per step, ms: median (range) of rounds", "value"),
            ("by the step route (no script run)", spread(route)),
            ("as the component's state (a run of the lesson)", spread(state)),
            ("floor: the one-button app's click (a whole run)", spread(floor)),
            ("route / floor", f"{statistics.median(route) / statistics.median(floor):.2f}"),
        ],
        notes=f"{args.rounds} rounds of {args.steps} steps {PAUSE_S * 1e3:.0f} ms apart each "
        f"way; idle CPU measured {IDLE_S:.0f} s before and after each phase, left out. "
        + load_average(before, os.getloadavg()),
    )


if __name__ == "__main__":
    main()
