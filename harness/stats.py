"""Percentiles of measured samples, as the tests print them and the benchmarks report them."""

from __future__ import annotations

from collections.abc import Sequence


def percentile(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[round(q * (len(ordered) - 1))]
