"""Exports: the numbers on screen as CSV and JSON, and a PyTorch script that reproduces them.

The script uses only torch.nn.functional (or, for the conventions F.layer_norm does not cover,
the explicit formula), computes in float64 and prints JSON, so a test can run it and compare
its output with the page's numbers.
"""

from __future__ import annotations

import csv
import io
import json
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lnlab.core.norms import BatchNormTrace, LayerNormTrace
from lnlab.core.parse import short_number
from lnlab.teach.steps import written_steps


@dataclass(frozen=True)
class Download:
    """One file to download: its button's label, the data (or a function that builds it only
    when clicked), the file's name and type, the button's key and its Material icon name."""

    label: str
    data: str | Callable[[], str]
    file_name: str
    mime: str
    key: str
    icon: str


@dataclass(frozen=True)
class Exports:
    """A page's downloads, what they hold, and the PyTorch script shown below them."""

    downloads: tuple[Download, ...]
    caption: str
    script: str = ""
    script_title: str = "The PyTorch script (torch.nn.functional, float64)"


def json_ready(a: Any) -> Any:
    """Numbers, arrays and nested lists for JSON: floats and lists, with NaN and inf as the
    strings "nan", "inf" and "-inf" (JSON has no NaN)."""
    if isinstance(a, list | tuple):
        return [json_ready(v) for v in a]
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim == 0:
        v = float(arr)
        return v if np.isfinite(v) else str(v)
    return [json_ready(v) for v in arr]


def trace_rows(trace: LayerNormTrace, labels: Sequence[str]) -> list[dict[str, Any]]:
    """One row per token and feature: x, mean, var, std, x_hat, y."""
    d = trace.x.shape[-1]
    flat = {name: getattr(trace, name).reshape(-1, d) for name in ("x", "x_hat", "y")}
    stats = {name: getattr(trace, name).reshape(-1) for name in ("mean", "var", "std")}
    rows = []
    for t, label in enumerate(labels):
        for i in range(d):
            rows.append(
                {"token": label, "feature": i + 1}
                | {name: float(v[t]) for name, v in stats.items()}
                | {name: float(v[t, i]) for name, v in flat.items()}
            )
    return rows


def csv_cell(value: Any) -> Any:
    """A cell's text that reads back to the same value in any correct reader: a float (numpy's
    included, float32 as its exact float64 value) as Python's shortest round-trip repr
    ("0.00013183593749999112", "nan", "inf"), an integer as its digits, anything else as is.
    Nothing depends on how numpy or pandas print a number."""
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    return value


def to_csv(rows: Sequence[dict[str, Any]]) -> str:
    """Rows of dicts as CSV text, with the keys of the first row as the header and every
    number written to read back exactly (csv_cell)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows({key: csv_cell(value) for key, value in row.items()} for row in rows)
    return out.getvalue()


def trace_json(
    trace: LayerNormTrace, labels: Sequence[str], settings: dict[str, Any], row: int = 0
) -> str:
    """The whole step trace as JSON: settings, every array, and each step's formula with
    token `row`'s numbers."""
    return json.dumps(
        {
            "settings": settings,
            "labels": list(labels),
            **{name: json_ready(getattr(trace, name)) for name in ("x", "mean", "var", "std")},
            "x_hat": json_ready(trace.x_hat),
            "y": json_ready(trace.y),
            "steps": [
                {"title": s.title, "formula": s.formula, "latex": s.latex}
                for s in written_steps(trace, row)
            ],
        },
        indent=2,
    )


def batch_json(traces: dict[str, BatchNormTrace], settings: dict[str, Any]) -> str:
    """Batch statistics as JSON, one entry per variant (e.g. naive and masked)."""
    body = {
        name: {
            "count": t.count,
            "mean": json_ready(t.mean),
            "var": json_ready(t.var),
            "std": json_ready(t.std),
            "y": json_ready(t.y),
            "running_mean": json_ready(t.running_mean),
            "running_var": json_ready(t.running_var),
        }
        for name, t in traces.items()
    }
    return json.dumps({"settings": settings, **body}, indent=2)


def _literal(a: np.ndarray) -> str:
    """A Python literal of the array with exact float64 values."""
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim == 0:
        return short_number(float(arr))
    return "[" + ", ".join(_literal(v) for v in arr) + "]"


_LAYER_NORM_SCRIPT = '''"""Reproduces lnlab's Layer Norm numbers with PyTorch."""

import json

import torch
import torch.nn.functional as F

x = torch.tensor({x}, dtype=torch.float64)
gamma = torch.tensor({gamma}, dtype=torch.float64)
beta = torch.tensor({beta}, dtype=torch.float64)
eps = {eps}
dims = tuple(range(-{dims}, 0))

mean = x.mean(dim=dims, keepdim=True)
var = x.var(dim=dims, keepdim=True, unbiased={unbiased})
{normalize}
print(json.dumps({{"mean": mean.flatten().tolist(), "var": var.flatten().tolist(),
                  "y": y.tolist()}}))
'''

_FUSED = "y = F.layer_norm(x, x.shape[-{dims}:], gamma, beta, eps)"
_EXPLICIT_OUTSIDE = "y = gamma * (x - mean) / (var.sqrt() + eps) + beta  # eps added to the std"
_EXPLICIT_INSIDE = "y = gamma * (x - mean) / (var + eps).sqrt() + beta  # F.layer_norm is biased"


def layer_norm_script(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    eps: float,
    *,
    dims: int = 1,
    unbiased: bool = False,
    eps_outside: bool = False,
) -> str:
    """A runnable script that prints the mean, variance and output as JSON."""
    if eps_outside:
        normalize = _EXPLICIT_OUTSIDE
    elif unbiased:
        normalize = _EXPLICIT_INSIDE
    else:
        normalize = _FUSED.format(dims=dims)
    return _LAYER_NORM_SCRIPT.format(
        x=_literal(x),
        gamma=_literal(gamma),
        beta=_literal(beta),
        eps=repr(float(eps)),
        dims=dims,
        unbiased=bool(unbiased),
        normalize=normalize,
    )


_BATCH_NORM_SCRIPT = '''"""Reproduces lnlab's Batch Norm numbers (naive and masked) with PyTorch."""

import json

import torch
import torch.nn.functional as F

x = torch.tensor({x}, dtype=torch.float64)  # (batch, sequence, features)
mask = torch.tensor({mask})  # True for real tokens, False for PAD
eps = {eps}
beta = torch.full(x.shape[-1:], {beta}, dtype=torch.float64)  # every feature; gamma = 1

tokens = x.reshape(-1, x.shape[-1])
naive = F.batch_norm(tokens, None, None, bias=beta, training=True, eps=eps).reshape(x.shape)

real = tokens[mask.reshape(-1)]  # masked Batch Norm: statistics over real tokens only
masked = torch.zeros_like(tokens)  # PAD rows stay 0
masked[mask.reshape(-1)] = F.batch_norm(real, None, None, bias=beta, training=True, eps=eps)
masked = masked.reshape(x.shape)

layer = F.layer_norm(x, x.shape[-1:], bias=beta, eps=eps)
print(json.dumps({{"naive_mean": tokens.mean(0).tolist(), "masked_mean": real.mean(0).tolist(),
                  "naive": naive.tolist(), "masked": masked.tolist(), "layer": layer.tolist()}}))
'''


def batch_norm_script(x: np.ndarray, mask: np.ndarray, eps: float, beta: float = 0.0) -> str:
    """A runnable script for naive and masked Batch Norm and Layer Norm of a padded batch.

    gamma is 1 and `beta` the same for every feature; masked Batch Norm's PAD rows are 0.
    """
    mask_literal = (
        "["
        + ", ".join("[" + ", ".join(str(bool(v)) for v in row) + "]" for row in np.asarray(mask))
        + "]"
    )
    return _BATCH_NORM_SCRIPT.format(
        x=_literal(x), mask=mask_literal, eps=repr(float(eps)), beta=repr(float(beta))
    )
