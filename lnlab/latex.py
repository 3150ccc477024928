"""Numbers and vectors written as LaTeX, for formulas with a user's numbers substituted."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MAX_SHOWN = 8  # longer vectors show their first and last few entries around a \dots


def num(v: float, digits: int = 6) -> str:
    """A number with `digits` significant digits, in LaTeX (1e-05 -> 1 \\times 10^{-5})."""
    v = float(v)
    if np.isnan(v):
        return r"\mathrm{NaN}"
    if np.isinf(v):
        return r"\infty" if v > 0 else r"-\infty"
    text = f"{v:.{digits}g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        head = "" if mantissa == "1" else mantissa + r" \times "
        return f"{head}10^{{{int(exponent)}}}"
    return "0" if text == "-0" else text


def term(v: float, digits: int = 6) -> str:
    """A number ready to stand inside a sum: negatives in parentheses."""
    text = num(v, digits)
    return f"({text})" if text.startswith("-") else text


def elided(items: Sequence[str]) -> list[str]:
    """Keep short lists whole; cut long ones to head, \\dots, tail."""
    if len(items) <= MAX_SHOWN:
        return list(items)
    half = MAX_SHOWN // 2
    return [*items[:half], r"\dots", *items[-half:]]


def vector(values: Sequence[float] | np.ndarray, digits: int = 4) -> str:
    """A row vector in square brackets."""
    return r"\left[" + ",\\ ".join(elided([num(v, digits) for v in values])) + r"\right]"


def joined(items: Sequence[str], sep: str = " + ") -> str:
    """Items joined with `sep`, long lists elided."""
    return sep.join(elided(items))
