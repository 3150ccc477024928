"""Ten visitors press Train at once with different settings: `python -m bench.training_crowd`.

Issue 38, item 5: ten visitors pinned to one server process pressing Train with different
settings, none finished in 240 s; each was stuck near the start of its run and restarting.
This drives the functions the page calls (lnlab.labs.training.worker.Lab.train, with the
page's callbacks), no browser: VISITORS threads, one per visitor, each with its own seed, pressing
Train 0.2 s apart, in one process with the server's one heavy-work worker and the line in a
temporary SQLite file, as one server process of the app. Meanwhile a bystander presses the GPU
page's Run (a CPU benchmark of BENCH_SHAPE) every few seconds, first with nobody training (its
idle time), then beside the crowd.

For each visitor it prints when its run finished (from its press), or how far it got by the
limit and how often its progress went back (a training whose kept pieces were dropped starts
again); the place and wait its progress bar showed on joining the line to train and SHOWN_AT_S
later, against when its first step came; and the bystander's benchmark, idle and beside the
crowd: press to result, and the part of it before its run (the wait in line: what the crowd
adds; its run's own time is the machine's load).

`--bench-device cuda` times the bystander's benchmark on the GPU (the trainings stay on the
CPU, as the lab runs them; both still take turns in the one worker process), and `--piece-s`
cuts the runs into shorter pieces than the lab's PIECE_S. What the bystander waits for is the
piece under way up to its end (issue 38: 3x its idle time), or, since a piece ends once
someone waits (heavy_work.Turn.yielding), the step under way. The bystander's times are given
as p50, p95 and max, and as multiples of its idle p50 (the issue's bar: within 2x).

The settings are smaller than the page's default (post-LN and pre-LN, 4 blocks x 100 steps:
three trainings of about 400 blocks x steps, each more than one piece on a loaded machine),
so that ten runs one after the other fit the script's few minutes on a shared 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass, field

from bench.report import load_average, record
from lnlab.core.errors import InputError
from lnlab.labs.gpu import benchmark
from lnlab.labs.training.config import TrainConfig
from lnlab.labs.training.worker import PIECE_S, Lab, Progress
from lnlab.serving import worker
from lnlab.serving.database import URL_ENV

VISITORS = 10
LIMIT_S = 240.0
BENCH_SHAPE = (4, 512, 1024)
BENCH_EVERY_S = 10.0  # the bystander's presses, beside the crowd
IDLE_PRESSES = 5  # the bystander's presses with nobody training (its idle time)
SHOWN_AT_S = 30.0  # the wait shown this long after the press, once the pace has been measured


class Gone(BaseException):
    """What Streamlit raises in a script whose visitor left: here, the limit passed."""


@dataclass
class Visitor:
    name: str
    config: TrainConfig
    pressed: float = 0.0
    finished: float | None = None  # seconds from the press
    error: str = ""
    best: int = 0  # most steps reached
    setbacks: int = 0  # times its progress went back (kept pieces dropped)
    last: int = 0
    shown: list[tuple[float, int, float | None]] = field(default_factory=list)  # while queued:
    # (seconds from the press, place, expected wait) as the progress bar showed them
    trained_at: float | None = None  # seconds from the press to its first step
    texts: list[str] = field(default_factory=list)


def crowd(lab: Lab, visitors: list[Visitor], limit_s: float, stop: threading.Event) -> None:
    """Each visitor presses Train 0.2 s after the one before; all stop at `limit_s`."""
    start = time.monotonic()

    def check() -> None:
        if stop.is_set() or time.monotonic() - start > limit_s:
            raise Gone

    def run(v: Visitor) -> None:
        def on_progress(p: Progress) -> None:
            check()
            if p.done < v.last:
                v.setbacks += 1
            v.last, v.best = p.done, max(v.best, p.done)
            if p.done and v.trained_at is None:
                v.trained_at = time.monotonic() - v.pressed
            if not v.texts or v.texts[-1] != p.text():
                v.texts.append(p.text())
            if getattr(p, "queued", False):  # waiting in the line to train (none before it)
                v.shown.append((time.monotonic() - v.pressed, p.place, p.wait_s))

        def on_wait(place: int, expected_s: float | None) -> None:
            check()

        v.pressed = time.monotonic()
        try:
            lab.train(v.config, v.name, on_progress, on_wait)
            v.finished = time.monotonic() - v.pressed
        except Gone:
            v.error = "still running at the limit"
        except InputError as err:
            v.error = str(err)

    threads = []
    for v in visitors:
        threads.append(threading.Thread(target=run, args=(v,), name=v.name))
        threads[-1].start()
        time.sleep(0.2)
    for t in threads:
        t.join()


@dataclass(frozen=True)
class Press:
    """One press of the bystander's Run: press to result, and the part of it before its run
    (that less the run's own time in the worker: the wait in line, the job's dispatch), the
    part that others' trainings add; the run's own time is the machine's load."""

    took_s: float
    waited_s: float


def press_benchmark(owner: str, device: str, shape: tuple[int, int, int]) -> Press:
    """The bystander's Run, press to result (the wait in line included)."""
    start = time.perf_counter()
    try:
        result = benchmark.run_scale_up(*shape, device, owner=owner)
    except InputError as err:
        print(f"benchmark refused: {err}")
        return Press(float("nan"), float("nan"))
    took = time.perf_counter() - start
    return Press(took, took - result.elapsed_s)


def bystander(
    times: list[Press],
    stop: threading.Event,
    device: str,
    shape: tuple[int, int, int],
    every_s: float,
) -> None:
    while not stop.wait(every_s):
        times.append(press_benchmark("bystander", device, shape))


def shown(seen: list[tuple[float, int, float | None]]) -> str:
    """'3rd in line, about 40 s' (or '-': not waiting to train then)."""
    if not seen:
        return "-"
    _, place, wait = seen[0]
    return f"{place} in line" + (f", about {wait:.0f} s" if wait is not None else "")


def p95_of(times: list[float]) -> float:
    """The 95th percentile (between samples; the one sample if only one)."""
    if len(times) < 2:
        return times[0]
    return statistics.quantiles(times, n=20, method="inclusive")[18]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--visitors", type=int, default=VISITORS)
    parser.add_argument("--limit", type=float, default=LIMIT_S, help="seconds, then all stop")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--variants", default="post,pre")
    parser.add_argument("--label", default="", help="said in the title: before / after")
    parser.add_argument(
        "--database",
        default="",
        help="the line's database, to share it with another process running this (default: "
        "a temporary SQLite file)",
    )
    parser.add_argument("--first-seed", type=int, default=100)
    parser.add_argument("--bench-device", default="cpu", help="the bystander's: cpu, cuda")
    parser.add_argument(
        "--bench-shape",
        default="x".join(map(str, BENCH_SHAPE)),
        help="the bystander's benchmark, BATCHxSEQxFEATURES",
    )
    parser.add_argument(
        "--piece-s", type=float, default=PIECE_S, help="a training piece's seconds at most"
    )
    parser.add_argument("--bench-every", type=float, default=BENCH_EVERY_S, help="seconds")
    parser.add_argument("--idle-presses", type=int, default=IDLE_PRESSES)
    args = parser.parse_args()
    shape = tuple(int(n) for n in args.bench_shape.split("x"))
    variants = tuple(args.variants.split(","))
    configs = [
        TrainConfig(
            variants=variants, layers=args.layers, steps=args.steps, seed=args.first_seed + k
        )
        for k in range(args.visitors)
    ]
    visitors = [Visitor(f"visitor {k + args.first_seed}", c) for k, c in enumerate(configs)]
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as folder:
        os.environ[URL_ENV] = args.database or f"sqlite:///{folder}/line.db"
        try:
            benchmark.run_scale_up(1, 8, 16, args.bench_device, deadline_s=0.01)  # the worker
            idle = [
                press_benchmark("bystander", args.bench_device, shape)
                for _ in range(args.idle_presses)
            ]
            lab = Lab(piece_s=args.piece_s)
            stop, beside = threading.Event(), []
            by = threading.Thread(
                target=bystander,
                args=(beside, stop, args.bench_device, shape, args.bench_every),
            )
            by.start()
            start = time.monotonic()
            crowd(lab, visitors, args.limit, stop)
            wall = time.monotonic() - start
            stop.set()
            by.join()
        finally:
            worker.HEAVY.stop()
    total = configs[0].trained_runs * configs[0].steps
    rows = [("visitor", "finished (s from press)", "steps reached", "setbacks",
             "shown on joining", f"shown at {SHOWN_AT_S:g} s", "first step at (s)")]  # fmt: skip
    for v in visitors:
        rows.append(
            (
                v.name,
                f"{v.finished:.1f}" if v.finished is not None else f"no: {v.error[:60]}",
                f"{v.best} of {total}",
                str(v.setbacks),
                shown(v.shown[:1]),
                shown([s for s in v.shown if s[0] >= SHOWN_AT_S][:1]),
                f"{v.trained_at:.1f}" if v.trained_at is not None else "-",
            )
        )
    done = sorted(v.finished for v in visitors if v.finished is not None)
    bench = [p for p in beside if p.took_s == p.took_s]
    for what, presses in (("idle", idle), ("beside the crowd", bench)):
        for part, times in (
            ("press to result", [p.took_s for p in presses]),
            ("before its run", [p.waited_s for p in presses]),
        ):
            if times:
                name = f"bystander's benchmark, {what}: {part} (s)"
                p50, p95 = f"p50 {statistics.median(times):.2f}", f"p95 {p95_of(times):.2f}"
                rows.append((name, p50, p95, f"max {max(times):.2f}", f"n {len(times)}", "", ""))
    ratio = ""
    if idle and bench:
        base = statistics.median(p.took_s for p in idle)
        took = [p.took_s for p in bench]
        ratio = (
            f"Beside the crowd, the bystander's benchmark took "
            f"{statistics.median(took) / base:.1f}x (p50) and {p95_of(took) / base:.1f}x (p95) "
            "its idle p50. "
        )
    c, seeds = configs[0], f"{args.first_seed}-{args.first_seed + args.visitors - 1}"
    shared = " (the line shared with another)" if args.database else ""
    record(
        "training_crowd",
        f"{args.visitors} visitors press Train at once{f' ({args.label})' if args.label else ''}",
        rows,
        f"{len(done)} of {args.visitors} runs finished within {args.limit:.0f} s (the crowd "
        f"took {wall:.0f} s); each {'+'.join(c.variants)}, {c.layers} blocks x {c.steps} steps x "
        f"{c.trained_runs} trainings, seeds {seeds}, pressed 0.2 s apart in one process{shared}, "
        f"pieces of at most {args.piece_s:g} s. "
        f"The bystander's benchmark {args.bench_shape} float32 on {args.bench_device}, "
        f"pressed every {args.bench_every:g} s beside the crowd. {ratio}"
        f"{load_average(load_before, os.getloadavg())}.",
    )


if __name__ == "__main__":
    main()
