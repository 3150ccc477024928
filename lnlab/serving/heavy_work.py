"""The heavy-work line: one visitor's heavy work at a time, shared by every server process.

Heavy work is the GPU page's benchmark and the training lab's runs: each takes a few seconds
of the machine. The visitor at the front of the line runs; everyone else waits in line, in
arrival order, and sees their place and about how long it will take. Pressing Run again puts a
visitor at the back of the line, so two visitors alternate instead of one keeping the front.
An owner is a visitor (their browser, lnlab.ui.line.visitor), who holds at most one place. A
long run is done in pieces: between two, Turn.share sends it to the back of the line if
anyone waits, so nobody waits for more than one piece of each visitor ahead of them; and a
piece that watches the line (Turn.yielding) is told as soon as someone waits, so it can end
after the small step under way instead (a training piece: lnlab.labs.training.worker), and the
visitor waits for that step, not for the rest of the piece.

The line lives in the app's database (its own table `heavy_work_line`, lnlab.serving.database),
so the server processes of a cluster that share one database share one line. A row per owner:
tickets give the order, `started_at` marks the front, `beat_at` is refreshed 10 times a lease by
the waiter's polling loop or the front's beat thread. Rows whose beat is older than LEASE_S are
purged, so a crashed process never blocks the line for longer than that. Waiters poll every
POLL_S (one small read), and a change made by their own process (a join, a front let go, a
turn given up) wakes them at once; joining, reaching the front and purging run one at a time
under the line's lock (SQLite: BEGIN IMMEDIATE; PostgreSQL: an advisory transaction lock).

Training runs wait in a line of their own first (`training_front`, the table `training_line`):
a run takes tens of seconds in pieces, and ten runs sharing the front piece by piece each
finished only after all ten (and a training's kept pieces could be dropped meanwhile, so none
finished: issue 38). In that line runs go one at a time, first come first, each to the end:
the run at its front then takes the heavy-work line's front piece by piece, so a benchmark
waits for one piece, never for the runs waiting to train. Each row there carries its run's
expected seconds (`cost_s`, as of `costed_at`: a waiter's beat refreshes its whole run's, the
front's what is left of it, from the pace measured so far), so a waiter is told the sum of what
is ahead of it; the line refuses a
run past MAX_TRAINING_WAITING waiting or TRAINING_MAX_WAIT_S of expected wait, and one owner
holds one place (a visitor trains one run at a time). A run in it is never sent away: it waits
for its turn however long the runs ahead take, unless its visitor leaves.

Its rows last seconds, so the tables have no migrations: each is created if missing, and a
change to one takes a new table name.
"""

from __future__ import annotations

import contextlib
import math
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
MAX_TRAINING_WAITING = 20  # training runs waiting to start, at most
TRAINING_MAX_WAIT_S = 300.0  # a run whose expected wait to start is longer is refused
# Once in that line, a run waits for its turn however long the runs ahead take (each is
# bounded: pieces of at most 30 s, lnlab.labs.training.worker, and waits between them of at most
# MAX_WAIT_S); it leaves when its visitor does.
TRAINING_PATIENCE = math.inf
HEARTBEAT_S = 0.5  # on_wait runs at least this often, so a page can notice its visitor left
TYPICAL_WEIGHT = 0.3  # weight of the newest time at the front in the running estimate
POLL_S = 0.2  # a waiter looks at the line this often (a few ms of CPU per second)
ASK_AGAIN_S = 0.005  # Turn.yielding asks again this often while its piece is not under way
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
training_table = sa.Table(
    "training_line",
    metadata,
    sa.Column("ticket", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("owner", sa.Text, nullable=False, unique=True),
    sa.Column("joined_at", sa.Float, nullable=False),
    sa.Column("started_at", sa.Float),
    sa.Column("beat_at", sa.Float, nullable=False),
    sa.Column("cost_s", sa.Float, nullable=False),  # the run's expected seconds at the front ...
    sa.Column("costed_at", sa.Float, nullable=False),  # ... from then on (the front: what is left)
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
    of one run (`_typical_s`), used to refuse waits that would pass the limit. A waiter gives
    up after `patience` times the limit (`max_wait_s`).
    """

    table = line_table
    max_wait_s = MAX_WAIT_S  # the limit on a wait unless `front` is given one

    def __init__(
        self,
        url: str,
        *,
        max_waiting: int = MAX_WAITING,
        heartbeat_s: float = HEARTBEAT_S,
        lease_s: float = LEASE_S,
        patience: float = 1.0,
    ) -> None:
        self.url = url
        self._db = Database(url)
        with self._db.write(lock=LINE_LOCK) as conn:
            metadata.create_all(conn, tables=[self.table])
        self.max_waiting = max_waiting
        self.heartbeat_s = heartbeat_s
        self.lease_s = lease_s
        self.patience = patience
        self.beat_s = lease_s / BEATS_PER_LEASE
        self._typical_s = 0.0
        # Changes this process made to the line (`_version`): they wake its waiters and
        # watchers at once (`_pause`); another process's are read at the next poll.
        self._changed = threading.Condition()
        self._version = 0

    def close(self) -> None:
        """Close the line's connections (the line stays in the database)."""
        self._db.close()

    def _notify(self) -> None:
        """The line changed (a row joined, moved or left): wake this process's waiters."""
        with self._changed:
            self._version += 1
            self._changed.notify_all()

    def _pause(self, version: int, timeout_s: float, stop: threading.Event | None = None) -> None:
        """Wait `timeout_s`, or less once this process changes the line from `version` (or
        `stop` is set, with a `_nudge`)."""
        with self._changed:
            self._changed.wait_for(
                lambda: self._version != version or (stop is not None and stop.is_set()),
                timeout_s,
            )

    def _nudge(self) -> None:
        """Wake the pauses that a stop ends (the others go back to waiting)."""
        with self._changed:
            self._changed.notify_all()

    def _key(self, owner: str) -> str:
        return f"{os.getpid()}.{_BOOT}:{owner}"

    def _live(self, now: float) -> sa.ColumnElement[bool]:
        return self.table.c.beat_at > now - self.lease_s

    def _columns(self) -> tuple[sa.Column, ...]:
        return (self.table.c.owner, self.table.c.started_at)

    def _rows(self, conn: Connection, now: float) -> list[sa.Row]:
        """The live rows, first come first: the front (if taken), then the waiters in order.
        (At most MAX_WAITING + 1 live rows: scanning them beats any index.)"""
        query = sa.select(*self._columns()).where(self._live(now))
        query = query.order_by(self.table.c.started_at.is_(None), self.table.c.ticket)
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
            conn.execute(self.table.delete().where(self.table.c.beat_at <= now - self.lease_s))
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
        self,
        owner: str,
        *,
        on_wait: OnWait | None = None,
        max_wait_s: float | None = None,
        cost: Callable[[], float] | None = None,
    ) -> Iterator[Turn]:
        """Wait in line, then stay at the front for the `with` body (the heavy work), which
        gets the Turn (to share the front between the pieces of a long run).

        `on_wait(place, expected_s)` runs on joining the line, whenever the place changes and
        at least every `heartbeat_s`; if it raises, `owner` leaves the line and the exception
        propagates. Raises BusyError if `owner` is already in line or at the front, if the line
        is full, or if the wait would pass `max_wait_s` (the line's own by default) or passes
        `patience` times it.
        `cost()`: the expected seconds at the front, where the line keeps them (TrainingLine),
        asked on joining and with each beat while waiting.
        """
        key = self._key(owner)
        max_wait_s = self.max_wait_s if max_wait_s is None else max_wait_s
        with _database_answers():
            self._enter(key, on_wait, max_wait_s, cost)
        turn = Turn(self, key, on_wait, max_wait_s)
        try:
            with self._beating(key, turn):
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
            last = conn.execute(sa.select(sa.func.max(self.table.c.ticket))).scalar() or 0
            conn.execute(
                self.table.update()
                .where(self.table.c.owner == key)
                .values(ticket=last + 1, started_at=None, beat_at=now)
            )
        self._notify()  # the next in line may step up now
        return True

    def _enter(
        self,
        key: str,
        on_wait: OnWait | None,
        max_wait_s: float,
        cost: Callable[[], float] | None,
    ) -> None:
        patience_s = self.patience * max_wait_s
        deadline = time.monotonic() + patience_s
        cost_s = cost() if cost is not None else 0.0
        if not self._join(key, max_wait_s, cost_s):  # a refusal raises before `key` has a row
            try:
                self._wait_for_turn(key, on_wait, deadline, patience_s, cost)
            except BaseException:
                self._leave(key)
                raise

    def _join(self, key: str, max_wait_s: float, cost_s: float) -> bool:
        """Join the back of the line; True when the line was empty and `key` is at the front."""
        with self._locked() as conn:
            now = time.time()
            rows = self._rows(conn, now)
            if self._place(rows, key) is not None:
                raise BusyError(self._second_place_text())
            waiting = self._waiting(rows)
            expected = self._joining_wait_s(rows, now)
            if rows and waiting >= self.max_waiting:
                raise BusyError(self._full_text(waiting, expected))
            if rows and expected > max_wait_s:
                raise BusyError(self._too_long_text(expected, max_wait_s))
            last = conn.execute(sa.select(sa.func.max(self.table.c.ticket))).scalar() or 0
            conn.execute(
                self.table.insert().values(
                    ticket=last + 1,
                    owner=key,
                    joined_at=now,
                    started_at=None if rows else now,
                    beat_at=now,
                    **self._cost_values(cost_s, now),
                )
            )
        self._notify()  # a front watching the line (Turn.yielding) learns someone waits
        return not rows

    def _joining_wait_s(self, rows: list[sa.Row], now: float) -> float:
        """About how long a newcomer would wait: a typical time for the front and each waiter."""
        return (self._waiting(rows) + 1) * self._typical_s

    def _cost_values(self, cost_s: float, now: float) -> dict[str, float]:
        """The columns that keep a row's expected seconds (none in this line)."""
        return {}

    def _second_place_text(self) -> str:
        return (
            "Your other run (from this tab or another tab of this browser) is still "
            "running or waiting in line; wait for it to finish."
        )

    def _full_text(self, waiting: int, expected_s: float) -> str:
        return (
            f"{waiting} visitors are already waiting in line for heavy work; try again in a minute."
        )

    def _too_long_text(self, expected_s: float, max_wait_s: float) -> str:
        return (
            f"The line for heavy work is about {seconds(expected_s)} long, over "
            f"the {seconds(max_wait_s)} limit; try again in a minute."
        )

    def _waited_text(self, waited_s: float, place: int) -> str:
        return (
            f"Waited {seconds(waited_s)} without reaching the front of the line "
            f"(still {ordinal(place)} in line); try again later."
        )

    def _wait_for_turn(
        self,
        key: str,
        on_wait: OnWait | None,
        deadline: float,
        max_wait_s: float,
        cost: Callable[[], float] | None = None,
    ) -> None:
        shown, shown_at, beat_at = None, float("-inf"), time.monotonic()
        while True:
            version = self._version  # before the read: a change after it ends the pause
            with self._db.read() as conn:
                rows = self._rows(conn, time.time())
            place = self._place(rows, key)
            if place is None:
                raise BusyError("Your place in line for heavy work lapsed; try again.")
            if place == 1 and rows[0].started_at is None and self._step_up(key):
                return
            now = time.monotonic()
            if now >= deadline:
                raise BusyError(self._waited_text(max_wait_s, place))
            if now - beat_at >= self.beat_s:
                self._beat(key, {} if cost is None else self._cost_values(cost(), time.time()))
                beat_at = now
            if on_wait is not None and (place != shown or now - shown_at >= self.heartbeat_s):
                on_wait(place, self.expected_s(rows, place, time.time()))
                shown, shown_at = place, time.monotonic()
            self._pause(version, max(0.0, min(POLL_S, deadline - time.monotonic())))

    def _step_up(self, key: str) -> bool:
        """Move to the free front if `key` is still first in line (checked under the lock)."""
        with self._locked() as conn:
            now = time.time()
            rows = self._rows(conn, now)
            if not rows or rows[0].owner != key or rows[0].started_at is not None:
                return False
            conn.execute(
                self.table.update()
                .where(self.table.c.owner == key)
                .values(started_at=now, beat_at=now, **self._started_values(now))
            )
        self._notify()  # the places behind it moved up
        return True

    def _started_values(self, now: float) -> dict[str, float]:
        """What else changes in a row that reaches the front (nothing in this line)."""
        return {}

    def _beat(self, key: str, values: dict[str, float] | None = None) -> None:
        """Refresh `key`'s beat, and write `values` with it."""
        values = {"beat_at": time.time(), **(values or {})}
        with self._db.write() as conn:
            conn.execute(self.table.update().where(self.table.c.owner == key).values(**values))

    def _front_values(self, turn: Turn) -> dict[str, float]:
        """What else the front's beat writes (nothing in this line)."""
        return {}

    @contextlib.contextmanager
    def _beating(self, key: str, turn: Turn) -> Iterator[None]:
        """Refresh the front's row every `beat_s` from a thread while the body runs."""
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(self.beat_s):
                with contextlib.suppress(sa.exc.SQLAlchemyError):  # try again next beat
                    self._beat(key, self._front_values(turn))

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
            conn.execute(self.table.delete().where(self.table.c.owner == key))
        self._notify()  # the front may be free, the places behind it moved up


class Turn:
    """`owner`'s time at the front of the line, for the body of HeavyWorkLine.front."""

    def __init__(
        self, line: HeavyWorkLine, key: str, on_wait: OnWait | None, max_wait_s: float
    ) -> None:
        self._line, self._key = line, key
        self._on_wait, self._max_wait_s = on_wait, max_wait_s
        self.since = time.monotonic()  # when this owner last reached the front
        self.shared = 0  # times it went to the back of the line for others
        self.left: tuple[float, float] | None = None  # (seconds left, time.time() then)

    def estimate(self, left_s: float) -> None:
        """The seconds this turn still needs, as of now: the next beat writes them where the
        line keeps them (TrainingLine), for the waiters' estimates."""
        self.left = (max(0.0, left_s), time.time())

    @contextlib.contextmanager
    def yielding(self, to: Callable[[], bool]) -> Iterator[None]:
        """For the body (a piece of a long run): call `to()` as soon as anyone waits in line
        behind this front, so the piece can end early and `share` let them go first. A waiter
        of this process is seen at once (its join wakes the watch), one of another process
        within POLL_S (the watch reads the line that often meanwhile, as a waiter does).
        `to()` says whether it could act: False (the piece's job not under way yet: the body
        is still sending it) and it is called again every ASK_AGAIN_S until True. Never after
        the body ended."""
        line, stop, lock = self._line, threading.Event(), threading.Lock()

        def ask() -> bool:
            with lock:
                return stop.is_set() or to()

        def watch() -> None:
            while not stop.is_set():
                version = line._version  # before the read: a join after it ends the pause
                try:
                    waiting = line.waiting()
                except sa.exc.SQLAlchemyError:  # read again at the next poll
                    waiting = 0
                if waiting:
                    while not ask():
                        stop.wait(ASK_AGAIN_S)
                    return
                line._pause(version, POLL_S, stop)

        thread = threading.Thread(target=watch, name="lnlab-line-watch", daemon=True)
        thread.start()
        try:
            yield
        finally:
            with lock:
                stop.set()
            line._nudge()
            thread.join(POLL_S)  # else it ends after its read, without calling `to`

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


class TrainingLine(HeavyWorkLine):
    """The line of training runs waiting to start, one at a time, each to its end (see the
    module doc). Each row keeps its run's expected seconds, so a waiter's expected wait is what
    is left of the front's run plus the runs waiting ahead of it."""

    table = training_table
    max_wait_s = TRAINING_MAX_WAIT_S

    def __init__(
        self,
        url: str,
        *,
        max_waiting: int = MAX_TRAINING_WAITING,
        heartbeat_s: float = HEARTBEAT_S,
        lease_s: float = LEASE_S,
        patience: float = TRAINING_PATIENCE,
    ) -> None:
        super().__init__(
            url,
            max_waiting=max_waiting,
            heartbeat_s=heartbeat_s,
            lease_s=lease_s,
            patience=patience,
        )

    def _columns(self) -> tuple[sa.Column, ...]:
        c = self.table.c
        return (c.owner, c.started_at, c.cost_s, c.costed_at)

    def expected_s(self, rows: list[sa.Row], place: int, now: float) -> float | None:
        """What is left of the front's run (its expected seconds less those since they were
        reckoned, at least 0) plus the expected seconds of each run waiting ahead of `place`."""
        front = rows[0] if rows and rows[0].started_at is not None else None
        left = 0.0 if front is None else max(0.0, front.cost_s - (now - front.costed_at))
        waiting = [row for row in rows if row.started_at is None]
        return left + sum(row.cost_s for row in waiting[: max(0, place - 1)])

    def _joining_wait_s(self, rows: list[sa.Row], now: float) -> float:
        return self.expected_s(rows, self._waiting(rows) + 1, now) or 0.0

    def _cost_values(self, cost_s: float, now: float) -> dict[str, float]:
        return {"cost_s": max(0.0, cost_s), "costed_at": now}

    def _started_values(self, now: float) -> dict[str, float]:
        return {"costed_at": now}  # its whole run is ahead of it from now

    def _front_values(self, turn: Turn) -> dict[str, float]:
        if turn.left is None:
            return {}
        left_s, at = turn.left
        return {"cost_s": left_s, "costed_at": at}

    def _second_place_text(self) -> str:
        return (
            "Your other training run (from this tab or another tab of this browser) is still "
            "running or waiting in line: one run at a time for each visitor; wait for it to "
            "finish."
        )

    def _full_text(self, waiting: int, expected_s: float) -> str:
        return (
            f"{waiting} runs are already waiting to train, the most the line takes (about "
            f"{seconds(expected_s)} of training ahead); try again in a few minutes, or choose "
            "settings that are already trained."
        )

    def _too_long_text(self, expected_s: float, max_wait_s: float) -> str:
        return (
            f"The line to train is about {seconds(expected_s)} long, over the "
            f"{seconds(max_wait_s)} limit; try again in a few minutes, or choose settings "
            "that are already trained."
        )

    def _waited_text(self, waited_s: float, place: int) -> str:
        return (
            f"Waited {seconds(waited_s)} in line to train without reaching the front (still "
            f"{ordinal(place)} in line); try again later."
        )


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


_lines: dict[type[HeavyWorkLine], HeavyWorkLine] = {}
_line_lock = threading.Lock()


def _shared(kind: type[HeavyWorkLine]) -> HeavyWorkLine:
    """The server's line of `kind`, in the app's database (lnlab.serving.database)."""
    url = database_url()
    with _line_lock:
        kept = _lines.get(kind)
        if kept is None or kept.url != url:
            if kept is not None:
                kept.close()
            kept = _lines[kind] = kind(url)
        return kept


def line() -> HeavyWorkLine:
    """The server's heavy-work line, in the app's database (lnlab.serving.database)."""
    return _shared(HeavyWorkLine)


def training_line() -> HeavyWorkLine:
    """The server's line of training runs waiting to start (TrainingLine)."""
    return _shared(TrainingLine)


def front(
    owner: str, *, on_wait: OnWait | None = None, max_wait_s: float = MAX_WAIT_S
) -> contextlib.AbstractContextManager[Turn]:
    """Wait in the server's heavy-work line, then stay at the front (HeavyWorkLine.front)."""
    return line().front(owner, on_wait=on_wait, max_wait_s=max_wait_s)


def place(owner: str) -> int | None:
    """`owner`'s place in the server's line: 0 at the front, 1.. waiting, None neither."""
    return line().place(owner)


def training_front(
    owner: str,
    *,
    cost: Callable[[], float],
    on_wait: OnWait | None = None,
    max_wait_s: float = TRAINING_MAX_WAIT_S,
) -> contextlib.AbstractContextManager[Turn]:
    """Wait in the server's line of training runs (a run expected to take `cost()` seconds,
    asked again with each beat while it waits), then stay at its front for the run; the Turn's
    `estimate` tells the waiters what is left."""
    return training_line().front(owner, on_wait=on_wait, max_wait_s=max_wait_s, cost=cost)


def training_place(owner: str) -> int | None:
    """`owner`'s place in the server's line of training runs (as `place`)."""
    return training_line().place(owner)
