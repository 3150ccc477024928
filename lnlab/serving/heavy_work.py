"""A first-come queue for the server's one heavy-work slot, shared by every server process.

The GPU page's benchmark and the training lab's runs each hold the slot for a few seconds;
everyone else waits in line, in arrival order, and sees their place. Pressing Run again puts
a visitor at the back of the line, so two visitors alternate instead of one keeping the slot.

The line lives in the class store's database (table `heavy_line`, lnlab.classroom.store), so
the server processes of a cluster that share one database share one slot. A row per owner:
tickets give the order, `started_at` marks the holder, `beat_at` is refreshed 10 times a lease by
the waiter's polling loop or the holder's beat thread. Rows whose beat is older than LEASE_S
are purged, so a crashed process never blocks the line for longer than that. Waiters poll
every POLL_S (one small read); joining, claiming the slot and purging run one at a time under
the line's lock (SQLite: BEGIN IMMEDIATE; PostgreSQL: an advisory transaction lock).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from lnlab.classroom.store import ClassStore, default_store, heavy_line
from lnlab.core.errors import BusyError
from lnlab.serving.database import LINE_LOCK, Database

MAX_WAITING = 30  # visitors in line at most; later ones are refused at once
MAX_WAIT_S = 60.0  # the longest a visitor waits in line (by default)
HEARTBEAT_S = 0.5  # on_wait runs at least this often, so a page can notice its visitor left
TYPICAL_WEIGHT = 0.3  # weight of the newest hold time in the running estimate
POLL_S = 0.2  # a waiter looks at the line this often (a few ms of CPU per second)
LEASE_S = 10.0  # a row not refreshed for this long belongs to a dead process and is purged
BEATS_PER_LEASE = 10  # waiters and the holder refresh their row's beat_at this often
_BOOT = secrets.token_hex(4)  # with the pid, tells this process's owners from other servers'

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
    """One slot, a line of owners waiting for it in arrival order, in `store`'s database.

    The queue has its own connections to that database (the store ran the migrations that
    made its table; the store's methods stay the classes' only way in). An owner name is
    scoped to this process (its pid and a random tag), so two server
    processes' session ids never meet. Hold times feed this process's running estimate of
    one hold (`_typical_s`), used to refuse waits that would pass the limit.
    """

    def __init__(
        self,
        store: ClassStore,
        *,
        max_waiting: int = MAX_WAITING,
        heartbeat_s: float = HEARTBEAT_S,
        lease_s: float = LEASE_S,
    ) -> None:
        self.store = store
        self._db = Database(store.url)
        self.max_waiting = max_waiting
        self.heartbeat_s = heartbeat_s
        self.lease_s = lease_s
        self.beat_s = lease_s / BEATS_PER_LEASE
        self._typical_s = 0.0

    def close(self) -> None:
        """Close the queue's connections (the line stays in the database)."""
        self._db.close()

    def _key(self, owner: str) -> str:
        return f"{os.getpid()}.{_BOOT}:{owner}"

    def _live(self, now: float) -> sa.ColumnElement[bool]:
        return heavy_line.c.beat_at > now - self.lease_s

    def _rows(self, conn: Connection, now: float) -> list[sa.Row]:
        """The live rows, first come first: the holder (if any), then the waiters in order.
        (At most MAX_WAITING + 1 live rows: scanning them beats any index.)"""
        query = sa.select(heavy_line.c.owner, heavy_line.c.started_at).where(self._live(now))
        query = query.order_by(heavy_line.c.started_at.is_(None), heavy_line.c.ticket)
        return list(conn.execute(query))

    @staticmethod
    def _waiting(rows: list[sa.Row]) -> int:
        """How many of the live rows wait (all but the holder)."""
        return sum(row.started_at is None for row in rows)

    @staticmethod
    def _place(rows: list[sa.Row], key: str) -> int | None:
        waiting = [row.owner for row in rows if row.started_at is None]
        if key in waiting:
            return waiting.index(key) + 1
        return 0 if any(row.owner == key for row in rows) else None

    @contextlib.contextmanager
    def _locked(self) -> Iterator[Connection]:
        """A write transaction holding the line's lock, with dead owners' rows purged."""
        with self._db.write(lock=LINE_LOCK) as conn:
            now = time.time()
            conn.execute(heavy_line.delete().where(heavy_line.c.beat_at <= now - self.lease_s))
            yield conn

    def place(self, owner: str) -> int | None:
        """0 while `owner` holds the slot, 1.. while waiting (1 = next), None otherwise."""
        with self._db.read() as conn:
            return self._place(self._rows(conn, time.time()), self._key(owner))

    def waiting(self) -> int:
        """How many owners are in line (not counting the holder), in every process."""
        with self._db.read() as conn:
            return self._waiting(self._rows(conn, time.time()))

    @contextlib.contextmanager
    def turn(
        self, owner: str, *, on_wait: OnWait | None = None, max_wait_s: float = MAX_WAIT_S
    ) -> Iterator[None]:
        """Hold the slot for the `with` body, after waiting for `owner`'s first-come turn.

        `on_wait(place)` runs on joining the line, whenever the place changes and at least
        every `heartbeat_s`; if it raises, `owner` leaves the line and the exception
        propagates. Raises BusyError if `owner` already holds or awaits a turn, if the line is
        full, or if the wait would pass (or passes) `max_wait_s`.
        """
        key = self._key(owner)
        try:
            self._enter(key, on_wait, max_wait_s)
        except sa.exc.OperationalError as err:  # the database is down or unreachable
            raise BusyError(
                "The line for the benchmark slot is unavailable (its database did not answer); "
                "try again in a minute."
            ) from err
        start = time.monotonic()
        try:
            with self._beating(key):
                yield
        finally:
            with contextlib.suppress(sa.exc.OperationalError):  # else the lease drops the row
                self._leave(key, time.monotonic() - start)

    def _enter(self, key: str, on_wait: OnWait | None, max_wait_s: float) -> None:
        deadline = time.monotonic() + max_wait_s
        if not self._join(key, max_wait_s):  # a refusal raises before `key` has a row
            try:
                self._wait_for_turn(key, on_wait, deadline, max_wait_s)
            except BaseException:
                self._leave(key)
                raise

    def _join(self, key: str, max_wait_s: float) -> bool:
        """Join the back of the line; True when the slot was free and is now `key`'s."""
        with self._locked() as conn:
            now = time.time()
            rows = self._rows(conn, now)
            if self._place(rows, key) is not None:
                raise BusyError("Your previous run is still running or waiting; wait for it.")
            waiting = self._waiting(rows)
            if rows and waiting >= self.max_waiting:
                raise BusyError(
                    f"{waiting} visitors are already waiting for the benchmark slot; "
                    "try again in a minute."
                )
            expected = (waiting + 1) * self._typical_s
            if rows and expected > max_wait_s:
                raise BusyError(
                    f"The line for the benchmark slot is about {seconds(expected)} long, over "
                    f"the {seconds(max_wait_s)} limit; try again in a minute."
                )
            last = conn.execute(sa.select(sa.func.max(heavy_line.c.ticket))).scalar() or 0
            conn.execute(
                heavy_line.insert().values(
                    ticket=last + 1,
                    owner=key,
                    joined_at=now,
                    started_at=None if rows else now,
                    beat_at=now,
                )
            )
            return not rows

    def _wait_for_turn(
        self, key: str, on_wait: OnWait | None, deadline: float, max_wait_s: float
    ) -> None:
        shown, shown_at, beat_at = None, float("-inf"), time.monotonic()
        while True:
            with self._db.read() as conn:
                rows = self._rows(conn, time.time())
            place = self._place(rows, key)
            if place is None:
                raise BusyError("Your place in line for the benchmark slot lapsed; try again.")
            if place == 1 and rows[0].started_at is None and self._claim(key):
                return
            now = time.monotonic()
            if now >= deadline:
                raise BusyError(
                    f"Waited {seconds(max_wait_s)} without reaching the benchmark slot "
                    f"(still {ordinal(place)} in line); try again later."
                )
            if now - beat_at >= self.beat_s:
                self._beat(key)
                beat_at = now
            if on_wait is not None and (place != shown or now - shown_at >= self.heartbeat_s):
                on_wait(place)
                shown, shown_at = place, time.monotonic()
            time.sleep(max(0.0, min(POLL_S, deadline - time.monotonic())))

    def _claim(self, key: str) -> bool:
        """Take the free slot if `key` is still first in line (checked under the lock)."""
        with self._locked() as conn:
            now = time.time()
            rows = self._rows(conn, now)
            if not rows or rows[0].owner != key or rows[0].started_at is not None:
                return False
            conn.execute(
                heavy_line.update()
                .where(heavy_line.c.owner == key)
                .values(started_at=now, beat_at=now)
            )
            return True

    def _beat(self, key: str) -> None:
        with self._db.write() as conn:
            conn.execute(
                heavy_line.update().where(heavy_line.c.owner == key).values(beat_at=time.time())
            )

    @contextlib.contextmanager
    def _beating(self, key: str) -> Iterator[None]:
        """Refresh the holder's row every `beat_s` from a thread while the body runs."""
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(self.beat_s):
                with contextlib.suppress(sa.exc.SQLAlchemyError):  # try again next beat
                    self._beat(key)

        thread = threading.Thread(target=beat, name="lnlab-slot-beat", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def _leave(self, key: str, held_s: float | None = None) -> None:
        """Delete `key`'s row (the slot or the place in line); a hold updates the estimate."""
        if held_s is not None:
            w = TYPICAL_WEIGHT
            self._typical_s = (
                held_s if not self._typical_s else (1 - w) * self._typical_s + w * held_s
            )
        with self._db.write() as conn:
            conn.execute(heavy_line.delete().where(heavy_line.c.owner == key))


_slot: FairQueue | None = None
_slot_lock = threading.Lock()


def slot() -> FairQueue:
    """The server's heavy-work slot, in the process-wide class store's database."""
    global _slot
    store = default_store()
    with _slot_lock:
        if _slot is None or _slot.store is not store:
            if _slot is not None:
                _slot.close()
            _slot = FairQueue(store)
        return _slot


def turn(
    owner: str, *, on_wait: OnWait | None = None, max_wait_s: float = MAX_WAIT_S
) -> contextlib.AbstractContextManager[None]:
    """Wait for `owner`'s first-come turn at the server's heavy-work slot (FairQueue.turn)."""
    return slot().turn(owner, on_wait=on_wait, max_wait_s=max_wait_s)


def place(owner: str) -> int | None:
    """`owner`'s place at the server's slot: 0 holding, 1.. waiting, None neither."""
    return slot().place(owner)
