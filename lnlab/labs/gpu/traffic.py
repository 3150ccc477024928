"""Memory traffic: the bytes each version of Layer Norm reads and writes.

Layer Norm does little arithmetic per number, so its speed is set by the bytes it moves. Each
operation is counted as reading its inputs and writing its output once, in full (no cache
reuse), in multiples of N = numel of x, R = rows (batch x sequence) and D = features.
"""

from __future__ import annotations

from dataclasses import dataclass

ITEMSIZE = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2}  # bytes per element

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
