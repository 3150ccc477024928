"""Devices held until their class changes: the pulse route's long poll (lnlab.ui.server.pulse).

A device that has drawn its class as it is asks for its board with `since`, the stamp of the
fields it watches (lnlab.ui.server.board.stamp). While the board still matches, the request is
held here, as a future on the event loop (no thread, no script run), until:
- this process stores a change to the class (the store's listeners, `heard`): the board is read
  again at once and every device whose fields moved is answered;
- another process stored one: each class with devices held is read every WATCH_S (one read per
  class for all its devices, in a worker thread);
- HOLD_S passed (the device asks again: a proxy or a phone's network may drop a request
  held for minutes), or the device went away.

Why a long poll (issue 39, measured in bench.class_instant): a read every second kept 300
devices at 300 requests a second and the question reached them a poll late; a held request costs
nothing until the class changes, then one answer per device. Server-sent events would keep one
response open per device for as long as the page is open, through every proxy's idle timeout;
a request held HOLD_S is an ordinary request to each of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from lnlab.ui.server.board import stamp

WATCH_S = 0.1  # a class with devices held is read this often: another process's change
HOLD_S = 20.0  # a held request is answered after this at the latest (HAProxy: timeout server 60 s)
MAX_HELD = 20_000  # requests held at once in a process: past it, devices are answered at once
log = logging.getLogger(__name__)

Read = Callable[[str, float], tuple[int, Any]]  # (code, max age) -> (200, Kept) or a refusal


@dataclass(eq=False)
class Held:
    """One device's request: the fields it watches, their stamp as it drew them, whether it
    reads the phone's question, and the answer, once there is one."""

    watch: tuple[str, ...]
    since: str
    question: bool
    answered: asyncio.Future


class Waiting:
    """The requests held in one process, by class, and one watcher task per class that has
    any (it reads the class's board and answers the devices whose fields moved)."""

    def __init__(
        self,
        read: Read,
        forget: Callable[[str], None],
        listen: Callable[[Callable[[str], None]], None] | None = None,
    ) -> None:
        self._read, self._forget, self._listen = read, forget, listen
        self.held = 0
        self._by_code: dict[str, set[Held]] = {}
        self._woken: dict[str, asyncio.Event] = {}
        self._watchers: dict[str, asyncio.Task] = {}  # by class: its watcher task
        self._loop: asyncio.AbstractEventLoop | None = None
        self._listening: asyncio.Future | None = None

    async def hold(
        self, code: str, watch: tuple[str, ...], since: str, question: bool, kept: Any, receive: Any
    ) -> tuple[int, Any]:
        """The answer for a device that drew `since` of class `code`, whose board is `kept`
        now: at once if it differs (or the class is closed, or MAX_HELD are held), else when
        it changes, within HOLD_S."""
        board = kept.board
        if not board.pulse.open or stamp(asdict(board.pulse), watch) != since:
            return 200, kept.body(question)
        if self.held >= MAX_HELD:
            return 200, kept.body(question)
        await self._start_listening()
        held = Held(watch, since, question, asyncio.get_running_loop().create_future())
        self._by_code.setdefault(code, set()).add(held)
        self.held += 1
        if code not in self._woken:
            self._woken[code] = asyncio.Event()
            self._watchers[code] = asyncio.ensure_future(self._watch(code))
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            await asyncio.wait({held.answered, gone}, timeout=HOLD_S, return_when="FIRST_COMPLETED")
        finally:
            gone.cancel()
            self._by_code.get(code, set()).discard(held)
            self.held -= 1
        if held.answered.done():
            return held.answered.result()
        return 200, kept.body(question)  # nothing new within HOLD_S: as it was

    def heard(self, code: str) -> None:
        """The store's listener (any thread): this process changed class `code`."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._poke, code)

    def _poke(self, code: str) -> None:
        self._forget(code)
        if (woken := self._woken.get(code)) is not None:
            woken.set()

    async def _start_listening(self) -> None:
        """Once per process, on the event loop: hear the store's changes (the store is made,
        and may touch the database, in a worker thread)."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
            if self._listen is not None:
                from starlette.concurrency import run_in_threadpool

                self._listening = asyncio.ensure_future(run_in_threadpool(self._listen, self.heard))
        if self._listening is not None and not self._listening.done():
            await asyncio.shield(self._listening)

    async def _watch(self, code: str) -> None:
        """While devices wait on `code`: read its board when this process changed it, else
        every WATCH_S, and answer every device whose watched fields moved."""
        from starlette.concurrency import run_in_threadpool

        woken = self._woken[code]
        try:
            while self._by_code.get(code):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(woken.wait(), WATCH_S)
                woken.clear()
                status, got = await run_in_threadpool(self._read, code, WATCH_S)
                self._answer(code, status, got)
        except Exception:  # the devices ask again when HOLD_S ends; the next one starts a watcher
            log.exception("pulse: watching class %s failed", code)
        finally:
            del self._woken[code], self._watchers[code]
            if not self._by_code.get(code):
                self._by_code.pop(code, None)

    def _answer(self, code: str, status: int, got: Any) -> None:
        """Answer the devices of `code` whose fields moved (all of them, with the refusal,
        when the board could not be read)."""
        held = self._by_code.get(code, set())
        if status != 200:
            moved = list(held)
        else:
            pulse = asdict(got.board.pulse)
            moved = [
                h for h in held if not got.board.pulse.open or stamp(pulse, h.watch) != h.since
            ]
        for h in moved:
            held.discard(h)
            if not h.answered.done():
                h.answered.set_result(
                    (200, got.body(h.question)) if status == 200 else (status, got)
                )


async def _disconnected(receive: Any) -> None:
    """Returns once the client has gone (a GET's empty body comes first)."""
    while (await receive())["type"] != "http.disconnect":
        pass
