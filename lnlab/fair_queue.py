"""A first-come queue for the server's one heavy-work slot.

The GPU page's benchmark and the training lab's runs each hold the slot for a few seconds;
everyone else waits in line, in arrival order, and sees their place. Pressing Run again puts
a visitor at the back of the line, so two visitors alternate instead of one keeping the slot.
Streamlit runs each session's script in its own thread, so the queue is a list guarded by a
threading.Condition; whoever leaves (done, failed, gave up) wakes the others.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

from lnlab.errors import BusyError

MAX_WAITING = 30  # visitors in line at most; later ones are refused at once
MAX_WAIT_S = 60.0
HEARTBEAT_S = 0.5  # on_wait runs at least this often, so a page can notice its visitor left
TYPICAL_WEIGHT = 0.3  # weight of the newest hold time in the running estimate

OnWait = Callable[[int], None]


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def seconds(s: float) -> str:
    """A duration for people: '0.05 s', '2.5 s', '60 s'."""
    return f"{s:.2g} s" if s < 10 else f"{s:.0f} s"


def waiting_text(place: int) -> str:
    """What a waiting visitor reads: 'You are 2nd in line ...'."""
    ahead = "the current run" if place == 1 else f"the current run and {place - 1} more"
    return f"You are {ordinal(place)} in line for the server's benchmark slot (after {ahead})."


class FairQueue:
    """One slot, a line of owners waiting for it in arrival order.

    Invariants (under `_cond`): `_holder` is the owner holding the slot or None; `_line` holds
    the waiting owners, first = next; an owner appears at most once in either.
    """

    def __init__(self, max_waiting: int = MAX_WAITING, heartbeat_s: float = HEARTBEAT_S) -> None:
        self._cond = threading.Condition()
        self._holder: str | None = None
        self._line: list[str] = []
        self._typical_s = 0.0  # running estimate of one hold, for refusing hopeless waits
        self.max_waiting = max_waiting
        self.heartbeat_s = heartbeat_s

    def place(self, owner: str) -> int | None:
        """0 while `owner` holds the slot, 1.. while waiting (1 = next), None otherwise."""
        with self._cond:
            if owner == self._holder:
                return 0
            return self._line.index(owner) + 1 if owner in self._line else None

    def waiting(self) -> int:
        """How many owners are in line (not counting the holder)."""
        with self._cond:
            return len(self._line)

    @contextlib.contextmanager
    def turn(
        self, owner: str, *, on_wait: OnWait | None = None, max_wait_s: float = MAX_WAIT_S
    ) -> Iterator[None]:
        """Hold the slot for the `with` body, after waiting for `owner`'s first-come turn.

        `on_wait(place)` runs (outside the lock) on joining the line, whenever the place
        changes and at least every `heartbeat_s`; if it raises, `owner` leaves the line and
        the exception propagates. Raises BusyError if `owner` already holds or awaits a turn,
        if the line is full, or if the wait would pass (or passes) `max_wait_s`.
        """
        self._enter(owner, on_wait, max_wait_s)
        start = time.monotonic()
        try:
            yield
        finally:
            self._leave(owner, time.monotonic() - start)

    def _enter(self, owner: str, on_wait: OnWait | None, max_wait_s: float) -> None:
        deadline = time.monotonic() + max_wait_s
        with self._cond:
            if owner == self._holder or owner in self._line:
                raise BusyError("Your previous run is still running or waiting; wait for it.")
            if self._holder is None and not self._line:
                self._holder = owner
                return
            if len(self._line) >= self.max_waiting:
                raise BusyError(
                    f"{len(self._line)} visitors are already waiting for the benchmark slot; "
                    "try again in a minute."
                )
            expected = (len(self._line) + 1) * self._typical_s
            if expected > max_wait_s:
                raise BusyError(
                    f"The line for the benchmark slot is about {seconds(expected)} long, over "
                    f"the {seconds(max_wait_s)} limit; try again in a minute."
                )
            self._line.append(owner)
        try:
            self._wait_for_turn(owner, on_wait, deadline, max_wait_s)
        except BaseException:
            with self._cond:
                if owner in self._line:
                    self._line.remove(owner)
                    self._cond.notify_all()
            raise

    def _wait_for_turn(
        self, owner: str, on_wait: OnWait | None, deadline: float, max_wait_s: float
    ) -> None:
        shown, shown_at = None, float("-inf")
        while True:
            with self._cond:
                if self._holder is None and self._line[0] == owner:
                    self._line.pop(0)
                    self._holder = owner
                    return
                place = self._line.index(owner) + 1
                now = time.monotonic()
                if now >= deadline:
                    raise BusyError(
                        f"Waited {seconds(max_wait_s)} without reaching the benchmark slot "
                        f"(still {ordinal(place)} in line); try again later."
                    )
                if place == shown and now - shown_at < self.heartbeat_s:
                    self._cond.wait(min(deadline - now, shown_at + self.heartbeat_s - now))
                    continue
            if on_wait is not None:
                on_wait(place)
            shown, shown_at = place, time.monotonic()

    def _leave(self, owner: str, held_s: float) -> None:
        with self._cond:
            if self._holder == owner:
                self._holder = None
                w = TYPICAL_WEIGHT
                self._typical_s = (
                    held_s if not self._typical_s else (1 - w) * self._typical_s + w * held_s
                )
            self._cond.notify_all()


_SLOT = FairQueue()  # the server process's one heavy-work slot


def turn(
    owner: str, *, on_wait: OnWait | None = None, max_wait_s: float = MAX_WAIT_S
) -> contextlib.AbstractContextManager[None]:
    """Wait for `owner`'s first-come turn at the server's heavy-work slot (FairQueue.turn)."""
    return _SLOT.turn(owner, on_wait=on_wait, max_wait_s=max_wait_s)


def place(owner: str) -> int | None:
    """`owner`'s place at the server's slot: 0 holding, 1.. waiting, None neither."""
    return _SLOT.place(owner)
