"""The scale-up benchmark: Layer Norm timed on a (batch, sequence, features) tensor.

Timed after warm-up with the device synchronized around every sample, in two versions: one torch
operation per step (nine kernels, each a pass over memory, lnlab.labs.gpu.traffic.STEP_OPS) and the
fused `torch.nn.functional.layer_norm` (one pass), beside a copy of the same tensor that measures
what the device's memory can do. Each is reported as its time and its useful bandwidth: the bytes
any Layer Norm must move (read x once, write y once) per second. The page's runs are bounded: caps
on elements and rows, one CPU thread, one deadline that includes the warm-up, one run at a time in
the whole server with visitors served first come first served (lnlab.serving.heavy_work), and the
timing done in a worker process (lnlab.serving.worker) so other sessions' reruns do not wait for the
server's GIL.

The sizes come from the device (lnlab.labs.gpu.memory): the suggested tensor is MEMORY_MULTIPLE
times the device's last cache, so that the timings are the memory's and not the cache's; a GPU
run may use up to MEMORY_SHARE of its memory (checked against the free memory when it runs), a
CPU run up to CPU_CACHE_CAP times the cache (one thread, within the deadline). A result says
which memory it describes and, on CUDA, the most memory torch held during the run.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lnlab.core import backend as bk
from lnlab.core.errors import BusyError as BusyError  # re-exported: the pages catch it from here
from lnlab.core.errors import InputError
from lnlab.core.numbers import DEFAULT_EPS
from lnlab.labs.gpu import memory as mem
from lnlab.labs.gpu.memory import MEMORY_MULTIPLE, Level, Memory, binary_size
from lnlab.labs.gpu.traffic import ITEMSIZE, copy_bytes, fused_bytes, step_bytes
from lnlab.serving import heavy_work, worker

FALLBACK_ELEMENTS = {"cpu": 2 * 2**20, "gpu": 8 * 2**20}  # caps where the sizes are not known
MEMORY_SHARE = 0.25  # of a GPU's memory (free when it runs), the most one benchmark may hold
PEAK_TENSORS = 8  # tensors of x's size alive at once: x, the copy's, the steps' (7) and a spare
CPU_CACHE_CAP = 2 * MEMORY_MULTIPLE  # on the CPU, x up to this many times the last-level cache
CPU_COMPUTE_ITEMSIZE = 4  # the CPU computes low precision in float32: time grows per element
SUGGESTED_FEATURES = (1024, 4096, 16384)  # the suggested shape's features: the first that fits
SUGGESTED_SEQ = 512
MAX_ROWS = 2**16  # batch x sequence: many tiny rows cost per-row overhead, not bandwidth
MAX_BATCH = 1024
MAX_SEQ = 8192
MAX_FEATURES = 16384
DEADLINE_S = 3.0  # one run, warm-up included: timing stops here and reports what it has
STOP_GRACE_S = 2.0  # this long past the deadline, the worker is stopped (a call never ends)
WARMUP = 2  # warm-up calls; a call that lasts LONG_CALL_S is its own warm-up and first sample
LONG_CALL_S = 0.05
MAX_SAMPLES = 25
MIN_SAMPLE_S = 1e-3  # a sample repeats the call until it lasts this long (timer resolution)
CPU_THREADS = 1
CHECK_ELEMENTS = 2**20  # step by step and fused are compared on at most this many elements

_WORKER = worker.HEAVY  # the server's one heavy-work process, shared with training
_WORKER.needs(__name__)  # timed_run's module, imported before the first run's time limit


def element_cap(device: str, dtype: str = "float32") -> int:
    """The numel cap for `device` and `dtype`: on a GPU, MEMORY_SHARE of its memory over
    PEAK_TENSORS tensors; on the CPU, also CPU_CACHE_CAP times its last-level cache (counted
    in float32 elements for the narrower dtypes, which the CPU computes in float32); the
    fallback caps where torch or the OS does not tell the sizes."""
    memory, itemsize = mem.device_memory(device), ITEMSIZE[dtype]
    cpu = device.startswith("cpu")
    cap = float(MAX_ROWS * MAX_FEATURES)
    if memory.total_bytes:
        cap = min(cap, MEMORY_SHARE * memory.total_bytes / (PEAK_TENSORS * itemsize))
    if cpu and memory.cache_bytes:
        per_element = max(itemsize, CPU_COMPUTE_ITEMSIZE)
        cap = min(
            cap, max(FALLBACK_ELEMENTS["cpu"], CPU_CACHE_CAP * memory.cache_bytes / per_element)
        )
    elif cpu or not memory.total_bytes:
        cap = min(cap, FALLBACK_ELEMENTS["cpu" if cpu else "gpu"])
    return int(cap)


def suggested_shape(device: str, dtype: str = "float32") -> tuple[int, int, int] | None:
    """A (batch, sequence, features) whose x is MEMORY_MULTIPLE times the device's last cache
    (so a run times the memory), within the caps; None when the cache size is not known."""
    memory, itemsize = mem.device_memory(device), ITEMSIZE[dtype]
    if not memory.cache_bytes:
        return None
    elements = min(MEMORY_MULTIPLE * memory.cache_bytes // itemsize, element_cap(device, dtype))
    for features in SUGGESTED_FEATURES:
        rows = math.ceil(elements / features)
        if rows <= MAX_ROWS:
            break
    seq = min(SUGGESTED_SEQ, rows)
    batch = min(MAX_BATCH, math.ceil(rows / seq), MAX_ROWS // seq)
    while batch * seq * features > element_cap(device, dtype) and batch > 1:
        batch -= 1
    return batch, seq, features


def check_size(batch: int, seq: int, features: int, device: str, dtype: str = "float32") -> int:
    """numel = batch x seq x features, or InputError when a size is out of range or too big
    (over the element cap, or over MAX_ROWS rows)."""
    limits = (("batch", batch, 1, MAX_BATCH), ("sequence", seq, 1, MAX_SEQ))
    for name, value, low, high in (*limits, ("features", features, 2, MAX_FEATURES)):
        if not low <= value <= high:
            raise InputError(f"{name} must be between {low} and {high:,}, not {value:,}")
    if batch * seq > MAX_ROWS:
        raise InputError(
            f"{batch:,} x {seq:,} = {batch * seq:,} rows is over the cap of {MAX_ROWS:,} rows; "
            "make the batch or sequence smaller (and the features larger, to time more memory)"
        )
    numel = batch * seq * features
    cap = element_cap(device, dtype)
    if numel > cap:
        where = "CPU" if device.startswith("cpu") else "GPU"
        raise InputError(
            f"{batch:,} x {seq:,} x {features:,} = {numel:,} elements is over the {where} "
            f"cap of {cap:,} in {dtype}; make the batch, sequence or features smaller"
        )
    return numel


def check_free_memory(numel: int, device: str, dtype: str) -> int | None:
    """The device's free memory now (None where not known); InputError when the run would
    hold more than MEMORY_SHARE of it at its peak."""
    free = mem.free_bytes(device)
    need = PEAK_TENSORS * numel * ITEMSIZE[dtype]
    if free is not None and need > MEMORY_SHARE * free:
        raise InputError(
            f"this size needs about {binary_size(need)} at its peak, over the "
            f"{MEMORY_SHARE:.0%} of the {binary_size(free)} free on {device} that one "
            "benchmark may use now; make it smaller"
        )
    return free


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
    deadline_s: float,
    warmup: int = WARMUP,
    max_rounds: int = MAX_SAMPLES,
) -> tuple[Measurement, ...]:
    """The median time per call of each of `calls` on `device`, within `deadline_s`.

    Warm-up calls first (allocator, kernel selection, caches). Each sample is a batch of
    calls between two synchronizations, long enough (MIN_SAMPLE_S) for the timer and the
    launch latency not to matter; the call that measures how many that takes is the first
    sample when it lasts that long alone. Samples are taken in rounds, one of each call per
    round, so a burst of load from elsewhere hits them all alike. The deadline counts from the
    start, warm-up included: a sample that would end past it (by its fastest so far) is not
    taken, every call keeps at least one sample, and the medians are of what was measured.
    """
    deadline = time.perf_counter() + deadline_s
    calibrated = [_calls_per_sample(c.fn, device, warmup) for c in calls]
    repeats = [count for count, _ in calibrated]
    samples: list[list[float]] = [[once] if count == 1 else [] for count, once in calibrated]
    for _ in range(max_rounds):
        for call, count, times in zip(calls, repeats, samples, strict=True):
            if len(times) >= max_rounds or (
                times and time.perf_counter() + min(times) * count > deadline
            ):
                continue  # at least one sample each; no sample that would end past the deadline
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


def _calls_per_sample(fn: Callable[[], object], device: str, warmup: int) -> tuple[int, float]:
    """Warm `fn` up, then time one call: how many calls last MIN_SAMPLE_S (1 to 1000), and
    that call's time. A warm-up call that lasts LONG_CALL_S has paid its one-time costs (they
    are milliseconds) and is itself the first sample: a large tensor on one CPU thread then
    costs one call per version before the deadline is looked at, not three."""
    for _ in range(warmup):
        start = time.perf_counter()
        fn()
        synchronize(device)
        if (once := time.perf_counter() - start) >= LONG_CALL_S:
            return 1, once
    start = time.perf_counter()
    fn()
    synchronize(device)
    once = time.perf_counter() - start
    return max(1, min(1000, math.ceil(MIN_SAMPLE_S / max(once, 1e-9)))), once


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
    elapsed_s: float  # the whole run, warm-up included
    copy: Measurement
    steps: Measurement
    fused: Measurement
    max_diff: float  # max |step by step - fused| over the checked rows: the same thing
    note: str = ""  # how the run went, when that is news (ran in the server process, say)
    checked_rows: int = 0  # max_diff is over the first rows, up to CHECK_ELEMENTS elements
    memory: Memory | None = None  # the device's cache and memory, as torch or the OS tell
    free_bytes: int | None = None  # the device's free memory when the run started
    peak_bytes: int | None = None  # the most memory torch held during the run (CUDA only)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def x_bytes(self) -> int:
        return self.numel * ITEMSIZE[self.dtype]

    @property
    def level(self) -> Level | None:
        """Which memory these timings describe (None when the device was not described)."""
        return None if self.memory is None else mem.level(self.x_bytes, self.memory)

    def memory_text(self) -> str:
        """The level's sentence and the peak memory, or that torch does not report it."""
        if self.level is None:
            return ""
        peak = self.peak_text() or f"torch does not report peak memory on {self.device}."
        return f"{self.level.text} {peak}"

    def peak_text(self) -> str:
        """The most memory torch held during the run, against x ("" where not reported)."""
        if self.peak_bytes is None:
            return ""
        return (
            f"Peak memory: torch held at most {binary_size(self.peak_bytes)} on {self.device} "
            f"during the run ({self.peak_bytes / self.x_bytes:.1f} times x)."
        )

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
    deadline_s: float = DEADLINE_S,
    eps: float = DEFAULT_EPS,
) -> ScaleUp:
    """Time copy, step-by-step and fused Layer Norm on a random `shape` tensor. No caps;
    the deadline counts from the start, allocating the tensors included."""
    start = time.perf_counter()
    torch = bk.get_torch()
    kind = bk.torch_dtype(dtype)
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.reset_peak_memory_stats(device)
    generator = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(shape, generator=generator, device=device, dtype=kind)
    features = shape[-1]
    gamma = torch.ones(features, device=device, dtype=kind)
    beta = torch.zeros(features, device=device, dtype=kind)
    dst = torch.zeros_like(x)  # its pages touched now, not in the copy's first call
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
        deadline_s=deadline_s - (time.perf_counter() - start),
    )
    elapsed = time.perf_counter() - start
    checked = x.reshape(rows, features)[: max(1, CHECK_ELEMENTS // features)]  # rows: cheap
    diff = layer_norm_step_by_step(checked, gamma, beta, eps) - torch.nn.functional.layer_norm(
        checked, (features,), gamma, beta, eps
    )
    return ScaleUp(
        device,
        dtype,
        tuple(shape),  # type: ignore[arg-type]
        torch.get_num_threads(),
        elapsed,
        copy,
        steps,
        fused,
        float(diff.abs().max()),
        checked_rows=checked.shape[0],
        peak_bytes=torch.cuda.max_memory_allocated(device) if cuda else None,
    )


def timed_run(shape: tuple[int, int, int], device: str, dtype: str, deadline_s: float) -> ScaleUp:
    """The page's measurement, wherever it runs: checked against the free memory, torch on
    CPU_THREADS threads on the CPU, described by the device's memory, and running out of
    device memory as an InputError."""
    torch = bk.get_torch()
    free = check_free_memory(math.prod(shape), device, dtype)
    threads = CPU_THREADS if device == "cpu" else torch.get_num_threads()
    try:
        with bk.cpu_threads(threads):
            result = measure_layer_norm(shape, device, dtype, deadline_s=deadline_s)
        return dataclasses.replace(result, memory=mem.device_memory(device), free_bytes=free)
    except torch.OutOfMemoryError as exc:
        raise InputError(f"not enough memory on {device} for this size: try a smaller one") from exc


def run_scale_up(
    batch: int,
    seq: int,
    features: int,
    device: str = "auto",
    dtype: str = "float32",
    *,
    owner: str | None = None,
    on_wait: heavy_work.OnWait | None = None,
    deadline_s: float = DEADLINE_S,
    max_wait_s: float = heavy_work.MAX_WAIT_S,
) -> ScaleUp:
    """The page's benchmark: checked sizes, `owner`'s wait in the server's heavy-work line
    (on_wait(place, expected_s) meanwhile), then timed_run in the worker process at the front.

    Raises InputError for a bad size or dtype, for a run stopped STOP_GRACE_S past its
    deadline or a worker that died (the next run starts a new one); BusyError when refused a
    place in line. Where no worker can start, runs in this process and says so in the note.
    """
    resolved = bk.resolve_device(device)
    if dtype not in bk.supported_dtypes(resolved):
        raise InputError(f"{dtype} is not supported on {resolved}")
    check_size(batch, seq, features, resolved, dtype)
    job = ((batch, seq, features), resolved, dtype, deadline_s)
    with heavy_work.front(owner or uuid.uuid4().hex, on_wait=on_wait, max_wait_s=max_wait_s):
        try:
            return _WORKER.call(timed_run, *job, timeout_s=deadline_s + STOP_GRACE_S)
        except worker.Unavailable as err:
            note = f"Timed in the server process: {err}."
            return dataclasses.replace(timed_run(*job), note=note)
        except worker.WorkerError as err:
            raise InputError(
                f"The benchmark did not finish: {err}. The next run starts a new worker."
            ) from err


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
