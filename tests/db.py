"""Databases for the class store's tests: a SQLite file, and a throwaway PostgreSQL cluster.

The cluster is Debian's PostgreSQL (`scripts/ensure-postgresql` installs it; `make test` runs
that): initdb into a temporary folder, postgres on a free port of 127.0.0.1, stopped and deleted
at the end of the session. initdb refuses to run as root, so as root it runs as the `postgres`
user the Debian package creates. Each test gets its own schema, so tests never see each other's
classes (the per-server cap counts every class in the database).
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from lnlab.serving.cluster import free_port

POSTGRES_BIN_DIRS = ("/usr/lib/postgresql/*/bin",)


def postgres_bin() -> Path | None:
    """The folder holding Debian's initdb and postgres, or None when they are not installed."""
    found = shutil.which("initdb")
    if found and Path(found).resolve().with_name("postgres").exists():
        return Path(found).resolve().parent
    for pattern in POSTGRES_BIN_DIRS:
        for folder in sorted(glob.glob(pattern), reverse=True):
            if Path(folder, "initdb").exists():
                return Path(folder)
    return None


def _run_as() -> tuple[list[str], str | None]:
    """The command prefix that runs PostgreSQL as a non-root user, and that user (None: us)."""
    if os.geteuid() != 0:
        return [], None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise RuntimeError("running as root and there is no 'postgres' user to run it as") from None
    return ["runuser", "-u", "postgres", "--"], "postgres"


class PostgresServer:
    """A throwaway cluster's server, which a test may stop and start again (same data, same
    port): a database restart in the middle of a class."""

    def __init__(self, bindir: Path, prefix: list[str], folder: Path, durable: bool) -> None:
        self.bindir, self.prefix = bindir, prefix
        self.data = folder / "data"
        self.log = folder / "postgres.log"
        self.port = free_port()
        self.url = f"postgresql+psycopg://lnlab@127.0.0.1:{self.port}/postgres"
        self.settings = ["listen_addresses=127.0.0.1", "max_connections=300", f"port={self.port}"]
        self.settings += [f"unix_socket_directories={folder}"]
        if not durable:
            self.settings += ["fsync=off", "synchronous_commit=off", "full_page_writes=off"]
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen(
                [*self.prefix, str(self.bindir / "postgres"), "-D", str(self.data)]
                + [arg for setting in self.settings for arg in ("-c", setting)],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        _wait_ready(self.url, self.process, self.log)

    def stop(self) -> None:
        if self.process is not None:
            _stop(self.process, self.data)
            self.process = None


@contextmanager
def postgres_server(*, durable: bool = False) -> Iterator[PostgresServer]:
    """Start a throwaway PostgreSQL cluster and yield its server (`.url`: its SQLAlchemy URL).

    `durable=False` turns fsync off (tests: nothing needs to survive a power cut);
    benchmarks pass True to measure the real cost of a commit."""
    bindir = postgres_bin()
    if bindir is None:
        raise FileNotFoundError("PostgreSQL is not installed (scripts/ensure-postgresql)")
    prefix, user = _run_as()
    folder = Path(tempfile.mkdtemp(prefix="lnlab-pg-"))
    if user:
        shutil.chown(folder, user)
    server = PostgresServer(bindir, prefix, folder, durable)
    try:
        initdb = [str(bindir / "initdb"), "-D", str(server.data), "-A", "trust", "-U", "lnlab"]
        initdb += ["-E", "UTF8", "--no-sync", "--no-instructions"]
        subprocess.run([*prefix, *initdb], check=True, capture_output=True)
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def postgres_cluster(*, durable: bool = False) -> Iterator[str]:
    """`postgres_server`, yielding its URL."""
    with postgres_server(durable=durable) as server:
        yield server.url


def _stop(server: subprocess.Popen, data: Path) -> None:
    """Fast shutdown (SIGINT to the postmaster itself: runuser does not pass it on)."""
    try:
        os.kill(int((data / "postmaster.pid").read_text().split()[0]), signal.SIGINT)
    except (OSError, ValueError, IndexError):
        server.send_signal(signal.SIGINT)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def _wait_ready(url: str, server: subprocess.Popen, log: Path) -> None:
    import psycopg

    conninfo = url.replace("postgresql+psycopg://", "postgresql://")
    deadline = time.monotonic() + 30
    while True:
        try:
            psycopg.connect(conninfo, connect_timeout=2).close()
            return
        except psycopg.OperationalError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    "PostgreSQL did not start:\n" + log.read_text(errors="replace")[-2000:]
                ) from None
            time.sleep(0.05)


def schema_url(url: str) -> str:
    """A new, empty schema in the cluster at `url`, as a URL whose connections use it."""
    import psycopg

    name = "t_" + secrets.token_hex(6)
    conninfo = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    return f"{url}?options=-csearch_path%3D{name}"


@contextmanager
def _or_skip() -> Iterator[None]:
    """Skip the test where PostgreSQL is not installed (or cannot run here); fail otherwise."""
    try:
        yield
    except (FileNotFoundError, RuntimeError) as error:
        if postgres_bin() is None or "no 'postgres' user" in str(error):
            pytest.skip(f"PostgreSQL tests skipped: {error}")
        raise


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL cluster for the whole session; skipped only where it is not installed."""
    with _or_skip(), postgres_cluster() as url:
        yield url


@pytest.fixture
def restartable_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL cluster of the test's own, which it may stop and start again."""
    with _or_skip(), postgres_server() as server:
        yield server


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty database: a SQLite file, then a PostgreSQL schema."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'classes.db'}"
    return schema_url(request.getfixturevalue("postgres_url"))
