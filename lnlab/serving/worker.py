"""One worker process per server for timed work, so it runs off the server's GIL.

The benchmark's timing loop is Python calling torch: in the server process it holds the GIL
for seconds and every other session's rerun waits. In a worker process it only shares the
CPU cores, at a lower priority (WORKER_NICE) so other sessions' edits go first. The worker is
started with "spawn" (a fresh interpreter: no copy of the server's threads, locks or CUDA
state; _no_main says why it does not re-run the server's main module), imports torch once,
and is reused; CUDA is initialised inside it by the first job that uses a GPU. A job past
its time limit, or a worker that dies, costs one run: the worker is stopped and the next
job starts a new one.
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing
import os
import pickle
import sys
import threading
import time
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from types import ModuleType
from typing import Any

START_TIMEOUT_S = 60.0  # a fresh interpreter importing torch: 2-4 s here, more under load
WORKER_NICE = 10  # added to the worker's niceness: other sessions' reruns go first


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
    """No worker process can start here (so the caller may run the job in-process)."""


class TimedOut(WorkerError):
    """The job passed its time limit; the worker was stopped."""


class Died(WorkerError):
    """The worker process ended during the job."""


_progress_conn: Connection | None = None  # in the worker: where report() sends progress


def report(*values: Any) -> None:
    """From inside a job: send `values` to the caller's on_progress (in-process: nothing)."""
    if _progress_conn is not None:
        _progress_conn.send(("progress", values))


def _serve(conn: Connection, preload: tuple[str, ...]) -> None:
    """The worker's loop: import `preload` (torch), say ready, then run (fn, args) jobs."""
    global _progress_conn
    _progress_conn = conn
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICE)
    for module in preload:  # once, before the first job
        importlib.import_module(module)
    conn.send("ready")
    while True:
        try:
            fn, args = conn.recv()
        except EOFError:  # the server closed its end: stop
            return
        try:
            reply = ("ok", fn(*args))
        except Exception as exc:  # sent back and raised there, as if the call were local
            reply = ("error", exc if _picklable(exc) else RuntimeError(repr(exc)))
        conn.send(reply)


def _picklable(value: object) -> bool:
    try:
        pickle.dumps(value)
    except Exception:
        return False
    return True


class Worker:
    """A lazily started worker process that runs one job at a time (see the module doc)."""

    def __init__(self, preload: tuple[str, ...] = ("torch",)) -> None:
        self.preload = preload  # modules the worker imports before saying it is ready
        self._lock = threading.Lock()
        self._process: Any = None
        self._conn: Connection | None = None
        self.unavailable = ""  # why no worker can start here, once that is known
        self.started = 0  # processes started so far

    def call(
        self,
        fn: Callable[..., Any],
        *args: Any,
        timeout_s: float,
        on_progress: Callable[..., None] | None = None,
    ) -> Any:
        """fn(*args) in the worker (fn must be importable by name, args picklable); what fn
        passes to report() meanwhile goes to on_progress.

        Raises what fn raised, Unavailable, TimedOut (after `timeout_s`) or Died.
        """
        with self._lock:
            conn = self._connection()
            deadline = time.monotonic() + timeout_s
            try:
                conn.send((fn, args))
                while True:
                    if not conn.poll(max(0.0, deadline - time.monotonic())):
                        self._stop()
                        raise TimedOut(f"it passed its {timeout_s:g} s limit and was stopped")
                    status, value = conn.recv()
                    if status != "progress":
                        break
                    if on_progress is not None:
                        on_progress(*value)
            except (EOFError, OSError) as exc:
                process = self._process
                self._stop()
                code = process.exitcode if process else None
                raise Died(f"the worker process ended (exit code {code})") from exc
        if status == "error":
            raise value
        return value

    def alive(self) -> bool:
        return self._process is not None and self._process.is_alive()

    def stop(self) -> None:
        """End the worker (the next call starts a new one)."""
        with self._lock:
            self._stop()

    def pid(self) -> int | None:
        return self._process.pid if self.alive() else None

    def _connection(self) -> Connection:
        if self.alive() and self._conn is not None:
            return self._conn
        self._stop()
        if self.unavailable:
            raise Unavailable(self.unavailable)
        try:
            self._start()
        except Exception as exc:
            self._stop()
            self.unavailable = f"{type(exc).__name__}: {exc}"
            raise Unavailable(self.unavailable) from exc
        assert self._conn is not None
        return self._conn

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        process = context.Process(
            target=_serve, args=(theirs, self.preload), name="lnlab-worker", daemon=True
        )
        with _no_main():
            process.start()
        theirs.close()
        self._process, self._conn = process, ours
        self.started += 1
        start = time.monotonic()
        if not ours.poll(START_TIMEOUT_S) or ours.recv() != "ready":
            raise RuntimeError(f"no answer in {time.monotonic() - start:.0f} s")

    def _stop(self) -> None:
        if self._conn is not None:
            self._conn.close()
        if self._process is not None:
            if self._process.is_alive():
                self._process.kill()
            self._process.join(5)
        self._process = self._conn = None


# The server's one process for heavy work: the GPU page's benchmark and the training lab's
# runs wait in one line (lnlab.serving.heavy_work), so one process with torch serves both.
HEAVY = Worker()
