"""Layer Norm's backward pass: the gradients of a loss with respect to x, gamma and beta.

Forward, over the last axis (D features per token): sigma_eps = sqrt(var + eps) with the biased
variance, x_hat = (x - mu) / sigma_eps and y = gamma * x_hat + beta. Given the upstream gradient
dy = dL/dy, with means and sums over the D features of each token:

    dbeta  = sum over tokens of dy
    dgamma = sum over tokens of dy * x_hat
    dx_hat = dy * gamma
    dx     = (dx_hat - mean(dx_hat) - x_hat * mean(dx_hat * x_hat)) / sigma_eps

The two subtracted terms are there because mu and sigma_eps depend on every x_i: nudging one
feature moves the whole token's mean and spread. Two identities follow from sum(x_hat) = 0 and
mean(x_hat^2) = var / (var + eps):

* sum(dx) = (D mean(dx_hat) - D mean(dx_hat) - mean(dx_hat * x_hat) sum(x_hat)) / sigma_eps = 0.
  Adding one constant to every feature changes nothing after the mean is subtracted, so the
  gradient has no component along (1, ..., 1).
* sum(dx * x_hat) = sum(dx_hat * x_hat) (1 - mean(x_hat^2)) / sigma_eps
                  = eps * sum(dx_hat * x_hat) / sigma_eps^3.
  With eps = 0 this is 0: scaling x about its mean leaves x_hat unchanged, so the gradient has
  no component along x - mu (which is parallel to x_hat). With eps > 0 scaling does change x_hat
  a little (the spread grows next to eps), and the gradient keeps that small component.

The statistics come from the forward's own algorithm (lnlab.core.standardize): each token is
shifted by one of its features first, so `1e8 + x` gives the gradient of `x` (up to the rounding
of the input) and a constant token has x_hat = 0 exactly (dx = (dx_hat - mean(dx_hat)) /
sqrt(eps), and with eps = 0 NaN, 0 / 0, as in the forward); where squares would overflow or
underflow the values are scaled by a power of two. One feature (D = 1) gives dx = 0 exactly when
eps > 0. numpy computes in float64, a cache-sized block of tokens at a time; torch computes on
its device, float16 and bfloat16 as storage types with float32 arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lnlab.core.arrays import affine, as_array, check_eps
from lnlab.core.backend import Placement, get_torch, placement, to_backend, to_numpy, torch_dtype
from lnlab.core.errors import InputError
from lnlab.core.numbers import DEFAULT_EPS
from lnlab.core.standardize import Ops, row_blocks, standardize


@dataclass(frozen=True)
class LayerNormGrads:
    """The gradients of Layer Norm, and the forward intermediates they are built from."""

    dx: np.ndarray  # the shape of x
    dgamma: np.ndarray  # (D,): summed over every token
    dbeta: np.ndarray  # (D,): summed over every token
    x_hat: np.ndarray  # the shape of x
    std: np.ndarray  # sigma_eps = sqrt(var + eps), the shape of x with the last axis 1


def _real(a: Any, name: str) -> np.ndarray:
    """gamma as float64, refusing text and complex numbers (a scalar is allowed)."""
    try:
        p = np.asarray(a)
        if np.iscomplexobj(p):
            raise TypeError("complex")
        return p.astype(np.float64, copy=False)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be an array of real numbers") from exc


def _check_finite(a: np.ndarray, name: str) -> None:
    finite = np.isfinite(a)
    if not finite.all():
        where = tuple(int(i) for i in np.argwhere(~finite)[0])
        index = ", ".join(map(str, where))
        raise InputError(
            f"{name}[{index}] is {a[where]}: the backward pass needs finite numbers "
            "(NaN and infinite values are not allowed)"
        )


def _checked(
    x: Any, dy: Any, gamma: Any, eps: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """x, dy and gamma (one per feature) as finite float64 arrays, and a valid eps."""
    a = as_array(x)
    upstream = as_array(dy, "dy")
    if upstream.shape != a.shape:
        raise InputError(f"dy has shape {upstream.shape} but must match x's shape {a.shape}")
    eps = check_eps(eps)
    g = affine(None if gamma is None else _real(gamma, "gamma"), (a.shape[-1],), 1.0, "gamma")
    for name, value in (("x", a), ("dy", upstream), ("gamma", g)):
        _check_finite(value, name)
    return a, upstream, g, eps


def _backward_rows(
    rows: np.ndarray, dys: np.ndarray, gamma: np.ndarray, eps: float, place: Placement | None
) -> dict[str, np.ndarray]:
    """dx, x_hat, std and this block's share of dgamma and dbeta for a (tokens, D) block."""
    ops = Ops(place)
    t, dy, g = (to_backend(v, place) for v in (rows, dys, gamma))
    n = rows.shape[1]
    _, _, std, x_hat = standardize(ops, t - t[:, :1], 1, n, eps)
    dx_hat = dy * g
    mean_dx_hat = ops.sum(dx_hat, 1) / n
    mean_projection = ops.sum_products(dx_hat, x_hat, 1) / n  # mean(dx_hat * x_hat)
    dx = dx_hat  # in place from here: dx_hat is not needed again
    dx -= mean_dx_hat
    dx -= x_hat * mean_projection
    dx /= std
    out = {
        "dx": dx,
        "x_hat": x_hat,
        "std": std,
        "dgamma": (dy * x_hat).sum(0),
        "dbeta": dy.sum(0),
    }
    return {name: to_numpy(v, place) for name, v in out.items()}


def layer_norm_backward(
    x: Any,
    dy: Any,
    gamma: Any = None,
    eps: float = DEFAULT_EPS,
    *,
    backend: str = "numpy",
    device: str = "auto",
    dtype: str = "float32",
) -> LayerNormGrads:
    """dx, dgamma and dbeta of y = gamma * (x - mean) / sqrt(var + eps) + beta over the last axis.

    `dy` is the upstream gradient dL/dy, the shape of x; `gamma` has one value per feature
    (None is all ones; beta does not enter the gradients). x may have any leading shape: (D,),
    (N, D), (B, S, D); dgamma and dbeta are summed over all of it. With backend="torch" the same
    steps run on `device` in `dtype`; every result comes back as a float64 numpy array. See the
    module docstring for the formula.
    """
    a, upstream, g, eps = _checked(x, dy, gamma, eps)
    d = a.shape[-1]
    place = placement(backend, device, dtype)

    rows, dys = a.reshape(-1, d), upstream.reshape(-1, d)
    dx, x_hat, std = np.empty(rows.shape), np.empty(rows.shape), np.empty((rows.shape[0], 1))
    dgamma, dbeta = np.zeros(d), np.zeros(d)
    with np.errstate(all="ignore"):  # 0 / 0 is an answer here (NaN), not a warning
        for block in row_blocks(rows.shape[0], d, place):
            out = _backward_rows(rows[block], dys[block], g, eps, place)
            dx[block], x_hat[block], std[block] = out["dx"], out["x_hat"], out["std"]
            dgamma += out["dgamma"]
            dbeta += out["dbeta"]
    return LayerNormGrads(
        dx=dx.reshape(a.shape),
        dgamma=dgamma,
        dbeta=dbeta,
        x_hat=x_hat.reshape(a.shape),
        std=std.reshape((*a.shape[:-1], 1)),
    )


# ---------------------------------------------------------------- beside torch autograd

AUTOGRAD_DTYPES = ("float64", "float32")
GRADIENTS = ("dx", "dgamma", "dbeta")


def autograd_backward(
    x: Any, dy: Any, gamma: Any = None, eps: float = DEFAULT_EPS, dtype: str = "float64"
) -> dict[str, np.ndarray]:
    """dx, dgamma and dbeta from torch autograd: F.layer_norm over the last axis on the CPU in
    `dtype`, then y.backward(dy). Returned as float64 numpy arrays, dgamma and dbeta summed over
    every token as autograd sums them. Inputs are checked as layer_norm_backward checks them."""
    return _autograd(*_checked(x, dy, gamma, eps), dtype)


def _autograd(
    a: np.ndarray, upstream: np.ndarray, g: np.ndarray, eps: float, dtype: str
) -> dict[str, np.ndarray]:
    """autograd_backward on inputs _checked has passed."""
    torch = get_torch()
    d = a.shape[-1]
    kind = torch_dtype(dtype)
    leaves = [torch.tensor(v, dtype=kind, requires_grad=True) for v in (a, g, np.zeros(d))]
    y = torch.nn.functional.layer_norm(leaves[0], (d,), leaves[1], leaves[2], eps)
    y.backward(torch.tensor(upstream, dtype=kind))
    return {name: leaf.grad.double().numpy() for name, leaf in zip(GRADIENTS, leaves, strict=True)}


@dataclass(frozen=True)
class AutogradCheck:
    """lnlab's gradients (float64) beside torch autograd's in each of AUTOGRAD_DTYPES."""

    grads: LayerNormGrads
    autograd: dict[str, dict[str, np.ndarray]]  # dtype -> {"dx": ..., "dgamma": ..., "dbeta": ...}

    def max_abs_diff(self, dtype: str, name: str) -> float:
        """max |lnlab - autograd| of gradient `name`; where both are NaN (0 / 0) they agree."""
        ours, theirs = getattr(self.grads, name), self.autograd[dtype][name]
        both_nan = np.isnan(ours) & np.isnan(theirs)
        return float(np.max(np.where(both_nan, 0.0, np.abs(ours - theirs))))


def autograd_check(x: Any, dy: Any, gamma: Any = None, eps: float = DEFAULT_EPS) -> AutogradCheck:
    """layer_norm_backward in float64 and torch autograd in float64 and float32 on the same
    input. float64 agrees to rounding (about 1e-16 of the gradients' size); float32 to about
    1e-7, or not at all where float32 cannot hold the input (1e8 + x)."""
    checked = _checked(x, dy, gamma, eps)  # both autograd runs take these as they are
    grads = layer_norm_backward(*checked)
    return AutogradCheck(grads, {t: _autograd(*checked, t) for t in AUTOGRAD_DTYPES})
