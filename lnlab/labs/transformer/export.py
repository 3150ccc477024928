"""The Transformer page's downloads: the depth experiment as CSV, and as JSON with its settings."""

from __future__ import annotations

import json

from lnlab.labs.transformer.model import VARIANTS, DepthExperiment, depth_rows
from lnlab.teach.export import Download, Exports, to_csv


def depth_json(result: DepthExperiment) -> str:
    """The depth experiment as JSON: its settings, the RMS per layer, and the final norm's."""
    return json.dumps(
        {
            "settings": {
                "depth": result.depth,
                "width": result.width,
                "tokens": result.tokens,
                "gain": result.gain,
                "eps": result.eps,
                "seed": result.seed,
            },
            "rms": {variant: result.rms[variant].tolist() for variant in VARIANTS},
            "pre_norm_sublayer_input_rms": result.pre_norm_sublayer_input_rms.tolist(),
            "pre_norm_final_rms": result.pre_norm_final_rms,
        },
        indent=2,
    )


def depth_exports(result: DepthExperiment) -> Exports:
    """The depth experiment's table as CSV, and as JSON with its settings."""
    name = f"lnlab-depth-{result.depth}"
    return Exports(
        (
            Download(
                "Depth table as CSV",
                to_csv(depth_rows(result)),
                f"{name}.csv",
                "text/csv",
                "tf_dl_csv",
                "download",
            ),
            Download(
                "JSON",
                depth_json(result),
                f"{name}.json",
                "application/json",
                "tf_dl_json",
                "download",
            ),
        ),
        "The stream's RMS after each layer, three ways; the JSON adds the experiment's settings.",
    )
