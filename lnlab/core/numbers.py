"""How every number is shown: one formatter for the whole app, and the default epsilon.

Tutorial style: at most 4 decimals, trailing zeros dropped (2.2361, 5, -1.3416). A value that
is zero up to floating-point rounding (|v| at most ROUNDING times the scale of the numbers it
stands among) shows as 0, never as "-5.55112e-17"; `exact` gives its true value for a tooltip.
Values too small or too large for 4 decimals (epsilon's 1e-05, 3.2e+07) keep 4 significant
digits in scientific notation. Links and text boxes use lnlab.core.parse.short_number instead,
which writes a number back exactly.
"""

from __future__ import annotations

import math

import numpy as np

DEFAULT_EPS = 1e-5  # PyTorch's nn.LayerNorm default, and every page's starting epsilon
DECIMALS = 4
ROUNDING = 1e-9  # relative size under which a value is zero up to rounding
_FIXED_RANGE = (1e-4, 1e6)  # |v| shown with DECIMALS decimals; outside it, scientific


def is_rounding_zero(v: float, scale: float = 1.0) -> bool:
    """True for 0 and for |v| <= ROUNDING * scale: what float64 rounding leaves of a zero."""
    return v == 0 or (math.isfinite(v) and abs(v) <= ROUNDING * abs(scale))


def fmt(v: float, scale: float = 1.0) -> str:
    """`v` as text: "2.2361", "5", "0" (zero up to rounding), "1e-05", "NaN", "∞", "−∞".

    `scale` is the size of the numbers `v` is compared with (a table's largest magnitude,
    say); 1 by default, the size of normalized values.
    """
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if is_rounding_zero(v, scale):
        return "0"
    if _FIXED_RANGE[0] <= abs(v) < _FIXED_RANGE[1]:
        text = f"{v:.{DECIMALS}f}".rstrip("0").rstrip(".")
        return "0" if text in ("-0", "0") else text
    return f"{v:.{DECIMALS}g}"


def exact(v: float) -> str:
    """The shortest text that reads back as exactly `v` (the tooltip behind a rounded number)."""
    return repr(float(v))


def scale_of(values: object) -> float:
    """The largest finite magnitude among `values` (1 when there is none), for `fmt`."""
    a = np.asarray(values, dtype=np.float64)
    finite = np.abs(a[np.isfinite(a)])
    return float(finite.max()) if finite.size and finite.max() > 0 else 1.0
