"""The heavy-work line: one visitor's heavy work at a time, shared by every server process.

Heavy work is the GPU page's benchmark and the training lab's runs: each takes a few seconds
of the machine. The visitor at the front of the line runs; everyone else waits in line, in
arrival order, and sees their place and about how long it will take. Pressing Run again puts a
visitor at the back of the line, so two visitors alternate instead of one keeping the front.
An owner is a visitor (their browser, lnlab.ui.line.visitor), who holds at most one place. A
long run is done in pieces: between two, Turn.share sends it to the back of the line if
anyone waits, so nobody waits for more than one piece of each visitor ahead of them.

The line lives in the app's database (its own table `heavy_work_line`, lnlab.serving.database),
so the server processes of a cluster that share one database share one line. A row per owner:
tickets give the order, `started_at` marks the front, `beat_at` is refreshed 10 times a lease by
the waiter's polling loop or the front's beat thread. Rows whose beat is older than LEASE_S are
purged, so a crashed process never blocks the line for longer than that. Waiters poll every
POLL_S (one small read); joining, reaching the front and purging run one at a time under the
line's lock (SQLite: BEGIN IMMEDIATE; PostgreSQL: an advisory transaction lock).

Its rows last seconds, so the table has no migrations: it is created if missing, and a change
to it takes a new table name.
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

from lnlab.core.errors import BusyError
from lnlab.serving.database import LINE_LOCK, Database, database_url

MAX_WAITING = 30  # visitors in line at most; later ones are refused at once
MAX_WAIT_S = 60.0  # the longest a visitor waits in line (by default)
HEARTBEAT_S = 0.5  # on_wait runs at least this often, so a page can notice its visitor left
TYPICAL_WEIGHT = 0.3  # weight of the newest time at the front in the running estimate
POLL_S = 0.2  # a waiter looks at the line this often (a few ms of CPU per second)
LEASE_S = 10.0  # a row not refreshed for this long belongs to a dead process and is purged
BEATS_PER_LEASE = 10  # waiters and the front refresh their row's beat_at this often
_BOOT = secrets.token_hex(4)  # with the pid, tells this process's owners from other servers'

OnWait = Callable[[int, "float | None"], None]  # place (1 = next), seconds to wait (or None)

metadata = sa.MetaData()
line_table = sa.Table(
    "heavy_work_line",
    metadata,
    sa.Column("ticket", sa.Integer, primary_key=True, autoincrement=False),  # MAX + 1, locked
    sa.Column("owner", sa.Text, nullable=False, unique=True),
    sa.Column("joined_at", sa.Float, nullable=False),
    sa.Column("started_at", sa.Float),  # NULL while waiting; set on reaching the front
    sa.Column("beat_at", sa.Float, nullable=False),
)


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def seconds(s: float) -> str:
    """A duration for people: '0.05 s', '2.5 s', '60 s'."""
    return f"{s:.2g} s" if s < 10 else f"{s:.0f} s"


def waiting_text(place: int, expected_s: float | None = None) -> str:
    """What a waiting visitor reads: 'You are 2nd in line ..., about 5 s to wait.'."""
    ahead = "the current run" if place == 1 else f"the current run and {place - 1} more"
    text = f"You are {ordinal(place)} in line for the server's heavy work (after {ahead})"
    if expected_s is None:
        return text + "."
    return f"{text}, about {seconds(max(expected_s, 1.0))} to wait."


class HeavyWorkLine:
    """The line of owners waiting, in arrival order, to run heavy work, in the database at `url`.

    An owner name is scoped to this process (its pid and a random tag), so two server
    processes' session ids never meet. Times at the front feed this process's running estimate
    of one run (`_typical_s`), used to refuse waits that would pass the limit.
    """

    def __init__(
        self,
        url: str,
        *,
        max_waiting: int = MAX_WAITING,
        heartbeat_s: float = HEARTBEAT_S,
        lease_s: float = LEASE_S,
    ) -> None:
        self.url = url
        self._db = Database(url)
        with self._db.write(lock=LINE_LOCK) as conn:
            metadata.create_all(conn)
        self.max_waiting = max_waiting
        self.heartbeat_s = heartbeat_s
        self.lease_s = lease_s
        self.beat_s = lease_s / BEATS_PER_LEASE
        self._typical_s = 0.0

    def close(self) -> None:
        """Close the line's connections (the line stays in the database)."""
        self._db.close()

    def _key(self, owner: str) -> str:
        return f"{os.getpid()}.{_BOOT}:{owner}"

    def _live(self, now: float) -> sa.ColumnElement[bool]:
        return line_table.c.beat_at > now - self.lease_s

    def _rows(self, conn: Connection, now: float) -> list[sa.Row]:
        """The live rows, first come first: the front (if taken), then the waiters in order.
        (At most MAX_WAITING + 1 live rows: scanning them beats any index.)"""
        query = sa.select(line_table.c.owner, line_table.c.started_at).where(self._live(now))
        query = query.order_by(line_table.c.started_at.is_(None), line_table.c.ticket)
        return list(conn.execute(query))

    @staticmethod
    def _waiting(rows: list[sa.Row]) -> int:
        """How many of the live rows wait (all but the front)."""
        return sum(row.started_at is None for row in rows)

    def expected_s(self, rows: list[sa.Row], place: int, now: float) -> float | None:
        """About how long the waiter at `place` will wait: what is left of the front's typical
        time at the front, plus a typical time for each waiter ahead; None before this
        process has seen a turn end."""
        if not self._typical_s:
            return None
        front = rows[0].started_at if rows else None
        left = self._typical_s if front is None else max(0.0, self._typical_s - (now - front))
        return left + (place - 1) * self._typical_s

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
            conn.execute(line_table.delete().where(line_table.c.beat_at <= now - self.lease_s))
            yield conn

    def place(self, owner: str) -> int | None:
        """0 while `owner` is at the front, 1.. while waiting (1 = next), None otherwise."""
        with self._db.read() as conn:
            return self._place(self._rows(conn, time.time()), self._key(owner))

    def waiting(self) -> int:
        """How many owners are waiting (not counting the front), in every process."""
        with self._db.read() as conn:
            return self._waiting(self._rows(conn, time.time()))

    @contextlib.contextmanager
    def front(
        self, owner: str, *, on_wait: OnWait | None = None, max_wait_s: float = MAX_WAIT_S
    ) -> Iterator[Turn]:
        """Wait in line, then stay at the front for the `with` body (the heavy work), which
        gets the Turn (to share the front between the pieces of a long run).

        `on_wait(place, expected_s)` runs on joining the line, whenever the place changes and
        at least every `heartbeat_s`; if it raises, `owner` leaves the line and the exception
        propagates. Raises BusyError if `owner` is already in line or at the front, if the line
        is full, or if the wait would pass (or passes) `max_wait_s`.
        """
        key = self._key(owner)
        with _database_answers():
            self._enter(key, on_wait, max_wait_s)
        turn = Turn(self, key, on_wait, max_wait_s)
        try:
            with self._beating(key):
                yield turn
        finally:
            with contextlib.suppress(sa.exc.OperationalError):  # else the lease drops the row
                self._leave(key, time.monotonic() - turn.since)

    def _requeue(self, key: str) -> bool:
        """Move `key` from the front to the back of the line if anyone waits (True), else
        leave it at the front (False)."""
        with self._locked() as conn:
            now = time.time()
            if not self._waiting(self._rows(conn, now)):
                return False
            last = conn.execute(sa.select(sa.func.max(line_table.c.ticket))).scalar() or 0
            conn.execute(
                line_table.update()
                .where(line_table.c.owner == key)
                .values(ticket=last + 1, started_at=None, beat_at=now)
            )
            return True

    def _enter(self, key: str, on_wait: OnWait | None, max_wait_s: float) -> None:
        deadline = time.monotonic() + max_wait_s
        if not self._join(key, max_wait_s):  # a refusal raises before `key` has a row
            try:
                self._wait_for_turn(key, on_wait, deadline, max_wait_s)
            except BaseException:
                self._leave(key)
                raise

    def _join(self, key: str, max_wait_s: float) -> bool:
        """Join the back of the line; True when the line was empty and `key` is at the front."""
        with self._locked() as conn:
            now = time.time()
            rows = self._rows(conn, now)
            if self._place(rows, key) is not None:
                raise BusyError(
                    "Your other run (from this tab or another tab of this browser) is still "
                    "running or waiting in line; wait for it to finish."
                )
            waiting = self._waiting(rows)
            if rows and waiting >= self.max_waiting:
                raise BusyError(
                    f"{waiting} visitors are already waiting in line for heavy work; "
                    "try again in a minute."
                )
            expected = (waiting + 1) * self._typical_s
            if rows and expected > max_wait_s:
                raise BusyError(
                    f"The line for heavy work is about {seconds(expected)} long, over "
                    f"the {seconds(max_wait_s)} limit; try again in a minute."
                )
            last = conn.execute(sa.select(sa.func.max(line_table.c.ticket))).scalar() or 0
            conn.execute(
                line_table.insert().values(
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
                raise BusyError("Your place in line for heavy work lapsed; try again.")
            if place == 1 and rows[0].started_at is None and self._step_up(key):
                return
            now = time.monotonic()
            if now >= deadline:
                raise BusyError(
                    f"Waited {seconds(max_wait_s)} without reaching the front of the line "
                    f"(still {ordinal(place)} in line); try again later."
                )
            if now - beat_at >= self.beat_s:
                self._beat(key)
                beat_at = now
            if on_wait is not None and (place != shown or now - shown_at >= self.heartbeat_s):
                on_wait(place, self.expected_s(rows, place, time.time()))
                shown, shown_at = place, time.monotonic()
            time.sleep(max(0.0, min(POLL_S, deadline - time.monotonic())))

    def _step_up(self, key: str) -> bool:
        """Move to the free front if `key` is still first in line (checked under the lock)."""
        with self._locked() as conn:
            now = time.time()
            rows = self._rows(conn, now)
            if not rows or rows[0].owner != key or rows[0].started_at is not None:
                return False
            conn.execute(
                line_table.update()
                .where(line_table.c.owner == key)
                .values(started_at=now, beat_at=now)
            )
            return True

    def _beat(self, key: str) -> None:
        with self._db.write() as conn:
            conn.execute(
                line_table.update().where(line_table.c.owner == key).values(beat_at=time.time())
            )

    @contextlib.contextmanager
    def _beating(self, key: str) -> Iterator[None]:
        """Refresh the front's row every `beat_s` from a thread while the body runs."""
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(self.beat_s):
                with contextlib.suppress(sa.exc.SQLAlchemyError):  # try again next beat
                    self._beat(key)

        thread = threading.Thread(target=beat, name="lnlab-line-beat", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def _held(self, held_s: float) -> None:
        """Fold one time at the front into the running estimate of a turn."""
        w = TYPICAL_WEIGHT
        self._typical_s = held_s if not self._typical_s else (1 - w) * self._typical_s + w * held_s

    def _leave(self, key: str, held_s: float | None = None) -> None:
        """Delete `key`'s row (at the front or in line); time at the front updates the estimate."""
        if held_s is not None:
            self._held(held_s)
        with self._db.write() as conn:
            conn.execute(line_table.delete().where(line_table.c.owner == key))


class Turn:
    """`owner`'s time at the front of the line, for the body of HeavyWorkLine.front."""

    def __init__(
        self, line: HeavyWorkLine, key: str, on_wait: OnWait | None, max_wait_s: float
    ) -> None:
        self._line, self._key = line, key
        self._on_wait, self._max_wait_s = on_wait, max_wait_s
        self.since = time.monotonic()  # when this owner last reached the front
        self.shared = 0  # times it went to the back of the line for others

    def share(self) -> None:
        """Between two pieces of a long run: if anyone waits, go to the back of the line and
        wait for the front again (on_wait meanwhile, as on joining); else keep the front.

        Raises BusyError when the wait passes max_wait_s, and what on_wait raises; the owner
        then leaves the line (front's `finally`)."""
        with _database_answers():
            if not self._line._requeue(self._key):
                return
            self._line._held(time.monotonic() - self.since)
            self.shared += 1
            deadline = time.monotonic() + self._max_wait_s
            self._line._wait_for_turn(self._key, self._on_wait, deadline, self._max_wait_s)
        self.since = time.monotonic()


@contextlib.contextmanager
def _database_answers() -> Iterator[None]:
    """A database that is down or unreachable as a BusyError that says so."""
    try:
        yield
    except sa.exc.OperationalError as err:
        raise BusyError(
            "The line for heavy work is unavailable (its database did not answer); "
            "try again in a minute."
        ) from err


_line: HeavyWorkLine | None = None
_line_lock = threading.Lock()


def line() -> HeavyWorkLine:
    """The server's heavy-work line, in the app's database (lnlab.serving.database)."""
    global _line
    url = database_url()
    with _line_lock:
        if _line is None or _line.url != url:
            if _line is not None:
                _line.close()
            _line = HeavyWorkLine(url)
        return _line


def front(
    owner: str, *, on_wait: OnWait | None = None, max_wait_s: float = MAX_WAIT_S
) -> contextlib.AbstractContextManager[Turn]:
    """Wait in the server's heavy-work line, then stay at the front (HeavyWorkLine.front)."""
    return line().front(owner, on_wait=on_wait, max_wait_s=max_wait_s)


def place(owner: str) -> int | None:
    """`owner`'s place in the server's line: 0 at the front, 1.. waiting, None neither."""
    return line().place(owner)
