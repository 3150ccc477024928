"""A step through a lesson the browser draws, told to Python without a script run.

The browser's lesson (lnlab.ui.live) sent every change back as its component's state: one script
run per Next once the user paused, which cost the server more than the one-button app's whole
click (bench.live: 5.8 ms of CPU per step against 4.4). A step changes no number, only which
section shows and so the link. The browser now posts it to POST .../_lnlab/step/<token>
(`{"rev": n, "step": k}`), which the app's server answers here, on the event loop, with no script
run (`StepRoute`, one of the app's middleware, lnlab.ui.server):

- the token is the session's lane (`offer`, at the end of each run that drew the browser's
  lesson: its page, the sections the browser draws, the link as that run wrote it);
- the step is checked like anything else a browser sends, and kept for the session's next run,
  which applies it before anything reads it (lnlab.ui.links.catch_up);
- the browser's address becomes the link to the new step, sent as Streamlit itself sends a
  run's link (a page_info_changed message), so the link stays Python's.

Anything else the browser changes (an input, every section shown, a section Python draws), and
every step where the route is not installed (AppTest) or fails, goes
as the component's state, as before.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from lnlab.teach.links import Field, link_with
from lnlab.ui.runtime.sessions import tell_browser
from lnlab.ui.runtime.stale import address
from lnlab.ui.server.asgi import posted, send_json

PATH = "_lnlab/step/"
_ROUTE = re.compile(rf"(?:/[^?#]*)?/{PATH}([A-Za-z0-9_-]{{1,64}})")
MAX_BODY = 200  # bytes: `{"rev": <int>, "step": <int>}` needs under 40
MAX_LINK_CHARS = 4_000  # a longer link (a big matrix) is not kept here: its steps go as state
KEPT_LANES = 1024  # sessions a process keeps a lane for (the least recently offered go first;
# a process serves about 60, README "Sizing")
KEPT_SENT = 16  # links sent since the session's last run that it remembers having had
EVERY_S = 0.05  # a lane takes a step at most this often: a person's steps come 0.4 s apart
# (the browser's pause before sending); a faster one is refused (429) and goes as state, paced
# and in turn like any run (lnlab.ui.rerun)
_INSTALLED = False

Tell = Callable[[str, str, str], bool]  # (session id, page script hash, query) -> sent?


@dataclass
class LessonRoute:
    """The browser's lesson as a session's runs know it (lnlab.ui.state): lnlab.ui.live draws
    and applies it, lnlab.ui.links.catch_up applies the route's steps; the route itself, on the
    event loop, never reads it."""

    token: str | None = None  # the session's lane, as its browser names it (`new_token`)
    rev: int = 0  # the last revision of the browser's lesson applied


@dataclass(frozen=True)
class Step:
    """The newest step the route took since the session's last run: its revision and section."""

    rev: int
    step: int


@dataclass(frozen=True)
class Caught:
    """What a session's run catches up on: the newest step taken (None: none, or one a newer
    revision sent as state has overtaken), for `slide_key` of `page`, and every link the route
    sent the browser meanwhile (lnlab.ui.runtime.stale.address of each): addresses the page
    has had."""

    page: str
    slide_key: str
    step: Step | None
    sent: tuple[str, ...]


@dataclass
class Lane:
    """What the route needs of a session: its lesson's page (name and script hash) and slide
    key, the sections the browser draws (0..count-1), the link as the last run wrote it and the
    fields it holds, the parameters left out of a link's address, and the last revision taken.
    A closed lane takes no steps but keeps what its run must still catch up on."""

    session_id: str
    page: str
    page_hash: str
    slide_key: str
    count: int
    params: dict[str, str]
    fields: tuple[Field, ...]
    ignore: tuple[str, ...]
    rev: int
    open: bool = True
    pending: Step | None = None
    sent: list[str] = field(default_factory=list)
    took_at: float = float("-inf")  # when the route last took a step


class Steps:
    """The process's lanes, by token: offered and taken by a session's runs, posted to from the
    event loop."""

    def __init__(self, tell: Tell = tell_browser, clock: Callable[[], float] = time.monotonic):
        self._tell, self._clock = tell, clock
        self._lanes: OrderedDict[str, Lane] = OrderedDict()
        self._lock = threading.Lock()

    def offer(self, token: str, lane: Lane) -> str | None:
        """Open `token`'s lane as of a run that drew the browser's lesson, from the link that
        run wrote. A step the route took during the run, for the same lesson, stays pending
        unless the run applied a newer revision; returned: the query of its link made again
        from this run's, which the run sends after its own (lnlab.ui.live.steps_by_route)."""
        if not fits(lane.params):
            self.close(token)
            return None
        with self._lock:
            old = self._lanes.pop(token, None)
            self._lanes[token] = lane
            while len(self._lanes) > KEPT_LANES:
                self._lanes.popitem(last=False)
            if old is None or (old.page_hash, old.slide_key) != (lane.page_hash, lane.slide_key):
                return None
            lane.took_at, lane.sent = old.took_at, old.sent
            if old.pending is None or old.pending.rev <= lane.rev:
                return None
            lane.rev = old.pending.rev
            params = link_with(lane.params, lane.fields, lane.slide_key, old.pending.step)
            self._keep(lane, old.pending, params)
            return urlencode(params)

    def close(self, token: str) -> None:
        """The browser no longer draws `token`'s lesson: its steps come as state again."""
        with self._lock:
            if (lane := self._lanes.get(token)) is not None:
                lane.open = False

    def take(self, token: str) -> Caught | None:
        """What the session's run catches up on since its last one (once), if anything."""
        with self._lock:
            lane = self._lanes.get(token)
            if lane is None or (lane.pending is None and not lane.sent):
                return None
            caught = Caught(lane.page, lane.slide_key, lane.pending, tuple(lane.sent))
            lane.pending, lane.sent = None, []
            return caught

    def post(self, token: str, body: bytes) -> tuple[int, dict[str, Any]]:
        """Take a step the browser posted: the HTTP status and the JSON answer (the link's
        query, which the browser also gets as its address). 404: no open lane here (the page
        stops posting); 409, 410, 429: not this step (the page sends it as state)."""
        try:
            rev, step = _parse(body)
        except ValueError as err:
            return 400, {"error": str(err)}
        with self._lock:
            lane = self._lanes.get(token)
            if lane is None or not lane.open:
                return 404, {"error": "this lesson is not open here"}
            if rev <= lane.rev:
                return 409, {"error": "a newer revision came first", "rev": lane.rev}
            if not 0 <= step < lane.count:
                return 400, {"error": f"section {step} is not one the browser draws"}
            now = self._clock()
            if now - lane.took_at < EVERY_S:
                return 429, {"error": "steps come too fast: send them as the lesson's state"}
            params = link_with(lane.params, lane.fields, lane.slide_key, step)
            query = urlencode(params)
            if not self._tell(lane.session_id, lane.page_hash, query):
                return 410, {"error": "the session is not on this lesson's page now"}
            lane.rev, lane.took_at = rev, now
            self._keep(lane, Step(rev, step), params)
        return 200, {"rev": rev, "query": query}

    @staticmethod
    def _keep(lane: Lane, step: Step, params: dict[str, str]) -> None:
        """Keep `step` pending, and its link (`params`) among those sent."""
        lane.pending = step
        lane.sent = [*lane.sent, address(params.items(), lane.ignore)][-KEPT_SENT:]


def fits(params: Mapping[str, str]) -> bool:
    """Whether a link is short enough for a lane (MAX_LINK_CHARS)."""
    return sum(len(k) + len(v) for k, v in params.items()) <= MAX_LINK_CHARS


def _parse(body: bytes) -> tuple[int, int]:
    """`{"rev": n, "step": k}` with whole numbers n > 0 and k >= 0, or ValueError saying what
    is wrong."""
    if len(body) > MAX_BODY:
        raise ValueError(f"a step is at most {MAX_BODY} bytes")
    try:
        sent = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError('a step is JSON: {"rev": n, "step": k}') from err
    if not isinstance(sent, Mapping) or set(sent) != {"rev", "step"}:
        raise ValueError('a step holds a revision and a section: {"rev": n, "step": k}')
    rev, step = sent["rev"], sent["step"]
    if type(rev) is not int or type(step) is not int or rev < 1 or step < 0:
        raise ValueError("rev and step are whole numbers (rev from 1, step from 0)")
    return rev, step


STEPS = Steps()


class StepRoute:
    """ASGI middleware: POST .../_lnlab/step/<token> is answered here (`Steps.post`), before
    Streamlit's own routes; everything else goes on."""

    def __init__(self, app: Any, steps: Steps = STEPS) -> None:
        self.app = app
        self.steps = steps

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        found = _ROUTE.fullmatch(scope.get("path", "")) if scope["type"] == "http" else None
        if found is None:
            await self.app(scope, receive, send)
            return
        body = await posted(scope, receive, send, MAX_BODY, "a step")
        if body is not None:
            await send_json(send, *self.steps.post(found.group(1), body))


def open_route() -> None:
    """The app's server answers steps (its middleware holds StepRoute): lnlab.ui.server's
    lifespan says so at start. Until then (AppTest) every step goes as state."""
    global _INSTALLED
    _INSTALLED = True


def route(token: str, base: str, link: Mapping[str, str]) -> str | None:
    """Where the browser posts its steps, under the app's `base` path; None where the route is
    not installed, or the link (`link`, its parameters) is too long for a lane."""
    return f"{base}{PATH}{token}" if _INSTALLED and fits(link) else None


def new_token() -> str:
    """A lane's token: unguessable, so only the session's own page can step it."""
    return secrets.token_urlsafe(16)
