"""A browser tab as the server sees it: a websocket speaking Streamlit's protocol as the browser
does (rerun requests with widget states, the ForwardMsg cache), with no rendering; and the page
a session opens and edits (LNLAB: /step_through, its text box, step 1's mean, as the page's
own lesson gets it from Python or as Python's lesson draws it).

Used by the tests through the local cluster (harness.students), checks/live_class.py and the
benchmarks (bench.sessions, bench.load, bench.clicks...).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ContextInfo
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import ClientConnection, connect
from websockets.typing import Subprotocol

from lnlab.core.numbers import fmt  # as the pages print a metric
from lnlab.ui.live import KEY as LIVE  # the component of a lesson drawn in the page

ROOT = Path(__file__).resolve().parent.parent  # the checkout


@dataclass(frozen=True)
class Target:
    """An app to measure: its script, the page to open, and its text box's key."""

    name: str
    script: str
    path: str
    text_key: str
    shown: Callable[[int], str]  # the first metric after typing "1, 2, 3, 4, k"


LNLAB = Target("lnlab", "app.py", "/step_through", "st_text", lambda k: fmt((10 + k) / 5))


STREAM = "/_stcore/stream"
MAIN = 0  # delta_path[0] of the main area (the sidebar is 1)
# The page's other inputs: an edit sends only the text box's state, so these must come back
# exactly as they were (the browser would send them all, unchanged). The preset chooser is
# not among them: typed numbers are no longer the preset, and it says so ("custom").
KEPT = ("st_labels", "st_token", "st_eps", "st_gamma", "st_beta", "st_quiz")

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

    @property
    def sections(self) -> list[str]:
        """The titles of Python's lesson's sections among the headings ("k. ...")."""
        return [h for h in self.headings if h[:1].isdigit()]


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
                if metric is None and msg.metadata.delta_path[0] == MAIN:
                    shown = item.body if name == "metric" else None
                    if name == "bidi_component":  # the lesson the page computes (lnlab.ui.live)
                        shown = _lesson_mean(item.json)
                    if shown is not None:
                        metric, metric_ms = shown, (time.perf_counter() - start) * 1e3
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

    async def python_lesson(self, run: Run) -> Run:
        """`run`, or where it drew the lesson in the page (lnlab.ui.live) and no section of
        Python's (a title "k. ..."), the run that follows saying what a browser says whose own
        lesson has not shown within its deadline (its status "slow"): that run draws Python's
        lesson under it. This client runs no JavaScript, so it reads and clicks Python's."""
        if LIVE not in self.widgets or run.sections:
            return run
        state = WidgetState(id=self.widgets[LIVE].id, json_value=json.dumps({"status": "slow"}))
        return await self.rerun([state], self.fragments.get(LIVE, ""))

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


def _lesson_mean(data: str) -> str | None:
    """Step 1's mean as the page's own lesson shows it: Python's number in the component's
    data (lnlab.labs.step_through.live.browser_data), printed as the page prints it."""
    mean = json.loads(data or "{}").get("result", {}).get("mean")
    return None if mean is None else fmt(float(mean))


def cpu_of(pid: int) -> float:
    """CPU seconds (user and system, every thread) process `pid` has used so far."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    utime, stime = stat.rsplit(")", 1)[1].split()[11:13]
    return (int(utime) + int(stime)) / os.sysconf("SC_CLK_TCK")


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
