"""A benchmark's wait behind the longest training run: `python -m bench.training_line`.

One visitor trains the largest configuration the caps allow (8 blocks x 300 steps x 3 runs,
in pieces of at most lnlab.labs.training.worker.PIECE_WORK blocks x steps or PIECE_S
seconds); meanwhile a second visitor presses the GPU page's Run (a CPU benchmark of
BENCH_SHAPE, float32) again the moment each run ends, as bench.gpu_fairness's visitors do.
Both go through the server's heavy-work line and its one worker process, as in the app (the
line in a temporary SQLite file). It prints each piece's time in the worker, and each
benchmark run's wait (press to result, less the run's own time) and its time at the front;
then the training run's wall time with the benchmarks between its pieces against its time
alone, measured first in the same run.

Before the pieces, a training run held the front for the whole run: the benchmark waited for
all of it (and past heavy_work.MAX_WAIT_S, 60 s, it was refused).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import threading
import time

from bench.report import load_average, record
from lnlab.labs.gpu import benchmark
from lnlab.labs.training.config import TrainConfig
from lnlab.labs.training.worker import PIECE_S, Lab, Progress, piece_steps
from lnlab.serving import worker
from lnlab.serving.database import URL_ENV

LONGEST = TrainConfig(variants=("post", "pre"), layers=8, steps=300, seed=11)
BENCH_SHAPE = (4, 512, 1024)


class _Timed:
    """The server's worker as the lab sees it, recording each piece's seconds in it (the
    benchmark's runs go to the same worker, unrecorded)."""

    def __init__(self) -> None:
        self.pieces: list[float] = []

    def call(self, fn, *args, **kwargs):
        start = time.perf_counter()
        try:
            return worker.HEAVY.call(fn, *args, **kwargs)
        finally:
            self.pieces.append(time.perf_counter() - start)


def train_alone(config: TrainConfig) -> tuple[float, list[float]]:
    runner = _Timed()
    start = time.perf_counter()
    Lab(runner).train(config, "trainer alone")  # type: ignore[arg-type]
    return time.perf_counter() - start, runner.pieces


def train_beside_benchmarks(
    config: TrainConfig,
) -> tuple[float, list[float], list[tuple[float, float]]]:
    """The training's wall time and pieces, and each benchmark's (wait, time at the front)."""
    runner = _Timed()
    lab = Lab(runner)  # type: ignore[arg-type]
    started, finished = threading.Event(), threading.Event()
    runs: list[tuple[float, float]] = []

    def on_progress(progress: Progress) -> None:
        if progress.done:
            started.set()

    def visitor() -> None:
        started.wait(120)
        while not finished.is_set():
            press = time.perf_counter()
            result = benchmark.run_scale_up(
                *BENCH_SHAPE, "cpu", owner="benchmark visitor", max_wait_s=120
            )
            # the run's own time is measured in the worker; the rest is the wait
            runs.append((time.perf_counter() - press - result.elapsed_s, result.elapsed_s))

    thread = threading.Thread(target=visitor)
    thread.start()
    start = time.perf_counter()
    lab.train(config, "trainer", on_progress)
    wall = time.perf_counter() - start
    finished.set()
    thread.join(120)
    return wall, runner.pieces, runs


def main() -> None:
    before = os.getloadavg()
    with tempfile.TemporaryDirectory() as folder:
        os.environ[URL_ENV] = f"sqlite:///{folder}/line.db"
        try:
            benchmark.run_scale_up(1, 8, 16, "cpu", deadline_s=0.01)  # starts the worker
            alone, alone_pieces = train_alone(LONGEST)
            beside, pieces, runs = train_beside_benchmarks(LONGEST)
        finally:
            worker.HEAVY.stop()
    waits = [w for w, _ in runs]
    fronts = [f for _, f in runs]
    rows = [
        ("measure", "n", "p50 (s)", "max (s)"),
        ("training piece in the worker, alone", str(len(alone_pieces)),
         f"{statistics.median(alone_pieces):.2f}", f"{max(alone_pieces):.2f}"),
        ("training piece in the worker, beside benchmarks", str(len(pieces)),
         f"{statistics.median(pieces):.2f}", f"{max(pieces):.2f}"),
        ("benchmark: wait in line, press to front", str(len(waits)),
         f"{statistics.median(waits):.2f}", f"{max(waits):.2f}"),
        ("benchmark: time at the front", str(len(fronts)),
         f"{statistics.median(fronts):.2f}", f"{max(fronts):.2f}"),
    ]  # fmt: skip
    b, s, f = BENCH_SHAPE
    record(
        "training_line",
        "A benchmark beside the longest training run",
        rows,
        f"Training {'+'.join(LONGEST.variants)}, {LONGEST.layers} blocks x {LONGEST.steps} "
        f"steps x {LONGEST.trained_runs} runs, in pieces of at most {piece_steps(LONGEST.layers)} "
        f"steps or {PIECE_S:g} s (and one for the gradients at initialisation); "
        f"the benchmark {b} x {s} x {f} float32 on the CPU (one thread, {benchmark.DEADLINE_S:g} "
        f"s deadline), pressed again as soon as each run ended. The training run took "
        f"{beside:.1f} s with the benchmarks between its pieces, {alone:.1f} s alone (same run, "
        f"before). {load_average(before, os.getloadavg())}.",
    )


if __name__ == "__main__":
    main()
