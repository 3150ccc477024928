"""The class store: live classes, their students, questions and answers, in a real database.

SQLite in a file by default (`.lnlab-data/classes.db` under the repository root, nothing to set
up); PostgreSQL when `LNLAB_DATABASE_URL` (or the `url` argument) names one, which several
server processes can share. SQLAlchemy Core speaks to both; psycopg 3 is the PostgreSQL driver.

Rules the store enforces, whoever calls it:
- a class code is 9 characters of a 30-character alphabet (44 bits from `secrets`); typed codes
  are normalised (case, spaces, dashes) and a malformed, unknown or ended code gets a message;
- the teacher's actions need the class's teacher secret (only its SHA-256 is stored);
- a student answers each question once, the first answer counts; the group and correctness come
  from the stored question; no method returns another student's answer;
- a class closes when its teacher ends it, after `IDLE_HOURS` without teacher activity, and
  `CLASS_HOURS` after it opened at the latest; then its report is kept (lnlab.classroom.report:
  questions, nicknames and answers, for `keep_reports_s`, LNLAB_REPORT_DAYS days, 30 by
  default, or until its teacher deletes it), and the class itself `ENDED_KEEP_S` more, so that
  its students' phones can show their final screen, also after a reload; what is past its
  time is purged when the store opens, a class opens or ends, and a teacher lists reports;
- a question's answers close when it is revealed;
- caps that a real class never meets but a script does (`Limits`): live classes per server and
  per browser, class starts and joins per network address (an IPv6 visitor's /64:
  lnlab.serving.networks), joins per class and minute, students per class, per browser
  (one: the same browser rejoining is the same student) and per address, questions per class
  and answers per student; each refusal says which cap and what to do, and a teacher who
  taught a class here before starts one past the address's caps (`open_class`);
- when the database is down, locked or full, a StoreDown (a ClassError) says so in words,
  with no host, port, path or traceback; nothing is half-stored (each call is a transaction).
Nothing personal is stored: a student is a random id and an optional nickname (20 characters);
the browser and the network address a class was opened or joined from are kept only as
digests (the address keyed with a random key of this database), for the caps, and go with
the class. A report holds nicknames and answers only.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import hmac
import io
import logging
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from lnlab.classroom.live import LiveOption, LiveQuestion
from lnlab.classroom.nicknames import MAX_NICKNAME, NicknameError, check_nickname
from lnlab.classroom.report import Final, PastClass, Report, keep_days
from lnlab.core.errors import InputError
from lnlab.serving.database import MIGRATION_LOCK, OPEN_LOCK, URL_ENV, Database, database_url
from lnlab.teach.quiz import group_name

__all__ = ["MAX_NICKNAME", "URL_ENV", "check_nickname"]  # re-exported for the pages and tests

CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTVWXYZ"  # no 0 O 1 I L U: easy to read off a projector
CODE_LENGTH = 9  # 9 * log2(30) = 44.2 bits
CLASS_HOURS = 24  # a class closes this long after it opened, whatever happens
IDLE_HOURS = 2  # ... or this long after its teacher's last action
BUSY_TIMEOUT_S = 5.0  # SQLite: how long a write waits for a lock before the store says "busy"
ENDED_KEEP_S = 3600.0  # a closed class stays this long (its report: keep_reports_s)
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limits:
    """Caps that keep one server's classes bounded and stop a script from taking them all; a
    real class never meets them. Each refusal says which cap was hit and what to do."""

    classes: int = 200  # live classes per server (per database)
    students: int = 200  # per class
    questions: int = 200  # posed per class
    answers: int = 500  # per student
    classes_per_browser: int = 3  # open at once
    open_per_address: int = 20  # open at once from one network address: a school's teachers
    # behind one router fit, and five addresses never hold more than half of `classes`
    starts_per_address: int = 30  # classes started from one network address in START_WINDOW_S
    joins_per_address: int = 90  # students joining from one address per minute (a class
    # behind one school router: 60 in a minute pass)
    students_per_address: int = 120  # in one class: a script behind one address never
    # fills a class (200)
    joins_per_class: int = 75  # new students in one class in CLASS_JOIN_WINDOW_S, from every
    # network together: a room of 60 arriving in the same minute (even the same second) passes;
    # past it only a network that added none in that minute may add one (a latecomer on their
    # own phone's network gets in), so a script joining fakes from many networks adds this
    # many a minute and one per network more, while the teacher watches the roster
    vouched_per_address: int = 10  # open classes started past the address's caps on a claim of
    # a class taught before (`open_class`'s `taught`): a school's teachers start classes while a
    # flood holds their address, and five addresses still hold at most (20 + 10) x 5 of 200


START_WINDOW_S = 600.0  # starts_per_address counts this far back: a flood of starts from a
# school's address holds its teachers back 10 minutes at most
UNTAUGHT_S = 30 * 60.0  # a class that no student joined and that asked nothing closes this
# long after it opened: classes started by a script do not hold the server's places for hours
JOIN_WINDOW_S = 60.0  # joins_per_address counts this far back
CLASS_JOIN_WINDOW_S = 60.0  # joins_per_class counts this far back
MAX_TAUGHT = 32  # claims of taught classes open_class looks at (a browser keeps 21: a class's
# and 20 reports', lnlab.ui.claims)
WAY_THROUGH = (
    ". A teacher who taught a class with students here goes first: start it from the browser "
    "you taught that class from"
)


class ClassError(InputError):
    """A class code, secret or action that the store refuses; the message is for the user."""


class StoreDown(ClassError):
    """The database did not answer, was locked or full: nothing was stored by this call."""


@dataclass(frozen=True)
class NewClass:
    code: str
    teacher_secret: str
    expires_at: float


@dataclass(frozen=True)
class ClassInfo:
    code: str
    expires_at: float
    students: int


@dataclass(frozen=True)
class Posed:
    question: LiveQuestion
    revealed: bool


@dataclass(frozen=True)
class Teaching:
    """What the teacher's device shows: the class's code, when it closes (idle or at its
    end), how many joined, and the question asked now (None before the first)."""

    code: str
    closes_at: float
    joined: int
    posed: Posed | None
    joining: bool = True  # new students may join (the teacher can close it)


@dataclass(frozen=True)
class Following:
    """What a student's device shows: the question asked now (None before the first), the
    option this student chose for it (None if none yet), and their score (see `score`)."""

    posed: Posed | None
    mine: str | None
    right: int
    answered: int


@dataclass(frozen=True)
class Pulse:
    """What a class's devices watch to know when to redraw (lnlab.ui.pulse): the question
    asked now (its id, None before the first), whether its answer is revealed, how many
    answered it and how many joined, and whether the class is open. Nothing in it is secret:
    the projector shows all of it."""

    qid: str | None
    revealed: bool
    answered: int
    joined: int
    open: bool


CLOSED = Pulse(None, False, 0, 0, False)


@dataclass(frozen=True)
class Board:
    """What every device of a class shows now, read in one transaction: the pulse, and the
    question asked now (None before the first and once the class has closed). A phone draws
    the question from it (lnlab.ui.server.pulse) without a script run."""

    pulse: Pulse
    posed: Posed | None


@dataclass(frozen=True)
class Seat:
    """A student as the teacher's page lists them (`seats`): a handle that names them to
    `remove_student` without giving their id away (its holder could act as the student), the
    nickname ("" without one) and when they joined (the clock's seconds: a burst of fakes
    shows as many joins in the same seconds)."""

    handle: str
    nickname: str
    joined_at: float


@dataclass(frozen=True)
class Tally:
    """How many joined and answered a question, and how many chose each group and option."""

    joined: int
    answered: int
    by_group: dict[str, int]
    by_option: dict[str, int]


def display_code(code: str) -> str:
    """The code as shown on the projector: ABC-DEF-GHJ."""
    return "-".join(code[i : i + 3] for i in range(0, len(code), 3))


def new_code() -> str:
    """A random class code: CODE_LENGTH characters drawn uniformly by `secrets`."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(typed: str) -> str:
    """The code in a typed string (any case, spaces and dashes), or ClassError saying why not."""
    if not isinstance(typed, str) or len(typed) > 100:
        raise ClassError("that is not a class code: it has 9 letters and digits, like ABC-DEF-GHJ")
    code = re.sub(r"[\s\-]", "", typed).upper()
    if not code:
        raise ClassError("type the class code shown by your teacher, like ABC-DEF-GHJ")
    wrong = sorted(set(code) - set(CODE_ALPHABET))
    if wrong:
        shown = ", ".join(repr(c) for c in wrong[:5])
        raise ClassError(
            f"a class code has no {shown}: it uses the digits 2-9 and the letters "
            "other than I, L, O and U"
        )
    if len(code) != CODE_LENGTH:
        raise ClassError(
            f"a class code has {CODE_LENGTH} characters, like ABC-DEF-GHJ; "
            f"{display_code(code)} has {len(code)}"
        )
    return code


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _handle(student_id: str) -> str:
    """What the teacher's page names a student by (Seats): not their id."""
    return _digest("seat:" + student_id)[:16]


def _browser(browser: str) -> str:
    """A browser's id as stored: its digest, or "" when the caller has none."""
    return _digest(browser)[:32] if isinstance(browser, str) and browser else ""


metadata = sa.MetaData()  # the tables as the queries see them (the migrations make them)
classes = sa.Table(
    "classes",
    metadata,
    sa.Column("code", sa.Text, primary_key=True),
    sa.Column("teacher_digest", sa.Text, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("expires_at", sa.Float, nullable=False),  # when it closes if nothing happens
    sa.Column("current_qid", sa.Text),
    sa.Column("ends_by", sa.Float),  # CLASS_HOURS after it opened
    sa.Column("ended_at", sa.Float),  # when its teacher ended it
    sa.Column("browser", sa.Text),  # the opener's browser (_browser)
    sa.Column("address", sa.Text),  # the opener's network address (keyed digest)
    sa.Column("joining_closed", sa.Integer, nullable=False, server_default="0"),
    sa.Column("vouched_by", sa.Text),  # the taught class whose claim let it open (open_class)
)
students = sa.Table(
    "students",
    metadata,
    sa.Column("code", sa.Text, primary_key=True),
    sa.Column("student_id", sa.Text, primary_key=True),
    sa.Column("nickname", sa.Text, nullable=False),
    sa.Column("joined_at", sa.Float, nullable=False),
    sa.Column("browser", sa.Text),
    sa.Column("address", sa.Text),
)
arrivals = sa.Table(  # class starts and joins per address, for the rate caps
    "arrivals",
    metadata,
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("address", sa.Text, nullable=False),
    sa.Column("at", sa.Float, nullable=False),
)
store_key = sa.Table("store_key", metadata, sa.Column("k", sa.Text, nullable=False))
questions = sa.Table(
    "questions",
    metadata,
    sa.Column("code", sa.Text, primary_key=True),
    sa.Column("qid", sa.Text, primary_key=True),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("revealed", sa.Integer, nullable=False),
    sa.Column("posed_at", sa.Float, nullable=False),
)
answers = sa.Table(
    "answers",
    metadata,
    sa.Column("code", sa.Text, primary_key=True),
    sa.Column("student_id", sa.Text, primary_key=True),
    sa.Column("qid", sa.Text, primary_key=True),
    sa.Column("option", sa.Text, nullable=False),
    sa.Column("grp", sa.Text, nullable=False),
    sa.Column("correct", sa.Integer, nullable=False),
    sa.Column("answered_at", sa.Float, nullable=False),
)

reports = sa.Table(  # a closed class's report (lnlab.classroom.report)
    "reports",
    metadata,
    sa.Column("code", sa.Text, primary_key=True),
    sa.Column("teacher_digest", sa.Text, nullable=False),
    sa.Column("opened_at", sa.Float, nullable=False),
    sa.Column("ended_at", sa.Float, nullable=False),
    sa.Column("vouched", sa.Integer, nullable=False, server_default="0"),  # opened on a claim
)
report_students = sa.Table(
    "report_students",
    metadata,
    sa.Column("code", sa.Text, primary_key=True),
    sa.Column("seat", sa.Integer, primary_key=True),  # the order they joined in, from 0
    sa.Column("nickname", sa.Text, nullable=False),
)
report_questions = sa.Table(
    "report_questions",
    metadata,
    sa.Column("code", sa.Text, primary_key=True),
    sa.Column("qid", sa.Text, primary_key=True),
    sa.Column("num", sa.Integer, nullable=False),  # the order they were asked in
    sa.Column("body", sa.Text, nullable=False),
)
report_answers = sa.Table(
    "report_answers",
    metadata,
    sa.Column("code", sa.Text, primary_key=True),
    sa.Column("seat", sa.Integer, primary_key=True),
    sa.Column("qid", sa.Text, primary_key=True),
    sa.Column("option", sa.Text, nullable=False),
)
REPORT_TABLES = (report_answers, report_questions, report_students, reports)
LIVE_TABLES = (answers, questions, students, classes)


def _answer_context() -> sa.Select:
    """For answer(): the class's current question, and how many answers the student has given
    in all and to the current question; no row when the class is unknown or ended or the
    student is not in it."""
    mine = (answers.c.code == classes.c.code, answers.c.student_id == students.c.student_id)
    given = sa.select(sa.func.count()).select_from(answers).where(*mine)
    done = given.where(answers.c.qid == classes.c.current_qid)
    current = sa.and_(questions.c.code == classes.c.code, questions.c.qid == classes.c.current_qid)
    return (
        sa.select(
            classes.c.current_qid,
            questions.c.body,
            questions.c.revealed,
            given.scalar_subquery().label("given"),
            done.scalar_subquery().label("done"),
        )
        .select_from(
            classes.join(students, students.c.code == classes.c.code).outerjoin(questions, current)
        )
        .where(
            classes.c.code == sa.bindparam("code"),
            students.c.student_id == sa.bindparam("sid"),
            classes.c.expires_at > sa.bindparam("now"),
        )
    )


_ANSWER_CONTEXT = _answer_context()


@functools.lru_cache(maxsize=256)
def _question_from(body: str) -> LiveQuestion:
    """A stored question, parsed once per process (questions never change once stored)."""
    return LiveQuestion.from_json(body)


# The schema's history, oldest first: version n is reached by running MIGRATIONS[n - 1].
# Append new versions; never edit one that has shipped. The SQL is portable (SQLite, PostgreSQL).
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE classes (
            code TEXT PRIMARY KEY,
            teacher_digest TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL,
            current_qid TEXT)""",
        "CREATE INDEX classes_by_expiry ON classes (expires_at)",
        """CREATE TABLE students (
            code TEXT NOT NULL,
            student_id TEXT NOT NULL,
            nickname TEXT NOT NULL,
            joined_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (code, student_id))""",
        """CREATE TABLE questions (
            code TEXT NOT NULL,
            qid TEXT NOT NULL,
            body TEXT NOT NULL,
            revealed INTEGER NOT NULL,
            posed_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (code, qid))""",
        """CREATE TABLE answers (
            code TEXT NOT NULL,
            student_id TEXT NOT NULL,
            qid TEXT NOT NULL,
            option TEXT NOT NULL,
            grp TEXT NOT NULL,
            correct INTEGER NOT NULL,
            answered_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (code, student_id, qid))""",
        "CREATE INDEX answers_by_question ON answers (code, qid, grp)",
    ),
    (  # version 2: the heavy-work line, which lived here until version 3
        """CREATE TABLE line_table (
            ticket INTEGER PRIMARY KEY,
            owner TEXT NOT NULL UNIQUE,
            joined_at DOUBLE PRECISION NOT NULL,
            started_at DOUBLE PRECISION,
            beat_at DOUBLE PRECISION NOT NULL)""",
    ),
    (  # version 3: the heavy-work line keeps its own table (lnlab.serving.heavy_work)
        "DROP TABLE line_table",
    ),
    (  # version 4: idle and ended classes, who opened and joined (digests), arrival rates
        "ALTER TABLE classes ADD COLUMN ends_by DOUBLE PRECISION",
        "ALTER TABLE classes ADD COLUMN ended_at DOUBLE PRECISION",
        "ALTER TABLE classes ADD COLUMN browser TEXT",
        "ALTER TABLE classes ADD COLUMN address TEXT",
        "UPDATE classes SET ends_by = expires_at",
        "ALTER TABLE students ADD COLUMN browser TEXT",
        "ALTER TABLE students ADD COLUMN address TEXT",
        "CREATE INDEX students_by_browser ON students (code, browser)",
        "CREATE INDEX classes_by_browser ON classes (browser, expires_at)",
        """CREATE TABLE arrivals (
            kind TEXT NOT NULL,
            address TEXT NOT NULL,
            at DOUBLE PRECISION NOT NULL)""",
        "CREATE INDEX arrivals_by_address ON arrivals (kind, address, at)",
        "CREATE TABLE store_key (k TEXT NOT NULL)",
    ),
    (  # version 5: a class's report, kept after it closes (lnlab.classroom.report)
        """CREATE TABLE reports (
            code TEXT PRIMARY KEY,
            teacher_digest TEXT NOT NULL,
            opened_at DOUBLE PRECISION NOT NULL,
            ended_at DOUBLE PRECISION NOT NULL)""",
        "CREATE INDEX reports_by_end ON reports (ended_at)",
        """CREATE TABLE report_students (
            code TEXT NOT NULL,
            seat INTEGER NOT NULL,
            nickname TEXT NOT NULL,
            PRIMARY KEY (code, seat))""",
        """CREATE TABLE report_questions (
            code TEXT NOT NULL,
            qid TEXT NOT NULL,
            num INTEGER NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (code, qid))""",
        """CREATE TABLE report_answers (
            code TEXT NOT NULL,
            seat INTEGER NOT NULL,
            qid TEXT NOT NULL,
            option TEXT NOT NULL,
            PRIMARY KEY (code, seat, qid))""",
    ),
    (  # version 6: the teacher can close joining (and remove students: no schema needed)
        "ALTER TABLE classes ADD COLUMN joining_closed INTEGER NOT NULL DEFAULT 0",
    ),
    (  # version 7: classes opened on a claim of a class taught before (open_class's `taught`)
        "ALTER TABLE classes ADD COLUMN vouched_by TEXT",
        "ALTER TABLE reports ADD COLUMN vouched INTEGER NOT NULL DEFAULT 0",
    ),
)


_DOWN = (
    sa.exc.OperationalError,  # refused, dropped, locked, disk full (SQLite and psycopg)
    sa.exc.InterfaceError,
    sa.exc.TimeoutError,  # no connection free in the pool in time
    sa.exc.DisconnectionError,
    sqlite3.OperationalError,  # raised while a connection is set up (journal mode)
    OSError,
)


def _down(err: BaseException) -> StoreDown:
    """What to tell a user when the database failed: in words, with no host, port, path or
    traceback (the server's log gets the details)."""
    text = str(getattr(err, "orig", None) or err).lower()
    log.warning("class store: %s: %s", type(err).__name__, text.splitlines()[0] if text else "")
    if "locked" in text or "lock timeout" in text or "busy" in text:
        return StoreDown("the class's database is busy: nothing was stored; try again in a moment")
    if "full" in text or "no space" in text:
        return StoreDown(
            "the class's database has no space left: nothing new can be stored until whoever "
            "runs this server frees some"
        )
    return StoreDown(
        "the class's database is not answering: nothing was stored; try again in a moment "
        "(whoever runs this server: check that the database is up)"
    )


def _guarded(method: Callable) -> Callable:
    """A store method whose database failures become StoreDown (see _down)."""

    @functools.wraps(method)
    def call(self: ClassStore, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except ClassError:
            raise
        except _DOWN as err:
            raise _down(err) from None

    return call


def _changes(method: Callable) -> Callable:
    """A store method that changes what a class's devices show: once it has returned (its
    transaction committed), this process's listeners hear the class's code (`listen`), so the
    devices waiting on its pulse are answered at once instead of at the next read."""

    @functools.wraps(method)
    def call(self: ClassStore, code: str, *args, **kwargs):
        result = method(self, code, *args, **kwargs)
        if result is not False:  # an answer not stored changed nothing
            self._changed(code)
        return result

    return call


def _minutes(seconds: float) -> str:
    minutes = max(1, int(seconds // 60) + (seconds % 60 > 0))
    return "1 minute" if minutes == 1 else f"{minutes} minutes"


class ClassStore:
    """Live classes in one database; safe to share between threads and processes."""

    @_guarded
    def __init__(
        self,
        url: str | None = None,
        *,
        clock: Callable[[], float] = time.time,
        limits: Limits = Limits(),
        keep_reports_s: float | None = None,
    ) -> None:
        """`keep_reports_s`: how long reports are kept (None: LNLAB_REPORT_DAYS days)."""
        self.url = database_url(url)
        self.clock = clock
        self.limits = limits
        self.keep_reports_s = keep_days() * 86400 if keep_reports_s is None else keep_reports_s
        self._db = Database(self.url, busy_timeout_s=BUSY_TIMEOUT_S)
        # answer()'s statements, chosen once: on PostgreSQL the context query also locks the
        # student's row, so one student's answers queue and the answers cap holds
        self._answer_context = (
            _ANSWER_CONTEXT.with_for_update(of=students) if self._db.postgres else _ANSWER_CONTEXT
        )
        self._insert_answer = _insert(self._db.engine)(answers)
        self._insert_report = _insert(self._db.engine)(reports)
        self.migrate()
        self._key = self._address_key()
        self._listeners: list[Callable[[str], None]] = []
        with self._db.write() as conn:
            self._purge(conn, self.clock())

    def close(self) -> None:
        """Close the store's connections (the data stays in the database)."""
        self._db.close()

    def listen(self, heard: Callable[[str], None]) -> None:
        """Call `heard(code)` after every change this process makes to a class's board (a
        question asked or revealed, an answer, a join, the class ended). Other processes'
        changes are not heard: their readers find them at the next read."""
        self._listeners.append(heard)

    def _changed(self, code: str) -> None:
        try:
            code = normalize_code(code)
        except ClassError:
            return
        for heard in list(self._listeners):
            try:
                heard(code)
            except Exception:  # a listener's failure is never the store's caller's
                log.exception("class store: a listener failed")

    # --- transactions and schema -------------------------------------------------------------

    def migrate(self, migrations: Sequence[Sequence[str]] = MIGRATIONS) -> int:
        """Run the migrations the database has not had yet; returns the version found before.

        Several processes may open the store at once: PostgreSQL serialises them on an advisory
        lock, SQLite on its write lock (BEGIN IMMEDIATE), so each migration runs exactly once.
        """
        with self._db.write(lock=MIGRATION_LOCK) as conn:
            conn.exec_driver_sql(
                "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"
            )
            found = _version(conn)
            if found > len(migrations):
                raise RuntimeError(
                    f"the class database is at schema version {found}, newer than this code's "
                    f"{len(migrations)}: update lnlab, or point {URL_ENV} at another database"
                )
            for version in range(found + 1, len(migrations) + 1):
                for statement in migrations[version - 1]:
                    conn.exec_driver_sql(statement)
                conn.exec_driver_sql(f"INSERT INTO schema_version (version) VALUES ({version})")
            return found

    def _address_key(self) -> bytes:
        """This database's random key for the addresses' digests (made once, shared by every
        process that uses the database)."""
        with self._db.write(lock=MIGRATION_LOCK) as conn:
            key = conn.execute(sa.select(store_key.c.k)).scalar()
            if key is None:
                key = secrets.token_hex(32)
                conn.execute(store_key.insert().values(k=key))
        return bytes.fromhex(key)

    def _address(self, address: str) -> str:
        """A network address as stored: a keyed digest ("" stands for an unknown one)."""
        text = address if isinstance(address, str) else ""
        return hmac.new(self._key, text[:100].encode(), hashlib.sha256).hexdigest()[:32]

    @_guarded
    def schema_version(self) -> int:
        with self._db.read() as conn:
            return _version(conn)

    # --- helpers -------------------------------------------------------------------------------

    def _class(
        self, conn: Connection, typed: str, *, lock: bool = False, closed_too: bool = False
    ) -> sa.Row:
        """The live class for a typed code, or ClassError (malformed, unknown or closed;
        `closed_too`: a closed class not purged yet is returned too)."""
        code = normalize_code(typed)
        query = sa.select(classes).where(classes.c.code == code)
        if lock:
            query = query.with_for_update()
        row = conn.execute(query).first()
        if row is None:
            raise ClassError(
                f"there is no class {display_code(code)}: check the code on the projector"
            )
        if row.expires_at <= self.clock() and not closed_too:
            raise ClassError(f"class {display_code(code)} has ended ({_why_closed(row)})")
        return row

    def _teacher(self, conn: Connection, typed: str, secret: str, action: str) -> sa.Row:
        row = self._class(conn, typed)
        given = _digest(secret) if isinstance(secret, str) else ""
        if not secrets.compare_digest(given, row.teacher_digest):
            raise ClassError(f"only the teacher of this class can {action}")
        return row

    def _active(self, conn: Connection, row: sa.Row) -> None:
        """The teacher did something: the class stays open IDLE_HOURS more (to its end)."""
        closes = min(row.ends_by or row.expires_at, self.clock() + IDLE_HOURS * 3600)
        conn.execute(classes.update().where(classes.c.code == row.code).values(expires_at=closes))

    def _question(self, conn: Connection, code: str, qid: str) -> sa.Row:
        row = (
            None
            if not _is_key(qid)
            else conn.execute(
                sa.select(questions).where(questions.c.code == code, questions.c.qid == qid)
            ).first()
        )
        if row is None:
            raise ClassError("this question has not been posed in this class")
        return row

    def _student(self, conn: Connection, code: str, student_id: str, *, lock: bool = False):
        if not _is_key(student_id):
            return None
        query = sa.select(students).where(
            students.c.code == code, students.c.student_id == student_id
        )
        if lock:
            query = query.with_for_update()
        return conn.execute(query).first()

    def _count(self, conn: Connection, table: sa.Table, *where) -> int:
        return conn.execute(sa.select(sa.func.count()).select_from(table).where(*where)).scalar()

    def _arrived(self, conn: Connection, kind: str, address: str, window_s: float) -> int:
        """How many `kind` arrivals ("start", "join") came from `address` in the window."""
        since = self.clock() - window_s
        where = (arrivals.c.kind == kind, arrivals.c.address == address, arrivals.c.at > since)
        return self._count(conn, arrivals, *where)

    def _oldest_arrival(self, conn: Connection, kind: str, address: str, window_s: float):
        since = self.clock() - window_s
        return conn.execute(
            sa.select(sa.func.min(arrivals.c.at)).where(
                arrivals.c.kind == kind, arrivals.c.address == address, arrivals.c.at > since
            )
        ).scalar()

    # --- the teacher ---------------------------------------------------------------------------

    @_guarded
    def open_class(
        self,
        now: float | None = None,
        *,
        browser: str = "",
        address: str = "",
        taught: Sequence[tuple[str, str]] = (),
    ) -> NewClass:
        """A new class with a fresh code and teacher secret, opened from `browser` (the
        browser's own random id) and network `address` ("" when unknown, as on this machine
        itself: no per-address cap then); closed classes are purged first.

        `taught`: the (code, teacher secret) claims the browser keeps of classes it taught
        (lnlab.ui.claims). When the address's caps refuse (issue 38: a script's starts held a
        school's teachers back), one of them opens the class anyway (`_vouch`): a teacher who
        taught here goes first, on an allowance that nobody else's starts use up."""
        now = self.clock() if now is None else now
        mine, where = _browser(browser), self._address(address)
        limits = self.limits
        with self._db.write(lock=OPEN_LOCK) as conn:  # openers one at a time: the caps hold
            self._purge(conn, now)
            live = classes.c.expires_at > now
            if self._count(conn, classes, live) >= limits.classes:
                soonest = conn.execute(sa.select(sa.func.min(classes.c.expires_at))).scalar()
                raise ClassError(
                    f"this server already runs {limits.classes} classes, its limit; the next "
                    f"one closes within {_minutes(soonest - now)}: start yours then"
                )
            if mine and self._count(conn, classes, live, classes.c.browser == mine) >= (
                limits.classes_per_browser
            ):
                raise ClassError(
                    f"this browser already has {limits.classes_per_browser} classes open, the "
                    "limit: end one first (End class, on the Class page)"
                )
            vouched_by = None
            if address and (refused := self._address_full(conn, where, now)):
                vouched_by = self._vouch(conn, taught, where, now)
                if vouched_by is None:
                    raise ClassError(refused + WAY_THROUGH)
            secret = secrets.token_urlsafe(24)
            while True:
                code = new_code()
                taken = self._count(conn, classes, classes.c.code == code)
                if not taken and not self._count(conn, reports, reports.c.code == code):
                    break
            conn.execute(
                classes.insert().values(
                    code=code,
                    teacher_digest=_digest(secret),
                    created_at=now,
                    expires_at=now + IDLE_HOURS * 3600,
                    current_qid=None,
                    ends_by=now + CLASS_HOURS * 3600,
                    browser=mine,
                    address=where,
                    vouched_by=vouched_by,
                )
            )
            conn.execute(arrivals.insert().values(kind="start", address=where, at=now))
        return NewClass(code, secret, now + IDLE_HOURS * 3600)

    def _address_full(self, conn: Connection, where: str, now: float) -> str | None:
        """Why the caps of network `where` refuse a new class (None: they do not): its starts
        in START_WINDOW_S, or its open classes (those opened on a claim apart: `_vouch`)."""
        limits = self.limits
        if self._arrived(conn, "start", where, START_WINDOW_S) >= limits.starts_per_address:
            oldest = self._oldest_arrival(conn, "start", where, START_WINDOW_S)
            wait = _minutes(oldest + START_WINDOW_S - now)
            return (
                f"{limits.starts_per_address} classes were started from your network in "
                f"the last {_minutes(START_WINDOW_S)}, the limit; try again in {wait}"
            )
        mine_here = (
            classes.c.expires_at > now,
            classes.c.address == where,
            classes.c.vouched_by.is_(None),
        )
        if self._count(conn, classes, *mine_here) < limits.open_per_address:
            return None
        soonest = conn.execute(sa.select(sa.func.min(classes.c.expires_at)).where(*mine_here))
        return (
            f"{limits.open_per_address} classes are open from your network, the most one "
            f"network may hold; one closes within {_minutes(soonest.scalar() - now)} (a class "
            f"nobody joins closes {_minutes(UNTAUGHT_S)} after it opened)"
        )

    def _vouch(
        self, conn: Connection, taught: Sequence[tuple[str, str]], where: str, now: float
    ) -> str | None:
        """The code of the first claim in `taught` that lets its browser open a class past
        the caps of its network `where`, or None. A claim does when its secret is the class's,
        the class (open, or closed with its report kept) had a student, was not itself opened
        on a claim (a script cannot breed claims from claims) and has no class of its claim
        open now; and the network has fewer than `vouched_per_address` classes open on claims
        (else ClassError). What a script can do with it is bounded by the real classes with
        students it started within the caps first."""
        wanted: dict[str, str] = {}
        for claim in taught[:MAX_TAUGHT]:
            if isinstance(claim, tuple) and len(claim) == 2:
                code, secret = claim
                if isinstance(code, str) and len(code) == CODE_LENGTH and isinstance(secret, str):
                    wanted.setdefault(code, _digest(secret))
        if not wanted:
            return None
        joined = sa.select(students.c.code).where(students.c.code == classes.c.code)
        seated = sa.select(report_students.c.code).where(report_students.c.code == reports.c.code)
        in_class = sa.select(classes.c.code, classes.c.teacher_digest).where(
            classes.c.code.in_(wanted), classes.c.vouched_by.is_(None), joined.exists()
        )
        in_report = sa.select(reports.c.code, reports.c.teacher_digest).where(
            reports.c.code.in_(wanted),
            reports.c.vouched == 0,
            reports.c.ended_at > now - self.keep_reports_s,
            seated.exists(),
        )
        found = conn.execute(sa.union_all(in_class, in_report)).all()
        good = [code for code, digest in found if secrets.compare_digest(digest, wanted[code])]
        live = classes.c.expires_at > now
        busy = set(
            conn.execute(
                sa.select(classes.c.vouched_by).where(live, classes.c.vouched_by.in_(good))
            ).scalars()
        )
        free = [code for code in wanted if code in good and code not in busy]  # claims' order
        if not free:
            return None
        on_claims = (live, classes.c.address == where, classes.c.vouched_by.is_not(None))
        if self._count(conn, classes, *on_claims) >= self.limits.vouched_per_address:
            raise ClassError(
                f"{self.limits.vouched_per_address} classes are open from your network that "
                "teachers who taught here before started past its limits, the most it may "
                "hold: end one of them, or try again when one closes"
            )
        return free[0]

    def _purge(self, conn: Connection, now: float) -> None:
        """Report the classes that closed since, then delete what is past its time: reports
        after keep_reports_s, closed classes after ENDED_KEEP_S (sooner if reports go
        sooner), the arrivals the rate caps no longer count."""
        reported = sa.select(reports.c.code).where(reports.c.code == classes.c.code)
        closed = conn.execute(
            sa.select(classes).where(
                classes.c.expires_at <= now,
                classes.c.expires_at > now - self.keep_reports_s,
                ~reported.exists(),
            )
        ).all()
        for row in closed:
            self._keep_report(conn, row, row.expires_at)
        old = sa.select(reports.c.code).where(reports.c.ended_at <= now - self.keep_reports_s)
        self._delete(conn, REPORT_TABLES, old)
        gone = now - min(ENDED_KEEP_S, self.keep_reports_s)
        self._delete(
            conn, LIVE_TABLES, sa.select(classes.c.code).where(classes.c.expires_at <= gone)
        )
        joined = sa.select(students.c.code).where(students.c.code == classes.c.code)
        asked = sa.select(questions.c.code).where(questions.c.code == classes.c.code)
        untaught = sa.select(classes.c.code).where(
            classes.c.created_at <= now - UNTAUGHT_S, ~joined.exists(), ~asked.exists()
        )
        if gone_untaught := conn.execute(untaught).scalars().all():  # nothing in them to report
            self._delete(conn, LIVE_TABLES, gone_untaught)
        conn.execute(arrivals.delete().where(arrivals.c.at <= now - START_WINDOW_S))

    def _delete(
        self, conn: Connection, tables: Sequence[sa.Table], codes: sa.Select | Sequence[str]
    ) -> None:
        """Delete the rows of these classes, table by table (a query for `codes` reads the
        last one)."""
        for table in tables:
            conn.execute(table.delete().where(table.c.code.in_(codes)))

    def _keep_report(self, conn: Connection, row: sa.Row, ended_at: float) -> None:
        """Copy a closed class's questions, nicknames and answers into its report (once: a
        second process doing the same finds it there)."""
        made = self._insert_report.values(
            code=row.code,
            teacher_digest=row.teacher_digest,
            opened_at=row.created_at,
            ended_at=ended_at,
            vouched=int(row.vouched_by is not None),
        )
        if conn.execute(made.on_conflict_do_nothing().returning(reports.c.code)).first() is None:
            return
        joined = conn.execute(
            sa.select(students.c.student_id, students.c.nickname)
            .where(students.c.code == row.code)
            .order_by(students.c.joined_at, students.c.student_id)
        ).all()
        seats = {student_id: seat for seat, (student_id, _) in enumerate(joined)}
        posed = conn.execute(
            sa.select(questions.c.qid, questions.c.body)
            .where(questions.c.code == row.code)
            .order_by(questions.c.posed_at, questions.c.qid)
        ).all()
        given = conn.execute(
            sa.select(answers.c.student_id, answers.c.qid, answers.c.option).where(
                answers.c.code == row.code
            )
        ).all()
        for table, rows in (
            (report_students, [{"seat": k, "nickname": n} for k, (_, n) in enumerate(joined)]),
            (report_questions, [{"qid": q, "num": k, "body": b} for k, (q, b) in enumerate(posed)]),
            (
                report_answers,
                [{"seat": seats[s], "qid": q, "option": o} for s, q, o in given if s in seats],
            ),
        ):
            if rows:  # executemany: one statement for all
                conn.execute(table.insert(), [{"code": row.code} | r for r in rows])

    @_changes
    @_guarded
    def end_class(self, code: str, teacher_secret: str) -> None:
        """End a class now, for everyone (frees its slot under the caps); its report is kept."""
        with self._db.write() as conn:
            row = self._teacher(conn, code, teacher_secret, "end it")
            now = self.clock()
            conn.execute(
                classes.update()
                .where(classes.c.code == row.code)
                .values(expires_at=now, ended_at=now)
            )
            self._keep_report(conn, row, now)

    @_guarded
    def keep_open(self, code: str, teacher_secret: str) -> None:
        """The teacher is here (a click on their device): the class stays open IDLE_HOURS
        more, up to CLASS_HOURS after it opened."""
        with self._db.write() as conn:
            self._active(conn, self._teacher(conn, code, teacher_secret, "keep it open"))

    @_changes
    @_guarded
    def pose(self, code: str, teacher_secret: str, question: LiveQuestion) -> None:
        """Make `question` the class's current one; re-posing a qid keeps its answers and reveal."""
        if not isinstance(question, LiveQuestion):
            raise TypeError("pose takes a LiveQuestion")
        with self._db.write() as conn:
            row = self._teacher(conn, code, teacher_secret, "pose questions")
            known = self._count(
                conn, questions, questions.c.code == row.code, questions.c.qid == question.qid
            )
            if not known:
                if self._count(conn, questions, questions.c.code == row.code) >= (
                    self.limits.questions
                ):
                    raise ClassError(
                        f"this class has had {self.limits.questions} questions, its limit; "
                        "open a new class"
                    )
                conn.execute(
                    questions.insert().values(
                        code=row.code,
                        qid=question.qid,
                        body=question.to_json(),
                        revealed=0,
                        posed_at=self.clock(),
                    )
                )
            conn.execute(
                classes.update().where(classes.c.code == row.code).values(current_qid=question.qid)
            )
            self._active(conn, row)

    @_changes
    @_guarded
    def reveal(self, code: str, teacher_secret: str, qid: str) -> None:
        """Show the class the answer to `qid`: its answers close, and students' scores count
        it from now on."""
        with self._db.write() as conn:
            row = self._teacher(conn, code, teacher_secret, "reveal the answer")
            self._question(conn, row.code, qid)
            conn.execute(
                questions.update()
                .where(questions.c.code == row.code, questions.c.qid == qid)
                .values(revealed=1)
            )
            self._active(conn, row)

    @_guarded
    def tally(self, code: str, teacher_secret: str, qid: str) -> Tally:
        """How many joined, how many answered `qid`, and how many chose each option and fell
        into each group (every one of the question's, 0 where nobody did)."""
        with self._db.read() as conn:
            row = self._teacher(conn, code, teacher_secret, "see the answers")
            question = _question_from(self._question(conn, row.code, qid).body)
            joined = self._count(conn, students, students.c.code == row.code)
            counts = conn.execute(
                sa.select(answers.c.option, answers.c.grp, sa.func.count())
                .where(answers.c.code == row.code, answers.c.qid == qid)
                .group_by(answers.c.option, answers.c.grp)
            ).all()
        by_option = dict.fromkeys((o.text for o in question.options), 0)
        by_group = dict.fromkeys(question.groups, 0)
        for option, grp, n in counts:
            by_option[option] = by_option.get(option, 0) + n
            by_group[grp] = by_group.get(grp, 0) + n
        return Tally(joined, sum(by_group.values()), by_group, by_option)

    @_guarded
    def check_teacher(self, code: str, teacher_secret: str) -> Teaching:
        """The class as its teacher's device shows it, if `teacher_secret` is this class's;
        else ClassError saying what is wrong."""
        with self._db.read() as conn:
            row = self._teacher(conn, code, teacher_secret, "open the teacher's view")
            joined = self._count(conn, students, students.c.code == row.code)
            current = self._current(conn, row)
            return Teaching(row.code, row.expires_at, joined, current, not row.joining_closed)

    @_changes
    @_guarded
    def set_joining(self, code: str, teacher_secret: str, open_: bool) -> None:
        """Let new students join, or not (those who joined stay, and can rejoin)."""
        with self._db.write() as conn:
            row = self._teacher(conn, code, teacher_secret, "open or close joining")
            conn.execute(
                classes.update()
                .where(classes.c.code == row.code)
                .values(joining_closed=0 if open_ else 1)
            )

    @_guarded
    def seats(self, code: str, teacher_secret: str) -> list[Seat]:
        """Every student (`Seat`: handle, nickname, when they joined), in the order they
        joined."""
        with self._db.read() as conn:
            row = self._teacher(conn, code, teacher_secret, "see who joined")
            found = conn.execute(
                sa.select(students.c.student_id, students.c.nickname, students.c.joined_at)
                .where(students.c.code == row.code)
                .order_by(students.c.joined_at, students.c.student_id)
            ).all()
            return [Seat(_handle(r.student_id), r.nickname, r.joined_at) for r in found]

    @_changes
    @_guarded
    def remove_student(self, code: str, teacher_secret: str, handle: str) -> bool:
        """Take a student (a fake one, say) and their answers out of the class; False when
        no student has that handle. Their browser may join again unless joining is closed."""
        with self._db.write() as conn:
            row = self._teacher(conn, code, teacher_secret, "remove students")
            ids = conn.execute(
                sa.select(students.c.student_id).where(students.c.code == row.code)
            ).scalars()
            gone = next((i for i in ids if _handle(i) == handle), None)
            if gone is None:
                return False
            for table in (answers, students):
                conn.execute(
                    table.delete().where(table.c.code == row.code, table.c.student_id == gone)
                )
            return True

    @_guarded
    def roster(self, code: str, teacher_secret: str) -> list[str]:
        """The nicknames students gave, in the order they joined (anonymous ones are left out)."""
        with self._db.read() as conn:
            row = self._teacher(conn, code, teacher_secret, "see who joined")
            names = conn.execute(
                sa.select(students.c.nickname)
                .where(students.c.code == row.code, students.c.nickname != "")
                .order_by(students.c.joined_at, students.c.student_id)
            ).scalars()
            return list(names)

    @_guarded
    def counts_csv(self, code: str, teacher_secret: str) -> str:
        """One row per question and option, in posing order: question, prompt, option (its
        number on the phones), answer (its text), group (its key), group_name ("Right", the
        misconception's name, "Something else"), count."""
        with self._db.read() as conn:
            row = self._teacher(conn, code, teacher_secret, "download the answers")
            posed = conn.execute(
                sa.select(questions.c.qid, questions.c.body)
                .where(questions.c.code == row.code)
                .order_by(questions.c.posed_at, questions.c.qid)
            ).all()
            counts = conn.execute(
                sa.select(answers.c.qid, answers.c.option, sa.func.count())
                .where(answers.c.code == row.code)
                .group_by(answers.c.qid, answers.c.option)
            ).all()
        by_question = {(qid, option): n for qid, option, n in counts}
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["question", "prompt", "option", "answer", "group", "group_name", "count"])
        for qid, body in posed:
            question = _question_from(body)
            for k, o in enumerate(question.options, 1):
                count = by_question.get((qid, o.text), 0)
                writer.writerow(
                    [qid, question.prompt, k, o.text, o.group, group_name(o.group), count]
                )
        return out.getvalue()

    # --- the students --------------------------------------------------------------------------

    @_guarded
    def check_code(self, code: str) -> ClassInfo:
        """The class a typed code names, or ClassError saying what is wrong with the code."""
        with self._db.read() as conn:
            row = self._class(conn, code)
            joined = self._count(conn, students, students.c.code == row.code)
        return ClassInfo(row.code, row.expires_at, joined)

    @_changes
    @_guarded
    def join(
        self,
        code: str,
        student_id: str | None = None,
        nickname: str = "",
        *,
        browser: str = "",
        address: str = "",
    ) -> str:
        """The student's id in the class. A browser that joined before gets its student back
        (the same score), as does a known `student_id` (a page that kept it); an id the class
        does not know is refused. Otherwise a new random id, if the caps allow. A non-empty
        nickname replaces the one stored."""
        try:
            nickname = check_nickname(nickname)
        except NicknameError as err:
            raise ClassError(str(err)) from None
        mine, where = _browser(browser), self._address(address)
        limits = self.limits
        with self._db.write() as conn:
            row = self._class(conn, code, lock=True)  # serialises joins: the caps hold
            known = None
            if student_id is not None:
                known = self._student(conn, row.code, student_id)
                if known is None:
                    raise ClassError(
                        f"class {display_code(row.code)} has no such student: join with the "
                        "class code instead"
                    )
            elif mine:
                known = conn.execute(
                    sa.select(students).where(
                        students.c.code == row.code, students.c.browser == mine
                    )
                ).first()
            if known is not None:
                if nickname:
                    conn.execute(
                        students.update()
                        .where(
                            students.c.code == row.code,
                            students.c.student_id == known.student_id,
                        )
                        .values(nickname=nickname)
                    )
                return known.student_id
            here = students.c.code == row.code
            if row.joining_closed:
                raise ClassError(
                    f"the teacher has closed joining for class {display_code(row.code)}; ask "
                    "your teacher to open it"
                )
            if self._count(conn, students, here) >= limits.students:
                raise ClassError(
                    f"class {display_code(row.code)} is full ({limits.students} students)"
                )
            if address and self._count(conn, students, here, students.c.address == where) >= (
                limits.students_per_address
            ):
                raise ClassError(
                    f"{limits.students_per_address} students have joined this class from your "
                    "network, the most one network may add; ask your teacher"
                )
            if address and self._arrived(conn, "join", where, JOIN_WINDOW_S) >= (
                limits.joins_per_address
            ):
                raise ClassError(
                    f"{limits.joins_per_address} students joined from your network in the last "
                    "minute, the limit; wait a minute and press Join again"
                )
            now = self.clock()
            lately = (here, students.c.joined_at > now - CLASS_JOIN_WINDOW_S)
            if (
                address
                and self._count(conn, students, *lately) >= limits.joins_per_class
                and self._count(conn, students, *lately, students.c.address == where)
            ):
                raise ClassError(
                    f"{limits.joins_per_class} students joined class {display_code(row.code)} "
                    "in the last minute, the most a class takes in a minute from networks "
                    "that already joined it; wait a minute and press Join again"
                )
            new_id = secrets.token_urlsafe(16)
            conn.execute(
                students.insert().values(
                    code=row.code,
                    student_id=new_id,
                    nickname=nickname,
                    joined_at=now,
                    browser=mine,
                    address=where,
                )
            )
            conn.execute(arrivals.insert().values(kind="join", address=where, at=now))
            return new_id

    @_guarded
    def find_student(self, code: str, browser: str) -> str | None:
        """The id of the student `browser` is in this class, or None (it has not joined); a
        class closed but not purged yet finds them too (their phone's final screen)."""
        mine = _browser(browser)
        if not mine:
            return None
        with self._db.read() as conn:
            row = self._class(conn, code, closed_too=True)
            return conn.execute(
                sa.select(students.c.student_id).where(
                    students.c.code == row.code, students.c.browser == mine
                )
            ).scalar()

    @_guarded
    def current(self, code: str) -> Posed | None:
        """The question the class is on, and whether its answer has been revealed."""
        with self._db.read() as conn:
            return self._current(conn, self._class(conn, code))

    def _current(self, conn: Connection, row: sa.Row) -> Posed | None:
        if row.current_qid is None:
            return None
        question = self._question(conn, row.code, row.current_qid)
        return Posed(_question_from(question.body), bool(question.revealed))

    @_guarded
    def pulse(self, code: str) -> Pulse:
        """The class's pulse, in three small reads of the database; CLOSED for a class that
        is unknown or has ended (ClassError only for a code that cannot be one)."""
        code = normalize_code(code)
        with self._db.read() as conn:
            return self._pulse(conn, code)

    def _pulse(self, conn: Connection, code: str) -> Pulse:
        try:
            row = self._class(conn, code)
        except ClassError:
            return CLOSED
        joined = self._count(conn, students, students.c.code == code)
        if row.current_qid is None:
            return Pulse(None, False, 0, joined, True)
        revealed = conn.execute(
            sa.select(questions.c.revealed).where(
                questions.c.code == code, questions.c.qid == row.current_qid
            )
        ).scalar()
        answered = self._count(
            conn, answers, answers.c.code == code, answers.c.qid == row.current_qid
        )
        return Pulse(row.current_qid, bool(revealed), answered, joined, True)

    @_guarded
    def board(self, code: str) -> Board:
        """The class's pulse and the question asked now, in one transaction (CLOSED and no
        question for a class unknown or ended; ClassError only for a code that cannot be one)."""
        code = normalize_code(code)
        with self._db.read() as conn:
            pulse = self._pulse(conn, code)
            if pulse.qid is None:
                return Board(pulse, None)
            question = self._question(conn, code, pulse.qid)
            return Board(pulse, Posed(_question_from(question.body), pulse.revealed))

    @_guarded
    def follow(self, code: str, student_id: str) -> Following:
        """`current`, `my_answer` for the current question and `score`, in one transaction: what
        a student's device draws, each time the class changes (lnlab.ui.pulse). ClassError for
        a student not in the class (never joined, or removed by the teacher)."""
        with self._db.read() as conn:
            row = self._class(conn, code)
            if self._student(conn, row.code, student_id) is None:
                raise ClassError("join the class first (your place in it was not found)")
            posed = self._current(conn, row)
            mine = self._my_answer(conn, row, student_id, posed.question.qid) if posed else None
            return Following(posed, mine, *self._score(conn, row, student_id))

    @_changes
    @_guarded
    def answer(self, code: str, student_id: str, qid: str, option: str | int) -> bool:
        """Record the student's first answer to the current question `qid`: `option` is the
        option's text, or its place (0, 1, ...) as a phone drawing the question sends it.

        False when the student has already answered it or it is not the current question;
        ClassError for an unknown student, an option the question does not have, a question
        already revealed (its answers are closed), or a cap.
        """
        code = normalize_code(code)
        if not _is_key(student_id):
            raise ClassError("join the class first (your place in it was not found)")
        if not _is_key(qid):
            return False
        with self._db.write() as conn:
            # One round trip for what the checks need (and the student's row lock, see __init__).
            row = conn.execute(
                self._answer_context, {"code": code, "sid": student_id, "now": self.clock()}
            ).first()
            if row is None:
                self._class(conn, code)  # says why when the class is unknown or ended
                raise ClassError("join the class first (your place in it was not found)")
            if row.current_qid != qid or row.done:
                return False
            if row.revealed:
                raise ClassError(
                    "the teacher has revealed the answer, so answers to this question are "
                    "closed; wait for the next question"
                )
            chosen = _chosen(_question_from(row.body), option)
            if chosen is None:
                raise ClassError("that is not one of this question's options")
            if row.given >= self.limits.answers:
                raise ClassError(f"you have given {self.limits.answers} answers, the limit")
            insert = self._insert_answer.values(
                code=code,
                student_id=student_id,
                qid=qid,
                option=chosen.text,
                grp=chosen.group,
                correct=int(chosen.correct),
                answered_at=self.clock(),
            )
            inserted = insert.on_conflict_do_nothing().returning(answers.c.qid)
            return conn.execute(inserted).first() is not None

    @_guarded
    def my_answer(self, code: str, student_id: str, qid: str) -> str | None:
        """The option this student chose for `qid`, or None (only ever the caller's own)."""
        with self._db.read() as conn:
            return self._my_answer(conn, self._class(conn, code), student_id, qid)

    def _my_answer(self, conn: Connection, row: sa.Row, student_id: str, qid: str) -> str | None:
        if not (_is_key(student_id) and _is_key(qid)):
            return None
        return conn.execute(
            sa.select(answers.c.option).where(
                answers.c.code == row.code,
                answers.c.student_id == student_id,
                answers.c.qid == qid,
            )
        ).scalar()

    @_guarded
    def score(self, code: str, student_id: str) -> tuple[int, int]:
        """(right, answered) over the questions whose answer has been revealed, so that the
        score never gives an answer away before the teacher shows it."""
        with self._db.read() as conn:
            return self._score(conn, self._class(conn, code), student_id)

    def _score(self, conn: Connection, row: sa.Row, student_id: str) -> tuple[int, int]:
        if not _is_key(student_id):
            return 0, 0
        right, answered = conn.execute(
            sa.select(sa.func.coalesce(sa.func.sum(answers.c.correct), 0), sa.func.count())
            .select_from(
                answers.join(
                    questions,
                    sa.and_(questions.c.code == answers.c.code, questions.c.qid == answers.c.qid),
                )
            )
            .where(
                answers.c.code == row.code,
                answers.c.student_id == student_id,
                questions.c.revealed == 1,
            )
        ).one()
        return int(right), int(answered)

    # --- after the class -----------------------------------------------------------------------

    @_guarded
    def final(self, code: str, student_id: str) -> Final | None:
        """A student's answers to every question of their class once it has closed, for
        their phone's end screen; None when the class or the student is not there (any
        more). ClassError while the class is open: that would give the answers away."""
        with self._db.read() as conn:
            row = self._class(conn, code, closed_too=True)
            if row.expires_at > self.clock():
                raise ClassError(f"class {display_code(row.code)} has not ended")
            if self._student(conn, row.code, student_id) is None:
                return None
            posed = conn.execute(
                sa.select(questions.c.body)
                .where(questions.c.code == row.code)
                .order_by(questions.c.posed_at, questions.c.qid)
            ).scalars()
            asked = tuple(_question_from(body) for body in posed)
            mine = conn.execute(
                sa.select(answers.c.qid, answers.c.option).where(
                    answers.c.code == row.code, answers.c.student_id == student_id
                )
            ).all()
        return Final(asked, dict(mine))

    @_guarded
    def reports(self, claims: Sequence[tuple[str, str]]) -> list[PastClass]:
        """The reports of the classes a browser taught (its claims: (code, teacher secret)),
        newest first; the classes that closed since are reported first, and what is past
        its time deleted (the store keeps to its keeping times even when no class opens)."""
        wanted = {}
        for code, secret in claims:
            if isinstance(code, str) and isinstance(secret, str):
                wanted[code] = _digest(secret)
        if not wanted:
            return []
        now = self.clock()
        seated = sa.select(sa.func.count()).where(report_students.c.code == reports.c.code)
        asked = sa.select(sa.func.count()).where(report_questions.c.code == reports.c.code)
        with self._db.write() as conn:
            self._purge(conn, now)
            rows = conn.execute(
                sa.select(
                    reports,
                    seated.scalar_subquery().label("seated"),
                    asked.scalar_subquery().label("asked"),
                )
                .where(reports.c.code.in_(wanted))
                .order_by(reports.c.ended_at.desc())
            ).all()
        keep = self.keep_reports_s
        return [
            PastClass(r.code, r.opened_at, r.ended_at, r.ended_at + keep, r.seated, r.asked)
            for r in rows
            if secrets.compare_digest(r.teacher_digest, wanted[r.code])
        ]

    def _report_row(self, conn: Connection, typed: str, secret: str, action: str) -> sa.Row:
        """A report within its keeping time, if `secret` is its class's; else ClassError."""
        code = normalize_code(typed)
        row = conn.execute(
            sa.select(reports).where(
                reports.c.code == code,
                reports.c.ended_at > self.clock() - self.keep_reports_s,
            )
        ).first()
        if row is None:
            days = self.keep_reports_s / 86400
            raise ClassError(
                f"there is no report of class {display_code(code)}: it was deleted, or its "
                f"{days:g} days are over"
            )
        given = _digest(secret) if isinstance(secret, str) else ""
        if not secrets.compare_digest(given, row.teacher_digest):
            raise ClassError(f"only the teacher of this class can {action}")
        return row

    @_guarded
    def report(self, code: str, teacher_secret: str) -> Report:
        """A class's report, for its teacher (lnlab.classroom.report)."""
        with self._db.read() as conn:
            row = self._report_row(conn, code, teacher_secret, "see its report")
            posed = conn.execute(
                sa.select(report_questions.c.body)
                .where(report_questions.c.code == row.code)
                .order_by(report_questions.c.num)
            ).scalars()
            asked = tuple(_question_from(body) for body in posed)
            nicknames = tuple(
                conn.execute(
                    sa.select(report_students.c.nickname)
                    .where(report_students.c.code == row.code)
                    .order_by(report_students.c.seat)
                ).scalars()
            )
            given = conn.execute(
                sa.select(
                    report_answers.c.seat, report_answers.c.qid, report_answers.c.option
                ).where(report_answers.c.code == row.code)
            ).all()
        kept_until = row.ended_at + self.keep_reports_s
        answers_by = {(seat, qid): option for seat, qid, option in given}
        return Report(
            row.code, row.opened_at, row.ended_at, kept_until, asked, nicknames, answers_by
        )

    @_guarded
    def delete_report(self, code: str, teacher_secret: str) -> None:
        """Delete a class's report now, and what is left of the class with it."""
        with self._db.write() as conn:
            row = self._report_row(conn, code, teacher_secret, "delete its report")
            self._delete(conn, REPORT_TABLES + LIVE_TABLES, [row.code])


def _chosen(question: LiveQuestion, option: object) -> LiveOption | None:
    """The option `option` names: its text, or its place in the question (not a bool)."""
    if isinstance(option, str):
        return question.option(option)
    if isinstance(option, int) and not isinstance(option, bool):
        return question.options[option] if 0 <= option < len(question.options) else None
    return None


def _why_closed(row: sa.Row) -> str:
    """Why a class is closed, for the message that says so."""
    if row.ended_at is not None:
        return "its teacher ended it"
    if row.ends_by is not None and row.expires_at < row.ends_by:
        return f"no teacher activity for {IDLE_HOURS} hours closes a class"
    return f"a class lasts {CLASS_HOURS} hours at most; ask your teacher for a new code"


def _version(conn: Connection) -> int:
    """The schema version the database is at (0 before the first migration)."""
    return conn.exec_driver_sql("SELECT MAX(version) FROM schema_version").scalar() or 0


def _insert(engine: Engine):
    """The dialect's INSERT, which has ON CONFLICT DO NOTHING on both SQLite and PostgreSQL."""
    if engine.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert


def _is_key(value: object) -> bool:
    """Whether a student id or question id from a caller can be looked up: short text with no
    NUL (PostgreSQL refuses NUL in text). Anything else is simply not found."""
    return isinstance(value, str) and 0 < len(value) <= 100 and "\x00" not in value


_default: ClassStore | None = None
_default_lock = threading.Lock()


def default_store() -> ClassStore:
    """The process-wide store the app uses (opened, and migrated, on first use; a database
    that is down then raises StoreDown, and the next call tries again)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = ClassStore()
        return _default
