"""Layer Norm, Batch Norm and RMSNorm, exactly, with every intermediate.

Each is the shared algorithm of lnlab.core.standardize (shift, two passes, scale where squares
would overflow) on numpy in float64 or on torch on any device. Layer Norm's options are one
`Spec`; its `LayerNormTrace` holds every intermediate as numbers, and the lessons write the
words and formulas (lnlab.teach.steps).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from lnlab.core import backend as bk
from lnlab.core.arrays import affine, as_array, check_eps
from lnlab.core.errors import InputError
from lnlab.core.numbers import DEFAULT_EPS
from lnlab.core.standardize import Ops, row_blocks, standardize


@dataclass(frozen=True)
class Spec:
    """What Layer Norm computes, besides the numbers.

    `dims`: the statistics run over the last `dims` axes (1: per token). `unbiased`: the
    variance divides by D - 1 (Bessel) instead of D. `eps_outside`: the denominator is
    std + eps instead of sqrt(var + eps) (the Annotated Transformer's `x.std() + eps` needs
    both: unbiased=True, eps_outside=True). `backend` "numpy" computes in float64; "torch" on
    `device` ("auto": a GPU if there is one) in `dtype`.
    """

    dims: int = 1
    unbiased: bool = False
    eps_outside: bool = False
    backend: str = "numpy"
    device: str = "auto"
    dtype: str = "float32"


@dataclass(frozen=True)
class LayerNormTrace:
    """Every intermediate of Layer Norm; `mean`, `var`, `std` keep the reduced axes as size 1.
    `gamma` and `beta` have the group's shape (ones and zeros when none were given)."""

    x: np.ndarray
    mean: np.ndarray
    var: np.ndarray
    std: np.ndarray  # the denominator: sqrt(var + eps), or std + eps with eps_outside
    x_hat: np.ndarray
    y: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray
    eps: float
    spec: Spec

    @property
    def groups(self) -> int:
        """How many groups (tokens) were normalized."""
        return self.x.size // self.gamma.size

    def group(self, name: str, row: int) -> np.ndarray:
        """Group `row` of the intermediate `name` ("x", "mean", ... "y"), flattened."""
        if not 0 <= row < self.groups:
            raise InputError(f"token {row + 1} does not exist: there are {self.groups}")
        a = getattr(self, name)
        return a.reshape(self.groups, -1)[row]


@dataclass(frozen=True)
class BatchNormTrace:
    """Every intermediate of Batch Norm in training mode, one statistic per feature."""

    x: np.ndarray
    mean: np.ndarray  # (D,)
    var: np.ndarray  # (D,) biased: what normalizes this batch
    std: np.ndarray  # (D,) sqrt(var + eps)
    x_hat: np.ndarray
    y: np.ndarray
    count: int  # how many tokens fed the statistics
    running_mean: np.ndarray  # (D,) after one update from the initial 0
    running_var: np.ndarray  # (D,) after one update from the initial 1, unbiased


# ---------------------------------------------------------------- Layer Norm


def layer_norm_trace(
    x: Any,
    gamma: Any = None,
    beta: Any = None,
    eps: float = DEFAULT_EPS,
    *,
    spec: Spec = Spec(),
    **options: Any,
) -> LayerNormTrace:
    """y = gamma * (x - mean) / sqrt(var + eps) + beta over the last `spec.dims` axes, with
    every intermediate. `options` are Spec's fields, a shorthand: `dims=2` is
    `spec=Spec(dims=2)`. The results always come back as float64 numpy arrays."""
    spec = replace(spec, **options)
    a = as_array(x)
    eps = check_eps(eps)
    if not 1 <= spec.dims <= a.ndim:
        raise InputError(f"dims must be between 1 and {a.ndim} for an input of shape {a.shape}")
    lead, group = a.shape[: a.ndim - spec.dims], a.shape[a.ndim - spec.dims :]
    n = int(np.prod(group))
    g, b = affine(gamma, group, 1.0, "gamma"), affine(beta, group, 0.0, "beta")
    place = bk.placement(spec.backend, spec.device, spec.dtype)
    rows = a.reshape(-1, n)
    out = {name: np.empty((rows.shape[0], 1)) for name in ("mean", "var", "std")}
    scaled = gamma is not None or beta is not None  # else y is x_hat itself: no pass for it
    out |= {name: np.empty(rows.shape) for name in ("x_hat", "y")[: 1 + scaled]}
    with np.errstate(all="ignore"):  # 0/0 is an answer here (NaN), not a warning
        for block in row_blocks(rows.shape[0], n, place):
            affine_rows = (g.ravel(), b.ravel()) if scaled else None
            stats = _layer_norm_rows(rows[block], affine_rows, eps, spec, place)
            for name, value in stats.items():
                out[name][block] = value
    stat_shape = lead + (1,) * spec.dims
    arrays = {
        name: v.reshape(a.shape if name in ("x_hat", "y") else stat_shape)
        for name, v in out.items()
    }
    arrays.setdefault("y", arrays["x_hat"])
    x64 = np.asarray(a, dtype=np.float64)
    return LayerNormTrace(x=x64, **arrays, gamma=g, beta=b, eps=eps, spec=spec)


def _layer_norm_rows(
    rows: np.ndarray,
    affine_rows: tuple[np.ndarray, np.ndarray] | None,
    eps: float,
    spec: Spec,
    place: bk.Placement | None,
) -> dict[str, np.ndarray]:
    """Statistics and outputs of a (groups, n) block; y only with (gamma, beta)."""
    t = bk.to_backend(rows, place)
    k = t[:, :1]
    mean_d, var, std, x_hat = standardize(
        Ops(place),
        t - k,
        1,
        rows.shape[1],
        eps,
        unbiased=spec.unbiased,
        eps_outside=spec.eps_outside,
    )
    out = {"mean": k + mean_d, "var": var, "std": std, "x_hat": x_hat}
    if affine_rows is not None:
        g, b = (bk.to_backend(v, place) for v in affine_rows)
        out["y"] = g * x_hat + b
    return {name: bk.to_numpy(v, place) for name, v in out.items()}


def layer_norm(
    x: Any,
    gamma: Any = None,
    beta: Any = None,
    eps: float = DEFAULT_EPS,
    *,
    spec: Spec = Spec(),
    **options: Any,
) -> np.ndarray:
    """y = gamma * (x - mean) / sqrt(var + eps) + beta: `layer_norm_trace`'s output alone."""
    return layer_norm_trace(x, gamma, beta, eps, spec=spec, **options).y


# ---------------------------------------------------------------- Batch Norm


def _batch_layout(x: Any, mask: Any) -> tuple[np.ndarray, np.ndarray]:
    """(N, D) or (B, S, D) values and their (N,) or (B, S) mask, both flattened to tokens."""
    a = as_array(x)
    if a.ndim not in (2, 3):
        raise InputError(f"Batch Norm takes (N, D) or (B, S, D), not shape {a.shape}")
    tokens = a.reshape(-1, a.shape[-1])
    if mask is None:
        return tokens, np.ones(tokens.shape[0], dtype=bool)
    m = np.asarray(mask, dtype=bool)
    if m.shape != a.shape[:-1]:
        raise InputError(f"mask has shape {m.shape} but must be {a.shape[:-1]}")
    m = m.reshape(-1)
    if not m.any():
        raise InputError("the mask marks no real token: Batch Norm needs at least one")
    return tokens, m


def batch_norm_trace(
    x: Any,
    gamma: Any = None,
    beta: Any = None,
    eps: float = DEFAULT_EPS,
    *,
    mask: Any = None,
    momentum: float = 0.1,
    backend: str = "numpy",
    device: str = "auto",
    dtype: str = "float32",
) -> BatchNormTrace:
    """Batch Norm in training mode: each feature normalized by statistics over all tokens.

    With `mask` (True for real tokens) the statistics use real tokens only, padded positions
    come out as 0, and nothing depends on what the padded positions hold. The running
    statistics follow PyTorch: new = (1 - momentum) * old + momentum * batch, starting from
    mean 0 and variance 1, with the unbiased batch variance.
    """
    shape = np.shape(x)
    tokens, m = _batch_layout(x, mask)
    eps = check_eps(eps)
    d = tokens.shape[1]
    g = affine(gamma, (d,), 1.0, "gamma")
    b = affine(beta, (d,), 0.0, "beta")
    place = bk.placement(backend, device, dtype)
    ops = Ops(place)
    first_real = int(np.argmax(m))
    clean = np.where(m[:, None], tokens, tokens[first_real])  # pads can hold anything, even NaN
    t, tm, tg, tb = (bk.to_backend(v, place) for v in (clean, m[:, None].astype(float), g, b))
    valid = tm > 0
    n = int(m.sum())
    with np.errstate(all="ignore"):
        k = t[first_real : first_real + 1]
        mean_d, var, std, x_hat = standardize(ops, t - k, 0, n, eps, valid=valid)
        x_hat = ops.xp.where(valid, x_hat, 0.0)  # excluded: 0, even where 0 / 0 (eps = 0)
        y = ops.xp.where(valid, tg * x_hat + tb, 0.0)
        mean, var, std, x_hat, y = (bk.to_numpy(v, place) for v in (k + mean_d, var, std, x_hat, y))
        # n / (n - 1) first: var * n overflows where var is near the float64 maximum
        unbiased_var = var * (n / (n - 1)) if n > 1 else np.full_like(var, np.nan)
    return BatchNormTrace(
        x=np.asarray(x, dtype=np.float64),
        mean=mean[0],
        var=var[0],
        std=std[0],
        x_hat=x_hat.reshape(shape),
        y=y.reshape(shape),
        count=n,
        running_mean=momentum * mean[0],
        running_var=(1 - momentum) * 1.0 + momentum * unbiased_var[0],
    )


def batch_norm(
    x: Any,
    gamma: Any = None,
    beta: Any = None,
    eps: float = DEFAULT_EPS,
    *,
    mask: Any = None,
    backend: str = "numpy",
    device: str = "auto",
    dtype: str = "float32",
) -> np.ndarray:
    """y = gamma * (x - mean_batch) / sqrt(var_batch + eps) + beta, per feature (training mode).

    See `batch_norm_trace` for the mask and the statistics.
    """
    trace = batch_norm_trace(
        x, gamma, beta, eps, mask=mask, backend=backend, device=device, dtype=dtype
    )
    return trace.y


# ---------------------------------------------------------------- RMSNorm


def rms_norm(
    x: Any,
    gamma: Any = None,
    eps: float = 1e-6,
    *,
    backend: str = "numpy",
    device: str = "auto",
    dtype: str = "float32",
) -> np.ndarray:
    """y = gamma * x / sqrt(mean(x^2) + eps) over the last axis: no centring, no beta.

    Scaled where the squares would overflow or underflow, like Layer Norm.
    """
    a = as_array(x)
    eps = check_eps(eps)
    g = affine(gamma, a.shape[-1:], 1.0, "gamma")
    place = bk.placement(backend, device, dtype)
    ops = Ops(place)
    t, tg = bk.to_backend(a, place), bk.to_backend(g, place)
    with np.errstate(all="ignore"):
        _, _, _, x_hat = standardize(ops, t, a.ndim - 1, a.shape[-1], eps, centre=False)
        return bk.to_numpy(tg * x_hat, place)


def root_mean_square(x: Any, eps: float = 0.0) -> np.ndarray:
    """sqrt(mean(x^2) + eps) over the last axis, in float64: RMSNorm's denominator (with
    eps = 0, the root mean square itself). Scaled like `rms_norm`, so squares cannot overflow."""
    a = as_array(x)
    eps = check_eps(eps)
    with np.errstate(all="ignore"):
        _, _, root, _ = standardize(Ops(None), a, a.ndim - 1, a.shape[-1], eps, centre=False)
    return np.asarray(root)[..., 0]
