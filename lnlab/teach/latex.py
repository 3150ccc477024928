"""Numbers and vectors written as LaTeX, for formulas with a user's numbers substituted.

Numbers are rounded by lnlab.core.numbers.fmt, the app's one formatter. Formulas are drawn in
pieces that wrap (lnlab.teach.mathml): `vector` and `joined` put \\allowbreak after
each comma or plus, and plain brackets (not \\left[ \\right], which cannot break) around
vectors, so a long formula continues on the next line instead of running off the screen.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lnlab.core.numbers import fmt

MAX_SHOWN = 8  # longer vectors show their first and last few entries around a \dots
COMMA = r",\allowbreak\ "


def num(v: float, scale: float | None = None) -> str:
    """A number as lnlab.core.numbers.fmt rounds it, in LaTeX (1e-05 -> 10^{-5})."""
    v = float(v)
    if np.isnan(v):
        return r"\mathrm{NaN}"
    if np.isinf(v):
        return r"\infty" if v > 0 else r"-\infty"
    text = fmt(v, scale)
    if "e" in text:
        mantissa, exponent = text.split("e")
        head = "" if mantissa == "1" else mantissa + r" \times "
        return f"{head}10^{{{int(exponent)}}}"
    return text


def term(v: float, scale: float | None = None) -> str:
    """A number ready to stand inside a sum: negatives in parentheses."""
    text = num(v, scale)
    return f"({text})" if text.startswith("-") else text


def power(v: float, k: int) -> str:
    """A number to the power k: in parentheses when negative or written with a power of ten,
    whose own exponent would otherwise take the power (10^{8}^2 is not LaTeX)."""
    text = num(v)
    return f"({text})^{{{k}}}" if text.startswith("-") or "^" in text else f"{text}^{{{k}}}"


def elided(items: Sequence[str]) -> list[str]:
    """Keep short lists whole; cut long ones to head, \\dots, tail."""
    if len(items) <= MAX_SHOWN:
        return list(items)
    half = MAX_SHOWN // 2
    return [*items[:half], r"\dots", *items[-half:]]


def vector(values: Sequence[float] | np.ndarray) -> str:
    """A row vector in square brackets, breakable after each comma."""
    return bracketed([num(v) for v in values])


def bracketed(items: Sequence[str]) -> str:
    """LaTeX items in square brackets, long lists elided, breakable after each comma."""
    return "[" + COMMA.join(elided(items)) + "]"


def joined(items: Sequence[str], sep: str = " + ") -> str:
    """Items joined with `sep`, long lists elided."""
    return sep.join(elided(items))
