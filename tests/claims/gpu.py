"""The gpu lab's claims, checked on the corpus's tokens in float32, float16 and bfloat16.

A case is a prompt, the dtype torch computes it in on the CPU, and sometimes a benchmark result
(built here by hand: its sizes, not its timings, decide the words). The device's numbers are a
measurement: the checks take them from the run (the case's Parity), and compute everything
else here in float64 numpy: the exact statistics, each step's relative error, κ, the bound, the
dtype's range, which memory a benchmark's tensor lives in.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch

from claims.corpus import TOKENS
from lnlab.core.numbers import DEFAULT_EPS
from lnlab.labs.gpu.benchmark import Measurement, ScaleUp
from lnlab.labs.gpu.lesson import slides
from lnlab.labs.gpu.memory import Memory
from lnlab.labs.gpu.parity import Parity, parity
from lnlab.teach.claims import Said
from lnlab.teach.lesson import Lesson

DTYPES = ("float32", "float16", "bfloat16")
SIGNIFICAND = {"float32": 24, "float16": 11, "bfloat16": 8}
AMPLIFICATION = {"mean": 2, "var": 4, "std": 2, "x_hat": 4, "y": 4, "fused": 4}
RANGE_CHECKED = {"x": "x", "μ": "mean", "σ²": "var", "σ_ε": "std", "x̂": "x_hat"}
LEVELS = ("cache", "partly", "memory", "unknown")  # which memory a benchmark times
MiB = 2**20


@dataclass(frozen=True, eq=False)
class Run:
    """A prompt in a dtype on the CPU, the token the steps show, and a benchmark's result."""

    name: str
    x: np.ndarray
    dtype: str
    token: int = 0
    scale_up: ScaleUp | None = None

    def __repr__(self) -> str:
        return f"{self.name} in {self.dtype}"

    @functools.cached_property
    def result(self) -> Parity:
        return parity(self.x, "cpu", self.dtype, row=self.token)

    @property
    def labels(self) -> list[str]:
        return [f"t{i + 1}" for i in range(self.x.shape[0])]


def _scale_up(dtype: str, shape: tuple[int, int, int], cache: int | None, **kw: object) -> ScaleUp:
    """A benchmark result of `shape` on a device with a `cache`-byte last cache."""
    itemsize = {"float32": 4, "float16": 2, "bfloat16": 2}[dtype]
    x_bytes = int(np.prod(shape)) * itemsize
    timings = (("copy", 1e-3, 2), ("step by step", 5e-3, 20), ("fused F.layer_norm", 2e-3, 2))
    runs = [Measurement(name, t, 5, 1, passes * x_bytes) for name, t, passes in timings]
    name = "L2 cache" if cache else ""
    memory = Memory("cuda:0", name, cache, 80 * 2**30, "the GPU's memory", "t")
    fields = {"checked_rows": shape[0] * shape[1], "memory": memory} | kw
    return ScaleUp("cuda:0", dtype, shape, 16, 2.5, *runs, 1e-6, **fields)  # type: ignore[arg-type]


def _benchmarks(dtype: str) -> list[ScaleUp]:
    """Tensors in the cache, partly in it, past it, on a device with no cache size, and one
    whose comparison covered only its first rows."""
    return [
        _scale_up(dtype, (1, 64, 1024), 50 * MiB),
        _scale_up(dtype, (8, 512, 1024), 8 * MiB, peak_bytes=70 * MiB),
        _scale_up(dtype, (64, 512, 1024), 50 * MiB, peak_bytes=700 * MiB),
        _scale_up(dtype, (4, 512, 1024), None),
        _scale_up(dtype, (16, 512, 4096), 50 * MiB, checked_rows=256),
    ]


def cases() -> list[Run]:
    """Every token of the corpus that the GPU page could show (ε, γ and β are its own:
    1e-5, 1, 0), and a few of its own: float16's overflow and underflow, a mixed token."""
    own = [
        ("over float16's largest", np.array([[7e4, 1.0, 2.0, 3.0]])),
        ("under float16's smallest normal", np.array([[1e-6, 3e-6, -2e-6, 5e-6], [1, 2, 3, 4]])),
        ("1e-6 + 1e3 offset", 1e-6 * (1e3 + np.random.default_rng(36).standard_normal((2, 64)))),
        ("1e10 + 1e4 x", 1e10 + 1e4 * np.random.default_rng(36).standard_normal((3, 4))),
    ]
    prompts = [
        (t.name, t.x, t.token)
        for t in TOKENS
        if t.eps == DEFAULT_EPS and t.gamma == 1.0 and t.beta == 0.0
    ] + [(name, x, 0) for name, x in own]
    runs = []
    for dtype in DTYPES:
        benchmarks = _benchmarks(dtype)
        for k, (name, x, token) in enumerate(prompts):
            scale_up = benchmarks[k] if k < len(benchmarks) else None
            runs.append(Run(name, x, dtype, token, scale_up))
    return runs


def lessons(case: Run) -> Iterator[Lesson]:
    yield slides(case.result, case.labels, case.token, "CPU", (1, 4, 8), case.scale_up)


# ---------------------------------------------------------------- the checks' own numbers


def _exact(case: Run) -> dict[str, np.ndarray]:
    """Layer Norm of the case in float64, γ = 1 and β = 0: every step."""
    x = case.x
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    std = np.sqrt(var + DEFAULT_EPS)
    x_hat = (x - mean) / std
    return {"x": x, "mean": mean, "var": var, "std": std, "x_hat": x_hat, "y": x_hat}


def _relative(measured: np.ndarray, exact: np.ndarray) -> float:
    """max |measured − exact| / max |exact|, a NaN counting as ∞; against an all-zero exact
    result, 0 when it is met exactly and ∞ otherwise."""
    diff = np.abs(np.asarray(measured, np.float64).reshape(exact.shape) - exact)
    worst = float(np.where(np.isnan(diff), np.inf, diff).max())
    scale = float(np.abs(exact).max())
    if scale == 0:
        return 0.0 if worst == 0 else np.inf
    return worst / scale


def _kappas(exact: dict[str, np.ndarray]) -> tuple[float, float]:
    """κ: the largest input over its token's σ_ε, over the largest |x̂| where that is under 1;
    κ_μ: the largest input over the largest mean."""
    x = np.abs(exact["x"])
    with np.errstate(divide="ignore", invalid="ignore"):
        per_token = x.max(axis=1) / exact["std"].ravel()
        largest = min(1.0, float(np.abs(exact["x_hat"]).max()))
        kappa = float(per_token.max()) / largest if largest > 0 else np.inf
    biggest_mean = float(np.abs(exact["mean"]).max())
    kappa_mean = float(x.max()) / biggest_mean if biggest_mean > 0 else np.inf
    return (kappa if np.isfinite(kappa) else np.inf), kappa_mean


@functools.cache
def _errors(case: Run) -> dict[str, tuple[float, float]]:
    """Each step's (relative error, bound), by the parity table's step name."""
    exact, measured = _exact(case), case.result.trace
    kappa, kappa_mean = _kappas(exact)
    u = 2.0 ** -SIGNIFICAND[case.dtype]
    names = [row.step for row in case.result.rows]  # the names only
    found = {}
    for name, step in zip(names, ("mean", "var", "std", "x_hat", "y", "fused"), strict=True):
        value = case.result.fused_y if step == "fused" else getattr(measured, step)
        reference = exact["y" if step == "fused" else step]
        k = kappa_mean if step == "mean" else kappa
        found[name] = (_relative(value, reference), u * (2 + AMPLIFICATION[step] * k))
    return found


def _beyond(case: Run) -> list[str]:
    return [name for name, (error, bound) in _errors(case).items() if not error <= bound]


def _out_of_range(case: Run) -> tuple[list[str], list[str]]:
    """The exact values over the dtype's largest number, and those under its smallest normal
    one (0 is in range), by symbol."""
    info = torch.finfo(getattr(torch, case.dtype))
    exact, over, under = _exact(case), [], []
    for symbol, step in RANGE_CHECKED.items():
        size = np.abs(exact[step])
        if np.any(size > info.max):
            over.append(symbol)
        if np.any((size > 0) & (size < info.tiny)):
            under.append(symbol)
    return over, under


def _listing(found: list[str], said: Said, fact: str) -> bool:
    """Whether `found` is non-empty, where the lesson named exactly `found`; else the opposite
    of what the lesson decided, so that the test reports the wrong list."""
    return bool(found) if list(said.facts[fact]) == found else not said.holds


def _largest_error_at(case: Run, said: Said) -> bool:
    errors = {name: error for name, (error, _) in _errors(case).items()}
    return errors[str(said.facts["step"])] == max(errors.values())


def _level(case: Run) -> str:
    """Which memory the benchmark's tensor is timed in: its copy beside it fits in the cache,
    it is twice the cache or more, in between, or the cache is not known."""
    s = case.scale_up
    assert s is not None and s.memory is not None
    x_bytes = int(np.prod(s.shape)) * {"float32": 4, "float16": 2, "bfloat16": 2}[s.dtype]
    cache = s.memory.cache_bytes
    if not cache:
        return "unknown"
    if 2 * x_bytes <= cache:
        return "cache"
    return "memory" if x_bytes >= 2 * cache else "partly"


def _timed_in(kind: str) -> Callable[[Run, Said], bool]:
    return lambda case, said: _level(case) == kind


def _benchmark(case: Run) -> ScaleUp:
    assert case.scale_up is not None
    return case.scale_up


CHECKS: dict[str, Callable[[Run, Said], bool]] = {
    "gpu.dtype": lambda c, s: s.text == c.dtype,
    "gpu.benchmark_dtype": lambda c, s: s.text == _benchmark(c).dtype,
    "gpu.y_finite": lambda c, s: bool(np.isfinite(c.result.trace.y).all()),
    "gpu.beyond": lambda c, s: _listing(_beyond(c), s, "steps"),
    "gpu.all_within": lambda c, s: not _beyond(c),
    "gpu.largest_error_at": _largest_error_at,
    "gpu.overflow": lambda c, s: _listing(_out_of_range(c)[0], s, "names"),
    "gpu.underflow": lambda c, s: _listing(_out_of_range(c)[1], s, "names"),
    "gpu.within_range": lambda c, s: not any(_out_of_range(c)),
    "gpu.checked_every_row": lambda c, s: (
        _benchmark(c).checked_rows >= _benchmark(c).shape[0] * _benchmark(c).shape[1]
    ),
    "gpu.peak_reported": lambda c, s: _benchmark(c).peak_bytes is not None,
    **{
        f"gpu.timed_in_{kind}": _timed_in(kind) for kind in ("cache", "partly", "memory", "unknown")
    },
}
