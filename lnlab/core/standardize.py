"""The exact algorithm every normalization shares: mean, variance, denominator and x_hat.

One algorithm serves both backends (numpy in float64, or torch on any device); only the
reductions differ in spelling. Two choices make it exact where the textbook formula is not:

1. Shift first. Each group is shifted by one of its own members before the two-pass mean and
   variance, so a constant group is exactly zero after the shift (its output is exactly beta,
   or NaN when eps = 0, never a silent -1) and `1e4 + x` gives bit-for-bit the answer for `x`.
   (The caller shifts: `standardize` takes the shifted values.) The shifted values can be far
   larger than their mean (0.59 and -0.5 among 138 zeros, shifted by 0.59: a sum of -82.7 for a
   mean of 6.5e-4), so the mean adds the centred values' mean back (a corrected two-pass mean):
   within float64's precision at the data's scale, where the first sum alone was 6 times that.
2. Scale where squaring would overflow or underflow (1e200, 1e-200). If any group's squares
   would, every group's centred values are divided by a power of two `s` at or just below
   their largest magnitude: x_hat = u / sqrt(r + eps / s^2), with u = c / s and
   r = mean(u^2) = var / s^2. Dividing by a power of two is exact, so a group that needs no
   scaling gets the same bits either way, and the common case skips the scaling passes.

numpy works through a large input in blocks of rows that fit in the CPU's cache, so its
passes over the data cost cache bandwidth, not memory bandwidth (bench/throughput.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from lnlab.core import backend as bk

Array = Any  # a numpy array or a torch tensor

BLOCK_ELEMENTS = 1 << 17  # numpy's block of rows: 1 MiB of float64, so temporaries stay in cache


def row_blocks(rows: int, features: int, place: bk.Placement | None) -> Iterator[slice]:
    """The rows to compute together: cache-sized blocks on numpy, all of them at once on
    torch (one kernel launch per step)."""
    step = max(1, BLOCK_ELEMENTS // features) if place is None else max(1, rows)
    return (slice(start, start + step) for start in range(0, rows, step))


class Ops:
    """The handful of array operations the algorithm needs, for numpy or torch."""

    def __init__(self, place: bk.Placement | None) -> None:
        self.torch = place is not None
        self.xp = bk.get_torch() if self.torch else np

    def sum(self, a: Array, axis: int) -> Array:
        if self.torch:
            return a.sum(dim=axis, keepdim=True)
        return a.sum(axis=axis, keepdims=True)

    def sum_squares(self, a: Array, axis: int) -> Array:
        return self.sum_products(a, a, axis)

    def sum_products(self, a: Array, b: Array, axis: int) -> Array:
        if self.torch:
            return (a * b).sum(dim=axis, keepdim=True)
        return np.expand_dims(np.vecdot(a, b, axis=axis), axis)  # no temporary a * b

    def pow2_below_abs(self, a: Array, axis: int) -> Array:
        """The power of two at or just below each group's largest magnitude (1/2 for an all-zero
        group). Not above: for a magnitude near the largest float that would be inf."""
        xp = self.xp
        if self.torch:
            top = a.abs().amax(dim=axis, keepdim=True)
        else:
            top = np.abs(a).max(axis=axis, keepdims=True)
        return xp.ldexp(xp.ones_like(top), xp.frexp(top)[1] - 1)

    def squares_intact(self, sum_squares: Array, n: int, eps: float) -> bool:
        """Whether every group's sum of squares neither overflowed nor lost bits to underflow,
        and var + eps cannot overflow.

        Below n * tiny / eps the products lost to underflow could matter. That includes 0: a
        constant group, or squares that all underflowed; scaling tells them apart.
        """
        info = bk.get_torch().finfo(sum_squares.dtype) if self.torch else np.finfo(np.float64)
        small, large = n * info.tiny / info.eps, info.max / 2
        return eps <= large and bool(((sum_squares >= small) & (sum_squares <= large)).all())


def standardize(
    ops: Ops,
    d: Array,
    axis: int,
    n: int,
    eps: float,
    *,
    unbiased: bool = False,
    eps_outside: bool = False,
    valid: Array | None = None,
    centre: bool = True,
) -> tuple[Array, Array, Array, Array]:
    """Mean offset, variance, denominator and x_hat of `d`, already shifted by a group member.

    `valid` (broadcastable to `d`) excludes entries from every statistic; they come out as 0.
    `centre=False` takes the mean as 0 (RMSNorm: the "variance" is then the mean square).
    """
    xp = ops.xp
    mean_d = ops.sum(d, axis) / n if centre else 0.0
    c = d - mean_d
    if valid is not None:
        c = xp.where(valid, c, 0.0)
    if centre:  # corrected two-pass: the centred values' sum is what the first sum lost
        lost = ops.sum(c, axis) / n  # NaN where the group holds an infinity: its mean stays
        mean_d = xp.where(xp.isfinite(lost), mean_d + lost, mean_d)
    divisor = n - 1 if unbiased else n
    sum_squares = ops.sum_squares(c, axis)
    if ops.squares_intact(sum_squares, n, eps):  # the usual case: no scaling needed
        var = sum_squares / divisor
        std = xp.sqrt(var) + eps if eps_outside else xp.sqrt(var + eps)
        return mean_d, var, std, c / std
    s = ops.pow2_below_abs(c, axis)
    u = c / s
    r = ops.sum_squares(u, axis) / divisor  # var / s^2
    var = s * (s * r)  # not (s * s) * r: s * s alone can overflow where var does not
    if eps_outside:
        std = s * xp.sqrt(r) + eps
        return mean_d, var, std, c / std
    t = _eps_over_square(xp, eps, s)
    huge = xp.isinf(t)  # s is so small that var is nothing next to eps
    root = xp.sqrt(r + xp.where(huge, 0.0, t))
    std = xp.where(huge, eps**0.5, s * root)
    x_hat = xp.where(huge, c / eps**0.5, u / root)
    return mean_d, var, std, x_hat


def _eps_over_square(xp: Any, eps: float, s: Array) -> Array:
    """eps / s^2 without overflow or underflow traps.

    Not eps / (s * s): s * s underflows for tiny s. And not for eps = 0: torch computes
    eps / s as eps * (1 / s), and 1 / s overflows for a subnormal s (0 * inf is NaN).
    """
    if eps == 0:
        return xp.zeros_like(s)
    return eps / s / s
