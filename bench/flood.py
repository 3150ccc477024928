"""A rerun flood: what one session sending 2,000 rerun requests at once costs another session.

Run: `.venv/bin/python -m bench.flood`. Serves the app (bench.browser.serve, the launcher), first
with Streamlit's default runner.fastReruns (on), then as .streamlit/config.toml sets it (off;
lnlab.serving.pace spaces a session's runs either way), and opens two sessions on /step_through over
Streamlit's websocket protocol (bench.sessions, no browser). The victim types into the text box, one
edit after another; its latency is the time from its rerun request to the run's script_finished,
with step 1's new mean checked.

- nothing (quiet): the victim's edits with nothing else going on;
- whole-page reruns: the attacker sends FLOOD rerun requests, each with a new text box value,
  as fast as its socket takes them, and reads (drops) what the server sends back;
- fragment reruns: the same with FLOOD presses of the lesson's Next button, which rerun the
  lesson's fragment only (as a browser's click does).

During a flood the victim edits for WINDOW_S seconds; reported are the victim's latencies, the
server's CPU seconds over the window, how long the attacker's runs went on after the flood was
sent (its last script_finished), and how many runs it got. Appends to bench/results/flood.md.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench.browser import serve
from bench.report import load_average, record
from bench.sessions import cpu_s, open_session
from harness.sessions import LNLAB as APP
from harness.sessions import Session
from harness.stats import percentile

FLOOD = 2_000
QUIET_EDITS = 10
WINDOW_S = 5.0
NEXT = "step_through_next"  # the lesson's Next button (in its fragment)
SERVERS = (  # Streamlit's default for fast reruns, then the app's (.streamlit/config.toml)
    ("runner.fastReruns on", ("--runner.fastReruns", "true")),
    ("as configured", ()),
)


@dataclass
class Drained:
    """What the attacker got back: its finished runs and when the last one ended."""

    finished: int = 0
    last_s: float = 0.0
    started: list[float] = field(default_factory=list)


async def drain(session: Session, out: Drained) -> None:
    """Read the attacker's messages for ever (it never looks at them), counting its runs."""
    while True:
        msg = ForwardMsg()
        msg.ParseFromString(await session.ws.recv(decode=False))
        if msg.WhichOneof("type") == "script_finished":
            out.finished += 1
            out.last_s = time.perf_counter()


async def victim_edits(victim: Session, until: float) -> list[float]:
    """Edit until `until` (at least once); the latencies in ms."""
    times, k = [], 0
    while not times or time.perf_counter() < until:
        k = k % 50 + 1
        times.append((await victim.edit(k)).finished_ms)
    return times


@dataclass
class Row:
    name: str
    victim_ms: list[float]
    cpu_s: float = 0.0
    send_ms: float = 0.0
    attacker_runs: int = 0
    attacker_busy_s: float = 0.0

    def cells(self) -> tuple[str, ...]:
        ms = self.victim_ms
        spread = " / ".join(f"{v:.0f}" for v in (ms[0], percentile(ms, 0.5), max(ms)))
        if not self.send_ms:
            return (self.name, "", spread, str(len(ms)), "", "", "")
        return (
            self.name,
            f"{self.send_ms:.0f}",
            spread,
            str(len(ms)),
            f"{self.cpu_s:.2f}",
            str(self.attacker_runs),
            f"{self.attacker_busy_s:.2f}",
        )


async def flood(
    name: str, victim: Session, attacker: Session, request: Callable[[int], bytes], cpu
) -> Row:
    """Send FLOOD requests from the attacker, then let the victim edit for WINDOW_S."""
    drained = Drained()
    reader = asyncio.create_task(drain(attacker, drained))
    messages = [request(i) for i in range(FLOOD)]
    await asyncio.sleep(1.0)  # the server at rest: the last measurement's runs are over
    cpu_before = cpu()
    start = time.perf_counter()
    for message in messages:
        await attacker.ws.send(message)
    sent = time.perf_counter()
    times = await victim_edits(victim, start + WINDOW_S)
    await asyncio.sleep(max(0.0, start + WINDOW_S - time.perf_counter()))
    cpu_used = cpu() - cpu_before
    reader.cancel()
    with suppress(asyncio.CancelledError):
        await reader
    busy = max(0.0, drained.last_s - start) if drained.finished else 0.0
    return Row(name, times, cpu_used, (sent - start) * 1e3, drained.finished, busy)


async def measure(options: Sequence[str]) -> list[Row]:
    """Quiet edits, then the two floods, on a server started with `options`."""
    async with serve(APP, options=options) as server, AsyncExitStack() as stack:
        victim, _ = await open_session(stack, server)
        attacker, _ = await open_session(stack, server, needs=NEXT)
        for k in range(3):  # warm
            await victim.edit(k + 1)
        quiet = [(await victim.edit(k % 50 + 1)).finished_ms for k in range(QUIET_EDITS)]
        rows = [Row("nothing (quiet)", quiet)]
        text = attacker.widgets[APP.text_key]
        next_button = attacker.widgets[NEXT]
        fragment = attacker.fragments.get(NEXT, "")

        def text_rerun(i: int) -> bytes:
            return attacker.rerun_request([WidgetState(id=text.id, string_value=f"{i}, 1, 2")])

        def next_press(i: int) -> bytes:
            return attacker.rerun_request(
                [WidgetState(id=next_button.id, trigger_value=True)], fragment
            )

        def cpu() -> float:
            return cpu_s(server)

        rows.append(await flood("whole-page reruns", victim, attacker, text_rerun, cpu))
        rows.append(await flood("fragment reruns (Next)", victim, attacker, next_press, cpu))
        return rows


def main() -> None:
    load_before = os.getloadavg()
    start = time.perf_counter()
    rows = []
    for name, options in SERVERS:
        for row in asyncio.run(measure(options)):
            row.name = f"{name}: {row.name}"
            rows.append(row)
    load_after = os.getloadavg()
    table = [
        (
            "server: attacker sends",
            "send (ms)",
            "victim edit: first / p50 / max (ms)",
            "victim edits",
            "server CPU over the window (s)",
            "attacker runs",
            "attacker's last run ended after (s)",
        ),
        *(row.cells() for row in rows),
    ]
    notes = (
        f"{FLOOD} rerun requests sent on one websocket as fast as it takes them; the victim "
        f"(another session) edits the step-through text box back to back for {WINDOW_S:.0f} s "
        "from the flood's start; its first edit is the one that waited behind the flood. "
        f"{load_average(load_before, load_after)} shared with other work. "
        f"Total {time.perf_counter() - start:.0f} s."
    )
    print(record("flood", "A rerun flood against another session", table, notes))


if __name__ == "__main__":
    main()
