"""The database every server process shares: where it is, its engine, and read and write
transactions. The class store (lnlab.classroom.store) and the heavy-work line
(lnlab.serving.heavy_work) keep their tables in it.

SQLite in a file, or PostgreSQL, through SQLAlchemy Core. Writers that must not interleave
(two of them reading a count, then both inserting) are kept apart:
- SQLite has one writer at a time. A write transaction takes the write lock at BEGIN (BEGIN
  IMMEDIATE), and this process's writers queue on a thread lock first, rather than in SQLite's
  busy handler, which sleeps up to 100 ms between tries.
- PostgreSQL runs writers side by side. A write that must run alone names an advisory lock,
  held to the end of its transaction: every process that shares the database waits for it.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from lnlab.core.errors import InputError

DEFAULT_PATH = Path(__file__).resolve().parents[2] / ".lnlab-data" / "classes.db"
URL_ENV = "LNLAB_DATABASE_URL"

# PostgreSQL advisory lock keys, for `Database.write(lock=...)`.
MIGRATION_LOCK = 73012024  # the class store's migrations
OPEN_LOCK = 73012025  # opening a class (the cap on classes)
LINE_LOCK = 73012026  # the heavy-work line (lnlab.serving.heavy_work)


def database_url(url: str | None = None) -> str:
    """`url`, else $LNLAB_DATABASE_URL, else the default SQLite file (its folder is created)."""
    url = url or os.environ.get(URL_ENV, "").strip()
    if not url:
        DEFAULT_PATH.parent.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{DEFAULT_PATH}"
    if url.startswith("sqlite") and (url == "sqlite://" or ":memory:" in url):
        raise InputError(f"{URL_ENV}: the app needs a database file or server, not memory")
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):  # psycopg 3 is the driver we ship
            return "postgresql+psycopg://" + url.removeprefix(prefix)
    return url


def _wal(cursor: sqlite3.Cursor, tries: int = 100) -> None:
    """Put the database in WAL mode (readers do not wait for the writer). Two processes opening
    a new file at once may find it locked: SQLite does not wait (busy_timeout) for this
    statement, so it is tried again, 20 ms apart."""
    for attempt in range(tries):
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == tries - 1:
                raise
            time.sleep(0.02)


def create_engine(url: str, busy_timeout_s: float = 30.0) -> Engine:
    """The engine for `url` (SQLite: WAL, a write waits `busy_timeout_s` for the lock, writers
    BEGIN IMMEDIATE)."""
    if not url.startswith("sqlite"):
        return sa.create_engine(url, pool_size=10, max_overflow=20, pool_pre_ping=True)
    busy_ms = int(busy_timeout_s * 1000)
    engine = sa.create_engine(
        url, connect_args={"check_same_thread": False, "timeout": busy_timeout_s}, pool_size=10
    )

    @sa.event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record) -> None:
        # Take transactions into our own hands (pysqlite's implicit BEGIN is deferred).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={busy_ms}")
        _wal(cursor)
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        # A writing transaction takes SQLite's write lock at once: two writers never both read
        # a count and then both insert; the second waits (busy_timeout) instead of failing.
        write = conn.get_execution_options().get("lnlab_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


class Database:
    """One engine on `url`, with the transactions described above; safe to share between
    threads."""

    def __init__(self, url: str, busy_timeout_s: float = 30.0) -> None:
        self.url = url
        self.engine = create_engine(url, busy_timeout_s)
        self.postgres = self.engine.dialect.name == "postgresql"
        self._write_lock = contextlib.nullcontext() if self.postgres else threading.Lock()

    def close(self) -> None:
        """Close the connections (the data stays in the database)."""
        self.engine.dispose()

    @contextlib.contextmanager
    def write(self, *, lock: int | None = None) -> Iterator[Connection]:
        """A write transaction; on PostgreSQL, `lock` (an advisory lock key) is held to its end.
        (SQLite's writers run one at a time in any case.)"""
        with self._write_lock, self.engine.connect() as conn:
            conn.execution_options(lnlab_write=True)
            with conn.begin():
                if lock is not None and self.postgres:
                    conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": lock})
                yield conn

    @contextlib.contextmanager
    def read(self) -> Iterator[Connection]:
        """A transaction that only reads (SQLite: a plain BEGIN, which never waits for writers)."""
        with self.engine.connect() as conn, conn.begin():
            yield conn
