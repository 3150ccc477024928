"""Figures of the GPU page, on the CPU: valid plotly, and holding the measured numbers."""

from __future__ import annotations

import math

import numpy as np
from helpers import validated

from lnlab.labs.gpu import benchmark, parity
from lnlab.labs.gpu.plots import error_heatmap, log_range, parity_bars, throughput_bars

X = np.array([[2.0, 4.0, 6.0, 8.0], [1.0, 1.0, 2.0, 9.0]])


def test_parity_figures_are_valid_and_hold_the_errors():
    result = parity.parity(X, "cpu", "float16")

    bars = validated(parity_bars(result))
    heat = validated(error_heatmap(result, ["a", "b"], ["f1", "f2", "f3", "f4"]))

    assert [t.name for t in bars.data] == ["max relative error", "expected bound"]
    assert list(bars.data[0].x) == ["μ", "σ²", "σ_ε", "x̂", "y", "y fused"]
    # several labelled decades, and room above the tallest bar (at least a factor of 2)
    low, high = bars.layout.yaxis.range
    assert bars.layout.yaxis.dtick == 1 and high - low >= 3
    tallest = max(r.bound for r in result.rows)
    assert high - math.log10(tallest) >= 0.3 - 1e-12
    np.testing.assert_allclose(
        np.array(heat.data[0].z, dtype=float), result.trace.y - result.reference.y
    )
    assert heat.layout.margin.t == 80


def test_throughput_bars_show_time_and_useful_bandwidth_so_faster_looks_better():
    result = benchmark.measure_layer_norm((2, 8, 64), "cpu", deadline_s=0.2)

    fig = validated(throughput_bars(result))

    measurements = (result.copy, result.steps, result.fused)
    time, useful = fig.data
    assert list(time.x) == [m.median_s * 1e3 for m in measurements]
    assert list(useful.x) == [result.useful_gbps(m) for m in measurements]
    # the same bytes (read x, write y) over each time: the faster version has the longer bar
    faster = min(measurements[1:], key=lambda m: m.median_s)
    assert max(useful.x[1:]) == result.useful_gbps(faster)
    assert fig.layout.height == 280
    # printed values sit past the bars, inside the axis range
    assert all(t.textposition == "outside" for t in fig.data)
    assert fig.layout.xaxis.range[1] > max(time.x) and fig.layout.xaxis2.range[1] > max(useful.x)


def test_log_range_spans_several_decades_with_headroom():
    assert log_range([3e-8, 5e-7]) == [-9, -6]
    assert log_range([3e-8, 9.9e-7]) == [-8, -5]  # 9.9e-7 would touch 1e-6
    assert log_range([0.0, float("inf"), 2e-3]) == [-5, -2]
    assert log_range([]) == [-2, 1]
