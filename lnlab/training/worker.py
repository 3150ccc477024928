"""Training runs off the server's process, one at a time, each configuration once.

A run takes seconds of CPU; in the server's process it would hold the GIL and stall every
visitor. So runs go to one worker process (spawned), started when first
needed and kept. The server's thread only waits on a queue, reporting progress as it comes.

Thirty students opening the teacher's link cost one run: finished results are cached per
configuration (bounded, shared by every session), and a visitor asking for a configuration
that is already training follows that run's progress instead of queueing another. A run
takes the server's one heavy-work slot (lnlab.fair_queue, shared with the GPU benchmark) and
is stopped past TIME_CAP_S.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from lnlab import benchmark
from lnlab.errors import InputError
from lnlab.training.config import TrainConfig
from lnlab.training.run import LabResult

TIME_CAP_S = 90.0
MAX_WAIT_S = 60.0  # in the fair queue before giving up
CACHE_SIZE = 32
REPORTS = 100  # progress messages per run, at most

OnProgress = Callable[[int, int, float], None]  # steps done, steps in all, seconds so far
OnWait = Callable[[int], None]  # place in the queue, 1 = next


def _serve(jobs: mp.Queue, replies: mp.Queue) -> None:
    """The worker process: run each configuration from `jobs`, reply progress and result."""
    from lnlab.training.run import run_lab

    while (config := jobs.get()) is not None:

        def report(done: int, total: int) -> None:
            if done == total or done % max(1, total // REPORTS) == 0:
                replies.put(("progress", done, total))

        try:
            replies.put(("done", run_lab(config, report)))
        except Exception as exc:  # a bug: the visitor gets a message, the server goes on
            replies.put(("error", f"the training run failed ({type(exc).__name__}: {exc})"))


class Worker:
    """The one training process: started on the first run, restarted if it dies or is
    stopped for passing the time cap."""

    def __init__(self, time_cap_s: float = TIME_CAP_S) -> None:
        self.time_cap_s = time_cap_s
        self._process: mp.process.BaseProcess | None = None

    def _start(self) -> None:
        context = mp.get_context("spawn")
        self._jobs, self._replies = context.Queue(), context.Queue()
        self._process = context.Process(
            target=_serve, args=(self._jobs, self._replies), daemon=True, name="lnlab-training"
        )
        self._process.start()

    def stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.join(5)
            self._process = None

    def run(self, config: TrainConfig, on_progress: OnProgress) -> LabResult:
        """The run's result; InputError if it fails or passes the time cap."""
        if self._process is None or not self._process.is_alive():
            self._start()
        start = time.monotonic()
        self._jobs.put(config)
        while True:
            try:
                message = self._replies.get(timeout=0.25)
            except queue.Empty:
                if not self._process.is_alive():
                    self.stop()
                    raise InputError("the training process stopped unexpectedly") from None
                if time.monotonic() - start > self.time_cap_s:
                    self.stop()
                    raise InputError(
                        f"the training run passed the {self.time_cap_s:g} s cap and was "
                        "stopped; try fewer layers, steps or variants"
                    ) from None
                continue
            kind, *rest = message
            if kind == "progress":
                on_progress(rest[0], rest[1], time.monotonic() - start)
            elif kind == "done":
                return rest[0]
            else:
                raise InputError(rest[0])


@contextlib.contextmanager
def _benchmark_slot() -> Iterator[None]:
    """The benchmark's one slot, without waiting (until lnlab.fair_queue lands)."""
    if not benchmark._heavy_run.acquire(blocking=False):
        raise benchmark.BusyError(
            "Another visitor's benchmark or training run is using the server; try again soon."
        )
    try:
        yield
    finally:
        benchmark._heavy_run.release()


def heavy_turn(owner: str, on_wait: OnWait | None) -> AbstractContextManager[None]:
    """The server's heavy-work slot for `owner`: the fair queue's turn when it exists."""
    try:
        from lnlab.fair_queue import turn
    except ImportError:
        return _benchmark_slot()
    return turn(owner, on_wait=on_wait, max_wait_s=MAX_WAIT_S)


@dataclass
class _Flight:
    """A run in progress, followed by every visitor who asked for its configuration."""

    done: threading.Event = field(default_factory=threading.Event)
    progress: tuple[int, int, float] = (0, 1, 0.0)
    result: LabResult | None = None
    error: str = ""


class Lab:
    """Cached, shared, one-at-a-time training runs (one instance per server: LAB)."""

    def __init__(self, worker: Worker | None = None, cache_size: int = CACHE_SIZE) -> None:
        self.worker = worker or Worker()
        self.cache_size = cache_size
        self._lock = threading.Lock()
        self._cache: OrderedDict[TrainConfig, LabResult] = OrderedDict()
        self._flights: dict[TrainConfig, _Flight] = {}
        self.runs_started = 0  # how many runs reached the worker: the cache's test

    def cached(self, config: TrainConfig) -> LabResult | None:
        """The finished result for `config`, or None."""
        with self._lock:
            if config in self._cache:
                self._cache.move_to_end(config)
                return self._cache[config]
            return None

    def train(
        self,
        config: TrainConfig,
        owner: str,
        on_progress: OnProgress | None = None,
        on_wait: OnWait | None = None,
    ) -> LabResult:
        """`config`'s result: cached, followed from a run in progress, or run now.

        Raises InputError when the run fails, and BusyError (an InputError) when the
        server's heavy-work slot cannot be had.
        """
        report = on_progress or (lambda done, total, seconds: None)
        with self._lock:
            if config in self._cache:
                return self._cache[config]
            flight = self._flights.get(config)
            leader = flight is None
            if leader:
                flight = self._flights[config] = _Flight()
        if not leader:
            while not flight.done.wait(0.25):
                report(*flight.progress)
            if flight.result is None:
                raise InputError(flight.error)
            return flight.result
        try:

            def follow(done: int, total: int, seconds: float) -> None:
                flight.progress = (done, total, seconds)
                report(done, total, seconds)

            with heavy_turn(owner, on_wait):
                self.runs_started += 1
                flight.result = self.worker.run(config, follow)
            with self._lock:
                self._cache[config] = flight.result
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
            return flight.result
        except InputError as err:
            flight.error = str(err)
            raise
        finally:
            with self._lock:
                del self._flights[config]
            flight.done.set()


def time_left(done: int, total: int, seconds: float) -> str:
    """The progress bar's text: "37 of 750 steps, about 12 s left"."""
    if done <= 0:
        return f"0 of {total:,} steps, starting..."
    left = seconds / done * (total - done)
    return f"{done:,} of {total:,} steps, about {left:.0f} s left"


LAB = Lab()
