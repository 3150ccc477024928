"""Many sessions against the server alone: Streamlit's websocket protocol, no browser.

Run: `.venv/bin/python -m bench.sessions`. Starts the app with bench.browser.serve and opens
1, 10 and 30 sessions on /step_through, each a websocket speaking Streamlit's protobufs as the
browser does (rerun requests with widget states, the ForwardMsg cache), with no rendering. Each
session types "1, 2, 3, 4, k" into the text box five times; an edit's latency is the time from
sending the rerun request to receiving step 1's metric with the new mean (checked), and to
the run's script_finished. Prints a table and appends it to bench/results/sessions.md.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Coroutine, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ContextInfo
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

from bench.browser import LNLAB, Server, percentile, serve
from bench.report import load_average, record

STREAM = "/_stcore/stream"
MAIN = 0  # delta_path[0] of the main area (the sidebar is 1)
# The page's other inputs: an edit sends only the text box's state, so these must come back
# exactly as they were (the browser would send them all, unchanged). The preset chooser is
# not among them: typed numbers are no longer the preset, and it says so ("custom").
KEPT = ("st_labels", "st_token", "st_eps", "st_gamma", "st_beta", "st_quiz")
SESSION_COUNTS = (1, 10, 30)
CLASSROOM = 30  # sessions in the classroom phase
EDITS = 5
CLASSROOM_PAUSE_S = 3.0  # the classroom phase waits 0 to this long before each edit
SEED = 1
LOAD_TIMEOUT_S = 60.0
EDIT_TIMEOUT_S = 30.0
PHASE_BUDGET_S = 60.0
TOTAL_S = 170.0  # every phase together, so that the run ends within about 3 minutes


FINISHED = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)


class WrongPage(AssertionError):
    """The server answered, but not with what the page should show."""


@dataclass(frozen=True)
class Run:
    """One script run as the client saw it: step 1's metric and when things arrived."""

    metric: str | None
    metric_ms: float | None
    finished_ms: float
    headings: tuple[str, ...] = ()  # the run's headings (a lesson's section titles)
    texts: tuple[str, ...] = ()  # the run's markdown, captions and alerts, in order


class Session:
    """One browser tab as the server sees it: a websocket, the URL's query string, the page's
    hash, the ForwardMsg cache and the widgets of the last run (by user key)."""

    def __init__(self, ws: ClientConnection, url: str) -> None:
        self.ws = ws
        self.url = url
        self.query_string = ""
        self.page_hash = ""  # from the navigation message of the first run
        self.cache: dict[str, ForwardMsg] = {}
        self.widgets: dict[str, Any] = {}
        self.fragments: dict[str, str] = {}  # a widget's user key -> the fragment it is in
        self.timers: dict[str, float] = {}  # fragment id -> its run_every, as the browser keeps it

    async def _receive(self) -> ForwardMsg:
        """The next ForwardMsg, a cache reference replaced by the message it names."""
        msg = ForwardMsg()
        msg.ParseFromString(await self.ws.recv(decode=False))
        if msg.WhichOneof("type") == "ref_hash":
            cached = self.cache[msg.ref_hash]
            cached.metadata.CopyFrom(msg.metadata)  # where it goes this time
            return cached
        if msg.metadata.cacheable:
            self.cache[msg.hash] = msg
        return msg

    def rerun_request(self, states: Sequence[WidgetState] = (), fragment_id: str = "") -> bytes:
        """The BackMsg a browser sends to ask for a script run with these widget states."""
        back = BackMsg()
        client = back.rerun_script
        client.fragment_id = fragment_id
        client.query_string = self.query_string
        if self.page_hash:
            client.page_script_hash = self.page_hash
        else:
            client.page_name = urlsplit(self.url).path.strip("/")  # as the browser names it
        client.widget_states.widgets.extend(states)
        client.cached_message_hashes.extend(self.cache)
        url = f"{self.url}?{self.query_string}" if self.query_string else self.url
        client.context_info.CopyFrom(
            ContextInfo(timezone="UTC", timezone_offset=0, locale="en-US", url=url)
        )
        return back.SerializeToString()

    async def rerun(self, states: Sequence[WidgetState] = (), fragment_id: str = "") -> Run:
        """Ask for a script run with these widget states (of the fragment `fragment_id` alone,
        if given, as a click inside a fragment does); read messages until it finishes."""
        start = time.perf_counter()
        await self.ws.send(self.rerun_request(states, fragment_id))
        metric = metric_ms = None
        headings: list[str] = []
        texts: list[str] = []
        while True:
            msg = await self._receive()
            kind = msg.WhichOneof("type")
            if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                element = msg.delta.new_element
                name = element.WhichOneof("type")
                item = getattr(element, name)
                if name == "exception":
                    raise WrongPage(f"the page raised {item.type}: {item.message}")
                if name == "metric" and metric is None and msg.metadata.delta_path[0] == MAIN:
                    metric, metric_ms = item.body, (time.perf_counter() - start) * 1e3
                if name == "heading":
                    headings.append(item.body)
                if name in ("markdown", "alert"):
                    texts.append(item.body)
                if getattr(item, "id", ""):  # a widget: $$ID-<hash>-<user key>
                    key = item.id.split("-", 2)[-1]
                    self.widgets[key] = item
                    self.fragments[key] = msg.delta.fragment_id
            elif kind == "auto_rerun":
                self.timers[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
            elif kind == "stop_auto_rerun":
                for fragment in msg.stop_auto_rerun.fragment_ids:
                    self.timers.pop(fragment, None)
            elif kind == "navigation":
                self.page_hash = msg.navigation.page_script_hash
            elif kind == "page_info_changed":  # the page wrote the URL (its share link)
                self.query_string = msg.page_info_changed.query_string
            elif kind == "script_finished":
                if msg.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue  # the page asked for a rerun (st.rerun), which follows
                if msg.script_finished not in FINISHED:
                    raise WrongPage(f"the run ended with status {msg.script_finished}")
                elapsed = (time.perf_counter() - start) * 1e3
                return Run(metric, metric_ms, elapsed, tuple(headings), tuple(texts))

    async def edit(self, k: int) -> Run:
        """Type "1, 2, 3, 4, k" into the text box and apply it; check what the page shows."""
        kept = {key: self.widgets.get(key) for key in KEPT}
        text = self.widgets[LNLAB.text_key]
        run = await self.rerun([WidgetState(id=text.id, string_value=f"1, 2, 3, 4, {k}")])
        if run.metric != LNLAB.shown(k):
            raise WrongPage(f"step 1 shows {run.metric!r}, not {LNLAB.shown(k)!r}")
        changed = [key for key, widget in kept.items() if self.widgets.get(key) != widget]
        if changed:
            raise WrongPage(f"the edit changed other inputs: {', '.join(changed)}")
        return run


def cpu_of(pid: int) -> float:
    """CPU seconds (user and system, every thread) process `pid` has used so far."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    utime, stime = stat.rsplit(")", 1)[1].split()[11:13]
    return (int(utime) + int(stime)) / os.sysconf("SC_CLK_TCK")


def cpu_s(server: Server) -> float:
    """CPU seconds the streamlit process has used so far."""
    return cpu_of(server.process.pid)


def stream(url: str, cookie: str = "", timeout_s: float = 10.0, **kwargs: Any) -> connect:
    """The app's websocket at `url` (http://host:port) as a browser opens it, sending `cookie`;
    `kwargs` go to the event loop's create_connection (local_addr=...)."""
    return connect(
        url.replace("http://", "ws://", 1) + STREAM,
        subprotocols=[Subprotocol("streamlit")],
        additional_headers={"Cookie": cookie} if cookie else {},
        max_size=None,
        proxy=None,
        open_timeout=timeout_s,
        **kwargs,
    )


async def page_session(
    stack: AsyncExitStack,
    server: Server,
    path: str,
    kind: type[Session] = Session,
    query: str = "",
) -> tuple[Session, Run]:
    """A new session (a `kind`) on the page at `path`, opened from a link with `query`, after
    its first run (closed with `stack`), and that run."""
    ws = await stack.enter_async_context(stream(server.url))
    session = kind(ws, server.url + path)
    session.query_string = query
    return session, await session.rerun()


async def open_session(
    stack: AsyncExitStack,
    server: Server,
    path: str = LNLAB.path,
    needs: str = LNLAB.text_key,
    query: str = "",
    metric: bool = True,
) -> tuple[Session, float]:
    """Connect and load the page at `path` from a link with `query` (closed with `stack`),
    which must draw widget `needs` (and a metric, if `metric`); ms from connecting to
    script_finished."""
    start = time.perf_counter()
    session, run = await page_session(stack, server, path, query=query)
    if needs not in session.widgets or (metric and run.metric is None):
        raise WrongPage(f"{path} has no widget {needs!r} or no metric")
    return session, (time.perf_counter() - start) * 1e3


@dataclass
class Phase:
    """A phase and what it measured so far (kept when its budget runs out)."""

    name: str
    count: int
    pause_s: float = 0.0
    load_ms: list[float] = field(default_factory=list)
    metric_ms: list[float] = field(default_factory=list)
    finished_ms: list[float] = field(default_factory=list)
    failed: int = 0
    rss_mib: float | None = None  # with every session loaded
    cpu_s: float | None = None  # the server's, over the edits


async def run_phase(server: Server, phase: Phase) -> None:
    """`phase.count` sessions open the page at once, then each makes EDITS edits back to back,
    each after a random pause of up to `phase.pause_s`; fills `phase` as it goes."""
    rng = random.Random(SEED)
    pauses = [[rng.uniform(0, phase.pause_s) for _ in range(EDITS)] for _ in range(phase.count)]
    async with AsyncExitStack() as stack:
        async with asyncio.timeout(LOAD_TIMEOUT_S):
            opened = await asyncio.gather(
                *(open_session(stack, server) for _ in range(phase.count))
            )
        phase.load_ms = [ms for _, ms in opened]
        phase.rss_mib = server.rss_mib()

        async def work(i: int, session: Session) -> None:
            for j in range(EDITS):
                await asyncio.sleep(pauses[i][j])
                try:
                    async with asyncio.timeout(EDIT_TIMEOUT_S):
                        run = await session.edit(1000 * (i + 1) + j)
                except (TimeoutError, ConnectionClosed):
                    phase.failed += EDITS - j  # the session's state is unknown from here on
                    return
                phase.metric_ms.append(run.metric_ms)
                phase.finished_ms.append(run.finished_ms)

        cpu_start = cpu_s(server)
        await asyncio.gather(*(work(i, s) for i, (s, _) in enumerate(opened)))
        phase.cpu_s = cpu_s(server) - cpu_start


def _spread(samples: Sequence[float], scale: float = 1.0, digits: int = 0) -> str:
    """p50 / p95 / max of the samples (divided by `scale`), or a dash without samples."""
    if not samples:
        return "—"
    values = (percentile(samples, 0.5), percentile(samples, 0.95), max(samples))
    return " / ".join(f"{v / scale:.{digits}f}" for v in values)


def row(phase: Phase) -> tuple[str, ...]:
    """The phase's line of the table."""
    done = len(phase.metric_ms)
    load = _spread(phase.load_ms, 1e3, 1)
    rss = "—" if phase.rss_mib is None else f"{phase.rss_mib:.0f}"
    cpu = "—" if phase.cpu_s is None or not done else f"{phase.cpu_s / done * 1e3:.0f}"
    return (
        phase.name,
        f"{done}/{phase.count * EDITS} ({phase.failed} failed)",
        load,
        _spread(phase.metric_ms),
        _spread(phase.finished_ms),
        cpu,
        rss,
    )


async def measure() -> tuple[list[tuple[str, ...]], list[str]]:
    rows: list[tuple[str, ...]] = [
        (
            "phase",
            "edits done",
            "load p50 / p95 / max (s)",
            "edit to metric p50 / p95 / max (ms)",
            "edit to finished p50 / p95 / max (ms)",
            "server CPU per edit (ms)",
            "server RSS (MiB)",
        )
    ]
    notes: list[str] = []
    deadline = time.monotonic() + TOTAL_S

    async def budgeted(name: str, work: Coroutine) -> None:
        """Run one phase within its budget and the run's; on failure note why."""
        budget_s = min(PHASE_BUDGET_S, deadline - time.monotonic())
        if budget_s < 5:
            work.close()
            notes.append(f"{name} skipped: the run's {TOTAL_S:.0f} s were spent")
            return
        try:
            await asyncio.wait_for(work, budget_s)
        except TimeoutError:
            notes.append(
                f"{name} timed out: loading took over {LOAD_TIMEOUT_S:.0f} s or the phase "
                f"over its {budget_s:.0f} s"
            )
        except Exception as err:  # a benchmark reports a failed phase, it does not crash
            notes.append(f"{name} failed: {type(err).__name__}: {str(err)[:300]}")

    phases = [Phase(f"{n} session{'s' * (n > 1)}", n) for n in SESSION_COUNTS]
    pauses = f"0-{CLASSROOM_PAUSE_S:.0f} s pauses"
    phases.append(
        Phase(f"{CLASSROOM} sessions, classroom ({pauses})", CLASSROOM, CLASSROOM_PAUSE_S)
    )
    async with serve(LNLAB) as server:
        for phase in phases:
            await budgeted(phase.name, run_phase(server, phase))
            rows.append(row(phase))
            if phase is phases[0]:
                rss = f"{server.rss_mib():.0f}"
                rows.append((f"idle, after the {phase.name} phase", *["—"] * 5, rss))
    return rows, notes


def main() -> None:
    load_before = os.getloadavg()
    start, cpu_start = time.monotonic(), time.process_time()
    rows, notes = asyncio.run(measure())
    load_after = os.getloadavg()
    notes.append(
        "This measures the server alone: each session is a websocket speaking Streamlit's "
        "protocol with no rendering, so a browser adds its own rendering time to these numbers "
        "(bench.browser measures that for one session). Edit = send the text box's new value "
        "'1, 2, 3, 4, k' in a rerun request; 'metric' is when step 1's mean arrives with the "
        "new value (checked), 'finished' when the run's script_finished does. An edit sends "
        "only the text box's state; the page's other inputs are checked to come back "
        "unchanged. Target: p95 "
        f"under 1000 ms with 30 sessions. Sessions of a phase load at once; then each makes "
        f"{EDITS} edits back to back, the classroom phase after a random pause (seed {SEED}). "
        "Server CPU per edit is the streamlit process's CPU time over a phase's edits divided "
        "by the edits: script runs share one Python interpreter (its GIL), so N edits at once "
        "take roughly N times that, however many cores there are."
    )
    notes.append(
        f"{load_average(load_before, load_after)} (shared with other work). The client used "
        f"{time.process_time() - cpu_start:.0f} s of CPU on the same cores. "
        f"Total {time.monotonic() - start:.0f} s. Closed sessions "
        "stay in the server for server.disconnectedSessionTTL (120 s), so a phase's RSS "
        "includes the sessions of the phases before it."
    )
    record("sessions", "Server-side sessions: edit-to-update and memory", rows, "\n\n".join(notes))


if __name__ == "__main__":
    main()
