"""Exports of the conventions comparison: every number as JSON, and a PyTorch script that recomputes
every convention's outputs (the CSV rows are lnlab.labs.conventions.compare.conventions_rows)."""

from __future__ import annotations

import json

import numpy as np

from lnlab.labs.conventions.compare import (
    CONVENTIONS,
    Convention,
    ConventionComparison,
    conventions_rows,
)
from lnlab.teach.export import Download, Exports, json_ready, to_csv


def _finite_or_none(values: np.ndarray) -> list | None:
    """Nested lists for JSON, or None where the values are all NaN (RMSNorm has no mean)."""
    return None if np.all(np.isnan(values)) else json_ready(values)


def conventions_json(comparison: ConventionComparison, labels: list[str]) -> str:
    """Every convention's settings and numbers for tokens x, as JSON."""
    return json.dumps(
        {
            "x": comparison.x.tolist(),
            "labels": list(labels),
            "conventions": [
                {
                    "key": r.convention.key,
                    "name": r.convention.name,
                    "eps": r.convention.eps,
                    "unbiased": r.convention.unbiased,
                    "eps_outside": r.convention.eps_outside,
                    "mean_subtracted": r.convention.centred,
                    "mean": _finite_or_none(r.mean),
                    "divided_by": r.denominator.tolist(),
                    "y": r.y.tolist(),
                    "max_abs_diff_from_pytorch": r.max_abs_diff,
                }
                for r in comparison.runs
            ],
        },
        indent=2,
    )


def torch_expression(c: Convention) -> str:
    """The convention in torch, on a float64 tensor x of shape (tokens, d)."""
    eps = repr(c.eps)
    if not c.centred:
        return f"F.rms_norm(x, (d,), eps={eps})"
    if not c.eps_outside and not c.unbiased:
        return f"F.layer_norm(x, (d,), eps={eps})"
    std = f"x.std(-1, keepdim=True, correction={int(c.unbiased)})"
    if c.eps_outside:
        return f"(x - x.mean(-1, keepdim=True)) / ({std} + {eps})"
    return f"(x - x.mean(-1, keepdim=True)) / ({std} ** 2 + {eps}).sqrt()"


_CONVENTIONS_SCRIPT = '''"""Reproduces lnlab's six Layer Norm conventions with PyTorch (float64).

Prints every convention's outputs as JSON: {{convention key: [[y of token 1], ...]}}.
"""

import json

import torch
import torch.nn.functional as F

x = torch.tensor({x}, dtype=torch.float64)  # one row per token
d = x.shape[-1]

outputs = {{
{outputs}
}}
print(json.dumps({{key: y.tolist() for key, y in outputs.items()}}))
'''


def conventions_script(x: np.ndarray) -> str:
    """A runnable script that computes tokens x under every convention with torch."""
    lines = "\n".join(f'    "{c.key}": {torch_expression(c)},  # {c.name}' for c in CONVENTIONS)
    rows = np.atleast_2d(np.asarray(x, dtype=np.float64)).tolist()
    return _CONVENTIONS_SCRIPT.format(x=repr(rows), outputs=lines)


def exports(comparison: ConventionComparison, labels: list[str]) -> Exports:
    """The page's downloads: every convention's numbers as CSV and JSON, and the script."""
    script = conventions_script(comparison.x)
    return Exports(
        (
            Download(
                "CSV",
                to_csv(conventions_rows(comparison, labels)),
                "lnlab-conventions.csv",
                "text/csv",
                "cv_dl_csv",
                "table",
            ),
            Download(
                "JSON",
                conventions_json(comparison, labels),
                "lnlab-conventions.json",
                "application/json",
                "cv_dl_json",
                "data_object",
            ),
            Download(
                "PyTorch script",
                script,
                "lnlab_conventions.py",
                "text/x-python",
                "cv_dl_script",
                "code",
            ),
        ),
        "The vector's numbers under every convention: settings, mean, denominator and outputs, "
        "token by token. The script recomputes them with torch and prints them as JSON.",
        script,
        "The PyTorch script: the six conventions in torch",
    )
