"""Which session's run goes next when a server process is busy: the least served first.

One Python process runs its scripts on one interpreter lock: with twenty runs under way, each
takes as long as the twenty together. A flood of reruns from one address (a script driving 20
open sessions, each within its own pace, lnlab.serving.pace) then slowed every other visitor's
page about twentyfold, and HAProxy cannot see it: the runs are messages inside open websockets.

FairShare lets `at_once` runs go at a time and queues the others. A free turn goes to the
waiter that would have come first if each had come as much later as it has used lately:

    place = arrived + usage(address) + max(0, usage(session) - allowance) + later_s,
    usage = Σ cpu seconds · 2^(-age / half_life)

so a visitor from another address goes before a flood's next run (its address has used tens of
seconds), a student behind the same school router as a flooding classmate before the flooding
session, the sessions within the allowance (a student clicking through a lesson, a teacher
pressing Next five times a second) in the order they came, and a run that only redraws what a
class shows (`later_s`: a pulse's) behind the clicks of the last few seconds, never longer.
Whoever waits long enough goes: nobody is shut out for good, a flood included.
While a run waits, the requests its session sends merge into it in Streamlit (one rerun per
session), so a flood's waiting costs little. Nobody waits on a stalled run: a turn held longer
than `hold_s` (a run waiting for the database or for heavy work) stops counting, and the next
waiter goes; nobody polls it meanwhile.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

AT_ONCE = 1  # runs at a time: more share the interpreter lock and only finish later together
HOLD_S = 0.5  # a turn held longer than this no longer keeps the next waiter out
HALF_LIFE_S = 10.0  # usage halves in this time
ALLOWANCE_S = 2.0  # a session's usage that counts as none: about 14 % of a core kept up (a
# session flooding at its pace, lnlab.serving.pace, keeps 3-7 s; a student stepping through a
# lesson about 0.4; a teacher pressing Next five times a second about 1.1)
REDRAW_LATER_S = 3.0  # a run that only redraws what a class shows goes as if it came this late
FORGET_BELOW_S = 1e-4  # usage under this is dropped with its owner (bounded memory)


@dataclass
class Usage:
    """Processor seconds, decaying: value · 2^(-(now - stamp) / half_life)."""

    half_life_s: float
    value: float = 0.0
    stamp: float = 0.0

    def at(self, now: float) -> float:
        return self.value * 0.5 ** (max(0.0, now - self.stamp) / self.half_life_s)

    def add(self, now: float, seconds: float) -> None:
        self.value, self.stamp = self.at(now) + seconds, now


@dataclass
class _Waiter:
    thread: int
    session: Hashable
    address: Hashable
    arrived: float  # plus later_s
    order: int
    admitted: threading.Event = field(default_factory=threading.Event)


@dataclass
class _Turn:
    session: Hashable
    address: Hashable
    since: float
    cpu_at_start: float | None = None


class FairShare:
    """Turns to run, the least served first; `take` before a run, `give_back` after it, from
    the run's own thread. A thread that already holds a turn takes none."""

    def __init__(
        self,
        at_once: int = AT_ONCE,
        hold_s: float = HOLD_S,
        half_life_s: float = HALF_LIFE_S,
        allowance_s: float = ALLOWANCE_S,
        clock: Callable[[], float] = time.monotonic,
        cpu: Callable[[], float] = time.thread_time,
        thread: Callable[[], int] = threading.get_ident,
    ) -> None:
        self.at_once, self.hold_s, self.half_life_s = at_once, hold_s, half_life_s
        self.allowance_s = allowance_s
        self._clock, self._cpu, self._thread = clock, cpu, thread
        self._lock = threading.Lock()
        self._waiting: list[_Waiter] = []
        self._turns: dict[int, _Turn] = {}  # thread -> its turn
        self._usage: dict[Hashable, Usage] = {}  # ("address", a) / ("session", s) -> usage
        self._order = itertools.count()
        self._forgot_at = float("-inf")

    def take(
        self,
        session: Hashable,
        address: Hashable,
        later_s: float = 0.0,
        arrived: float | None = None,
    ) -> float:
        """Wait for this thread's turn, placed as if it came `later_s` after `arrived` (now,
        unless the run goes on from an earlier one that kept its place); the seconds waited.
        The thread that takes a turn gives it back."""
        me, start = self._thread(), self._clock()
        with self._lock:
            if me in self._turns:
                return 0.0
            came = start if arrived is None else min(arrived, start)
            waiter = _Waiter(me, session, address, came + later_s, next(self._order))
            self._waiting.append(waiter)
            self._admit(start)
        while not waiter.admitted.wait(self._until_a_turn_lapses()):
            with self._lock:
                self._admit(self._clock())
        with self._lock:
            self._turns[me].cpu_at_start = self._cpu()
        return self._clock() - start

    def give_back(self) -> None:
        """End this thread's turn (none held: nothing), charging its processor time."""
        with self._lock:
            turn = self._turns.pop(self._thread(), None)
            if turn is None:
                return
            now = self._clock()
            used = max(0.0, self._cpu() - (turn.cpu_at_start or 0.0))
            for owner in (("address", turn.address), ("session", turn.session)):
                self._usage.setdefault(owner, Usage(self.half_life_s)).add(now, used)
            self._forget(now)
            self._admit(now)

    def holding(self) -> bool:
        """Does this thread hold a turn?"""
        with self._lock:
            return self._thread() in self._turns

    def waiting(self) -> int:
        """Runs waiting for a turn now."""
        with self._lock:
            return len(self._waiting)

    def held(self) -> int:
        """Turns held now (lapsed ones too)."""
        with self._lock:
            return len(self._turns)

    def usage(self, session: Hashable, address: Hashable) -> tuple[float, float]:
        """Processor seconds used lately by `session` and by `address`."""
        with self._lock:
            now = self._clock()
            return self._used(("session", session), now), self._used(("address", address), now)

    def _place(self, waiter: _Waiter, now: float) -> float:
        """When `waiter` would have come: arrived + usage(address)
        + max(0, usage(session) - allowance) (+ later_s, in arrived)."""
        over = self._used(("session", waiter.session), now) - self.allowance_s
        return waiter.arrived + self._used(("address", waiter.address), now) + max(0.0, over)

    def _used(self, owner: tuple[str, Hashable], now: float) -> float:
        return self._usage[owner].at(now) if owner in self._usage else 0.0

    def _admit(self, now: float) -> None:
        """Give free turns to the least served waiters (under the lock); a turn counts from
        its admission, before its thread wakes."""
        busy = sum(1 for t in self._turns.values() if now - t.since < self.hold_s)
        while busy < self.at_once and self._waiting:
            best = min(self._waiting, key=lambda w: (self._place(w, now), w.order))
            self._waiting.remove(best)
            self._turns[best.thread] = _Turn(best.session, best.address, now)
            best.admitted.set()
            busy += 1

    def _until_a_turn_lapses(self) -> float:
        """Seconds until the next turn that still counts stops counting (at least 1 ms; turns
        that already lapsed are not waited for, so a stalled run costs waiters nothing)."""
        with self._lock:
            now = self._clock()
            ends = [t.since + self.hold_s - now for t in self._turns.values()]
        return max(0.001, min((e for e in ends if e > 0), default=self.hold_s))

    def _forget(self, now: float) -> None:
        """Drop the owners whose usage has worn off: past 256 of them, at most once a second."""
        if len(self._usage) > 256 and now - self._forgot_at >= 1.0:
            self._forgot_at = now
            for owner in [o for o, u in self._usage.items() if u.at(now) < FORGET_BELOW_S]:
                del self._usage[owner]
