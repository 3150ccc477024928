"""POST .../_lnlab/answer/<code>: a phone's tap, stored with no script run (issue 39).

A phone that draws the question itself (lnlab.ui.classroom.phone, static/lnlab/phone.mjs)
posts the option tapped: `{"me": <student id>, "qid": <question>, "option": <place, 0-based>}`.
The store checks it as it checks a tap drawn by Python (the student is in the class, the question
is the one asked and not revealed, the option is one of its own, the student's first answer and
under the cap) and stores it: `{"stored": true, "qid"}` (the phone draws the option it sent; its
score counts revealed questions only, so it has not moved). A tap not stored (answered before, from
another device, say) gets what the phone draws instead: `{"stored": false, "qid", "mine", "right",
"answered"}` (the question asked now, this student's answer to it, their score over the questions
revealed); so does `{"me": ...}` alone, a phone that lost track (a question asked and revealed
between two of its reads). A stored tap costs one write and no read (bench.class_instant).

The student id is the student's own secret (lnlab.classroom.store.join), which their page
already holds; nothing else identifies them, so any process of a cluster can answer. The work is
bounded: WRITERS store calls at once (the rest queue on the event loop, at most QUEUED, then
503: the phone taps again), a student's taps at most one per PACE_S (429), and an address
that names students no class has gets 429 after UNKNOWN_PER_10S of them.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import OrderedDict
from typing import Any

from lnlab.classroom.store import ClassError, StoreDown, default_store, normalize_code
from lnlab.core.errors import InputError
from lnlab.ui.server.asgi import posted, send_json
from lnlab.ui.server.pulse import PerAddress, client_address

PATH = "_lnlab/answer/"
_ROUTE = re.compile(rf"(?:/[^?#]*)?/{PATH}([^/?#]{{1,100}})")
MAX_BODY = 300  # bytes: a student id (at most 64), a qid (at most 100) and a small number
WRITERS = 8  # store calls at once (PostgreSQL's pool has 30; SQLite writes one at a time)
QUEUED = 5_000  # taps waiting for a writer: a class of 2,000 tapping at once fits
PACE_S = 0.25  # one student's taps at most this often: a person taps once a question
KEPT_STUDENTS = 50_000  # students whose last tap time is kept (the oldest go first)
UNKNOWN_PER_10S = 30  # taps naming no student of the class, per address in 10 s


def tap(code: str, body: Any) -> tuple[int, dict[str, Any]]:
    """Store the tap `body` of class `code` (a worker thread's work) and say what the phone
    draws now; 400 for a body that is not a tap, 409 for one the class refuses (with why),
    404 for a class that is no more, 503 for a database that does not answer."""
    if not isinstance(body, dict) or not isinstance(me := body.get("me"), str):
        return 400, {"error": 'a tap is {"me": ..., "qid": ..., "option": ...}'}
    qid, option = body.get("qid"), body.get("option")
    store = default_store()
    try:
        stored = None
        if qid is not None or option is not None:
            if not isinstance(qid, str) or type(option) is not int:
                return 400, {"error": "qid is text and option a whole number"}
            stored = store.answer(code, me, qid, option)
            if stored:  # the phone knows its option's text, and its score is as it was
                return 200, {"stored": True, "qid": qid}
        now = store.follow(code, me)
    except StoreDown as err:
        return 503, {"error": str(err)}
    except ClassError as err:
        return 409, {"error": str(err)}
    except InputError as err:
        return 404, {"error": str(err)}
    return 200, {
        "stored": stored,
        "qid": now.posed.question.qid if now.posed else None,
        "mine": now.mine,
        "right": now.right,
        "answered": now.answered,
    }


class AnswerRoute:
    """ASGI middleware: POST .../_lnlab/answer/<code> is answered here (`tap`, in a worker
    thread, WRITERS at once), before Streamlit's own routes; everything else goes on."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.queued = 0
        self._writers: asyncio.Semaphore | None = None
        self._last: OrderedDict[str, float] = OrderedDict()  # student id -> last tap
        self.strangers = PerAddress(UNKNOWN_PER_10S)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        found = _ROUTE.fullmatch(scope.get("path", "")) if scope["type"] == "http" else None
        if found is None:
            await self.app(scope, receive, send)
            return
        raw = await posted(scope, receive, send, MAX_BODY, "a tap")
        if raw is not None:
            await send_json(send, *await self._answer(scope, found.group(1), raw))

    async def _answer(self, scope: dict[str, Any], typed: str, raw: bytes) -> tuple[int, Any]:
        try:
            code = normalize_code(typed)
            body = json.loads(raw)
        except ClassError as err:
            return 404, {"error": str(err)}
        except ValueError:
            return 400, {"error": "the body is not JSON"}
        me = body.get("me") if isinstance(body, dict) else None
        if isinstance(me, str) and not self._paced(me):
            return 429, {"error": "one tap at a time: wait a moment"}
        address = client_address(scope)
        if self.strangers.spent(address):
            return 429, {"error": "too many taps for students no class has, from your address"}
        if self.queued >= QUEUED:
            return 503, {"error": "busy: tap again in a moment"}
        from starlette.concurrency import run_in_threadpool

        if self._writers is None:
            self._writers = asyncio.Semaphore(WRITERS)
        self.queued += 1
        try:
            async with self._writers:
                status, answer = await run_in_threadpool(tap, code, body)
        finally:
            self.queued -= 1
        if status == 409 and "join the class first" in answer["error"]:
            self.strangers.take(address)
        return status, answer

    def _paced(self, me: str) -> bool:
        """Whether student `me` may tap now (at most one tap per PACE_S)."""
        now = time.monotonic()
        last = self._last.pop(me, None)
        self._last[me] = now if last is None or now - last >= PACE_S else last
        while len(self._last) > KEPT_STUDENTS:
            self._last.popitem(last=False)
        return last is None or now - last >= PACE_S
