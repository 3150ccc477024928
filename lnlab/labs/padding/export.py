"""The padding page's downloads: every statistic and output as CSV rows or one JSON document,
and a PyTorch script that recomputes them (lnlab.teach.export.batch_norm_script)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from lnlab.labs.padding.batch import FEATURES, MOMENTUM, PaddingLab
from lnlab.teach import export

CAPTION = (
    "The CSV has one row per token and feature: the input, then mean, variance, σ_ε and output "
    "of naive Batch Norm, masked Batch Norm and Layer Norm. The JSON holds the same numbers, "
    "the running statistics and the settings. Figures download from their own toolbar."
)


def exports(lab: PaddingLab, preset_key: str) -> export.Exports:
    """The page's downloads (CSV and JSON built only when clicked) and its PyTorch script."""
    script = pytorch_script(lab)
    return export.Exports(
        (
            export.Download(
                "Statistics as CSV",
                lambda: export.to_csv(statistics_rows(lab)),
                "lnlab-padding.csv",
                "text/csv",
                "pad_dl_csv",
                "table",
            ),
            export.Download(
                "Statistics as JSON",
                lambda: statistics_json(lab, preset_key),
                "lnlab-padding.json",
                "application/json",
                "pad_dl_json",
                "data_object",
            ),
            export.Download(
                "PyTorch script",
                script,
                "lnlab_padding.py",
                "text/x-python",
                "pad_dl_script",
                "code",
            ),
        ),
        CAPTION,
        script,
    )


def pytorch_script(lab: PaddingLab) -> str:
    """A script (torch.nn.functional, float64) that prints the three outputs of this batch."""
    return export.batch_norm_script(lab.x, lab.mask, lab.eps, lab.beta)


def statistics_rows(lab: PaddingLab) -> list[dict[str, Any]]:
    """One row per token row and feature of the stacked batch: the input, then mean,
    variance, sigma_eps and output of naive Batch Norm, masked Batch Norm and Layer Norm.

    The Batch Norm statistics belong to the feature (the same down a column), Layer Norm's to
    the token (the same across a row); masked Batch Norm leaves PAD rows at 0.
    """
    d = len(FEATURES)
    x = lab.tokens
    rows = []
    for t, label in enumerate(lab.labels):
        for j, feature in enumerate(FEATURES):
            row: dict[str, Any] = {
                "token": label,
                "pad": bool(not lab.real[t]),
                "feature": feature,
                "x": float(x[t, j]),
            }
            for name, trace, k in (
                ("naive_bn", lab.norms.naive_bn, j),
                ("masked_bn", lab.norms.masked_bn, j),
                ("ln", lab.norms.ln, t),
            ):
                row |= {
                    f"{name}_mean": float(np.ravel(trace.mean)[k]),
                    f"{name}_var": float(np.ravel(trace.var)[k]),
                    f"{name}_std": float(np.ravel(trace.std)[k]),
                    f"{name}_y": float(trace.y.reshape(-1, d)[t, j]),
                }
            rows.append(row)
    return rows


def export_settings(lab: PaddingLab, preset_key: str) -> dict[str, Any]:
    """What produced the numbers: enough to rebuild the batch."""
    return {
        "preset": preset_key,
        "sentences": [" ".join(s) for s in lab.sentences],
        "embeddings": {w: list(v) for w, v in lab.embeddings.items()},
        "eps": lab.eps,
        "gamma": 1.0,
        "beta": lab.beta,
        "momentum": MOMENTUM,
        "labels": list(lab.labels),
        "mask": lab.mask.tolist(),
        "pad_share": lab.closed_form.share,
    }


def statistics_json(lab: PaddingLab, preset_key: str) -> str:
    """Naive and masked Batch Norm (export.batch_json) plus Layer Norm's per-token
    statistics and outputs, as one JSON document."""
    body = json.loads(
        export.batch_json(
            {"naive_bn": lab.norms.naive_bn, "masked_bn": lab.norms.masked_bn},
            export_settings(lab, preset_key),
        )
    )
    ln = json.loads(export.trace_json(lab.norms.ln, lab.labels, {}))
    body["ln"] = {name: ln[name] for name in ("mean", "var", "std", "y")}
    return json.dumps(body, indent=2)
