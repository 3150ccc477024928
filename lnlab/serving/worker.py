"""One worker process per server for timed work, so it runs off the server's GIL.

The benchmark's timing loop is Python calling torch: in the server process it holds the GIL
for seconds and every other session's rerun waits. In a worker process it only shares the
CPU cores, at a lower priority (WORKER_NICE) so other sessions' edits go first. The worker is
started with "spawn" (a fresh interpreter: no copy of the server's threads, locks or CUDA
state; _no_main says why it does not re-run the server's main module), imports torch once,
and is reused; CUDA is initialised inside it by the first job that uses a GPU. A job past
its time limit, or a worker that dies, costs one run: the worker is stopped and the next
job starts a new one.

Every message carries its job's number, so a reply is only ever read by the call that sent
the job. A caller that leaves while its job runs (Streamlit stops a script by raising from
inside the progress callback) abandons the job: the worker is told to cancel it (a job that
reports progress stops at its next report) and the next call first waits for the abandoned
job's reply, bounded by that job's deadline, and discards it. A worker that cannot start is
tried again after a back-off (RETRY_FIRST_S, doubling up to RETRY_MAX_S), and `trouble()`
says so meanwhile.
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import multiprocessing
import os
import pickle
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from types import ModuleType
from typing import Any

START_TIMEOUT_S = 60.0  # a fresh interpreter importing torch: 2-4 s here, more under load
WORKER_NICE = 10  # added to the worker's niceness: other sessions' reruns go first
RETRY_FIRST_S = 5.0  # after a failed start, the next try waits this long, then twice as long...
RETRY_MAX_S = 300.0  # ... up to this
SETTLE_GRACE_S = 2.0  # an abandoned job gets this long past its deadline to answer


@contextlib.contextmanager
def _no_main() -> Iterator[None]:
    """Start a spawned child without the parent's `__main__`.

    Spawn re-runs the parent's main module in the child (by its file or module name). Under
    Streamlit that is the page script that ran last, since its script runner installs each page
    as `sys.modules["__main__"]`: the child would import Streamlit and run a page. An empty
    module in its place while the child starts gives it nothing to re-run.
    """
    main = sys.modules["__main__"]
    sys.modules["__main__"] = ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


class WorkerError(Exception):
    """The worker could not run the job; the message says why, for a person."""


class Unavailable(WorkerError):
    """No worker process can start now (so the caller may run the job in-process); the
    message says why and when the next start is tried."""


class TimedOut(WorkerError):
    """The job passed its time limit; the worker was stopped."""


class Died(WorkerError):
    """The worker process ended during the job."""


class Cancelled(Exception):
    """Raised inside the worker by report() when the job's caller has left."""


# In the worker: where report() sends progress, the number of the job running, and the number
# of the job asked to finish early (shared with the server: Worker.ask_yield).
_progress_conn: Connection | None = None
_job: int | None = None
_yield_to: Any = None


def yield_asked() -> bool:
    """From inside a job: True once the server asked this job to finish early (Worker.ask_yield):
    someone waits for the worker, so a job done in small steps ends after the step under way
    and answers with what it has. Costs a read of shared memory; False in-process."""
    return _yield_to is not None and _job is not None and _yield_to.value == _job


def report(*values: Any) -> None:
    """From inside a job: send `values` to the caller's on_progress (in-process: nothing).

    Raises Cancelled when the caller has abandoned the job, so a job that reports often
    stops soon after its caller left.
    """
    if _progress_conn is None:
        return
    while _progress_conn.poll():  # only cancellations arrive while a job runs
        if _progress_conn.recv() == ("cancel", _job):
            raise Cancelled(f"job {_job} was abandoned by its caller")
    _progress_conn.send(("progress", _job, values))


def _serve(conn: Connection, preload: tuple[str, ...], yield_to: Any = None) -> None:
    """The worker's loop: import `preload` (torch), say ready, then run numbered jobs and
    answer each with its number. `yield_to`: the shared number of the job asked to yield."""
    global _progress_conn, _job, _yield_to
    _progress_conn, _yield_to = conn, yield_to
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICE)
    for module in preload:  # once, before the first job
        importlib.import_module(module)
    conn.send("ready")
    while True:
        try:
            message = conn.recv()
        except EOFError:  # the server closed its end: stop
            return
        if message[0] != "job":  # a cancellation that came after its job had ended
            continue
        _, _job, fn, args = message
        try:
            reply = ("ok", _job, fn(*args))
        except Exception as exc:  # sent back and raised there, as if the call were local
            reply = ("error", _job, exc if _picklable(exc) else RuntimeError(repr(exc)))
        conn.send(reply)


def _picklable(value: object) -> bool:
    try:
        pickle.dumps(value)
    except Exception:
        return False
    return True


@dataclass(frozen=True)
class _Abandoned:
    """A job whose caller left before its reply: its number and when to give up on it."""

    job: int
    deadline: float


class Worker:
    """A lazily started worker process that runs one job at a time (see the module doc)."""

    def __init__(
        self,
        preload: tuple[str, ...] = ("torch",),
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.preload = preload  # modules the worker imports before saying it is ready
        self.clock = clock  # for the back-off between failed starts
        self._lock = threading.Lock()
        self._process: Any = None
        self._conn: Connection | None = None
        self._jobs = itertools.count(1)
        self._running: int | None = None  # the number of the job under way (for ask_yield)
        self._yield_to: Any = None  # shared with the process: the job asked to yield
        self._abandoned: _Abandoned | None = None
        self.failures = 0  # failed starts in a row
        self.failure = ""  # why the last start failed
        self.retry_at = 0.0  # no start is tried before this time (self.clock)
        self.started = 0  # processes started so far
        self.discarded = 0  # replies of abandoned jobs thrown away
        self.yields_asked = 0  # jobs asked to finish early (ask_yield)
        self.ahead = False  # `warm` starts it: a server's launcher says so (not tests, not AppTest)

    def call(
        self,
        fn: Callable[..., Any],
        *args: Any,
        timeout_s: float,
        on_progress: Callable[..., None] | None = None,
    ) -> Any:
        """fn(*args) in the worker (fn must be importable by name, args picklable); what fn
        passes to report() meanwhile goes to on_progress.

        Raises what fn raised, Unavailable, TimedOut (after `timeout_s`) or Died. Anything
        raised out of on_progress (a BaseException included) abandons the job and propagates.
        """
        with self._lock:
            conn = self._ready_connection()
            job = next(self._jobs)
            deadline = time.monotonic() + timeout_s
            answered = False
            self._running = job
            try:
                self._send(conn, ("job", job, fn, args))
                while True:
                    kind, number, value = self._receive(conn, deadline, timeout_s)
                    if number != job:  # cannot happen once settled; never read another's
                        continue
                    if kind != "progress":
                        answered = True
                        break
                    if on_progress is not None:
                        on_progress(*value)
            finally:
                self._running = None
                if not answered and self._conn is conn:  # the caller left: cancel, settle later
                    self._abandon(conn, job, deadline)
        if kind == "error":
            raise value
        return value

    def ask_yield(self) -> bool:
        """Ask the job under way to finish early (it sees `yield_asked()` turn True), from any
        thread: someone waits for the worker. The ask names the job, so it never reaches a
        later one. False when no job is under way."""
        job, yield_to = self._running, self._yield_to  # read once: the job may end meanwhile
        if job is None or yield_to is None:
            return False
        yield_to.value = job
        self.yields_asked += 1
        return True

    def _send(self, conn: Connection, message: tuple) -> None:
        try:
            conn.send(message)
        except OSError as exc:
            raise self._died() from exc

    def _receive(self, conn: Connection, deadline: float, timeout_s: float) -> Any:
        """The next message, or TimedOut / Died (the worker is stopped either way)."""
        try:
            if not conn.poll(max(0.0, deadline - time.monotonic())):
                self._stop()
                raise TimedOut(f"it passed its {timeout_s:g} s limit and was stopped")
            return conn.recv()
        except (EOFError, OSError) as exc:
            raise self._died() from exc

    def _died(self) -> Died:
        """Stop what is left of the worker; the error that says it ended."""
        process = self._process
        self._stop()
        code = process.exitcode if process else None
        return Died(f"the worker process ended (exit code {code})")

    def _abandon(self, conn: Connection, job: int, deadline: float) -> None:
        self._abandoned = _Abandoned(job, deadline + SETTLE_GRACE_S)
        try:
            conn.send(("cancel", job))
        except OSError:
            self._stop()

    def _settle(self, conn: Connection) -> None:
        """Wait for the abandoned job's last reply and discard it; past its deadline, or if
        the worker dies meanwhile, stop the worker instead."""
        abandoned, self._abandoned = self._abandoned, None
        if abandoned is None:
            return
        try:
            while conn.poll(max(0.0, abandoned.deadline - time.monotonic())):
                kind, number, _ = conn.recv()
                if number == abandoned.job and kind != "progress":
                    self.discarded += 1
                    return
        except (EOFError, OSError):
            pass
        self._stop()

    def _ready_connection(self) -> Connection:
        """The worker's connection, with any abandoned job settled (starting one if needed)."""
        conn = self._connection()
        if self._abandoned is not None:
            self._settle(conn)
            conn = self._connection()
        return conn

    def needs(self, module: str) -> None:
        """Have the worker import `module` before it says it is ready: the module of a job's
        function, so that unpickling the first job (which imports it) costs nothing of that
        job's time limit. A worker already running imports it with its first such job."""
        if module not in self.preload:
            self.preload = (*self.preload, module)

    def alive(self) -> bool:
        process = self._process  # read once: another thread may stop it meanwhile
        return process is not None and process.is_alive()

    def stop(self) -> None:
        """End the worker (the next call starts a new one)."""
        with self._lock:
            self._stop()

    def warm(self) -> bool:
        """Start the worker in the background, where `ahead` allows, unless it runs or is
        starting: a page that will soon need it (the training lab, the GPU page) spares its
        first job the start, 2-4 s of a fresh interpreter importing torch. A failed start
        counts as any other (the back-off). True if a start was begun."""
        if not self.ahead or self.alive() or not self._lock.acquire(blocking=False):
            return False

        def start() -> None:
            try:
                with contextlib.suppress(Unavailable):
                    self._connection()
            finally:
                self._lock.release()

        try:
            threading.Thread(target=start, name="lnlab-worker-warm", daemon=True).start()
        except BaseException:  # no thread (the process's limit): the lock must not stay held
            self._lock.release()
            raise
        return True

    def pid(self) -> int | None:
        return self._process.pid if self.alive() else None

    def trouble(self) -> str:
        """Why no worker is running, while its start is being retried; "" when all is well."""
        if not self.failures:
            return ""
        wait = max(0.0, self.retry_at - self.clock())
        when = f"in {wait:.0f} s" if wait >= 1 else "at the next run"
        tries = "once" if self.failures == 1 else f"{self.failures} times in a row"
        return (
            f"the worker process for heavy work could not start ({self.failure}; {tries}); "
            f"it will try again {when}"
        )

    def _connection(self) -> Connection:
        if self.alive() and self._conn is not None:
            return self._conn
        self._stop()
        if self.failures and self.clock() < self.retry_at:
            raise Unavailable(self.trouble())
        try:
            self._start()
        except Exception as exc:
            self._stop()
            self.failures += 1
            self.failure = f"{type(exc).__name__}: {exc}"
            backoff = min(RETRY_MAX_S, RETRY_FIRST_S * 2 ** (self.failures - 1))
            self.retry_at = self.clock() + backoff
            raise Unavailable(self.trouble()) from exc
        self.failures, self.failure = 0, ""
        assert self._conn is not None
        return self._conn

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        yield_to = context.RawValue("q", 0)  # job numbers start at 1: no job is asked yet
        process = context.Process(
            target=_serve, args=(theirs, self.preload, yield_to), name="lnlab-worker", daemon=True
        )
        with _no_main():
            process.start()
        theirs.close()
        self._process, self._conn, self._yield_to = process, ours, yield_to
        self.started += 1
        start = time.monotonic()
        if not ours.poll(START_TIMEOUT_S) or ours.recv() != "ready":
            raise RuntimeError(f"no answer in {time.monotonic() - start:.0f} s")

    def _stop(self) -> None:
        self._abandoned = None  # a new process has no old job to settle
        if self._conn is not None:
            self._conn.close()
        if self._process is not None:
            if self._process.is_alive():
                self._process.kill()
            self._process.join(5)
        self._process = self._conn = self._yield_to = None


# The server's one process for heavy work: the GPU page's benchmark and the training lab's
# runs wait in one line (lnlab.serving.heavy_work), so one process with torch serves both.
HEAVY = Worker()
