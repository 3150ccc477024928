"""lnlab.layer_norm_backward against torch autograd (float64), by hand, and by its identities.

Tolerances are derived, not tuned: `Bounds` turns a first-order rounding analysis into a bound
on each element's error. With u the machine epsilon of the arithmetic, D features, N tokens, and
per token sigma = sqrt(var + eps), X = max|x_hat|, G = max|dy * gamma|:

* x_hat: the shifted mean is off by at most D u max|x_i - x_1| <= 2 D u X sigma, and sigma by
  (D + 3) u relative, so |err x_hat_i| <= 3 (D + 1) u X.
* dx = (g - a - x_hat b) / sigma with g = dy * gamma, a = mean(g) (|a| <= G) and
  b = mean(g x_hat) (|b| <= G, as mean|x_hat| <= 1), so |dx| <= G (2 + X) / sigma. Adding the
  errors of a, b and x_hat, each term's rounding and sigma's: |err dx_i| <= 4 (D + 3) u G (1 + X)^2
  / sigma.
* dgamma_j = sum over tokens of dy x_hat: |err| <= 4 (N + D + 1) u sum_t |dy_tj| X_t.
* dbeta_j = sum over tokens of dy: |err| <= (N + 1) u sum_t |dy_tj|.

Two computations (lnlab and torch) each have that error, so they must agree within twice the
bound, or within the sum of both bounds when their precisions differ. Where an input is moved by
up to delta per element before one of them sees it (rounding 1e8 + x, centring for the
reference), the first-order change is also allowed: x - mu moves by at most 2 delta, sigma by at
most 2 delta, x_hat_i by 2 delta (1 + X) / sigma, so dx moves by at most 6 delta G (1 + X)^2 /
sigma^2 and dgamma_j by sum_t |dy_tj| 2 delta (1 + X_t) / sigma_t. float16 and bfloat16 results
are also rounded once to their dtype: half an ulp, less than eps |value|.

torch's float64 kernels take the statistics of the raw values; like tests/core/test_norms.py, the
reference gets each token minus its float64 mean (the gradients are shift-invariant), and the
rounding of that subtraction (delta = half an ulp of max|x|) is allowed for as above.
"""

import dataclasses
import zlib
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from helpers import CUDA_BF16, HAS_CUDA, needs_cuda
from numpy.testing import assert_allclose, assert_array_equal

import lnlab
from lnlab import InputError, LayerNormGrads
from lnlab.core.backward import (
    AUTOGRAD_DTYPES,
    GRADIENTS,
    AutogradCheck,
    autograd_backward,
    autograd_check,
)

EPS64 = float(np.finfo(np.float64).eps)
EPS32 = float(np.finfo(np.float32).eps)
STORAGE_EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7}


@dataclass(frozen=True)
class Config:
    """Where lnlab computes, and the machine epsilon of that arithmetic."""

    backend: str
    dtype: str
    device: str = "cpu"

    def __str__(self) -> str:
        return "numpy" if self.backend == "numpy" else f"torch-{self.device}-{self.dtype}"

    @property
    def kwargs(self) -> dict[str, str]:
        if self.backend == "numpy":
            return {"backend": "numpy"}
        return {"backend": "torch", "device": self.device, "dtype": self.dtype}

    @property
    def u(self) -> float:
        return EPS64 if self.dtype == "float64" else EPS32  # float16 and bfloat16: float32 maths

    @property
    def storage_eps(self) -> float:
        return STORAGE_EPS.get(self.dtype, 0.0)

    def stored(self, a: Any) -> Any:
        """`a` as this dtype stores it, back in float64."""
        if self.dtype == "float64":
            return np.asarray(a, dtype=np.float64)
        t = torch.as_tensor(np.asarray(a, dtype=np.float64)).to(getattr(torch, self.dtype))
        return t.double().numpy()


NUMPY = Config("numpy", "float64")
TORCH64 = Config("torch", "float64")
TORCH32 = Config("torch", "float32")
TORCH16 = Config("torch", "float16")
TORCHBF16 = Config("torch", "bfloat16")
FLOAT64_CONFIGS = [NUMPY, TORCH64]
PRECISE_CONFIGS = [NUMPY, TORCH64, TORCH32]
CUDA_CONFIGS = [
    pytest.param(Config("torch", dtype, "cuda"), marks=needs_cuda, id=f"cuda-{dtype}")
    for dtype in ("float64", "float32", "float16")
] + [
    pytest.param(
        Config("torch", "bfloat16", "cuda"),
        marks=pytest.mark.skipif(not CUDA_BF16, reason="no CUDA GPU with bfloat16"),
        id="cuda-bfloat16",
    )
]
CONFIGS = [NUMPY, TORCH64, TORCH32, TORCH16, TORCHBF16, *CUDA_CONFIGS]

SHAPES = [(1,), (3,), (2, 5), (4, 1), (3, 2), (2, 3, 7), (5, 64)]
EPS_VALUES = [1e-5, 1e-3, 0.5]


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """The inputs are small: torch's thread pool only costs here, and a lot on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# ---------------------------------------------------------------- references and bounds


def centred(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return x - x.mean(axis=-1, keepdims=True)


def ref_grads(x, dy, gamma, eps) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """dx, dgamma, dbeta by torch autograd in float64, with weight and bias requiring grad."""
    d = x.shape[-1]
    xt = torch.tensor(centred(x), requires_grad=True)
    gt = torch.tensor(np.asarray(gamma, dtype=np.float64), requires_grad=True)
    bt = torch.zeros(d, dtype=torch.float64, requires_grad=True)
    F.layer_norm(xt, (d,), gt, bt, eps).backward(torch.tensor(dy))
    return xt.grad.numpy(), gt.grad.numpy(), bt.grad.numpy()


def ref_x_hat(x, eps) -> tuple[np.ndarray, np.ndarray]:
    """x_hat and sigma_eps (keeping the last axis) by the two-pass formula in float64."""
    c = centred(centred(x))
    std = np.sqrt(np.mean(c * c, axis=-1, keepdims=True) + eps)
    with np.errstate(invalid="ignore"):
        return c / std, std


@dataclass(frozen=True)
class Bounds:
    """Per-element bounds on the error of dx, dgamma and dbeta (see the module docstring)."""

    dx: np.ndarray
    dgamma: np.ndarray
    dbeta: np.ndarray

    def __add__(self, other: "Bounds") -> "Bounds":
        return Bounds(self.dx + other.dx, self.dgamma + other.dgamma, self.dbeta + other.dbeta)

    def __mul__(self, k: float) -> "Bounds":
        return Bounds(k * self.dx, k * self.dgamma, k * self.dbeta)

    __rmul__ = __mul__

    @staticmethod
    def _parts(x, dy, gamma, eps):
        x_hat, std = ref_x_hat(x, eps)
        g = np.abs(dy * gamma)
        G = g.max(axis=-1, keepdims=True)
        X = np.abs(x_hat).max(axis=-1, keepdims=True)
        return std, G, X, np.abs(dy).reshape(-1, x.shape[-1]), X.reshape(-1, 1)

    @classmethod
    def rounding(cls, x, dy, gamma, eps, u) -> "Bounds":
        std, G, X, ady, Xt = cls._parts(x, dy, gamma, eps)
        d, n = x.shape[-1], ady.shape[0]
        return cls(
            dx=np.broadcast_to(4 * (d + 3) * u * G * (1 + X) ** 2 / std, x.shape),
            dgamma=4 * (n + d + 1) * u * (ady * Xt).sum(axis=0),
            dbeta=(n + 1) * u * ady.sum(axis=0),
        )

    @classmethod
    def perturbation(cls, x, dy, gamma, eps, delta) -> "Bounds":
        std, G, X, ady, Xt = cls._parts(x, dy, gamma, eps)
        return cls(
            dx=np.broadcast_to(6 * delta * G * (1 + X) ** 2 / std**2, x.shape),
            dgamma=(ady * 2 * delta * (1 + Xt) / std.reshape(-1, 1)).sum(axis=0),
            dbeta=np.zeros(x.shape[-1]),
        )


def centring_delta(x) -> float:
    """How far the reference's x - mean(x) can move an input: half an ulp of max|x|."""
    return float(np.spacing(np.abs(x).max())) / 2


def assert_grads_within(got: LayerNormGrads, want, bounds: Bounds, storage_eps: float = 0.0):
    """Each of dx, dgamma, dbeta within its bound (plus storage rounding); NaN only with NaN."""
    for name, w, b in zip(
        ("dx", "dgamma", "dbeta"), want, dataclasses.astuple(bounds), strict=True
    ):
        g = getattr(got, name)
        assert g.shape == np.shape(w), name
        assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"{name}: NaN where the other is not")
        err = np.where(np.isnan(w), 0.0, np.abs(g - w))
        tol = b + storage_eps * np.abs(w)
        assert (err <= tol).all(), f"{name}: errors\n{err}\nbounds\n{tol}"


def assert_within(got, want, bound) -> None:
    """|got - want| <= bound, element by element (assert_allclose takes no array atol)."""
    err = np.abs(got - want)
    assert np.all(err <= bound), f"errors\n{err}\nbounds\n{bound}"


def draw(shape, seed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x = offset + scale * v, dy and gamma, all random."""
    rng = np.random.default_rng(seed)
    offset, scale = rng.uniform(-5, 5), 10.0 ** rng.uniform(-1, 1)
    x = offset + scale * rng.standard_normal(shape)
    return x, rng.standard_normal(shape), rng.standard_normal(shape[-1])


def seed_of(*parts) -> int:
    """A seed per test case, the same in every run (hash() of a str is not)."""
    return zlib.crc32(repr(parts).encode())


# ---------------------------------------------------------------- against torch autograd


@pytest.mark.parametrize("eps", EPS_VALUES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
def test_matches_torch_autograd(cfg, shape, eps):
    x, dy, gamma = draw(shape, seed_of(shape, eps))
    xs, dys, gs = cfg.stored(x), cfg.stored(dy), cfg.stored(gamma)

    grads = lnlab.layer_norm_backward(x, dy, gamma, eps, **cfg.kwargs)

    want = ref_grads(xs, dys, gs, eps)
    bounds = (
        Bounds.rounding(xs, dys, gs, eps, cfg.u)
        + Bounds.rounding(xs, dys, gs, eps, EPS64)
        + Bounds.perturbation(xs, dys, gs, eps, centring_delta(xs))
    )
    assert grads.dx.dtype == grads.dgamma.dtype == np.float64
    assert grads.dgamma.shape == grads.dbeta.shape == (shape[-1],)
    assert grads.std.shape == (*shape[:-1], 1)
    assert_grads_within(grads, want, bounds, cfg.storage_eps)


@pytest.mark.parametrize("shape", [s for s in SHAPES if s[-1] > 1], ids=str)
@pytest.mark.parametrize("cfg", PRECISE_CONFIGS, ids=str)
def test_eps_0_on_non_constant_rows_matches_torch_autograd(cfg, shape):
    x, dy, gamma = draw(shape, seed_of(shape, 0.0))
    xs, dys, gs = cfg.stored(x), cfg.stored(dy), cfg.stored(gamma)

    grads = lnlab.layer_norm_backward(x, dy, gamma, 0.0, **cfg.kwargs)

    bounds = (
        Bounds.rounding(xs, dys, gs, 0.0, cfg.u)
        + Bounds.rounding(xs, dys, gs, 0.0, EPS64)
        + Bounds.perturbation(xs, dys, gs, 0.0, centring_delta(xs))
    )
    assert_grads_within(grads, ref_grads(xs, dys, gs, 0.0), bounds)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("cfg", [TORCH64, TORCH32], ids=str)
def test_torch_cpu_matches_numpy(cfg, shape):
    """Both backends of lnlab on the input as the dtype stores it: within both bounds."""
    x, dy, gamma = (cfg.stored(a) for a in draw(shape, seed_of(shape, "cpu")))

    on_torch = lnlab.layer_norm_backward(x, dy, gamma, **cfg.kwargs)
    on_numpy = lnlab.layer_norm_backward(x, dy, gamma)

    want = (on_numpy.dx, on_numpy.dgamma, on_numpy.dbeta)
    bounds = Bounds.rounding(x, dy, gamma, 1e-5, cfg.u) + Bounds.rounding(x, dy, gamma, 1e-5, EPS64)
    assert_grads_within(on_torch, want, bounds)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
def test_x_hat_and_std_are_the_forward_ones(cfg, shape):
    x, dy, gamma = draw(shape, seed_of(shape, "forward"))

    grads = lnlab.layer_norm_backward(x, dy, gamma, **cfg.kwargs)
    trace = lnlab.layer_norm_trace(x, gamma, **cfg.kwargs)

    assert_array_equal(grads.x_hat, trace.x_hat)
    assert_array_equal(grads.std, trace.std)


# ---------------------------------------------------------------- the identities


def dot_identity(grads: LayerNormGrads, dy, gamma, eps) -> np.ndarray:
    """eps * sum(dx_hat * x_hat) / sigma_eps^3: what sum(dx * x_hat) must be, token by token."""
    return eps * np.sum(dy * gamma * grads.x_hat, axis=-1) / grads.std[..., 0] ** 3


@pytest.mark.parametrize(
    ("shape", "eps"),
    # not D = 1 with eps = 0, which is 0 / 0: see test_one_feature
    [(s, e) for s in SHAPES for e in (0.0, *EPS_VALUES) if s[-1] > 1 or e > 0],
    ids=str,
)
@pytest.mark.parametrize("cfg", PRECISE_CONFIGS, ids=str)
def test_dx_sums_to_zero_and_its_projection_on_x_hat_is_eps_over_sigma_cubed(cfg, shape, eps):
    """sum(dx) = 0, and sum(dx * x_hat) = eps sum(dx_hat * x_hat) / sigma_eps^3: 0 for eps = 0.

    Errors: each dx_i is within the rounding bound B of its token, so the sum is within D B; the
    projection within D X B for dx's errors plus as much again for x_hat's (|err x_hat| times
    |dx| is below B by the same terms) and for the right-hand side's own rounding.
    """
    x, dy, gamma = (cfg.stored(a) for a in draw(shape, seed_of(shape, eps, "identity")))
    d = shape[-1]

    grads = lnlab.layer_norm_backward(x, dy, gamma, eps, **cfg.kwargs)

    bound = Bounds.rounding(x, dy, gamma, eps, cfg.u).dx[..., 0]
    X = np.abs(ref_x_hat(x, eps)[0]).max(axis=-1)
    assert np.all(np.abs(grads.dx.sum(axis=-1)) <= d * bound)
    projection = np.sum(grads.dx * grads.x_hat, axis=-1)
    assert np.all(np.abs(projection - dot_identity(grads, dy, gamma, eps)) <= 3 * d * X * bound)


def test_with_eps_dx_is_not_orthogonal_to_x_hat():
    """The tempting identity sum(dx * x_hat) = 0 is off by far more than rounding when eps > 0."""
    x = np.array([[0.0, 0.1, 0.3, 0.2]])
    dy = np.array([[1.0, -2.0, 0.5, 3.0]])

    grads = lnlab.layer_norm_backward(x, dy, eps=0.5)
    exact = lnlab.layer_norm_backward(x, dy, eps=0.0)

    projection = np.sum(grads.dx * grads.x_hat)
    assert abs(projection) > 0.1
    assert_allclose(projection, dot_identity(grads, dy, 1.0, 0.5), rtol=1e-14)
    assert abs(np.sum(exact.dx * exact.x_hat)) < 1e-14


# ---------------------------------------------------------------- hard cases

GAMMA4 = np.array([2.0, -0.5, 1.5, 0.75])  # exact in every dtype, even bfloat16
DY = np.array([[0.5, -1.0, 2.0, 0.25], [1.5, 0.0, -0.75, 3.0], [-2.0, 1.0, 0.5, -0.5]])


@pytest.mark.parametrize("constant", [0.1, 1 / 3, 1e4, -7.0, 0.0])
@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
def test_constant_rows(cfg, constant):
    """x_hat = 0 exactly; dx = (dx_hat - mean(dx_hat)) / sqrt(eps); with eps = 0, NaN (0 / 0)."""
    x = np.stack([np.full(4, constant), [1.0, -2.0, 0.5, 3.0], np.full(4, constant)])
    eps = 1e-5

    grads = lnlab.layer_norm_backward(x, DY, GAMMA4, eps, **cfg.kwargs)
    zero = lnlab.layer_norm_backward(x, DY, GAMMA4, 0.0, **cfg.kwargs)

    constant_rows = [0, 2]
    g = DY[constant_rows] * GAMMA4
    want = (g - g.mean(axis=-1, keepdims=True)) / np.sqrt(eps)
    bound = Bounds.rounding(x[constant_rows], DY[constant_rows], GAMMA4, eps, cfg.u).dx
    assert_array_equal(grads.x_hat[constant_rows], 0.0)
    assert np.isfinite(grads.dx).all() and np.isfinite(grads.dgamma).all()
    assert_allclose(grads.dx[constant_rows], want, rtol=cfg.storage_eps, atol=bound.max())
    assert_allclose(grads.std[constant_rows], np.sqrt(eps), rtol=2 * cfg.u + cfg.storage_eps)
    assert_allclose(grads.dgamma, (DY[1] * grads.x_hat[1]), rtol=2 * cfg.u + cfg.storage_eps)
    assert np.isnan(zero.dx[constant_rows]).all() and np.isfinite(zero.dx[1]).all()
    assert np.isnan(zero.dgamma).all()  # every feature sums a 0 / 0
    assert_allclose(zero.dbeta, DY.sum(axis=0), rtol=4 * cfg.u)


@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
def test_one_feature(cfg):
    """With D = 1, x_hat = 0 whatever x is, so dx = 0 and dgamma = 0 exactly; eps = 0: NaN."""
    x = np.array([[3.0], [-2.5], [1e4], [0.0]])
    dy = np.array([[1.0], [-0.5], [2.0], [0.25]])

    grads = lnlab.layer_norm_backward(x, dy, 2.0, 1e-5, **cfg.kwargs)
    single = lnlab.layer_norm_backward([7.0], [1.5], **cfg.kwargs)
    zero = lnlab.layer_norm_backward(x, dy, 2.0, 0.0, **cfg.kwargs)

    assert_array_equal(grads.dx, 0.0)
    assert_array_equal(grads.x_hat, 0.0)
    assert_array_equal(grads.dgamma, [0.0])
    assert_array_equal(grads.dbeta, [2.75])
    assert_array_equal(single.dx, [0.0])
    assert np.isnan(zero.dx).all()


@pytest.mark.parametrize("eps", [0.0, *EPS_VALUES])
@pytest.mark.parametrize("cfg", PRECISE_CONFIGS, ids=str)
def test_two_features_by_hand(cfg, eps):
    """x_hat = (-h, h), h^2 = c^2 / (c^2 + eps), c = (q - p) / 2. Then 1 - h^2 = eps / sigma^2
    and dx = (g_0 - g_1) eps / (2 sigma^3) * (1, -1): 0 without eps (y is just (-1, 1))."""
    x = np.array([[1.0, 2.0], [0.3, -0.1], [-4.0, 5.0]])
    dy = np.array([[1.0, 3.0], [-0.5, 2.0], [0.25, 0.0]])
    gamma = np.array([1.5, -2.0])

    grads = lnlab.layer_norm_backward(x, dy, gamma, eps, **cfg.kwargs)

    xs, dys, gs = cfg.stored(x), cfg.stored(dy), cfg.stored(gamma)
    sigma = np.sqrt(((xs[:, 1] - xs[:, 0]) / 2) ** 2 + eps)
    g = dys * gs
    half = (g[:, 0] - g[:, 1]) * eps / (2 * sigma**3)
    bound = Bounds.rounding(xs, dys, gs, eps, cfg.u).dx
    assert_allclose(grads.dx, np.stack([half, -half], axis=1), rtol=0, atol=bound.max())
    if eps == 0:
        assert np.abs(grads.dx).max() <= bound.max()


EXACT_ROWS = np.array([[0.0, 1.0, 2.0, 3.0], [3.0, -1.0, 0.5, 2.0]])


@pytest.mark.parametrize(
    ("cfg", "offset"),
    [(NUMPY, 1e4), (TORCH64, 1e4), (TORCH32, 1e4), (NUMPY, 1e8), (TORCH64, 1e8)],
    ids=str,
)
def test_exact_offset_gives_bit_for_bit_the_same_gradients(cfg, offset):
    """`offset + x` is exact for these (float32 cannot hold 1e8 + 1), so the gradients must be."""
    shifted = lnlab.layer_norm_backward(offset + EXACT_ROWS, DY[:2], GAMMA4, **cfg.kwargs)
    plain = lnlab.layer_norm_backward(EXACT_ROWS, DY[:2], GAMMA4, **cfg.kwargs)

    for field in dataclasses.fields(LayerNormGrads):
        assert_array_equal(getattr(shifted, field.name), getattr(plain, field.name), field.name)


@pytest.mark.parametrize("cfg", FLOAT64_CONFIGS, ids=str)
def test_offset_1e8_gives_the_gradient_of_x(cfg):
    """1e8 + x rounds x to a multiple of ulp(1e8) = 2^-26: within that perturbation's bound of
    the float64 gradient of x itself; a one-pass variance (E[x^2] - E[x]^2) is nowhere near."""
    rng = np.random.default_rng(8)
    x, dy, gamma = rng.standard_normal((3, 8)), rng.standard_normal((3, 8)), rng.standard_normal(8)
    delta = float(np.spacing(1e8)) / 2

    grads = lnlab.layer_norm_backward(1e8 + x, dy, gamma, **cfg.kwargs)

    bounds = Bounds.rounding(x, dy, gamma, 1e-5, EPS64) * 2 + Bounds.perturbation(
        x, dy, gamma, 1e-5, delta + centring_delta(x)
    )
    want = ref_grads(x, dy, gamma, 1e-5)
    assert_grads_within(grads, want, bounds)
    assert bounds.dx.max() < 1e-5 * np.abs(want[0]).max()  # the test can tell a wrong answer
    big = 1e8 + x
    one_pass = (
        np.mean(big * big, axis=-1, keepdims=True) - np.mean(big, axis=-1, keepdims=True) ** 2
    )
    assert np.abs(one_pass - np.var(x, axis=-1, keepdims=True)).max() > 1.0


V = np.array([[-1.0, 0.0, 0.25, 5e-3, 7.0], [0.3, -1.2, 4.0, 0.0, 2.5]])
DV = np.array([[1.0, -2.0, 0.5, 3.0, -0.25], [0.5, 0.5, -1.0, 2.0, 1.5]])
GV = np.array([1.0, -0.5, 2.0, 0.75, 1.25])


@pytest.mark.parametrize("power", [-900, -665, 665, 900])
@pytest.mark.parametrize("cfg", FLOAT64_CONFIGS, ids=str)
def test_power_of_two_scales_change_no_bit(cfg, power):
    """2^power * v is scaled before squaring, v is not; dx(2^p v) = 2^-p dx(v), bit for bit."""
    scaled = lnlab.layer_norm_backward(np.ldexp(V, power), DV, GV, 0.0, **cfg.kwargs)
    plain = lnlab.layer_norm_backward(V, DV, GV, 0.0, **cfg.kwargs)

    assert_array_equal(scaled.dx, np.ldexp(plain.dx, -power))
    assert_array_equal(scaled.std, np.ldexp(plain.std, power))
    for name in ("x_hat", "dgamma", "dbeta"):
        assert_array_equal(getattr(scaled, name), getattr(plain, name), name)


@pytest.mark.parametrize("eps", [0.0, 1e-5])
@pytest.mark.parametrize("scale", [1e200, 1e-200])
@pytest.mark.parametrize("cfg", FLOAT64_CONFIGS, ids=str)
def test_extreme_scales(cfg, scale, eps):
    """Squares of 1e200 overflow and of 1e-200 underflow. Without eps, and with eps next to a
    variance of 1e400, dx(s v) = dx(v) / s: compared as s * dx, the rounding of s * v allowed
    as a perturbation of v by u max|v|. With eps = 1e-5 and a variance of 1e-400, x_hat = s (v -
    mean v) / sqrt(eps) and dx = (dx_hat - mean(dx_hat)) / sqrt(eps) (x_hat b is ~1e-400)."""
    grads = lnlab.layer_norm_backward(scale * V, DV, GV, eps, **cfg.kwargs)

    assert np.isfinite(grads.dx).all()
    if eps == 0 or scale > 1:
        want = ref_grads(V, DV, GV, 0.0)
        delta = EPS64 * np.abs(V).max() + centring_delta(V)
        bounds = Bounds.rounding(V, DV, GV, 0.0, EPS64) * 2 + Bounds.perturbation(
            V, DV, GV, 0.0, delta
        )
        rescaled = dataclasses.replace(grads, dx=grads.dx * scale)
        assert_grads_within(rescaled, want, bounds, storage_eps=EPS64)  # * scale rounds once
        return
    x = scale * V
    g = DV * GV
    bounds = Bounds.rounding(x, DV, GV, eps, EPS64)
    x_hat, _ = ref_x_hat(x, eps)  # c * c underflows: var = 0 and x_hat = c / sqrt(eps)
    d = V.shape[-1]
    assert_allclose(grads.std, np.sqrt(eps), rtol=EPS64)
    x_hat_bound = 3 * (d + 1) * EPS64 * np.abs(x_hat).max(axis=-1, keepdims=True)
    assert np.all(np.abs(grads.x_hat - x_hat) <= 2 * x_hat_bound)
    assert_within(grads.dx, (g - g.mean(axis=-1, keepdims=True)) / np.sqrt(eps), bounds.dx)
    assert_within(grads.dgamma, (DV * x_hat).sum(axis=0), 2 * bounds.dgamma)


def test_numpy_blocks_and_float32_input_change_no_bit():
    """numpy goes through big inputs in cache-sized blocks; rows come out as they do alone."""
    features = 4096
    rows = 2 * (lnlab.core.standardize.BLOCK_ELEMENTS // features) + 5  # two full blocks and a part
    rng = np.random.default_rng(3)
    x = rng.standard_normal((rows, features), dtype=np.float32)
    dy = rng.standard_normal((rows, features))
    x[7] = 2.5  # a constant row

    whole = lnlab.layer_norm_backward(x, dy, 1.5)
    alone = [lnlab.layer_norm_backward(x[i].astype(np.float64), dy[i], 1.5) for i in range(rows)]

    for name in ("dx", "x_hat", "std"):
        assert_array_equal(getattr(whole, name), np.stack([getattr(a, name) for a in alone]))
    bound = Bounds.rounding(x.astype(np.float64), dy, np.full(features, 1.5), 1e-5, EPS64)
    assert_within(whole.dgamma, sum(a.dgamma for a in alone), 2 * bound.dgamma)
    assert_within(whole.dbeta, dy.sum(axis=0), 2 * bound.dbeta)


# ---------------------------------------------------------------- the interface


def test_exported_and_frozen():
    assert "layer_norm_backward" in lnlab.__all__ and "LayerNormGrads" in lnlab.__all__
    grads = lnlab.layer_norm_backward([1.0, 2.0, 4.0], [1.0, 0.0, -1.0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        grads.dx = np.zeros(3)
    assert grads.std.shape == (1,)
    assert_array_equal(grads.x_hat, lnlab.layer_norm([1.0, 2.0, 4.0]))


X24 = [[2.0, 4.0, 6.0, 8.0], [1.0, 1.0, 1.0, 5.0]]
DY24 = [[1.0, 0.0, -1.0, 0.5], [0.0, 2.0, 1.0, -1.0]]
WITH_NAN = [[2.0, np.nan, 6.0, 8.0], [1.0, 1.0, 1.0, 5.0]]
WITH_INF = [[1.0, 0.0, -1.0, 0.5], [0.0, 2.0, 1.0, -np.inf]]

BAD_CALLS = {
    "dy shape": (lambda: lnlab.layer_norm_backward(X24, DY24[0]), "dy has shape"),
    "dy transposed": (lambda: lnlab.layer_norm_backward(X24, np.transpose(DY24)), "dy has"),
    "gamma too short": (lambda: lnlab.layer_norm_backward(X24, DY24, [1.0, 2.0]), "gamma"),
    "gamma one per token": (lambda: lnlab.layer_norm_backward(X24, DY24, [[1.0], [2.0]]), "gamma"),
    "gamma text": (lambda: lnlab.layer_norm_backward(X24, DY24, ["a"] * 4), "real numbers"),
    "gamma complex": (lambda: lnlab.layer_norm_backward(X24, DY24, [1j] * 4), "real numbers"),
    "negative eps": (lambda: lnlab.layer_norm_backward(X24, DY24, eps=-1e-5), "epsilon"),
    "nan eps": (lambda: lnlab.layer_norm_backward(X24, DY24, eps=np.nan), "epsilon"),
    "infinite eps": (lambda: lnlab.layer_norm_backward(X24, DY24, eps=np.inf), "epsilon"),
    "text eps": (lambda: lnlab.layer_norm_backward(X24, DY24, eps="small"), "epsilon"),
    "nan in x": (lambda: lnlab.layer_norm_backward(WITH_NAN, DY24), r"x\[0, 1\] is nan"),
    "inf in dy": (lambda: lnlab.layer_norm_backward(X24, WITH_INF), r"dy\[1, 3\] is -inf"),
    "nan in gamma": (lambda: lnlab.layer_norm_backward(X24, DY24, [1, 2, np.nan, 4]), "gamma"),
    "empty x": (lambda: lnlab.layer_norm_backward([], []), r"shape \(0,\) and holds no number"),
    "scalar x": (
        lambda: lnlab.layer_norm_backward(3.0, 1.0),
        r"x is a single number \(shape \(\)\), but it needs an axis of features",
    ),
    "complex x": (lambda: lnlab.layer_norm_backward([1j, 2.0], [1.0, 2.0]), "real numbers"),
    "text dy": (lambda: lnlab.layer_norm_backward([1.0, 2.0], ["a", "b"]), "dy must be"),
    "unknown backend": (lambda: lnlab.layer_norm_backward(X24, DY24, backend="jax"), "backend"),
    "unknown device": (
        lambda: lnlab.layer_norm_backward(X24, DY24, backend="torch", device="tpu"),
        "device",
    ),
    "unknown dtype": (
        lambda: lnlab.layer_norm_backward(X24, DY24, backend="torch", device="cpu", dtype="int8"),
        "int8",
    ),
}


@pytest.mark.parametrize(("call", "match"), BAD_CALLS.values(), ids=BAD_CALLS.keys())
def test_bad_input_raises_input_error(call, match):
    with pytest.raises(InputError, match=match):
        call()


@pytest.mark.skipif(HAS_CUDA, reason="this machine has a CUDA GPU")
def test_cuda_without_a_gpu_raises_input_error():
    with pytest.raises(InputError, match="CUDA"):
        lnlab.layer_norm_backward(X24, DY24, backend="torch", device="cuda")


# ---------------------------------------------------------------- the check beside autograd


def autograd_of(check: AutogradCheck, dtype: str) -> SimpleNamespace:
    return SimpleNamespace(**check.autograd[dtype])


def torch_bounds(x, dy, gamma, eps, u) -> Bounds:
    """lnlab (float64) against torch autograd in arithmetic of epsilon u on the raw values:
    both roundings, and torch's mean and variance of raw values, off by up to D u max|x| (a
    shift of every input by that much, to first order)."""
    delta = x.shape[-1] * u * float(np.abs(x).max())
    return (
        Bounds.rounding(x, dy, gamma, eps, u)
        + Bounds.rounding(x, dy, gamma, eps, EPS64)
        + Bounds.perturbation(x, dy, gamma, eps, delta)
    )


def lnlab_of(check: AutogradCheck) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return check.grads.dx, check.grads.dgamma, check.grads.dbeta


@pytest.mark.parametrize(
    ("shape", "eps"), [(s, e) for s in SHAPES for e in (0.0, 1e-5, 0.5) if s[-1] > 1 or e > 0]
)
def test_autograd_check_agrees_within_rounding(shape, eps):
    """The slide's table: autograd in float64 and float32 beside lnlab, and its max |Δ|."""
    x, dy, gamma = draw(shape, seed_of(shape, eps, "autograd"))

    check = autograd_check(x, dy, gamma, eps)

    assert set(check.autograd) == {"float64", "float32"}
    for dtype, u in (("float64", EPS64), ("float32", EPS32)):
        got = autograd_of(check, dtype)
        assert_grads_within(got, lnlab_of(check), torch_bounds(x, dy, gamma, eps, u))
        for name in GRADIENTS:
            want = np.abs(getattr(got, name) - getattr(check.grads, name)).max()
            assert check.max_abs_diff(dtype, name) == want
    xt = torch.tensor(x, requires_grad=True)
    gt = torch.tensor(gamma, requires_grad=True)
    bt = torch.zeros(shape[-1], dtype=torch.float64, requires_grad=True)
    F.layer_norm(xt, (shape[-1],), gt, bt, eps).backward(torch.tensor(dy))
    for name, t in zip(GRADIENTS, (xt, gt, bt), strict=True):  # each in its own place
        assert_array_equal(check.autograd["float64"][name], t.grad.numpy(), name)
    assert_array_equal(check.grads.dx, lnlab.layer_norm_backward(x, dy, gamma, eps).dx)


def test_autograd_check_on_constant_rows():
    """eps > 0: both finite and agreeing (torch's mean of a constant row may be an ulp off,
    allowed as a shift); eps = 0: both NaN (0 / 0), which counts as agreement; dbeta = dy."""
    x = np.stack([np.full(4, 1 / 3), [1.0, -2.0, 0.5, 3.0]])
    dy = DY[:2]

    check = autograd_check(x, dy, GAMMA4, 1e-5)
    zero = autograd_check(x, dy, GAMMA4, 0.0)

    assert np.isfinite(check.autograd["float64"]["dx"]).all()
    bounds = torch_bounds(x, dy, GAMMA4, 1e-5, EPS64) + Bounds.perturbation(
        x, dy, GAMMA4, 1e-5, centring_delta(x)
    )
    assert_grads_within(autograd_of(check, "float64"), lnlab_of(check), bounds)
    assert np.isnan(zero.autograd["float64"]["dx"][0]).all() and np.isnan(zero.grads.dx[0]).all()
    assert zero.max_abs_diff("float64", "dx") < 1e-12  # row 2 agrees; row 1 is NaN in both
    assert zero.max_abs_diff("float32", "dbeta") == 0.0


def test_autograd_check_with_one_feature_gives_dx_0_in_both():
    check = autograd_check([[3.0], [-2.5]], [[1.0], [-0.5]], 2.0, 1e-5)

    for dtype in AUTOGRAD_DTYPES:
        assert_array_equal(check.autograd[dtype]["dx"], 0.0)
        assert check.max_abs_diff(dtype, "dx") == 0.0
    assert_array_equal(check.grads.dx, 0.0)


@pytest.mark.parametrize("eps", [0.0, 1e-5, 0.5])
def test_autograd_check_with_two_features_by_hand(eps):
    """dx = (g_0 - g_1) eps / (2 sigma^3) * (1, -1) (test_two_features_by_hand): autograd too."""
    x = np.array([[1.0, 2.0], [0.3, -0.1]])
    dy = np.array([[1.0, 3.0], [-0.5, 2.0]])
    gamma = np.array([1.5, -2.0])

    check = autograd_check(x, dy, gamma, eps)

    sigma = np.sqrt(((x[:, 1] - x[:, 0]) / 2) ** 2 + eps)
    g = dy * gamma
    half = (g[:, 0] - g[:, 1]) * eps / (2 * sigma**3)
    bound = torch_bounds(x, dy, gamma, eps, EPS64).dx
    assert_within(check.autograd["float64"]["dx"], np.stack([half, -half], axis=1), bound)


def test_autograd_check_on_1e8_plus_x_shows_what_float32_loses():
    """float64 autograd agrees with lnlab to rounding of 1e8 + x's statistics; float32 cannot
    hold 1e8 + x (its spacing there is 8), so its gradients are of another input altogether,
    and the check says so: a difference as large as the gradients."""
    rng = np.random.default_rng(18)
    x, dy, gamma = 1e8 + rng.standard_normal((2, 6)), rng.standard_normal((2, 6)), np.ones(6)

    check = autograd_check(x, dy, gamma, 1e-5)

    assert_grads_within(
        autograd_of(check, "float64"), lnlab_of(check), torch_bounds(x, dy, gamma, 1e-5, EPS64)
    )
    assert check.max_abs_diff("float64", "dx") < 1e-6 * np.abs(check.grads.dx).max()
    assert check.max_abs_diff("float32", "dx") > 0.1 * np.abs(check.grads.dx).max()


def test_max_abs_diff_is_nan_where_only_one_side_is():
    grads = lnlab.layer_norm_backward([1.0, 2.0], [1.0, 0.0])
    theirs = {"dx": np.array([np.nan, 0.5]), "dgamma": grads.dgamma, "dbeta": grads.dbeta}

    check = AutogradCheck(grads, {"float64": theirs})

    assert np.isnan(check.max_abs_diff("float64", "dx"))
    assert check.max_abs_diff("float64", "dbeta") == 0.0


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: autograd_check(X24, WITH_INF), r"dy\[1, 3\] is -inf"),
        (lambda: autograd_check(X24, DY24[0]), "dy has shape"),
        (lambda: autograd_check(X24, DY24, [1.0, 2.0]), "gamma"),
        (lambda: autograd_check(X24, DY24, eps=-1.0), "epsilon"),
        (lambda: autograd_backward(X24, DY24, dtype="int8"), "int8"),
    ],
    ids=["inf dy", "dy shape", "gamma length", "negative eps", "unknown dtype"],
)
def test_autograd_check_refuses_bad_input(call, match):
    with pytest.raises(InputError, match=match):
        call()
