"""What every normalization accepts: arrays of real numbers, an epsilon, and gamma or beta
broadcast to the features. Each refusal is an InputError that says what is wrong."""

from __future__ import annotations

from typing import Any

import numpy as np

from lnlab.core.errors import InputError


def as_array(x: Any, name: str = "x") -> np.ndarray:
    """x as float64, or as it is if it is float32 (widened later, a block at a time)."""
    try:
        a = np.asarray(x)
        if np.iscomplexobj(a):
            raise TypeError("complex")
        if a.dtype != np.float32:
            a = a.astype(np.float64, copy=False)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be an array of real numbers") from exc
    if a.ndim == 0:
        raise InputError(
            f"{name} is a single number (shape ()), but it needs an axis of features: write "
            "one token as a list, such as [2, 4, 6, 8], or tokens as rows, such as "
            "[[2, 4], [1, 3]]"
        )
    if a.size == 0:
        raise InputError(
            f"{name} has shape {a.shape} and holds no number: it needs at least one, such as "
            "[2, 4, 6, 8]"
        )
    return a


def check_eps(eps: Any) -> float:
    """epsilon as a float: a finite number >= 0."""
    try:
        eps = float(eps)
    except (TypeError, ValueError) as exc:
        raise InputError(f'epsilon must be a number, not "{str(eps)[:20]}"') from exc
    if not np.isfinite(eps) or eps < 0:
        raise InputError(f"epsilon must be a finite number >= 0, not {eps}")
    return eps


def affine(param: Any, shape: tuple[int, ...], fill: float, name: str) -> np.ndarray:
    """gamma or beta as an array of `shape`: None gives `fill`; a scalar or a match broadcasts."""
    if param is None:
        return np.full(shape, fill)
    p = np.asarray(param, dtype=np.float64)
    try:
        return np.broadcast_to(p, shape).copy()
    except ValueError as exc:
        raise InputError(f"{name} has shape {p.shape} but must match {shape}") from exc
