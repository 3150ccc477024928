"""The step-through's five steps as the browser computes them (lnlab.ui.live draws them): what
the page sends the browser, and what it takes back. Plain functions, tested without Streamlit.

The browser gets the chosen token, epsilon, gamma and beta, Python's own numbers for them
(shown at rest: Python stays the authority), and every word it shows, from their one home
(lnlab.teach.steps, the lesson's callouts and caption, the figure's colours). It sends back the
values the user changed, as JSON: each is checked like a typed value before the page takes it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

import numpy as np

from lnlab.core.errors import InputError
from lnlab.core.parse import MAX_FEATURES, format_embeddings, parse_embeddings, short_number
from lnlab.labs.step_through import lesson as slides
from lnlab.labs.step_through import plots
from lnlab.labs.step_through.state import EPS_MAX
from lnlab.labs.step_through.token import TokenInputs, TokenLesson
from lnlab.teach.presets import CUSTOM
from lnlab.teach.steps import STEPS

SECTIONS = len(STEPS)  # the lesson's sections 0..4, the five steps, are the browser's
VECTORS = ("x", "gamma", "beta")


def browser_data(lesson: TokenLesson) -> dict[str, Any]:
    """What the browser needs to draw and recompute the five steps of `lesson`'s token."""
    return {
        "token": {"index": lesson.token, "label": lesson.labels[lesson.token]},
        "x": _numbers(lesson.x),
        "gamma": _numbers(lesson.gamma),
        "beta": _numbers(lesson.beta),
        "eps": lesson.eps,
        "result": {
            "mean": _number(lesson.mean),
            "var": _number(lesson.var),
            "std": _number(lesson.std),
            "xHat": _numbers(lesson.x_hat),
            "y": _numbers(lesson.y),
        },
        "steps": [
            {
                "key": s.key,
                "title": s.title,
                "symbol": s.symbol,
                "formula": s.formula,
                "explanation": s.explanation,
                "metric": slides.metric_label(s),
            }
            for s in STEPS
        ],
        "texts": {
            "undefined": slides.UNDEFINED_TOKEN,
            "constant": slides.CONSTANT_TOKEN,
            "caption": slides.BARS_CAPTION,
        },
        "colours": {"input": plots.INPUT, "mean": plots.MEAN, "xHat": plots.X_HAT, "y": plots.Y},
    }


def apply_changes(state: MutableMapping[str, Any], changes: Mapping[str, Any]) -> bool:
    """Put the values the browser sent (eps, gamma, beta, the token's x) into the page's boxes;
    True if any changed. Raises InputError for anything unknown, of the wrong type or length,
    not finite, or out of range, and then changes nothing."""
    inputs: TokenInputs = state["st_inputs"]
    d = inputs.x.shape[1]
    unknown = sorted(set(changes) - {"eps", *VECTORS})
    if unknown:
        raise InputError(f"unknown value {unknown[0]!r}")
    new: dict[str, Any] = {}
    if "eps" in changes:
        eps = _finite(changes["eps"], "epsilon")
        if not 0 <= eps <= EPS_MAX:
            raise InputError(f"epsilon must be between 0 and {short_number(EPS_MAX)}")
        new["st_eps"] = eps
    for name in ("gamma", "beta"):
        if name in changes:
            v = _vector(changes[name], d, name)
            shown = v[:1] if np.all(v == v[0]) else v  # one value for all, as a link writes it
            new[f"st_{name}"] = ", ".join(short_number(a) for a in shown)
    if "x" in changes:
        x = inputs.x.copy()
        x[inputs.token] = _vector(changes["x"], d, "x")
        new["st_text"] = format_embeddings(x)
        parse_embeddings(new["st_text"])  # as any text the box takes: within every limit
    changed = {k: v for k, v in new.items() if state.get(k) != v}
    if "st_text" in changed:
        state["st_preset"] = CUSTOM
    state.update(changed)
    return bool(changed)


def _number(v: float) -> float | str:
    """JSON has no NaN or infinity: those go as text ("NaN", "Infinity", "-Infinity")."""
    v = float(v)
    if math.isfinite(v):
        return v
    return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")


def _numbers(values: np.ndarray) -> list[float | str]:
    return [_number(v) for v in values]


def _finite(value: Any, name: str) -> float:
    if type(value) not in (int, float) or not math.isfinite(value):
        raise InputError(f"{name} must be a finite number, not {str(value)[:20]!r}")
    return float(value)


def _vector(values: Any, d: int, name: str) -> np.ndarray:
    if not isinstance(values, Sequence) or isinstance(values, str) or len(values) != d:
        raise InputError(f"{name} must be a list of {d} numbers, one per feature")
    if d > MAX_FEATURES:
        raise InputError(f"{name} has more than {MAX_FEATURES} values")
    return np.array([_finite(v, f"{name}, feature {i}") for i, v in enumerate(values, 1)])
