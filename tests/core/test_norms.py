"""Correctness of lnlab.core.norms against torch.nn.functional (float64) and against hand-derived
values.

Two conventions run through the file:

* A backend in a lower precision is compared with the float64 reference computed on the input
  *as that dtype stores it* (x, gamma and beta rounded to the dtype). The tolerance then measures
  lnlab's arithmetic and the rounding of its output, not the rounding of the input, whose effect
  depends on the conditioning of the data and is unbounded. `test_low_precision_end_to_end`
  covers the rounding of the input too, on well-conditioned data.
* torch's float64 kernels take the statistics of the raw values, so on `1e6 + 1e-3 * v` they lose
  about 7 digits to cancellation. The reference therefore feeds them each group minus its float64
  mean: an identity of the maths (Layer Norm and Batch Norm are shift-invariant) that makes torch
  accurate to a few ulps, so that the 1e-12 tolerance tests lnlab and not torch.
"""

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from helpers import CUDA_BF16, HAS_CUDA, needs_cuda
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays
from numpy.testing import assert_allclose, assert_array_equal

import lnlab
from lnlab import InputError

# ---------------------------------------------------------------- tolerances

EPS64 = float(np.finfo(np.float64).eps)  # 2^-52
FLOAT16_EPS = 2.0**-10
BFLOAT16_EPS = 2.0**-7
# float64: measured errors are ~1e-15 on outputs of order 1 (|x_hat| <= sqrt(D - 1) <= 16); the
# headroom covers groups of 256 and the cancellation in y = gamma * x_hat + beta.
F64_TOL = 1e-12
# float32: 2^-23 = 1.2e-7 per operation, over sums of up to 256 terms.
F32_TOL = 1e-5
# float16 / bfloat16, input as stored: the arithmetic runs in float32 (atol = F32_TOL, which only
# matters next to 0) and the output is rounded once to the dtype (half an ulp: rtol = eps).
# End to end, the rounding of the input included, on unit-scale data with groups of 4 to 64:
# the measured worst error is 2 to 4 eps of the dtype; we allow 8 eps (7.8e-3 and 6.3e-2).
END_TO_END_ATOL = {"float16": 8 * FLOAT16_EPS, "bfloat16": 8 * BFLOAT16_EPS}


@dataclass(frozen=True)
class Config:
    """Where lnlab computes, and how closely that must match the float64 reference."""

    backend: str
    dtype: str
    rtol: float
    atol: float
    device: str = "cpu"

    def __str__(self) -> str:
        return "numpy" if self.backend == "numpy" else f"torch-{self.device}-{self.dtype}"

    @property
    def kwargs(self) -> dict[str, str]:
        if self.backend == "numpy":
            return {"backend": "numpy"}
        return {"backend": "torch", "device": self.device, "dtype": self.dtype}

    @property
    def tiny(self) -> float:
        """The smallest normal number of the dtype the arithmetic runs in."""
        compute = np.float64 if self.dtype == "float64" else np.float32
        return float(np.finfo(compute).tiny)

    def stored(self, a: Any) -> Any:
        """`a` as this dtype stores it, back in float64 (None stays None)."""
        if a is None or self.dtype == "float64":
            return a
        t = torch.as_tensor(np.asarray(a, dtype=np.float64)).to(getattr(torch, self.dtype))
        return t.double().numpy()


NUMPY = Config("numpy", "float64", F64_TOL, F64_TOL)
TORCH64 = Config("torch", "float64", F64_TOL, F64_TOL)
TORCH32 = Config("torch", "float32", F32_TOL, F32_TOL)
TORCH16 = Config("torch", "float16", FLOAT16_EPS, F32_TOL)
TORCHBF16 = Config("torch", "bfloat16", BFLOAT16_EPS, F32_TOL)
FLOAT64_CONFIGS = [NUMPY, TORCH64]
PRECISE_CONFIGS = [NUMPY, TORCH64, TORCH32]
CUDA_CONFIGS = [
    pytest.param(
        Config("torch", c.dtype, c.rtol, c.atol, "cuda"), marks=needs_cuda, id=f"cuda-{c.dtype}"
    )
    for c in (TORCH64, TORCH32, TORCH16)
] + [
    pytest.param(
        Config("torch", "bfloat16", BFLOAT16_EPS, F32_TOL, "cuda"),
        marks=pytest.mark.skipif(not CUDA_BF16, reason="no CUDA GPU with bfloat16"),
        id="cuda-bfloat16",
    )
]
CONFIGS = [NUMPY, TORCH64, TORCH32, TORCH16, TORCHBF16, *CUDA_CONFIGS]


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """The inputs are small: torch's thread pool only costs here, and a lot on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# ---------------------------------------------------------------- the torch reference


def _t(a: Any) -> Any:
    return None if a is None else torch.as_tensor(np.asarray(a, dtype=np.float64))


def _minus_mean(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return x - np.mean(x, axis=axes, keepdims=True)


def _group_axes(x: np.ndarray, dims: int) -> tuple[int, ...]:
    return tuple(range(x.ndim - dims, x.ndim))


def ref_layer_norm(x, gamma=None, beta=None, eps=1e-5, dims=1) -> np.ndarray:
    """F.layer_norm over the last `dims` axes, on the shifted groups (see the module docstring)."""
    shifted = _t(_minus_mean(x, _group_axes(x, dims)))
    return F.layer_norm(shifted, x.shape[x.ndim - dims :], _t(gamma), _t(beta), eps).numpy()


def ref_batch_norm(tokens, gamma=None, beta=None, eps=1e-5):
    """y, running_mean, running_var of F.batch_norm(training=True) from running stats 0 and 1."""
    d = tokens.shape[1]
    running = [torch.zeros(d, dtype=torch.float64), torch.ones(d, dtype=torch.float64)]
    shifted = _t(_minus_mean(tokens, (0,)))
    y = F.batch_norm(shifted, *running, _t(gamma), _t(beta), training=True, momentum=0.1, eps=eps)
    running_var = running[1]  # shift-invariant; the running mean is not: take it from raw tokens
    running_mean = torch.zeros(d, dtype=torch.float64)
    ones = torch.ones(d, dtype=torch.float64)
    F.batch_norm(_t(tokens), running_mean, ones, training=True, momentum=0.1, eps=eps)
    return y.numpy(), running_mean.numpy(), running_var.numpy()


def ref_rms_norm(x, gamma=None, eps=1e-6) -> np.ndarray:
    return F.rms_norm(_t(x), x.shape[-1:], _t(gamma), eps).numpy()


def explicit_x_hat(x, eps, *, unbiased=False, eps_outside=False) -> np.ndarray:
    """x_hat over the last axis by the textbook formula, in float64 torch."""
    c = _t(_minus_mean(x, (-1,)))
    c = c - c.mean(-1, keepdim=True)
    if eps_outside:
        return (c / (c.std(-1, correction=int(unbiased), keepdim=True) + eps)).numpy()
    return (c / torch.sqrt(c.var(-1, correction=int(unbiased), keepdim=True) + eps)).numpy()


def ref_statistics(x, axes, eps) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, biased variance and sqrt(var + eps) by numpy (two passes), keeping the axes.

    The std comes from the data scaled to 1 and np.hypot, so that it neither underflows with
    the variance (the std of (1e-199, 0) is 5e-200 while its variance is 0 in float64) nor
    overflows.
    """
    mean = np.mean(x, axis=axes, keepdims=True)
    c = _minus_mean(x, axes)
    m = np.abs(c).max(axis=axes, keepdims=True)
    m = np.where(m > 0, m, 1.0)
    sigma = m * np.std(c / m, axis=axes, keepdims=True)
    return mean, np.var(c, axis=axes, keepdims=True), np.hypot(sigma, np.sqrt(eps))


def assert_statistics(trace, mean, var, std, scale) -> None:
    """float64 statistics to 1e-12, or to the precision that float64 has at the data's scale."""
    assert_allclose(trace.mean, mean, F64_TOL, EPS64 * scale, err_msg="mean")
    assert_allclose(trace.var, var, F64_TOL, (EPS64 * scale) ** 2, err_msg="var")
    assert_allclose(trace.std, std, F64_TOL, EPS64 * scale, err_msg="std")


# ---------------------------------------------------------------- hypothesis strategies

FAST = settings(
    max_examples=50,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
UNIT = st.floats(-1, 1, allow_subnormal=False)
AFFINE = st.floats(-2, 2, allow_subnormal=False)
EPS_VALUES = (0.0, 1e-12, 1e-5, 1e-3)
# eps = 0 is safe when every group's spread is 0 (NaN on both sides) or so large that its
# square stays far from float64 underflow, where torch's unscaled reference is exact. Subnormal
# spreads in the compute dtype are left to `test_subnormal_spread_without_eps`.
SAFE_SPREAD = 1e-100
# (largest offset, decades of scale) that each dtype can hold: float16 stops at 65504.
RANGES = {"float16": (1e3, (-3.0, 2.0))}
DEFAULT_RANGE = (1e6, (-3.0, 3.0))
SHAPES = array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=16)


@st.composite
def values(draw, shapes=SHAPES, dtype="float64") -> np.ndarray:
    """offset + scale * v, v in [-1, 1], offset up to 1e6 and scale 1e-3 to 1e3."""
    max_offset, (low, high) = RANGES.get(dtype, DEFAULT_RANGE)
    shape = draw(shapes)
    v = draw(arrays(np.float64, shape, elements=UNIT))
    if draw(st.booleans()):  # generic values on top of hypothesis' structured ones
        v = v + np.random.default_rng(draw(st.integers(0, 2**32 - 1))).uniform(-1, 1, shape)
    offset = draw(st.floats(-max_offset, max_offset))
    return offset + 10.0 ** draw(st.floats(low, high)) * v


def draw_affine(data, shape) -> np.ndarray | None:
    return data.draw(st.none() | arrays(np.float64, shape, elements=AFFINE))


def draw_eps(data, cfg: Config, spread: np.ndarray) -> float:
    safe = bool(np.all((spread == 0) | (spread > max(SAFE_SPREAD, cfg.tiny))))
    return data.draw(st.sampled_from(EPS_VALUES if safe else EPS_VALUES[1:]), label="eps")


def stored_all(cfg: Config, *arrays_: Any) -> list[Any]:
    return [cfg.stored(a) for a in arrays_]


# ---------------------------------------------------------------- against torch.nn.functional


@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
@FAST
@given(data=st.data())
def test_layer_norm_matches_torch(cfg, data):
    x = data.draw(values(dtype=cfg.dtype), label="x")
    dims = data.draw(st.integers(1, min(2, x.ndim)), label="dims")
    group = x.shape[x.ndim - dims :]
    gamma, beta = draw_affine(data, group), draw_affine(data, group)
    xs, gs, bs = stored_all(cfg, x, gamma, beta)
    eps = draw_eps(data, cfg, np.ptp(xs, axis=_group_axes(xs, dims)))

    trace = lnlab.layer_norm_trace(x, gamma, beta, eps, dims=dims, **cfg.kwargs)
    y = lnlab.layer_norm(x, gamma, beta, eps, dims=dims, **cfg.kwargs)

    assert y.dtype == np.float64 and y.shape == x.shape
    assert_array_equal(y, trace.y)
    tol = {"rtol": cfg.rtol, "atol": cfg.atol}
    assert_allclose(trace.x_hat, ref_layer_norm(xs, eps=eps, dims=dims), **tol)
    assert_allclose(y, ref_layer_norm(xs, gs, bs, eps, dims), **tol)


@pytest.mark.parametrize("cfg", FLOAT64_CONFIGS, ids=str)
@FAST
@given(data=st.data())
def test_layer_norm_statistics_match_numpy(cfg, data):
    x = data.draw(values(), label="x")
    dims = data.draw(st.integers(1, min(2, x.ndim)), label="dims")
    eps = data.draw(st.sampled_from(EPS_VALUES), label="eps")
    axes = _group_axes(x, dims)

    trace = lnlab.layer_norm_trace(x, eps=eps, dims=dims, **cfg.kwargs)

    mean, var, std = ref_statistics(x, axes, eps)
    assert trace.mean.shape == trace.var.shape == trace.std.shape == var.shape
    assert_statistics(trace, mean, var, std, np.abs(x).max())


UNBIASED_OR_OUTSIDE = [(True, False), (False, True), (True, True)]


@pytest.mark.parametrize(("unbiased", "eps_outside"), UNBIASED_OR_OUTSIDE)
@pytest.mark.parametrize("cfg", PRECISE_CONFIGS, ids=str)
@FAST
@given(data=st.data())
def test_unbiased_and_eps_outside_match_explicit_formula(cfg, unbiased, eps_outside, data):
    shapes = SHAPES.filter(lambda s: s[-1] >= 2)  # the unbiased variance needs two values
    x = data.draw(values(shapes, cfg.dtype), label="x")
    xs = cfg.stored(x)
    eps = draw_eps(data, cfg, np.ptp(xs, axis=-1))

    trace = lnlab.layer_norm_trace(
        x, eps=eps, unbiased=unbiased, eps_outside=eps_outside, **cfg.kwargs
    )

    want = explicit_x_hat(xs, eps, unbiased=unbiased, eps_outside=eps_outside)
    assert_allclose(trace.x_hat, want, rtol=cfg.rtol, atol=cfg.atol)
    assert_array_equal(trace.y, trace.x_hat)


@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
@FAST
@given(data=st.data())
def test_batch_norm_matches_torch(cfg, data):
    shapes = array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=16)
    shapes = shapes.filter(lambda s: np.prod(s[:-1]) >= 2)  # torch refuses a batch of one
    x = data.draw(values(shapes, cfg.dtype), label="x")
    d = x.shape[-1]
    gamma, beta = draw_affine(data, (d,)), draw_affine(data, (d,))
    xs, gs, bs = stored_all(cfg, x, gamma, beta)
    tokens = xs.reshape(-1, d)
    eps = data.draw(st.sampled_from(EPS_VALUES[1:]), label="eps")  # torch refuses 0 in training

    trace = lnlab.batch_norm_trace(x, gamma, beta, eps, **cfg.kwargs)

    y, running_mean, running_var = ref_batch_norm(tokens, gs, bs, eps)
    tol = {"rtol": cfg.rtol, "atol": cfg.atol}
    assert trace.count == tokens.shape[0]
    assert_array_equal(lnlab.batch_norm(x, gamma, beta, eps, **cfg.kwargs), trace.y)
    assert_allclose(trace.y, y.reshape(x.shape), **tol)
    assert_allclose(trace.running_mean, running_mean, **tol)
    assert_allclose(trace.running_var, running_var, **tol)
    if cfg.dtype == "float64":
        mean, var, std = ref_statistics(tokens, (0,), eps)
        assert_statistics(trace, mean[0], var[0], std[0], np.abs(tokens).max())


@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
@FAST
@given(data=st.data())
def test_rms_norm_matches_torch(cfg, data):
    x = data.draw(values(dtype=cfg.dtype), label="x")
    gamma = draw_affine(data, x.shape[-1:])
    xs, gs = stored_all(cfg, x, gamma)
    eps = draw_eps(data, cfg, np.abs(xs).max(axis=-1))

    y = lnlab.rms_norm(x, gamma, eps, **cfg.kwargs)

    assert y.dtype == np.float64 and y.shape == x.shape
    assert_allclose(y, ref_rms_norm(xs, gs, eps), rtol=cfg.rtol, atol=cfg.atol)


NORMS = {
    "layer_norm": lnlab.layer_norm,
    "layer_norm_dims2": lambda x, **kw: lnlab.layer_norm(x, dims=2, **kw),
    "batch_norm": lnlab.batch_norm,
    "rms_norm": lnlab.rms_norm,
}


@pytest.mark.parametrize("cfg", FLOAT64_CONFIGS, ids=str)
@pytest.mark.parametrize("name", NORMS)
def test_torch_without_the_shift_agrees_on_well_conditioned_data(cfg, name):
    """The raw torch kernels, no shift in the reference, where their statistics are exact."""
    x = np.random.default_rng(11).standard_normal((32, 4, 8))
    reference = {
        "layer_norm": lambda: F.layer_norm(_t(x), (8,), eps=1e-5),
        "layer_norm_dims2": lambda: F.layer_norm(_t(x), (4, 8), eps=1e-5),
        "batch_norm": lambda: F.batch_norm(_t(x).reshape(-1, 8), None, None, training=True),
        "rms_norm": lambda: F.rms_norm(_t(x), (8,), eps=1e-5),
    }[name]()

    got = NORMS[name](x if name != "batch_norm" else x.reshape(-1, 8), eps=1e-5, **cfg.kwargs)

    assert_allclose(got, reference.reshape(got.shape).numpy(), rtol=F64_TOL, atol=F64_TOL)


@pytest.mark.parametrize("dtype", sorted(END_TO_END_ATOL))
@pytest.mark.parametrize("name", NORMS)
@pytest.mark.parametrize("shape", [(1024, 4), (256, 16), (64, 8, 8)])
def test_low_precision_end_to_end(name, dtype, shape):
    """Unit-scale data rounded to float16 / bfloat16 against float64 numpy on the exact data."""
    x = np.random.default_rng(sum(shape)).standard_normal(shape)
    norm = NORMS[name]
    if name == "batch_norm":
        x = x.reshape(-1, shape[-1])

    got = norm(x, backend="torch", device="cpu", dtype=dtype)

    assert_allclose(got, norm(x), rtol=0, atol=END_TO_END_ATOL[dtype])


# ---------------------------------------------------------------- Layer Norm: hard cases

BETA4 = np.array([0.5, -1.25, 3.0, 0.0])  # exact in every dtype, even bfloat16
GAMMA4 = np.array([2.0, -0.5, 1.5, 0.75])


@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
@pytest.mark.parametrize("constant", [0.1, 1 / 3, 1e4, -7.0, 0.0])
def test_constant_vector_gives_exactly_beta_or_nan_without_eps(cfg, constant):
    x = np.full((3, 4), constant)

    y = lnlab.layer_norm(x, GAMMA4, BETA4, 1e-5, **cfg.kwargs)
    y0 = lnlab.layer_norm(x, GAMMA4, BETA4, 0.0, **cfg.kwargs)

    assert_array_equal(y, np.broadcast_to(BETA4, x.shape))
    assert np.isnan(y0).all(), y0  # 0 / 0: neither a silent -1 nor a 1


@pytest.mark.parametrize(
    ("cfg", "offset"),
    [(NUMPY, 1e4), (TORCH64, 1e4), (TORCH32, 1e4), (NUMPY, 1e8), (TORCH64, 1e8)],
    ids=str,
)
def test_offset_gives_bit_for_bit_the_same_answer(cfg, offset):
    """`offset + x` is exact for these (float32 cannot hold 1e8 + 1), so the answer must be too."""
    x = np.array([[0.0, 1.0, 2.0, 3.0], [3.0, -1.0, 0.5, 2.0]])

    shifted = lnlab.layer_norm(offset + x, GAMMA4, BETA4, **cfg.kwargs)

    assert_array_equal(shifted, lnlab.layer_norm(x, GAMMA4, BETA4, **cfg.kwargs))


@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
def test_one_feature_gives_beta(cfg):
    x = np.array([[3.0], [-2.5], [1e4], [0.0]])

    assert_array_equal(lnlab.layer_norm(x, 2.0, 0.75, **cfg.kwargs), np.full(x.shape, 0.75))


@pytest.mark.parametrize("cfg", PRECISE_CONFIGS, ids=str)
@pytest.mark.parametrize("eps", [0.0, 1e-12, 1e-5])
@pytest.mark.parametrize("shape", [(5,), (1, 5), (1, 1, 5)])
def test_one_token(cfg, eps, shape):
    x = np.array([0.3, -1.2, 4.0, 0.0, 2.5]).reshape(shape)

    y = lnlab.layer_norm(x, eps=eps, **cfg.kwargs)

    assert y.shape == shape
    assert_allclose(y, explicit_x_hat(cfg.stored(x), eps), rtol=cfg.rtol, atol=cfg.atol)


MAGNITUDE_VECTORS = [
    np.array([1.0, 2.0, 3.0, 4.0]),
    np.array([-1.0, 0.0, 0.0, 5e-3, 7.0]),
    np.random.default_rng(7).standard_normal(16),
]


@pytest.mark.parametrize("cfg", FLOAT64_CONFIGS, ids=str)
@pytest.mark.parametrize("magnitude", [1e-300, 1e-200, 1e-150, 1e150, 1e200, 1e300])
@pytest.mark.parametrize("v", MAGNITUDE_VECTORS, ids=lambda v: f"D{v.size}")
def test_extreme_magnitudes_without_eps_give_the_x_hat_of_v(cfg, magnitude, v):
    """Squares of 1e-200 underflow and of 1e200 overflow: x_hat must not notice."""
    x_hat = lnlab.layer_norm(magnitude * v, eps=0.0, **cfg.kwargs)

    assert_allclose(x_hat, explicit_x_hat(v, 0.0), rtol=F64_TOL, atol=F64_TOL)


@pytest.mark.parametrize("cfg", FLOAT64_CONFIGS, ids=str)
@pytest.mark.parametrize("power", [-900, -600, 600, 1000])
@pytest.mark.parametrize("v", MAGNITUDE_VECTORS, ids=lambda v: f"D{v.size}")
def test_scaled_and_unscaled_paths_agree_bit_for_bit(cfg, power, v):
    """2^power * v must be scaled before squaring and v need not be; both give the same bits."""
    x = np.stack([v, 2.0 * v])

    scaled = lnlab.layer_norm_trace(np.ldexp(x, power), eps=0.0, **cfg.kwargs)
    plain = lnlab.layer_norm_trace(x, eps=0.0, **cfg.kwargs)

    assert_array_equal(scaled.x_hat, plain.x_hat)
    assert_array_equal(scaled.std, np.ldexp(plain.std, power))


def test_numpy_blocks_and_float32_input_change_no_bit(monkeypatch: pytest.MonkeyPatch):
    """Rows go through numpy in cache-sized blocks; a float32 input is widened block by block.

    With blocks of 8 rows of 64 features, not the 32 rows of 4,096 features the real size
    gives: the same three full blocks and a part, at 1/64 of the work."""
    features = 64
    monkeypatch.setattr(lnlab.core.standardize, "BLOCK_ELEMENTS", 8 * features)
    rows = 3 * 8 + 5  # three full blocks and a part
    x = np.random.default_rng(3).standard_normal((rows, features), dtype=np.float32)
    x[7] = 2.5  # a constant row takes the scaled path inside its block
    x[-1, 3] = np.nan  # so does a row with a NaN, in the last, partial block

    whole = lnlab.layer_norm_trace(x, GAMMA4[0], BETA4[1])
    one_by_one = [lnlab.layer_norm_trace(row.astype(np.float64), GAMMA4[0], BETA4[1]) for row in x]

    for name in ("mean", "var", "std", "x_hat", "y"):
        assert_array_equal(getattr(whole, name), np.stack([getattr(t, name) for t in one_by_one]))
    assert whole.x.dtype == np.float64
    assert_array_equal(whole.y[7], np.full(features, BETA4[1]))
    assert np.isnan(whole.y[-1]).all() and not np.isnan(whole.y[:-1]).any()


NEAR_MAX = {"float64": 1.7e308, "float32": 3e38}


@pytest.mark.parametrize("cfg", PRECISE_CONFIGS, ids=str)
def test_values_near_the_largest_float(cfg):
    """Scaling rounds down to a power of two: rounding up would make the scale inf here."""
    big = NEAR_MAX["float32" if cfg.dtype == "float32" else "float64"]
    x = np.array([0.0, 0.0, 0.0, big])

    y = lnlab.layer_norm(x, eps=0.0, **cfg.kwargs)
    rms = lnlab.rms_norm(np.array([big, big / 2]), eps=0.0, **cfg.kwargs)

    assert_allclose(y, [-1 / 3**0.5] * 3 + [3**0.5], rtol=cfg.rtol)
    assert_allclose(rms, [1.6**0.5, 0.5 * 1.6**0.5], rtol=cfg.rtol)  # rms = big * sqrt(5 / 8)


def test_variance_near_the_largest_float_is_finite():
    """var = 1.44e308 is a float even though s * s would not be."""
    trace = lnlab.layer_norm_trace([-1.2e154, 1.2e154], eps=0.0)

    assert_allclose(trace.var, [1.44e308], rtol=F64_TOL)
    assert_allclose(trace.x_hat, [-1.0, 1.0], rtol=F64_TOL)


def test_a_huge_eps_does_not_overflow():
    """var + eps would overflow on the unscaled path; the scaled one gives sqrt(var + eps)."""
    eps, c = 1.5e308, 0.7e154
    trace = lnlab.layer_norm_trace([-c, c], eps=eps)

    std = (c * c + eps) ** 0.5 if np.isfinite(c * c + eps) else c * (1 + eps / c / c) ** 0.5
    assert_allclose(trace.std, [std], rtol=F64_TOL)
    assert_allclose(trace.x_hat, [-c / std, c / std], rtol=F64_TOL)


@pytest.mark.parametrize("cfg", FLOAT64_CONFIGS, ids=str)
@pytest.mark.parametrize("v", MAGNITUDE_VECTORS, ids=lambda v: f"D{v.size}")
def test_extreme_magnitudes_with_eps(cfg, v):
    """Next to eps = 1e-5 a variance of 1e-400 is nothing, and one of 1e400 is everything."""
    tiny, huge = 1e-200, 1e200
    c = v - v.mean()

    tiny_x_hat = lnlab.layer_norm(tiny * v, eps=1e-5, **cfg.kwargs)
    huge_x_hat = lnlab.layer_norm(huge * v, eps=1e-5, **cfg.kwargs)

    assert_allclose(tiny_x_hat, tiny * c / np.sqrt(1e-5), rtol=F64_TOL, atol=0)
    assert_allclose(huge_x_hat, explicit_x_hat(v, 0.0), rtol=F64_TOL, atol=F64_TOL)


@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", [0, 2])
def test_a_nan_or_inf_spoils_only_its_row(cfg, bad, where):
    x = np.random.default_rng(3).standard_normal((4, 5))
    spoiled = x.copy()
    spoiled[1, where] = bad
    others = [0, 2, 3]

    y = lnlab.layer_norm(spoiled, GAMMA4[0], BETA4[1], **cfg.kwargs)
    clean = lnlab.layer_norm(x[others], GAMMA4[0], BETA4[1], **cfg.kwargs)

    assert np.isnan(y[1]).all()
    assert np.isfinite(y[others]).all()
    if cfg.backend == "numpy":
        assert_array_equal(y[others], clean)
    else:
        assert_allclose(y[others], clean, rtol=cfg.rtol, atol=cfg.atol)


NOTEBOOK = np.array([[[0.2, 0.1, 0.3]], [[0.5, 0.1, 0.1]]])  # (2, 1, 3)


@pytest.mark.parametrize("cfg", PRECISE_CONFIGS, ids=str)
@pytest.mark.parametrize("eps", [0.0, 1e-5])
def test_dims_2_notebook_example_by_hand(cfg, eps):
    """Both tokens normalized over their (1, 3) block.

    Token 1: mean 0.2, deviations (0, -0.1, 0.1), variance (0 + 0.01 + 0.01) / 3 = 0.02 / 3.
    Token 2: mean 0.7 / 3, deviations (0.8, -0.4, -0.4) / 3, variance 0.96 / 9 / 3 = 0.32 / 9.
    Without eps: (0, -1, 1) / sqrt(2 / 3) and (2, -1, -1) / sqrt(2).
    """
    mean = np.array([0.2, 0.7 / 3]).reshape(2, 1, 1)
    var = np.array([0.02 / 3, 0.32 / 9]).reshape(2, 1, 1)
    deviations = np.array([[[0.0, -0.1, 0.1]], [[0.8 / 3, -0.4 / 3, -0.4 / 3]]])
    tol = {"rtol": max(cfg.rtol, 1e-14), "atol": cfg.atol}

    trace = lnlab.layer_norm_trace(NOTEBOOK, eps=eps, dims=2, **cfg.kwargs)

    assert trace.mean.shape == (2, 1, 1)
    assert_allclose(trace.mean, mean, **tol)
    assert_allclose(trace.var, var, **tol)
    assert_allclose(trace.std, np.sqrt(var + eps), **tol)
    assert_allclose(trace.x_hat, deviations / np.sqrt(var + eps), **tol)
    if eps == 0:
        by_hand = [[[0, -np.sqrt(1.5), np.sqrt(1.5)]], [[np.sqrt(2), -np.sqrt(0.5), -np.sqrt(0.5)]]]
        assert_allclose(trace.x_hat, by_hand, **tol)
    assert_allclose(trace.y, ref_layer_norm(cfg.stored(NOTEBOOK), eps=eps, dims=2), **tol)


@pytest.mark.parametrize("cfg", FLOAT64_CONFIGS, ids=str)
@FAST
@given(data=st.data())
def test_gamma_std_and_beta_mean_recover_the_token(cfg, data):
    x = data.draw(values(array_shapes(min_dims=1, max_dims=1, min_side=1, max_side=16)))
    eps = data.draw(st.sampled_from(EPS_VALUES[1:]), label="eps")
    std, mean = np.sqrt(np.var(_minus_mean(x, (0,))) + eps), np.mean(x)

    y = lnlab.layer_norm(x, gamma=std, beta=mean, eps=eps, **cfg.kwargs)

    assert_allclose(y, x, rtol=F64_TOL, atol=F64_TOL * np.abs(x).max())


@pytest.mark.parametrize("cfg", PRECISE_CONFIGS, ids=str)
def test_unbiased_one_feature_is_nan(cfg):
    """With D = 1 the unbiased variance is 0 / 0, as in torch.var(correction=1)."""
    x_hat = lnlab.layer_norm([[1.0], [2.0]], unbiased=True, **cfg.kwargs)

    assert np.isnan(x_hat).all()


# eps = 0 and a largest centred value (largest |x| for RMSNorm) below 1 / max of the dtype
SUBNORMAL_CASES = [
    ("layer_norm", lnlab.layer_norm, [0.0, 1e-39], TORCH32, [-1.0, 1.0]),
    ("layer_norm", lnlab.layer_norm, [0.0, 1e-310], TORCH64, [-1.0, 1.0]),
    ("batch_norm", lnlab.batch_norm, [[0.0], [1e-39]], TORCH32, [[-1.0], [1.0]]),
    ("rms_norm", lnlab.rms_norm, [1e-39, -2e-39], TORCH32, [1, -2] / np.sqrt(2.5)),
]


@pytest.mark.parametrize(
    ("norm", "x", "cfg", "want"),
    [
        pytest.param(norm, x, c, want, id=f"{name}-{c}")
        for name, norm, x, cfg, want in SUBNORMAL_CASES
        for c in (NUMPY, cfg)
    ],
)
def test_subnormal_spread_without_eps(norm, x, cfg, want):
    assert_allclose(norm(x, eps=0.0, **cfg.kwargs), want, rtol=F32_TOL)


# ---------------------------------------------------------------- Batch Norm


@pytest.mark.parametrize("cfg", PRECISE_CONFIGS, ids=str)
def test_batch_norm_by_hand(cfg):
    """Features (1, 3) and (10, 30): means 2 and 20, biased variances 1 and 100, unbiased 2, 200."""
    trace = lnlab.batch_norm_trace([[1.0, 10.0], [3.0, 30.0]], eps=0.0, **cfg.kwargs)

    tol = {"rtol": cfg.rtol, "atol": cfg.atol}
    assert trace.count == 2
    assert_allclose(trace.mean, [2.0, 20.0], **tol)
    assert_allclose(trace.var, [1.0, 100.0], **tol)
    assert_allclose(trace.std, [1.0, 10.0], **tol)
    assert_allclose(trace.y, [[-1.0, -1.0], [1.0, 1.0]], **tol)
    assert_allclose(trace.running_mean, [0.2, 2.0], **tol)  # 0.9 * 0 + 0.1 * mean
    assert_allclose(trace.running_var, [1.1, 20.9], **tol)  # 0.9 * 1 + 0.1 * unbiased var


@pytest.mark.parametrize("cfg", FLOAT64_CONFIGS, ids=str)
def test_a_mean_far_below_the_shift_keeps_float64s_precision(cfg):
    """Hypothesis found it: 0.5911606... and -0.5 among 138 zeros. Shifted by the first value,
    the sum is about -82.7 for a mean of 6.5e-4, and that sum alone lost 6.4 times float64's
    precision at the data's scale. The exact mean is the fraction of the inputs, rounded once."""
    a = 0.5911606026411169
    x = np.zeros((10, 14, 2))
    x[0, 0, 0], x[0, 1, 0] = a, -0.5
    trace = lnlab.batch_norm_trace(x, eps=1e-5, **cfg.kwargs)
    want = float((Fraction(a) - Fraction(1, 2)) / 140)
    assert_allclose(trace.mean[0], want, rtol=0, atol=EPS64 * a)
    assert trace.mean[1] == 0.0


@pytest.mark.parametrize("cfg", FLOAT64_CONFIGS, ids=str)
def test_a_group_with_an_infinity_has_an_infinite_mean(cfg):
    """As numpy's and torch's own means: inf, not the NaN its centred values sum to."""
    trace = lnlab.layer_norm_trace([[1.0, np.inf, 2.0], [1.0, -np.inf, 2.0]], **cfg.kwargs)
    assert trace.mean.ravel().tolist() == [np.inf, -np.inf]


@pytest.mark.parametrize(("a", "n"), [(3e153, 64), (2e153, 64), (5e153, 8), (1e154, 4)])
def test_running_variance_is_finite_where_the_unbiased_variance_is(a, n):
    """Feature 0 alternates a and -a over n tokens: variance a^2, unbiased n / (n - 1) a^2,
    finite, while var * n (the old order of operations) overflows to inf. Expected values
    are exact fractions of the float64 inputs, rounded once."""
    x = np.array([[a, 0.0], [-a, 1.0]] * (n // 2), dtype=np.float64)
    with np.errstate(over="ignore"):
        assert np.isinf(np.float64(a) ** 2 * n)  # what var * n / (n - 1) computed first

    trace = lnlab.batch_norm_trace(x, dtype="float64")

    column = [Fraction(v) for v in x[:, 0]]
    mean = sum(column, Fraction(0)) / n
    var = sum(((v - mean) ** 2 for v in column), Fraction(0)) / n
    running_var = Fraction(9, 10) + Fraction(1, 10) * var * n / (n - 1)
    assert np.isfinite(trace.running_var).all()
    assert_allclose(trace.var[0], float(var), rtol=1e-14)
    assert_allclose(trace.running_var[0], float(running_var), rtol=1e-14)
    assert_allclose(
        trace.running_var[1],
        float(Fraction(9, 10) + Fraction(1, 10) * Fraction(n, 4 * (n - 1))),
        rtol=1e-14,
    )


PAD_VALUES = st.sampled_from([0.0, np.nan, 1e300, -1e300, np.inf]) | st.floats()


@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
@FAST
@given(data=st.data())
def test_masked_batch_norm_is_batch_norm_of_the_real_tokens(cfg, data):
    shape = data.draw(array_shapes(min_dims=3, max_dims=3, min_side=1, max_side=6), label="shape")
    x = data.draw(values(st.just(shape), cfg.dtype), label="x")
    mask = data.draw(arrays(bool, shape[:2]), label="mask")
    mask.flat[data.draw(st.integers(0, mask.size - 1), label="one real token")] = True
    pads = data.draw(arrays(np.float64, shape, elements=PAD_VALUES), label="pads")
    padded = np.where(mask[..., None], x, pads)
    gamma, beta = draw_affine(data, shape[-1:]), draw_affine(data, shape[-1:])
    eps = data.draw(st.sampled_from(EPS_VALUES), label="eps")

    masked = lnlab.batch_norm_trace(padded, gamma, beta, eps, mask=mask, **cfg.kwargs)
    plain = lnlab.batch_norm_trace(x[mask], gamma, beta, eps, **cfg.kwargs)

    tol = {"rtol": cfg.rtol, "atol": cfg.atol}
    assert masked.count == plain.count == mask.sum()
    assert_array_equal(masked.y[~mask], 0.0)
    if eps > 0:  # with eps = 0 see test_padded_x_hat_is_zero_even_for_a_constant_feature
        assert_array_equal(masked.x_hat[~mask], 0.0)
    assert_allclose(masked.y[mask], plain.y, **tol)
    assert_allclose(masked.x_hat[mask], plain.x_hat, **tol)
    for name in ("mean", "var", "std", "running_mean", "running_var"):
        assert_allclose(getattr(masked, name), getattr(plain, name), **tol, err_msg=name)
    y = lnlab.batch_norm(padded, gamma, beta, eps, mask=mask, **cfg.kwargs)
    assert_array_equal(y, masked.y)


@pytest.mark.parametrize("cfg", PRECISE_CONFIGS, ids=str)
def test_padded_x_hat_is_zero_even_for_a_constant_feature(cfg):
    x = np.array([[[1.0, 2.0], [1.0, 3.0]], [[1.0, 7.0], [9.0, 9.0]]])  # feature 0: 1, 1, 1
    mask = np.array([[True, True], [True, False]])

    trace = lnlab.batch_norm_trace(x, eps=0.0, mask=mask, **cfg.kwargs)

    assert np.isnan(trace.x_hat[mask][:, 0]).all()  # 0 / 0 for the real tokens: right
    assert_array_equal(trace.y[~mask], 0.0)
    assert_array_equal(trace.x_hat[~mask], 0.0)  # the pad: NaN


def test_naive_batch_norm_of_a_padded_batch_differs():
    x = np.array([[[1.0, 2.0], [3.0, 5.0]], [[4.0, -1.0], [0.0, 0.0]]])  # last token is padding
    mask = np.array([[True, True], [True, False]])

    naive = lnlab.batch_norm(x)
    masked = lnlab.batch_norm(x, mask=mask)

    assert_allclose(masked[mask], lnlab.batch_norm(x[mask]), rtol=F64_TOL, atol=F64_TOL)
    assert not np.allclose(naive[mask], masked[mask], rtol=1e-3, atol=1e-3)


def test_one_real_token_gives_beta():
    """Torch refuses a batch of one; lnlab's x_hat is 0 (with eps > 0) and y is beta."""
    trace = lnlab.batch_norm_trace([[1.0, 2.0], [7.0, 9.0]], beta=[0.5, -2.0], mask=[True, False])

    assert trace.count == 1
    assert_array_equal(trace.y, [[0.5, -2.0], [0.0, 0.0]])
    assert np.isnan(trace.running_var).all()  # the unbiased variance of one value is 0 / 0


# ---------------------------------------------------------------- RMSNorm


@pytest.mark.parametrize("cfg", PRECISE_CONFIGS, ids=str)
def test_rms_norm_by_hand(cfg):
    """rms(3, 4) = sqrt(12.5); a constant vector is all ones, not NaN: RMSNorm does not centre."""
    y = lnlab.rms_norm(
        [[3.0, 4.0], [2.0, 2.0], [-5.0, 0.0]], gamma=[1.0, -2.0], eps=0.0, **cfg.kwargs
    )

    want = [[3 / np.sqrt(12.5), -8 / np.sqrt(12.5)], [1.0, -2.0], [-np.sqrt(2), 0.0]]
    assert_allclose(y, want, rtol=cfg.rtol, atol=cfg.atol)


@pytest.mark.parametrize("cfg", FLOAT64_CONFIGS, ids=str)
@pytest.mark.parametrize("magnitude", [1e-300, 1e-200, 1e200, 1e300])
def test_rms_norm_extreme_magnitudes(cfg, magnitude):
    v = MAGNITUDE_VECTORS[2]

    y = lnlab.rms_norm(magnitude * v, eps=0.0, **cfg.kwargs)

    assert_allclose(y, v / np.sqrt(np.mean(v * v)), rtol=F64_TOL, atol=F64_TOL)


@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
def test_rms_norm_of_zeros(cfg):
    zeros = np.zeros((2, 3))

    assert_array_equal(lnlab.rms_norm(zeros, **cfg.kwargs), zeros)
    assert np.isnan(lnlab.rms_norm(zeros, eps=0.0, **cfg.kwargs)).all()


# ---------------------------------------------------------------- the trace


def test_trace_of_2_4_6_8_by_hand():
    """mean 5, deviations (-3, -1, 1, 3), variance 20 / 4 = 5, std sqrt(5 + 1e-5)."""
    std = np.sqrt(5 + 1e-5)
    x_hat = np.array([-3.0, -1.0, 1.0, 3.0]) / std
    gamma, beta = np.array([1.0, 2.0, -1.0, 0.5]), np.array([0.0, 1.0, 0.0, -3.0])

    trace = lnlab.layer_norm_trace([2.0, 4.0, 6.0, 8.0], gamma, beta, 1e-5)

    tol = {"rtol": 1e-14, "atol": 1e-15}  # a few ulps, more where y = gamma * x_hat + beta cancels
    assert_array_equal(trace.x, [2.0, 4.0, 6.0, 8.0])
    assert_allclose(trace.mean, [5.0], **tol)
    assert_allclose(trace.var, [5.0], **tol)
    assert_allclose(trace.std, [std], **tol)
    assert_allclose(trace.x_hat, x_hat, **tol)
    assert_allclose(trace.y, gamma * x_hat + beta, **tol)


# ---------------------------------------------------------------- input errors

X24 = [[2.0, 4.0, 6.0, 8.0], [1.0, 1.0, 1.0, 5.0]]
PADDED = np.zeros((2, 3, 4))

BAD_CALLS = {
    "row past the end": lambda: lnlab.layer_norm_trace(X24).group("x", 2),
    "negative row": lambda: lnlab.layer_norm_trace(X24).group("x", -1),
    "gamma too short": lambda: lnlab.layer_norm(X24, gamma=[1.0, 2.0, 3.0]),
    "gamma one per token": lambda: lnlab.layer_norm(X24, gamma=[[1.0], [2.0]]),
    "beta too long": lambda: lnlab.layer_norm_trace(X24, beta=np.zeros(5)),
    "negative eps": lambda: lnlab.layer_norm(X24, eps=-1e-5),
    "nan eps": lambda: lnlab.layer_norm_trace(X24, eps=np.nan),
    "infinite eps": lambda: lnlab.layer_norm(X24, eps=np.inf),
    "unknown backend": lambda: lnlab.layer_norm(X24, backend="jax"),
    "unknown backend (steps)": lambda: lnlab.layer_norm_trace(X24, backend="tensorflow"),
    "unknown device": lambda: lnlab.layer_norm(X24, backend="torch", device="tpu"),
    "unknown dtype": lambda: lnlab.layer_norm(X24, backend="torch", device="cpu", dtype="int8"),
    "dims 0": lambda: lnlab.layer_norm(X24, dims=0),
    "dims past ndim": lambda: lnlab.layer_norm(X24, dims=3),
    "empty x": lambda: lnlab.layer_norm([]),
    "scalar x": lambda: lnlab.layer_norm(3.0),
    "text x": lambda: lnlab.layer_norm(["a", "b"]),
    "complex x": lambda: lnlab.layer_norm([1 + 5j, 3.0, 2.0]),
    "batch norm all padding": lambda: lnlab.batch_norm(PADDED, mask=np.zeros((2, 3), bool)),
    "batch norm mask shape": lambda: lnlab.batch_norm(PADDED, mask=np.ones((3, 2), bool)),
    "batch norm mask per feature": lambda: lnlab.batch_norm(PADDED, mask=np.ones(PADDED.shape)),
    "batch norm 1-D x": lambda: lnlab.batch_norm([1.0, 2.0, 3.0]),
    "batch norm gamma shape": lambda: lnlab.batch_norm_trace(X24, gamma=[1.0, 2.0]),
    "batch norm negative eps": lambda: lnlab.batch_norm(X24, eps=-1.0),
    "batch norm unknown backend": lambda: lnlab.batch_norm(X24, backend="jax"),
    "rms norm gamma shape": lambda: lnlab.rms_norm(X24, gamma=[1.0, 2.0]),
    "rms norm nan eps": lambda: lnlab.rms_norm(X24, eps=np.nan),
    "rms norm unknown backend": lambda: lnlab.rms_norm(X24, backend="jax"),
}


@pytest.mark.parametrize("call", BAD_CALLS.values(), ids=BAD_CALLS.keys())
def test_bad_input_raises_input_error(call):
    with pytest.raises(InputError):
        call()


@pytest.mark.parametrize(
    "norm", [lnlab.layer_norm, lnlab.layer_norm_trace, lnlab.batch_norm, lnlab.rms_norm]
)
def test_a_single_number_is_told_the_shape_it_needs(norm):
    """A 0-d input is not "empty": the message says it needs an axis of features, with an
    example of one token and of several."""
    with pytest.raises(InputError, match=r"single number \(shape \(\)\).*\[2, 4, 6, 8\]"):
        norm(3.0)


# ---------------------------------------------------------------- devices

ALL_FUNCTIONS = {
    "layer_norm": lnlab.layer_norm,
    "layer_norm_trace": lnlab.layer_norm_trace,
    "batch_norm": lnlab.batch_norm,
    "batch_norm_trace": lnlab.batch_norm_trace,
    "rms_norm": lnlab.rms_norm,
}


@pytest.mark.skipif(HAS_CUDA, reason="this machine has a CUDA GPU")
@pytest.mark.parametrize("name", ALL_FUNCTIONS)
def test_cuda_without_a_gpu_raises_input_error(name):
    with pytest.raises(InputError, match="CUDA"):
        ALL_FUNCTIONS[name](X24, backend="torch", device="cuda")


@pytest.mark.skipif(
    lnlab.resolve_device("auto") != "cpu", reason="auto picks a GPU on this machine"
)
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("name", NORMS)
def test_auto_device_is_the_cpu_here(name, dtype):
    x = np.random.default_rng(5).standard_normal((6, 2, 4))
    if name == "batch_norm":
        x = x.reshape(-1, 4)

    auto = NORMS[name](x, backend="torch", device="auto", dtype=dtype)

    assert_array_equal(auto, NORMS[name](x, backend="torch", device="cpu", dtype=dtype))


def test_numpy_ignores_device_and_dtype():
    """The numpy backend computes in float64 whatever device or dtype is asked for."""
    y = lnlab.layer_norm(X24, backend="numpy", device="cuda", dtype="float16")

    assert_array_equal(y, lnlab.layer_norm(X24))
