"""The GPU page's computations: torch against float64, and Layer Norm timed at scale.

Parity. The five steps run in torch on a device and dtype and are compared with the float64
numpy result. Each step's relative error is max |torch - float64| / max |float64| (normwise,
so a value near 0 cannot blow it up), and is expected to stay below a bound derived from the
unit roundoff u of the dtype (see `expected_bound`).

Timing. Layer Norm on a (batch, sequence, features) tensor, timed after warm-up with the
device synchronized around every sample, in two versions: one torch operation per step
(nine kernels, each a pass over memory) and the fused `torch.nn.functional.layer_norm`
(one pass). Each is reported as GB/s moved and as a share of a measured copy on the device.
The runs are bounded: element caps, one run at a time in the whole server, one CPU thread,
and a time budget.
"""

from __future__ import annotations

import contextlib
import json
import math
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from lnlab import backend as bk
from lnlab.errors import InputError
from lnlab.norms import LayerNormTrace, layer_norm_steps

# ---------------------------------------------------------------- parity with float64

SIGNIFICAND_BITS = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}
ITEMSIZE = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2}  # bytes per element
STEPS = (
    ("mean", "Mean μ"),
    ("var", "Variance σ²"),
    ("std", "Std with epsilon σ_ε"),
    ("x_hat", "Normalized x̂"),
    ("y", "Output y"),
)
FUSED_LABEL = "Output y, fused F.layer_norm"
# How much each step amplifies the rounding of its input, in units of its condition number:
# storing x moves each x_i by up to u|x_i|, so x - mu moves by up to 2u max|x|; the variance
# (a mean of squares) moves by twice that relative to sigma, the std by half of the variance.
_AMPLIFICATION = {"mean": 2, "var": 4, "std": 2, "x_hat": 4, "y": 4}


def unit_roundoff(dtype: str) -> float:
    """u = 2^-p for a dtype with a p-bit significand: the largest relative rounding error."""
    if dtype not in SIGNIFICAND_BITS:
        raise InputError(f'unknown dtype "{dtype}": choose one of {", ".join(SIGNIFICAND_BITS)}')
    return 2.0 ** -SIGNIFICAND_BITS[dtype]


def expected_bound(dtype: str, step: str, kappa: float, kappa_mean: float) -> float:
    """The largest relative error to expect for `step`: u (2 + a kappa).

    kappa = max over tokens of max|x_i| / sigma_eps: how large the inputs are next to their
    spread (1 to 2 for centred data, huge for 1000 + small noise). The mean uses kappa_mean =
    max|x| / max|mu| instead, as its error is relative to the mean itself. `a` is the step's
    amplification (2 for the mean and std, 4 for the variance, x_hat and y). The 2 covers
    rounding the result back to the dtype and the float32 arithmetic.
    """
    k = kappa_mean if step == "mean" else kappa
    return unit_roundoff(dtype) * (2 + _AMPLIFICATION[step] * k)


def relative_error(value: np.ndarray, reference: np.ndarray) -> tuple[float, float]:
    """(max absolute error, max absolute error / max |reference|); NaN counts as infinite."""
    diff = np.abs(np.asarray(value, dtype=np.float64) - reference)
    diff = np.where(np.isnan(diff), np.inf, diff)
    max_abs = float(diff.max())
    scale = float(np.abs(reference).max())
    if scale == 0:
        return max_abs, 0.0 if max_abs == 0 else math.inf
    return max_abs, max_abs / scale


@dataclass(frozen=True)
class ParityRow:
    """One step's error on the device against float64, and the bound to expect."""

    step: str
    max_abs: float
    max_rel: float
    bound: float

    @property
    def within(self) -> bool:
        return self.max_rel <= self.bound


@dataclass(frozen=True)
class Parity:
    """The steps computed in torch on `device` in `dtype`, beside the float64 reference."""

    device: str
    dtype: str
    unit_roundoff: float
    kappa: float
    kappa_mean: float
    reference: LayerNormTrace  # numpy, float64
    trace: LayerNormTrace  # torch on `device` in `dtype`, returned as float64
    fused_y: np.ndarray  # torch.nn.functional.layer_norm on the same device and dtype
    rows: tuple[ParityRow, ...]  # the five steps, then the fused output
    eps: float


def condition_numbers(reference: LayerNormTrace) -> tuple[float, float]:
    """(kappa, kappa_mean) of the input: see `expected_bound`."""
    x = reference.x.reshape(-1, reference.x.shape[-1])
    spread = reference.std.reshape(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = float(np.max(np.abs(x).max(axis=1) / spread))
        biggest_mean = float(np.abs(reference.mean).max())
        kappa_mean = float(np.abs(x).max() / biggest_mean) if biggest_mean else math.inf
    return (kappa if np.isfinite(kappa) else math.inf), kappa_mean


def parity(
    x: Any, device: str = "auto", dtype: str = "float32", *, eps: float = 1e-5, row: int = 0
) -> Parity:
    """Layer Norm of the tokens `x` (tokens, features) in torch, and its error per step.

    `row` picks the token whose numbers the steps' LaTeX shows.
    """
    resolved = bk.resolve_device(device)
    reference = layer_norm_steps(x, eps=eps, row=row)
    trace = layer_norm_steps(x, eps=eps, backend="torch", device=resolved, dtype=dtype, row=row)
    fused_y = _fused_layer_norm(reference.x, resolved, dtype, eps)
    kappa, kappa_mean = condition_numbers(reference)
    rows = [
        ParityRow(
            label,
            *relative_error(getattr(trace, step), getattr(reference, step)),
            expected_bound(dtype, step, kappa, kappa_mean),
        )
        for step, label in STEPS
    ]
    rows.append(
        ParityRow(
            FUSED_LABEL,
            *relative_error(fused_y, reference.y),
            expected_bound(dtype, "y", kappa, kappa_mean),
        )
    )
    return Parity(
        resolved,
        dtype,
        unit_roundoff(dtype),
        kappa,
        kappa_mean,
        reference,
        trace,
        fused_y,
        tuple(rows),
        eps,
    )


def _fused_layer_norm(x: np.ndarray, device: str, dtype: str, eps: float) -> np.ndarray:
    torch = bk.get_torch()
    t = torch.as_tensor(x, dtype=torch.float64).to(device=device, dtype=bk.torch_dtype(dtype))
    y = torch.nn.functional.layer_norm(t, (x.shape[-1],), eps=eps)
    return y.to(device="cpu", dtype=torch.float64).numpy()


def parity_table(result: Parity) -> list[dict[str, object]]:
    """The parity rows as table records for display."""
    return [
        {
            "step": r.step,
            "max abs error": r.max_abs,
            "max rel error": r.max_rel,
            "expected bound": r.bound,
            "within bound": "yes" if r.within else "NO",
        }
        for r in result.rows
    ]


def _json_ready(value: Any) -> Any:
    """Floats and nested lists for JSON, with inf and NaN as the strings "inf" and "nan"."""
    if isinstance(value, list | tuple):
        return [_json_ready(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def parity_json(result: Parity, settings: dict[str, object]) -> str:
    """The parity table as JSON, with the input, both outputs and what the bounds rest on."""
    return json.dumps(
        {
            "settings": settings
            | {"device": result.device, "dtype": result.dtype, "eps": result.eps},
            "unit_roundoff": result.unit_roundoff,
            "kappa": _json_ready(result.kappa),
            "kappa_mean": _json_ready(result.kappa_mean),
            "steps": [
                {
                    "step": r.step,
                    "max_abs_error": _json_ready(r.max_abs),
                    "max_rel_error": _json_ready(r.max_rel),
                    "expected_bound": _json_ready(r.bound),
                    "within_bound": r.within,
                }
                for r in result.rows
            ],
            "x": result.reference.x.tolist(),
            "y_device": _json_ready(result.trace.y.tolist()),
            "y_float64": _json_ready(result.reference.y.tolist()),
        },
        indent=2,
    )


def dtype_table() -> list[dict[str, object]]:
    """Per dtype: significand bits p, u = 2^-p, p log10(2) decimal digits, and the bound for
    well-conditioned input.

    With kappa = 1 (data centred and spread like N(0, 1)) the bound u (2 + 4 kappa) is 6u:
    about 4e-7 for float32, 3e-3 for float16 and 2e-2 for bfloat16.
    """
    return [
        {
            "dtype": name,
            "significand bits p": bits,
            "unit roundoff u": f"2^-{bits} = {2.0**-bits:.3g}",
            "decimal digits": round(bits * math.log10(2), 1),
            "bound for x̂ at κ = 1": expected_bound(name, "x_hat", 1.0, 1.0),
        }
        for name, bits in SIGNIFICAND_BITS.items()
    ]


# ---------------------------------------------------------------- memory traffic

# An operation of the step-by-step version and the elements it reads and writes, counted as
# (N, R, D) multiples: N = numel of x, R = rows (batch x sequence), D = features.
Traffic = tuple[int, int, int]


@dataclass(frozen=True)
class Op:
    code: str
    reads: Traffic
    writes: Traffic


STEP_OPS: tuple[Op, ...] = (
    Op("mean = x.mean(-1, keepdim=True)", (1, 0, 0), (0, 1, 0)),
    Op("centred = x - mean", (1, 1, 0), (1, 0, 0)),
    Op("squared = centred * centred", (1, 0, 0), (1, 0, 0)),
    Op("var = squared.mean(-1, keepdim=True)", (1, 0, 0), (0, 1, 0)),
    Op("var_eps = var + eps", (0, 1, 0), (0, 1, 0)),
    Op("std = var_eps.sqrt()", (0, 1, 0), (0, 1, 0)),
    Op("x_hat = centred / std", (1, 1, 0), (1, 0, 0)),
    Op("scaled = x_hat * gamma", (1, 0, 1), (1, 0, 0)),
    Op("y = scaled + beta", (1, 0, 1), (1, 0, 0)),
)
FUSED_OPS: tuple[Op, ...] = (
    Op("y = F.layer_norm(x, (D,), gamma, beta, eps)", (1, 0, 2), (1, 0, 0)),
)
COPY_OPS: tuple[Op, ...] = (Op("dst.copy_(x)", (1, 0, 0), (1, 0, 0)),)
VERSIONS = {"step by step": STEP_OPS, "fused": FUSED_OPS, "copy": COPY_OPS}


def traffic_totals(ops: tuple[Op, ...]) -> Traffic:
    """The (N, R, D) multiples that `ops` read and write in all."""
    n, r, d = (sum(op.reads[i] + op.writes[i] for op in ops) for i in range(3))
    return n, r, d


def _elements(traffic: Traffic, rows: int, features: int) -> int:
    n, r, d = traffic
    return n * rows * features + r * rows + d * features


def traffic_bytes(ops: tuple[Op, ...], rows: int, features: int, itemsize: int) -> int:
    """Bytes that `ops` read and write, each counted once per operation (no cache reuse)."""
    return itemsize * sum(
        _elements(op.reads, rows, features) + _elements(op.writes, rows, features) for op in ops
    )


def step_bytes(rows: int, features: int, itemsize: int) -> int:
    """The step-by-step version: (12 N + 8 R + 2 D) x itemsize, op by op in STEP_OPS."""
    return traffic_bytes(STEP_OPS, rows, features, itemsize)


def fused_bytes(rows: int, features: int, itemsize: int) -> int:
    """F.layer_norm reads x, gamma and beta and writes y: (2 N + 2 D) x itemsize."""
    return traffic_bytes(FUSED_OPS, rows, features, itemsize)


def copy_bytes(rows: int, features: int, itemsize: int) -> int:
    """dst.copy_(x) reads and writes every element: 2 N x itemsize."""
    return traffic_bytes(COPY_OPS, rows, features, itemsize)


def traffic_table(rows: int, features: int, itemsize: int) -> list[dict[str, object]]:
    """Each operation of every version (and the copy) with the bytes it moves, for display."""
    return [
        {
            "version": version,
            "operation": op.code,
            "bytes read": itemsize * _elements(op.reads, rows, features),
            "bytes written": itemsize * _elements(op.writes, rows, features),
        }
        for version, ops in VERSIONS.items()
        for op in ops
    ]


# ---------------------------------------------------------------- timing

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


class BusyError(InputError):
    """Another scale-up run holds the server's benchmark slot."""


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


def layer_norm_step_by_step(x: Any, gamma: Any, beta: Any, eps: float = 1e-5) -> Any:
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
    eps: float = 1e-5,
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
    """One record per measurement: time, bytes, GB/s moved, share of copy, useful GB/s."""
    return [
        {
            "version": m.name,
            "median time (ms)": m.median_s * 1e3,
            "MB moved per call": m.bytes_moved / 1e6,
            "GB/s moved": m.gbps,
            "share of copy bandwidth": result.share_of_copy(m),
            "useful GB/s (read x, write y)": result.useful_gbps(m),
            "samples x calls": f"{m.samples} x {m.calls_per_sample}",
        }
        for m in (result.copy, result.steps, result.fused)
    ]
