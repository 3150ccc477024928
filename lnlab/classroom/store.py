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
- classes end `CLASS_HOURS` after they open and are purged lazily; caps on live classes per
  server, students per class, questions per class and answers per student.
Nothing personal is stored: a student is a random id and an optional nickname (20 characters).
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import re
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from lnlab.classroom.live import LiveQuestion
from lnlab.core.errors import InputError
from lnlab.serving.database import MIGRATION_LOCK, OPEN_LOCK, URL_ENV, Database, database_url
from lnlab.teach.quiz import group_name

CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTVWXYZ"  # no 0 O 1 I L U: easy to read off a projector
CODE_LENGTH = 9  # 9 * log2(30) = 44.2 bits
CLASS_HOURS = 24
MAX_NICKNAME = 20


@dataclass(frozen=True)
class Limits:
    """Caps that keep one server's classes bounded; each refusal says which cap was hit."""

    classes: int = 200  # live classes per server (per database)
    students: int = 200  # per class
    questions: int = 200  # posed per class
    answers: int = 500  # per student


class ClassError(InputError):
    """A class code, secret or action that the store refuses; the message is for the user."""


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
class Following:
    """What a student's device shows: the question asked now (None before the first), the
    option this student chose for it (None if none yet), and their score (see `score`)."""

    posed: Posed | None
    mine: str | None
    right: int
    answered: int


@dataclass(frozen=True)
class Tally:
    joined: int
    answered: int
    by_group: dict[str, int]


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


metadata = sa.MetaData()  # the tables as the queries see them (the migrations make them)
classes = sa.Table(
    "classes",
    metadata,
    sa.Column("code", sa.Text, primary_key=True),
    sa.Column("teacher_digest", sa.Text, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("expires_at", sa.Float, nullable=False),
    sa.Column("current_qid", sa.Text),
)
students = sa.Table(
    "students",
    metadata,
    sa.Column("code", sa.Text, primary_key=True),
    sa.Column("student_id", sa.Text, primary_key=True),
    sa.Column("nickname", sa.Text, nullable=False),
    sa.Column("joined_at", sa.Float, nullable=False),
)
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
)


class ClassStore:
    """Live classes in one database; safe to share between threads and processes."""

    def __init__(
        self,
        url: str | None = None,
        *,
        clock: Callable[[], float] = time.time,
        limits: Limits = Limits(),
    ) -> None:
        self.url = database_url(url)
        self.clock = clock
        self.limits = limits
        self._db = Database(self.url)
        # answer()'s statements, chosen once: on PostgreSQL the context query also locks the
        # student's row, so one student's answers queue and the answers cap holds
        self._answer_context = (
            _ANSWER_CONTEXT.with_for_update(of=students) if self._db.postgres else _ANSWER_CONTEXT
        )
        self._insert_answer = _insert(self._db.engine)(answers)
        self.migrate()

    def close(self) -> None:
        """Close the store's connections (the data stays in the database)."""
        self._db.close()

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

    def schema_version(self) -> int:
        with self._db.read() as conn:
            return _version(conn)

    # --- helpers -------------------------------------------------------------------------------

    def _class(self, conn: Connection, typed: str, *, lock: bool = False) -> sa.Row:
        """The live class for a typed code, or ClassError (malformed, unknown or ended)."""
        code = normalize_code(typed)
        query = sa.select(classes).where(classes.c.code == code)
        if lock:
            query = query.with_for_update()
        row = conn.execute(query).first()
        if row is None:
            raise ClassError(
                f"there is no class {display_code(code)}: check the code on the projector"
            )
        if row.expires_at <= self.clock():
            raise ClassError(
                f"class {display_code(code)} has ended (a class lasts {CLASS_HOURS} hours); "
                "ask your teacher for a new code"
            )
        return row

    def _teacher(self, conn: Connection, typed: str, secret: str, action: str) -> sa.Row:
        row = self._class(conn, typed)
        given = _digest(secret) if isinstance(secret, str) else ""
        if not secrets.compare_digest(given, row.teacher_digest):
            raise ClassError(f"only the teacher of this class can {action}")
        return row

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

    # --- the teacher ---------------------------------------------------------------------------

    def open_class(self, now: float | None = None) -> NewClass:
        """A new class with a fresh code and teacher secret; ended classes are purged first."""
        now = self.clock() if now is None else now
        with self._db.write(lock=OPEN_LOCK) as conn:  # openers one at a time: the cap holds
            self._purge(conn, now)
            if self._count(conn, classes) >= self.limits.classes:
                raise ClassError(
                    f"this server already runs {self.limits.classes} classes, its limit; "
                    "try again when one ends"
                )
            secret = secrets.token_urlsafe(24)
            expires_at = now + CLASS_HOURS * 3600
            while True:
                code = new_code()
                if self._count(conn, classes, classes.c.code == code) == 0:
                    break
            conn.execute(
                classes.insert().values(
                    code=code,
                    teacher_digest=_digest(secret),
                    created_at=now,
                    expires_at=expires_at,
                    current_qid=None,
                )
            )
        return NewClass(code, secret, expires_at)

    def _purge(self, conn: Connection, now: float) -> None:
        ended = sa.select(classes.c.code).where(classes.c.expires_at <= now)
        for table in (answers, questions, students):
            conn.execute(table.delete().where(table.c.code.in_(ended)))
        conn.execute(classes.delete().where(classes.c.expires_at <= now))

    def end_class(self, code: str, teacher_secret: str) -> None:
        """End a class now (frees its slot under the per-server cap)."""
        with self._db.write() as conn:
            row = self._teacher(conn, code, teacher_secret, "end it")
            conn.execute(
                classes.update().where(classes.c.code == row.code).values(expires_at=self.clock())
            )

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

    def reveal(self, code: str, teacher_secret: str, qid: str) -> None:
        """Show the class the answer to `qid` (students' scores count it from now on)."""
        with self._db.write() as conn:
            row = self._teacher(conn, code, teacher_secret, "reveal the answer")
            self._question(conn, row.code, qid)
            conn.execute(
                questions.update()
                .where(questions.c.code == row.code, questions.c.qid == qid)
                .values(revealed=1)
            )

    def tally(self, code: str, teacher_secret: str, qid: str) -> Tally:
        """How many joined, how many answered `qid`, and how many fell into each group."""
        with self._db.read() as conn:
            row = self._teacher(conn, code, teacher_secret, "see the answers")
            question = _question_from(self._question(conn, row.code, qid).body)
            joined = self._count(conn, students, students.c.code == row.code)
            counts = conn.execute(
                sa.select(answers.c.grp, sa.func.count())
                .where(answers.c.code == row.code, answers.c.qid == qid)
                .group_by(answers.c.grp)
            ).all()
        by_group = dict.fromkeys(question.groups, 0) | {grp: n for grp, n in counts}
        return Tally(joined, sum(by_group.values()), by_group)

    def check_teacher(self, code: str, teacher_secret: str) -> None:
        """Nothing if `teacher_secret` is this class's, else ClassError saying what is wrong."""
        with self._db.read() as conn:
            self._teacher(conn, code, teacher_secret, "open the teacher's view")

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

    def counts_csv(self, code: str, teacher_secret: str) -> str:
        """One row per question and group, in posing order: question, prompt, group (its key),
        answer (the group's name: "Right", the misconception's name, "Something else"), count."""
        with self._db.read() as conn:
            row = self._teacher(conn, code, teacher_secret, "download the answers")
            posed = conn.execute(
                sa.select(questions.c.qid, questions.c.body)
                .where(questions.c.code == row.code)
                .order_by(questions.c.posed_at, questions.c.qid)
            ).all()
            counts = conn.execute(
                sa.select(answers.c.qid, answers.c.grp, sa.func.count())
                .where(answers.c.code == row.code)
                .group_by(answers.c.qid, answers.c.grp)
            ).all()
        by_question = {(qid, grp): n for qid, grp, n in counts}
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["question", "prompt", "group", "answer", "count"])
        for qid, body in posed:
            question = _question_from(body)
            for group in question.groups:
                count = by_question.get((qid, group), 0)
                writer.writerow([qid, question.prompt, group, group_name(group), count])
        return out.getvalue()

    # --- the students --------------------------------------------------------------------------

    def check_code(self, code: str) -> ClassInfo:
        """The class a typed code names, or ClassError saying what is wrong with the code."""
        with self._db.read() as conn:
            row = self._class(conn, code)
            joined = self._count(conn, students, students.c.code == row.code)
        return ClassInfo(row.code, row.expires_at, joined)

    def join(self, code: str, student_id: str | None = None, nickname: str = "") -> str:
        """The student's id in the class: the same one for a known id (a reload keeps the score),
        else a new random one. A non-empty nickname replaces the one stored."""
        nickname = check_nickname(nickname)
        with self._db.write() as conn:
            row = self._class(conn, code, lock=True)  # serialises joins: the cap holds
            if student_id is not None and self._student(conn, row.code, student_id):
                if nickname:
                    conn.execute(
                        students.update()
                        .where(students.c.code == row.code, students.c.student_id == student_id)
                        .values(nickname=nickname)
                    )
                return student_id
            if self._count(conn, students, students.c.code == row.code) >= self.limits.students:
                raise ClassError(
                    f"class {display_code(row.code)} is full ({self.limits.students} students)"
                )
            new_id = secrets.token_urlsafe(16)
            conn.execute(
                students.insert().values(
                    code=row.code, student_id=new_id, nickname=nickname, joined_at=self.clock()
                )
            )
            return new_id

    def current(self, code: str) -> Posed | None:
        """The question the class is on, and whether its answer has been revealed."""
        with self._db.read() as conn:
            return self._current(conn, self._class(conn, code))

    def _current(self, conn: Connection, row: sa.Row) -> Posed | None:
        if row.current_qid is None:
            return None
        question = self._question(conn, row.code, row.current_qid)
        return Posed(_question_from(question.body), bool(question.revealed))

    def follow(self, code: str, student_id: str) -> Following:
        """`current`, `my_answer` for the current question and `score`, in one transaction: a
        student's device asks every 1.5 s (lnlab.ui.classroom.STUDENT_POLL_S), a whole class."""
        with self._db.read() as conn:
            row = self._class(conn, code)
            posed = self._current(conn, row)
            mine = self._my_answer(conn, row, student_id, posed.question.qid) if posed else None
            return Following(posed, mine, *self._score(conn, row, student_id))

    def answer(self, code: str, student_id: str, qid: str, option: str) -> bool:
        """Record the student's first answer to the current question `qid`.

        False when the student has already answered it or it is not the current question;
        ClassError for an unknown student, an option the question does not have, or a cap.
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
            chosen = _question_from(row.body).option(option) if isinstance(option, str) else None
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


def check_nickname(nickname: str) -> str:
    """A nickname as stored: trimmed, at most MAX_NICKNAME characters, no control characters.

    It is kept as plain text and never interpreted; pages must show it escaped."""
    if not isinstance(nickname, str):
        raise ClassError("a nickname is text")
    nickname = nickname.strip()
    if len(nickname) > MAX_NICKNAME:
        raise ClassError(f"a nickname has at most {MAX_NICKNAME} characters")
    if any(not c.isprintable() for c in nickname):
        raise ClassError("a nickname cannot contain line breaks or control characters")
    return nickname


_default: ClassStore | None = None
_default_lock = threading.Lock()


def default_store() -> ClassStore:
    """The process-wide store the app uses (opened, and migrated, on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = ClassStore()
        return _default
