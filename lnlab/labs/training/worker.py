"""Training runs off the server's process, one at a time, each configuration once.

A run takes seconds of CPU; in the server's process it would hold the GIL and stall every
visitor. So runs go to the server's heavy-work process (lnlab.serving.worker.HEAVY, which the GPU
benchmark uses too: the two wait in one line), and the server's thread only waits,
passing on the progress the run reports.

Thirty students opening the teacher's link cost one run: finished results are cached per
configuration (bounded, shared by every session), and a visitor asking for a configuration
that is already training follows that run's progress instead of queueing another. A run
waits in the server's heavy-work line (lnlab.serving.heavy_work, shared with the GPU benchmark)
and is stopped past TIME_CAP_S.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from lnlab.core.errors import InputError
from lnlab.labs.training.config import TrainConfig
from lnlab.labs.training.run import LabResult, run_lab
from lnlab.serving import heavy_work, worker

TIME_CAP_S = 90.0
CACHE_SIZE = 32
REPORTS = 100  # progress messages per run, at most

OnProgress = Callable[[int, int, float], None]  # steps done, steps in all, seconds so far
OnWait = Callable[[int], None]  # place in the queue, 1 = next


def job(config: TrainConfig) -> LabResult:
    """The worker's job: the run, reporting (done, total) about REPORTS times."""

    def progress(done: int, total: int) -> None:
        if done == total or done % max(1, total // REPORTS) == 0:
            worker.report(done, total)

    return run_lab(config, progress)


@dataclass
class _Flight:
    """A run in progress, followed by every visitor who asked for its configuration."""

    done: threading.Event = field(default_factory=threading.Event)
    progress: tuple[int, int, float] = (0, 1, 0.0)
    result: LabResult | None = None
    error: str = ""


class Lab:
    """Cached, shared, one-at-a-time training runs (one instance per server: LAB)."""

    def __init__(self, runner: worker.Worker | None = None, cache_size: int = CACHE_SIZE) -> None:
        self.worker = runner or worker.HEAVY  # shared with the GPU benchmark
        self.cache_size = cache_size
        self._lock = threading.Lock()
        self._cache: OrderedDict[TrainConfig, LabResult] = OrderedDict()
        self._flights: dict[TrainConfig, _Flight] = {}
        self.runs_started = 0  # how many runs reached the worker: the cache's test

    def cached(self, config: TrainConfig) -> LabResult | None:
        """The finished result for `config`, or None."""
        with self._lock:
            return self._hit(config)

    def _hit(self, config: TrainConfig) -> LabResult | None:
        """The cached result, now the most recently used, or None (call with the lock held)."""
        result = self._cache.get(config)
        if result is not None:
            self._cache.move_to_end(config)
        return result

    def train(
        self,
        config: TrainConfig,
        owner: str,
        on_progress: OnProgress | None = None,
        on_wait: OnWait | None = None,
    ) -> LabResult:
        """`config`'s result: cached, followed from a run in progress, or run now.

        Raises InputError when the run fails, and BusyError (an InputError) when the
        server's heavy-work line refuses it.
        """
        report = on_progress or (lambda done, total, seconds: None)
        with self._lock:
            if (hit := self._hit(config)) is not None:
                return hit
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

            with heavy_work.front(owner, on_wait=on_wait):  # heavy_work.MAX_WAIT_S in line, at most
                self.runs_started += 1
                start = time.monotonic()
                try:
                    flight.result = self.worker.call(
                        job,
                        config,
                        timeout_s=TIME_CAP_S,
                        on_progress=lambda done, total: follow(
                            done, total, time.monotonic() - start
                        ),
                    )
                except worker.WorkerError as err:
                    raise InputError(
                        f"The training run did not finish: {err}. Try fewer blocks, steps or "
                        "variants."
                    ) from err
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
