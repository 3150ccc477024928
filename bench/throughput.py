"""Normalization throughput: `python -m bench.throughput [--rows R] [--features D]`.

Layer Norm over the last axis of a rows x features float32 tensor (4096 x 8192 by default,
128 MiB), timed by lnlab.labs.gpu.benchmark.time_calls (warm-up, synchronized samples, median) on:

* numpy: lnlab.layer_norm (the app's exact path, which computes in float64) and a plain
  float32 two-pass numpy Layer Norm for reference, beside a numpy copy (np.copyto);
* torch on the CPU: F.layer_norm and the step-by-step version, beside dst.copy_(x);
* CUDA, when there is a GPU: step by step against fused F.layer_norm, beside a CUDA copy.

"useful GB/s" counts the bytes any float32 Layer Norm must move, reading x and writing y
(2 N x 4 bytes), so all rows compare; "share of copy" divides it by the copy's GB/s measured
with the same library on the same device. "GB/s moved" counts every operation's reads and
writes (lnlab.labs.gpu.traffic.STEP_OPS), where that count is known.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bench.report import record
from lnlab.core import backend
from lnlab.core.norms import layer_norm
from lnlab.labs.gpu import benchmark, traffic

DEFAULT_ROWS, DEFAULT_FEATURES = 4096, 8192
ITEMSIZE = traffic.ITEMSIZE["float32"]
EPS = 1e-5


@dataclass(frozen=True)
class Row:
    """One timed path and the copy it is compared with."""

    path: str
    device: str
    timed: benchmark.Measurement
    copy: benchmark.Measurement
    counted: bool  # whether timed.bytes_moved counts every operation's traffic


def numpy_two_pass(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Layer Norm in the input's dtype, the nine operations of lnlab.labs.gpu.traffic.STEP_OPS."""
    mean = x.mean(-1, keepdims=True)
    centred = x - mean
    squared = centred * centred
    var = squared.mean(-1, keepdims=True)
    std = np.sqrt(var + np.float32(EPS))
    return centred / std * gamma + beta


def numpy_rows(x: np.ndarray, budget_s: float) -> list[Row]:
    """lnlab's numpy path and a float32 two-pass, beside a numpy copy; numpy uses 1 thread."""
    rows, features = x.shape
    gamma, beta = np.ones(features, np.float32), np.zeros(features, np.float32)
    dst = np.empty_like(x)
    useful = traffic.copy_bytes(rows, features, ITEMSIZE)
    copy, exact, two_pass = benchmark.time_calls(
        (
            benchmark.Timed("numpy copy", functools.partial(np.copyto, dst, x), useful),
            benchmark.Timed(
                "lnlab.layer_norm (numpy, float64 inside)", lambda: layer_norm(x), useful
            ),
            benchmark.Timed(
                "numpy float32 step by step",
                lambda: numpy_two_pass(x, gamma, beta),
                traffic.step_bytes(rows, features, ITEMSIZE),
            ),
        ),
        "cpu",
        deadline_s=budget_s,
        warmup=0,
        max_rounds=3,
    )
    return [
        Row(exact.name, "CPU", exact, copy, False),
        Row(two_pass.name, "CPU", two_pass, copy, True),
    ]


def torch_rows(shape: tuple[int, int], device: str, label: str, budget_s: float) -> list[Row]:
    """Fused F.layer_norm and the step-by-step version with torch on `device`."""
    result = benchmark.measure_layer_norm(shape, device, "float32", deadline_s=budget_s)
    return [
        Row(f"torch {m.name}", label, m, result.copy, True) for m in (result.fused, result.steps)
    ]


def table(rows: Sequence[Row]) -> list[list[str]]:
    header = [
        "path",
        "device",
        "median (ms)",
        "useful GB/s",
        "share of copy",
        "GB/s moved",
        "copy GB/s",
        "samples",
    ]
    body = []
    for row in rows:
        useful = row.copy.bytes_moved / row.timed.median_s / 1e9
        body.append(
            [
                row.path,
                row.device,
                f"{row.timed.median_s * 1e3:.1f}",
                f"{useful:.2f}",
                f"{useful / row.copy.gbps:.0%}",
                f"{row.timed.gbps:.2f}" if row.counted else "n/a",
                f"{row.copy.gbps:.2f}",
                f"{row.timed.samples} x {row.timed.calls_per_sample}",
            ]
        )
    return [header, *body]


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def notes(rows: Sequence[Row], shape: tuple[int, int]) -> str:
    """The machine's torch details and whether the numpy path is within 2x of torch's CPU."""
    torch = backend.get_torch()
    devices = ", ".join(f"{d.name} ({d.label})" for d in backend.available_devices())
    by_path = {(r.path, r.device): r for r in rows}
    exact = by_path[("lnlab.layer_norm (numpy, float64 inside)", "CPU")].timed.median_s
    fused = by_path[("torch fused F.layer_norm", "CPU")].timed.median_s
    ratio = exact / fused
    verdict = "met" if ratio <= 2 else "missed"
    return (
        f"Tensor {shape[0]} x {shape[1]} float32 ({shape[0] * shape[1] * ITEMSIZE / 2**20:.0f} "
        f"MiB). CPU: {cpu_model()}; torch {torch.__version__} with {torch.get_num_threads()} "
        f"CPU threads, numpy {np.__version__}; devices: {devices}. Load average at the end "
        f"(other work on this machine competes for its cores): {os.getloadavg()[0]:.1f}.\n\n"
        f"Target, lnlab's numpy path within 2x of torch CPU F.layer_norm: {ratio:.1f}x, "
        f"{verdict}. lnlab.layer_norm is written to be exact first: it widens to float64 "
        "(twice the bytes of float32), shifts each row by one of its members and runs two "
        "passes for the variance, one core, a cache-sized block of rows at a time; "
        "F.layer_norm makes one multi-threaded float32 pass."
    )


def main(argv: Sequence[str] = ()) -> str:
    parser = argparse.ArgumentParser(prog="python -m bench.throughput", description=__doc__)
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS)
    parser.add_argument("--features", type=int, default=DEFAULT_FEATURES)
    parser.add_argument("--budget", type=float, default=6.0, help="seconds of sampling per group")
    args = parser.parse_args(list(argv))
    shape = (args.rows, args.features)
    x = np.random.default_rng(0).standard_normal(shape, dtype=np.float32)
    rows = numpy_rows(x, args.budget)
    rows += torch_rows(shape, "cpu", "CPU", args.budget)
    torch = backend.get_torch()
    if torch.cuda.is_available():
        rows += torch_rows(shape, "cuda:0", torch.cuda.get_device_name(0), args.budget)
    title = f"Normalization throughput, {shape[0]} x {shape[1]} float32"
    return record("throughput", title, table(rows), notes(rows, shape))


if __name__ == "__main__":
    main(sys.argv[1:])
