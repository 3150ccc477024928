"""The step-through page's downloads: the trace as CSV and JSON, and a PyTorch script."""

from __future__ import annotations

from lnlab.labs.step_through.token import TokenLesson
from lnlab.teach.export import Download, Exports, layer_norm_script, to_csv, trace_json, trace_rows


def export_csv(lesson: TokenLesson) -> str:
    """The whole trace as CSV: one row per token and feature (x, mean, var, std, x_hat, y)."""
    return to_csv(trace_rows(lesson.trace, lesson.labels))


def export_json(lesson: TokenLesson) -> str:
    """The whole trace as JSON, with the settings that produced it (token 1-based)."""
    settings = {
        "eps": lesson.eps,
        "gamma": lesson.gamma.tolist(),
        "beta": lesson.beta.tolist(),
        "token": lesson.token + 1,
    }
    return trace_json(lesson.trace, lesson.labels, settings, lesson.token)


def export_script(lesson: TokenLesson) -> str:
    """A PyTorch script (F.layer_norm, float64) that prints every token's mean, var and y."""
    return layer_norm_script(lesson.trace.x, lesson.gamma, lesson.beta, lesson.eps)


def exports(lesson: TokenLesson) -> Exports:
    """The step-through page's downloads: the trace as CSV and JSON, and the PyTorch script."""
    return Exports(
        (
            Download(
                "Trace as CSV",
                export_csv(lesson),
                "lnlab-steps.csv",
                "text/csv",
                "st_dl_csv",
                "table",
            ),
            Download(
                "Trace as JSON",
                export_json(lesson),
                "lnlab-steps.json",
                "application/json",
                "st_dl_json",
                "data_object",
            ),
            Download(
                "PyTorch script",
                export_script(lesson),
                "lnlab_steps.py",
                "text/x-python",
                "st_dl_py",
                "code",
            ),
        ),
        "The CSV has one row per token and feature: x, the token's mean, variance and σ_ε, "
        "then x̂ and y. The JSON holds the same arrays, each step's formula and the settings.",
        export_script(lesson),
    )
