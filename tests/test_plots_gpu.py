"""Figures of the GPU page, on the CPU: valid plotly, and holding the measured numbers."""

from __future__ import annotations

import numpy as np
from helpers import validated

from lnlab import timing
from lnlab.plots.gpu import error_heatmap, parity_bars, throughput_bars

X = np.array([[2.0, 4.0, 6.0, 8.0], [1.0, 1.0, 2.0, 9.0]])


def test_parity_figures_are_valid_and_hold_the_errors():
    result = timing.parity(X, "cpu", "float16")

    bars = validated(parity_bars(result))
    heat = validated(error_heatmap(result, ["a", "b"], ["f1", "f2", "f3", "f4"]))

    assert [t.name for t in bars.data] == ["max relative error", "expected bound"]
    assert list(bars.data[0].x) == [r.step for r in result.rows]
    np.testing.assert_allclose(
        np.array(heat.data[0].z, dtype=float), result.trace.y - result.reference.y
    )
    assert heat.layout.margin.t == 80


def test_throughput_bars_are_valid_and_hold_the_rates():
    result = timing.measure_layer_norm((2, 8, 64), "cpu", budget_s=0.2)

    fig = validated(throughput_bars(result))

    assert list(fig.data[0].x) == [m.gbps for m in (result.copy, result.steps, result.fused)]
    assert fig.layout.height == 280
