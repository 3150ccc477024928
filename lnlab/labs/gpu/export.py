"""The GPU page's downloads: the parity table as CSV, and as JSON with the input and both
outputs."""

from __future__ import annotations

import json

from lnlab.labs.gpu.parity import Parity, parity_table
from lnlab.teach.export import Download, Exports, json_ready, to_csv


def parity_json(result: Parity, settings: dict[str, object]) -> str:
    """The parity table as JSON, with the input, both outputs and what the bounds rest on."""
    return json.dumps(
        {
            "settings": settings
            | {"device": result.device, "dtype": result.dtype, "eps": result.eps},
            "unit_roundoff": result.unit_roundoff,
            "kappa": json_ready(result.kappa),
            "kappa_mean": json_ready(result.kappa_mean),
            "steps": [
                {
                    "step": r.step,
                    "max_abs_error": json_ready(r.max_abs),
                    "max_rel_error": json_ready(r.max_rel),
                    "expected_bound": json_ready(r.bound),
                    "within_bound": r.within,
                }
                for r in result.rows
            ],
            "x": result.reference.x.tolist(),
            "y_device": json_ready(result.trace.y.tolist()),
            "y_float64": json_ready(result.reference.y.tolist()),
        },
        indent=2,
    )


def exports(result: Parity, token: int) -> Exports:
    """The parity table as CSV, and as JSON with the input and both outputs (token 0-based)."""
    name = f"lnlab-parity-{result.device.replace(':', '')}-{result.dtype}"
    return Exports(
        (
            Download(
                "Parity table as CSV",
                to_csv(parity_table(result)),
                f"{name}.csv",
                "text/csv",
                "gpu_dl_csv",
                "download",
            ),
            Download(
                "JSON",
                parity_json(result, {"token": token + 1}),
                f"{name}.json",
                "application/json",
                "gpu_dl_json",
                "download",
            ),
        ),
        "The parity table, the input, and the outputs on the device and in float64.",
    )
