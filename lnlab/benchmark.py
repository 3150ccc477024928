"""The scale-up benchmark: Layer Norm timed on a (batch, sequence, features) tensor.

Timed after warm-up with the device synchronized around every sample, in two versions: one
torch operation per step (nine kernels, each a pass over memory, lnlab.traffic.STEP_OPS) and
the fused `torch.nn.functional.layer_norm` (one pass), beside a copy of the same tensor that
measures what the device's memory can do. Each is reported as its time and its useful
bandwidth: the bytes any Layer Norm must move (read x once, write y once) per second.
The runs are bounded: element caps, one run at a time in the whole server, one CPU thread,
and a time budget.
"""

from __future__ import annotations

import contextlib
import math
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from lnlab import backend as bk
from lnlab.errors import BusyError, InputError  # BusyError: the pages catch it from here
from lnlab.numbers import DEFAULT_EPS
from lnlab.traffic import copy_bytes, fused_bytes, step_bytes

MAX_ELEMENTS = {"cpu": 2 * 2**20, "gpu": 8 * 2**20}  # numel caps: one visitor, bounded memory
MAX_BATCH = 1024
MAX_SEQ = 8192
MAX_FEATURES = 16384
BUDGET_S = 2.0  # seconds of sampling per run, after warm-up
WARMUP = 2
MAX_SAMPLES = 25
MIN_SAMPLE_S = 1e-3  # a sample repeats the call until it lasts this long (timer resolution)
CPU_THREADS = 1
BUSY_MESSAGE = "Another visitor's benchmark is running; try again in a few seconds."

_heavy_run = threading.Semaphore(1)  # one scale-up run at a time in the whole server


def element_cap(device: str) -> int:
    """The numel cap for a device name: 2^21 on the CPU, 2^23 on a GPU."""
    return MAX_ELEMENTS["cpu" if device.startswith("cpu") else "gpu"]


def check_size(batch: int, seq: int, features: int, device: str) -> int:
    """numel = batch x seq x features, or InputError when a size is out of range or too big."""
    limits = (("batch", batch, 1, MAX_BATCH), ("sequence", seq, 1, MAX_SEQ))
    for name, value, low, high in (*limits, ("features", features, 2, MAX_FEATURES)):
        if not low <= value <= high:
            raise InputError(f"{name} must be between {low} and {high:,}, not {value:,}")
    numel = batch * seq * features
    cap = element_cap(device)
    if numel > cap:
        where = "CPU" if device.startswith("cpu") else "GPU"
        raise InputError(
            f"{batch:,} x {seq:,} x {features:,} = {numel:,} elements is over the {where} "
            f"cap of {cap:,}; make the batch, sequence or features smaller"
        )
    return numel


def synchronize(device: str) -> None:
    """Wait for the device's queued work: GPU kernels run asynchronously to Python."""
    torch = bk.get_torch()
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)
    elif device.startswith("mps"):
        torch.mps.synchronize()


@dataclass(frozen=True)
class Measurement:
    """The median time of one call and the bytes that call moves."""

    name: str
    median_s: float
    samples: int
    calls_per_sample: int
    bytes_moved: int

    @property
    def gbps(self) -> float:
        return self.bytes_moved / self.median_s / 1e9


@dataclass(frozen=True)
class Timed:
    """A call to time and the bytes it moves."""

    name: str
    fn: Callable[[], object]
    bytes_moved: int


def time_calls(
    calls: tuple[Timed, ...],
    device: str,
    *,
    budget_s: float,
    warmup: int = WARMUP,
    max_rounds: int = MAX_SAMPLES,
) -> tuple[Measurement, ...]:
    """The median time per call of each of `calls` on `device`.

    Warm-up calls first (allocator, kernel selection, caches). Each sample is a batch of
    calls between two synchronizations, long enough (MIN_SAMPLE_S) for the timer and the
    launch latency not to matter. Samples are taken in rounds, one of each call per round,
    so a burst of load from elsewhere hits them all alike. Rounds stop at `max_rounds` or
    once `budget_s` has passed (after at least one round).
    """
    repeats = [_calls_per_sample(c.fn, device, warmup) for c in calls]
    samples: list[list[float]] = [[] for _ in calls]
    deadline = time.perf_counter() + budget_s
    for _ in range(max_rounds):
        for call, count, times in zip(calls, repeats, samples, strict=True):
            start = time.perf_counter()
            for _ in range(count):
                call.fn()
            synchronize(device)
            times.append((time.perf_counter() - start) / count)
        if time.perf_counter() >= deadline:
            break
    return tuple(
        Measurement(c.name, statistics.median(times), len(times), count, c.bytes_moved)
        for c, count, times in zip(calls, repeats, samples, strict=True)
    )


def _calls_per_sample(fn: Callable[[], object], device: str, warmup: int) -> int:
    """Warm `fn` up, then how many calls last MIN_SAMPLE_S (1 to 1000)."""
    for _ in range(warmup):
        fn()
    synchronize(device)
    start = time.perf_counter()
    fn()
    synchronize(device)
    once = time.perf_counter() - start
    return max(1, min(1000, math.ceil(MIN_SAMPLE_S / max(once, 1e-9))))


def layer_norm_step_by_step(x: Any, gamma: Any, beta: Any, eps: float = DEFAULT_EPS) -> Any:
    """Layer Norm over the last axis, one torch operation per step (STEP_OPS)."""
    mean = x.mean(-1, keepdim=True)
    centred = x - mean
    squared = centred * centred
    var = squared.mean(-1, keepdim=True)
    var_eps = var + eps
    std = var_eps.sqrt()
    x_hat = centred / std
    scaled = x_hat * gamma
    return scaled + beta


@dataclass(frozen=True)
class ScaleUp:
    """Timings of a copy, the step-by-step and the fused Layer Norm on one tensor."""

    device: str
    dtype: str
    shape: tuple[int, int, int]
    threads: int  # torch's CPU threads during the run
    copy: Measurement
    steps: Measurement
    fused: Measurement
    max_diff: float  # max |step by step - fused|: both compute the same thing

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def share_of_copy(self, m: Measurement) -> float:
        """m's GB/s as a fraction of the copy's: how close it gets to the memory's limit."""
        return m.gbps / self.copy.gbps

    def useful_gbps(self, m: Measurement) -> float:
        """The bytes Layer Norm must move (read x, write y) per second of m."""
        return self.copy.bytes_moved / m.median_s / 1e9


def measure_layer_norm(
    shape: tuple[int, ...],
    device: str,
    dtype: str = "float32",
    *,
    budget_s: float = BUDGET_S,
    eps: float = DEFAULT_EPS,
) -> ScaleUp:
    """Time copy, step-by-step and fused Layer Norm on a random `shape` tensor. No caps."""
    torch = bk.get_torch()
    kind = bk.torch_dtype(dtype)
    generator = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(shape, generator=generator, device=device, dtype=kind)
    features = shape[-1]
    gamma = torch.ones(features, device=device, dtype=kind)
    beta = torch.zeros(features, device=device, dtype=kind)
    dst = torch.empty_like(x)
    rows, itemsize = x.numel() // features, x.element_size()
    copy, steps, fused = time_calls(
        (
            Timed("copy", lambda: dst.copy_(x), copy_bytes(rows, features, itemsize)),
            Timed(
                "step by step",
                lambda: layer_norm_step_by_step(x, gamma, beta, eps),
                step_bytes(rows, features, itemsize),
            ),
            Timed(
                "fused F.layer_norm",
                lambda: torch.nn.functional.layer_norm(x, (features,), gamma, beta, eps),
                fused_bytes(rows, features, itemsize),
            ),
        ),
        device,
        budget_s=budget_s,
    )
    diff = layer_norm_step_by_step(x, gamma, beta, eps) - torch.nn.functional.layer_norm(
        x, (features,), gamma, beta, eps
    )
    return ScaleUp(
        device,
        dtype,
        tuple(shape),  # type: ignore[arg-type]
        torch.get_num_threads(),
        copy,
        steps,
        fused,
        float(diff.abs().max()),
    )


@contextlib.contextmanager
def _cpu_threads(count: int) -> Iterator[None]:
    """Run with torch limited to `count` CPU threads, then restore the previous count."""
    torch = bk.get_torch()
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def run_scale_up(
    batch: int,
    seq: int,
    features: int,
    device: str = "auto",
    dtype: str = "float32",
    *,
    budget_s: float = BUDGET_S,
) -> ScaleUp:
    """The page's benchmark: checked sizes, one run at a time, one CPU thread, a time budget.

    Raises InputError for a bad size or dtype, BusyError when another run is in progress.
    """
    resolved = bk.resolve_device(device)
    check_size(batch, seq, features, resolved)
    if dtype not in bk.supported_dtypes(resolved):
        raise InputError(f"{dtype} is not supported on {resolved}")
    if not _heavy_run.acquire(blocking=False):
        raise BusyError(BUSY_MESSAGE)
    try:
        threads = CPU_THREADS if resolved == "cpu" else bk.get_torch().get_num_threads()
        with _cpu_threads(threads):
            return measure_layer_norm((batch, seq, features), resolved, dtype, budget_s=budget_s)
    except bk.get_torch().OutOfMemoryError as exc:
        raise InputError(
            f"not enough memory on {resolved} for this size: try a smaller one"
        ) from exc
    finally:
        _heavy_run.release()


def scale_up_table(result: ScaleUp) -> list[dict[str, object]]:
    """One record per measurement: time and useful GB/s (what ranks them), then every byte
    moved, its GB/s and that GB/s as a share of the copy's."""
    return [
        {
            "version": m.name,
            "median time (ms)": m.median_s * 1e3,
            "useful GB/s (read x, write y)": result.useful_gbps(m),
            "MB moved per call": m.bytes_moved / 1e6,
            "GB/s moved": m.gbps,
            "share of copy bandwidth": result.share_of_copy(m),
            "samples x calls": f"{m.samples} x {m.calls_per_sample}",
        }
        for m in (result.copy, result.steps, result.fused)
    ]
