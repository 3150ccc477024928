"""How every number is shown: one formatter for the whole app, and the default epsilon.

Tutorial style: at most 4 decimals, trailing zeros dropped (2.2361, 5, -1.3416); under 0.1,
where 4 decimals would lose digits, 4 significant ones (0.000125, not 0.0001). A value that is
zero up to floating-point rounding (|v| at most ROUNDING times the scale of the numbers it stands
among, when the caller names that scale) shows as 0, never as "-5.55112e-17"; without a scale
only 0 is 0, so no nonzero number prints as 0. `exact` gives the true value for a tooltip.
Values too small or too large for these (epsilon's 1e-05, 3.2e+07) keep 4 significant digits
in scientific notation. Links and text boxes use lnlab.core.parse.short_number instead,
which writes a number back exactly.
"""

from __future__ import annotations

import math

import numpy as np

DEFAULT_EPS = 1e-5  # PyTorch's nn.LayerNorm default, and every page's starting epsilon
DECIMALS = 4
ROUNDING = 1e-9  # relative size under which a value is zero up to rounding
_FIXED_RANGE = (1e-4, 1e6)  # |v| shown in fixed notation; outside it, scientific
_DECIMALS_FROM = 0.1  # from here DECIMALS decimals keep 4 significant digits; under it, .4g


def is_rounding_zero(v: float, scale: float | None = None) -> bool:
    """True for 0 and for |v| <= ROUNDING * scale: what float64 rounding leaves of a zero.
    Without a scale only 0 is: a value is never rounding next to itself."""
    if v == 0:
        return True
    return scale is not None and math.isfinite(v) and abs(v) <= ROUNDING * abs(scale)


def fmt(v: float, scale: float | None = None) -> str:
    """`v` as text: "2.2361", "0.000125", "5", "0" (zero up to rounding), "1e-05", "NaN", "∞".

    `scale` is the size of the numbers `v` stands among (a table's largest magnitude; 1 for
    normalized values, where float64 leaves -5.6e-17 of a 0). None: `v` is its own scale,
    so only 0 prints as 0.
    """
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if is_rounding_zero(v, scale):
        return "0"
    if _FIXED_RANGE[0] <= abs(v) < _DECIMALS_FROM:
        return f"{v:.{DECIMALS}g}"  # fixed notation here: 0.000125, 0.01118
    if _FIXED_RANGE[0] <= abs(v) < _FIXED_RANGE[1]:
        text = f"{v:.{DECIMALS}f}".rstrip("0").rstrip(".")
        return "0" if text in ("-0", "0") else text
    return f"{v:.{DECIMALS}g}"


def fmt_apart(values: object, scale: float | None = None) -> list[str]:
    """Each value as `fmt` writes it, unless two different values would read the same: then
    each in its shortest exact form, so that 1e8 + 1 and 1e8 + 2 do not both read "1e+08"
    (a token that looks constant and is not)."""
    vs = [float(v) for v in np.asarray(values, dtype=np.float64).reshape(-1)]
    texts = [fmt(v, scale) for v in vs]
    seen: dict[str, float] = {}
    for v, text in zip(vs, texts, strict=True):
        if seen.setdefault(text, v) != v and not (math.isnan(v) and math.isnan(seen[text])):
            return [shortest(v) for v in vs]
    return texts


def shortest(v: float) -> str:
    """The shortest text that reads back as `v`, in Python's notation without a trailing
    ".0": 100000001, 0.1, 1e-07, 1.5e+16 (and fmt's 0, NaN, ∞)."""
    v = float(v)
    if v == 0 or not math.isfinite(v):
        return fmt(v)
    text = repr(v)
    return text[:-2] if text.endswith(".0") else text


def exact(v: float) -> str:
    """The shortest text that reads back as exactly `v` (the tooltip behind a rounded number)."""
    return repr(float(v))


def scale_of(values: object) -> float:
    """The largest finite magnitude among `values` (1 when there is none), for `fmt`."""
    a = np.asarray(values, dtype=np.float64)
    finite = np.abs(a[np.isfinite(a)])
    return float(finite.max()) if finite.size and finite.max() > 0 else 1.0
