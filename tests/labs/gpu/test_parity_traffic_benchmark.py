"""lnlab.labs.gpu.parity, lnlab.labs.gpu.traffic and lnlab.labs.gpu.benchmark: parity with float64,
byte counts, size caps, the heavy-work line, timings."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from helpers import front_of_line_held

from lnlab.core.errors import InputError
from lnlab.labs.gpu import benchmark, memory, parity, plots, traffic
from lnlab.labs.gpu.lesson import slides
from lnlab.serving import heavy_work
from lnlab.teach.presets import token_preset

HELLO = token_preset("hello").x
# By hand: the most spread-out token relative to its size is "?" = (0.3, -0.1, 0.1, 0.5):
# mean 0.2, variance (0.01 + 0.09 + 0.01 + 0.09) / 4 = 0.05, so kappa = 0.5 / sqrt(0.05 + eps).
HELLO_KAPPA = 0.5 / math.sqrt(0.05 + 1e-5)
HELLO_KAPPA_MEAN = 0.8 / 0.25  # max |x| = 0.8; the largest mean, 0.25 (tokens 1 and 3)


# ---------------------------------------------------------------- parity


def test_unit_roundoff_is_half_the_machine_epsilon():
    assert parity.unit_roundoff("float32") == np.finfo(np.float32).eps / 2 == 2.0**-24
    assert parity.unit_roundoff("float16") == np.finfo(np.float16).eps / 2 == 2.0**-11
    assert parity.unit_roundoff("bfloat16") == torch.finfo(torch.bfloat16).eps / 2 == 2.0**-8
    assert parity.unit_roundoff("float64") == np.finfo(np.float64).eps / 2
    with pytest.raises(InputError):
        parity.unit_roundoff("int8")


def test_relative_error_is_normwise_and_handles_zero_and_nan():
    assert parity.relative_error(np.array([1.0, 2.5]), np.array([1.0, 2.0])) == (0.5, 0.25)
    assert parity.relative_error(np.zeros(3), np.zeros(3)) == (0.0, 0.0)
    assert parity.relative_error(np.array([1e-9]), np.zeros(1)) == (1e-9, math.inf)
    assert parity.relative_error(np.array([np.nan, 1.0]), np.ones(2)) == (math.inf, math.inf)


def test_condition_numbers_of_the_hello_preset():
    result = parity.parity(HELLO, "cpu", "float32")
    assert result.kappa == pytest.approx(HELLO_KAPPA, rel=1e-12)
    assert result.kappa_mean == pytest.approx(HELLO_KAPPA_MEAN, rel=1e-12)
    assert parity.expected_bound("float16", "x_hat", 2.0, 9.0) == 2.0**-11 * (2 + 4 * 2.0)
    assert parity.expected_bound("float16", "mean", 2.0, 9.0) == 2.0**-11 * (2 + 2 * 9.0)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_parity_on_the_cpu_stays_within_the_derived_bound(dtype):
    result = parity.parity(HELLO, "cpu", dtype)
    u = 2.0 ** -{"float32": 24, "float16": 11, "bfloat16": 8}[dtype]
    assert [r.step for r in result.rows][-1] == parity.FUSED_LABEL
    assert len(result.rows) == 6
    for r in result.rows:
        kappa = HELLO_KAPPA_MEAN if r.step.startswith("Mean") else HELLO_KAPPA
        assert r.max_rel <= u * (2 + 4 * kappa), r
        assert r.within
    # rounding the input alone moves x_hat: the errors are real, not zero
    x_hat = next(r for r in result.rows if r.step.startswith("Normalize"))
    assert x_hat.max_rel > u / 100


def test_low_precision_errors_are_larger_than_the_float32_bound():
    bound32 = max(r.bound for r in parity.parity(HELLO, "cpu", "float32").rows)
    assert bound32 < 1e-6
    for dtype in ("float16", "bfloat16"):
        errors = [r.max_rel for r in parity.parity(HELLO, "cpu", dtype).rows]
        assert max(errors) > 100 * bound32


def test_parity_fused_output_matches_torch_layer_norm():
    result = parity.parity(HELLO, "cpu", "float32")
    expected = F.layer_norm(torch.tensor(HELLO, dtype=torch.float32), (4,)).double().numpy()
    np.testing.assert_array_equal(result.fused_y, expected)
    np.testing.assert_allclose(result.reference.y, expected, atol=1e-6)


def test_parity_overflow_in_float16_is_reported_beyond_the_bound():
    result = parity.parity(np.array([[7e4, 1.0, 2.0, 3.0]]), "cpu", "float16")  # > 65504
    assert not all(r.within for r in result.rows)


def test_tiny_values_are_within_float32s_range_and_its_bound():
    """Issue 36: 1e-6-scale tokens showed "This happens when values leave float32's range".
    They are far inside it; ε far above σ² shrinks x̂ (to 5e-4 here) but not the rounding of
    x − μ, so κ counts against the largest |x̂|, and every step stays within its bound."""
    x = 1e-6 * np.array([[1.0, 2.0, 3.0, 4.0]])
    result = parity.parity(x, "cpu", "float32")
    largest_x_hat = 1.5 / math.sqrt(1.25 + 1e7)  # |x − μ| / σ_ε, in units of 1e-6
    assert result.kappa == pytest.approx(4 / math.sqrt(1.25 + 1e7) / largest_x_hat, rel=1e-9)
    assert all(r.within for r in result.rows)
    assert parity.out_of_range(result) == ([], [])
    steps = slides(result, ["t1"], 0, "CPU", (1, 4, 8), None).sections[1]
    assert not steps.callouts


def test_tiny_values_in_float16_are_under_its_smallest_normal_number():
    """The same tokens in float16 are subnormal (under 6.1e-05): the callout says which."""
    x = 1e-6 * np.array([[1.0, 2.0, 3.0, 4.0]])
    result = parity.parity(x, "cpu", "float16")
    assert parity.out_of_range(result) == ([], ["x", "μ", "σ²"])
    (callout,) = slides(result, ["t1"], 0, "CPU", (1, 4, 8), None).sections[1].callouts
    assert "x, μ, σ² are under float16's smallest normal number, 6.104e-05" in callout.text
    assert "go past" not in callout.text and "within" not in callout.text


def test_parity_rejects_an_unsupported_dtype_and_device():
    with pytest.raises(InputError):
        parity.parity(HELLO, "cpu", "float8")
    with pytest.raises(InputError):
        parity.parity(HELLO, "tpu", "float32")


def test_dtype_table_derives_digits_from_the_significand():
    rows = {r["dtype"]: r for r in parity.dtype_table()}
    assert rows["float32"]["digits"] == 7.2  # 24 log10(2) = 7.22
    assert rows["float16"]["digits"] == 3.3  # 11 log10(2) = 3.31
    assert rows["bfloat16"]["x̂ bound at κ = 1"] == 6 * 2.0**-8


# ---------------------------------------------------------------- bytes


def test_byte_counts_for_a_known_shape():
    rows, features, itemsize = 6, 4, 4  # N = 24 elements, R = 6 rows, D = 4 features
    n, r, d = 24, 6, 4
    by_hand = (
        (n + r)  # mean: read x, write the row means
        + (n + r + n)  # x - mean
        + (n + n)  # square
        + (n + r)  # mean of the squares
        + (r + r)  # + eps
        + (r + r)  # sqrt
        + (n + r + n)  # divide
        + (n + d + n)  # * gamma
        + (n + d + n)  # + beta
    )
    assert traffic.step_bytes(rows, features, itemsize) == by_hand * itemsize == 1376
    assert traffic.fused_bytes(rows, features, itemsize) == (n + 2 * d + n) * itemsize == 224
    assert traffic.copy_bytes(rows, features, itemsize) == 2 * n * itemsize == 192
    assert traffic.traffic_totals(traffic.STEP_OPS) == (12, 8, 2)
    assert len(traffic.STEP_OPS) == 9
    table = traffic.traffic_table(rows, features, itemsize)
    assert sum(t["bytes read"] + t["bytes written"] for t in table) == 1376 + 224 + 192


def test_step_by_step_equals_fused_layer_norm_in_float32():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(3, 5, 64, generator=g) * 3 + 1
    gamma, beta = torch.randn(64, generator=g), torch.randn(64, generator=g)
    steps = benchmark.layer_norm_step_by_step(x, gamma, beta, 1e-5)
    fused = F.layer_norm(x, (64,), gamma, beta, 1e-5)
    torch.testing.assert_close(steps, fused, rtol=1e-5, atol=1e-5)
    assert not torch.equal(steps, x)


# ---------------------------------------------------------------- caps and the line


def test_size_caps(described_devices):
    """With a CPU of a 1 MiB cache and a GPU whose memory torch does not tell (conftest), the
    caps are the fallbacks: 2^21 and 2^23 elements."""
    described_devices["cuda:0"] = memory.Memory("cuda:0", "", None, None, "the GPU's", "x")
    assert benchmark.check_size(2, 64, 16384, "cpu") == 2**21
    assert benchmark.check_size(8, 64, 16384, "cuda:0") == 2**23
    with pytest.raises(InputError, match="over the CPU cap of 2,097,152"):
        benchmark.check_size(2, 65, 16384, "cpu")
    with pytest.raises(InputError, match="GPU cap"):
        benchmark.check_size(9, 64, 16384, "cuda:0")
    for bad in ((0, 8, 8), (1, 8, 1), (1, 8, 16385), (1025, 1, 8), (1, 8193, 8)):
        with pytest.raises(InputError):
            benchmark.check_size(*bad, "cpu")
    with pytest.raises(InputError, match="cap"):
        benchmark.run_scale_up(3, 1024, 1024, "cpu")
    # the link: 1024 x 1024 rows of 2 features, under the element cap
    with pytest.raises(InputError, match="1,048,576 rows is over the cap of 65,536 rows"):
        benchmark.check_size(1024, 1024, 2, "cpu")
    assert benchmark.check_size(64, 1024, 2, "cpu") == 2**17


def test_a_run_waits_its_turn_and_gives_up_past_its_longest_wait():
    # refused at once if the last runs' length says so, else after waiting 0.05 s
    with (
        front_of_line_held(),
        pytest.raises(benchmark.BusyError, match=r"0\.05 s limit|Waited 0\.05 s .*1st in line"),
    ):
        benchmark.run_scale_up(1, 4, 8, "cpu", deadline_s=0.01, max_wait_s=0.05)
    assert benchmark.run_scale_up(1, 4, 8, "cpu", deadline_s=0.01).numel == 32


def test_scale_up_on_tiny_sizes_times_everything_on_one_thread():
    threads = torch.get_num_threads()
    result = benchmark.run_scale_up(2, 8, 16, "cpu", deadline_s=0.05)
    assert torch.get_num_threads() == threads  # restored
    assert result.threads == benchmark.CPU_THREADS == 1
    assert result.shape == (2, 8, 16) and result.numel == 256
    for m in (result.copy, result.steps, result.fused):
        assert m.median_s > 0 and m.samples >= 1 and m.calls_per_sample >= 1
        assert m.gbps == pytest.approx(m.bytes_moved / m.median_s / 1e9)
    assert result.steps.bytes_moved == (12 * 256 + 8 * 16 + 2 * 16) * 4
    assert result.fused.bytes_moved == (2 * 256 + 2 * 16) * 4
    assert result.share_of_copy(result.copy) == 1.0
    assert result.max_diff < 1e-5
    rows = benchmark.scale_up_table(result)
    assert [r["version"] for r in rows] == ["copy", "step by step", "fused F.layer_norm"]
    assert all(r["median time (ms)"] > 0 for r in rows)


def test_a_failed_run_leaves_the_front_of_the_line(monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("kernel failed")

    monkeypatch.setattr(benchmark._WORKER, "call", boom)
    with pytest.raises(RuntimeError):
        benchmark.run_scale_up(1, 4, 8, "cpu", owner="failing")
    assert heavy_work.place("failing") is None
    with heavy_work.front("next", max_wait_s=0):  # free at once
        pass


# ---------------------------------------------------------------- figures and the bench


def test_figures():
    result = parity.parity(HELLO, "cpu", "float16")
    bars = plots.parity_bars(result)
    assert [t.name for t in bars.data] == ["max relative error", "expected bound"]
    assert list(bars.data[1].y) == [r.bound for r in result.rows]
    assert bars.layout.yaxis.type == "log"
    heat = plots.error_heatmap(result, list(token_preset("hello").labels), list("abcd"))
    np.testing.assert_allclose(
        np.array(heat.data[0].z, dtype=float), result.trace.y - result.reference.y
    )
    scale = benchmark.run_scale_up(1, 4, 8, "cpu", deadline_s=0.01)
    fig = plots.throughput_bars(scale)
    assert list(fig.data[0].y) == ["copy", "step by step", "fused F.layer_norm"]
    # each panel's title holds its unit; each bar's value is printed past it
    assert [a.text for a in fig.layout.annotations] == ["time per call (ms)", "useful GB/s"]
    assert fig.data[0].text[0] == f"{scale.copy.median_s * 1e3:.3g}"
