"""Layer Norm, Batch Norm and RMSNorm, exactly, with every intermediate.

One algorithm serves both backends (numpy in float64, or torch on any device); only the
reductions differ in spelling. Three choices make it exact where the textbook formula is not:

1. Shift first. Each group is shifted by one of its own members before the two-pass mean and
   variance, so a constant group is exactly zero after the shift (its output is exactly beta,
   or NaN when eps = 0, never a silent -1) and `1e4 + x` gives bit-for-bit the answer for `x`.
2. Scale where squaring would overflow or underflow (1e200, 1e-200). If any group's squares
   would, every group's centred values are divided by a power of two `s` at or just below
   their largest magnitude: x_hat = u / sqrt(r + eps / s^2), with u = c / s and
   r = mean(u^2) = var / s^2. Dividing by a power of two is exact, so a group that needs no
   scaling gets the same bits either way, and the common case skips the scaling passes.
3. float16 and bfloat16 are storage types: the input is rounded to them, the arithmetic runs in
   float32 (as torch's own kernels do), and the outputs are rounded back.

numpy works through a large input in blocks of rows that fit in the CPU's cache, so its
passes over the data cost cache bandwidth, not memory bandwidth (bench/throughput.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lnlab.core import backend as bk
from lnlab.core.errors import InputError
from lnlab.core.numbers import DEFAULT_EPS
from lnlab.teach.latex import bracketed, joined, num, term, vector
from lnlab.teach.steps import STEPS

Array = Any  # a numpy array or a torch tensor


@dataclass(frozen=True)
class Step:
    """One step of a calculation, ready to display."""

    title: str
    formula: str  # the symbolic formula, LaTeX
    latex: str  # the formula with this input's numbers substituted, LaTeX
    value: np.ndarray


@dataclass(frozen=True)
class LayerNormTrace:
    """Every intermediate of Layer Norm; `mean`, `var`, `std` keep the reduced axes as size 1."""

    x: np.ndarray
    mean: np.ndarray
    var: np.ndarray
    std: np.ndarray  # the denominator: sqrt(var + eps), or std + eps with eps_outside
    x_hat: np.ndarray
    y: np.ndarray
    steps: tuple[Step, ...]


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


# ---------------------------------------------------------------- backend plumbing


class _Ops:
    """The handful of array operations the algorithm needs, for numpy or torch."""

    def __init__(self, backend: str) -> None:
        self.torch = backend == "torch"
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


@dataclass(frozen=True)
class _Placement:
    """Where torch computes: device, storage dtype and arithmetic dtype."""

    device: str
    storage: Any
    compute: Any


def _placement(backend: str, device: str, dtype: str) -> _Placement | None:
    bk.check_backend(backend)
    if backend == "numpy":
        return None
    torch = bk.get_torch()
    resolved = bk.resolve_device(device)
    if dtype not in bk.supported_dtypes(resolved):
        raise InputError(f"{dtype} is not supported on {resolved}")
    storage = bk.torch_dtype(dtype)
    compute = torch.float32 if dtype in bk.LOW_PRECISION else storage
    return _Placement(resolved, storage, compute)


def _to_backend(a: np.ndarray, place: _Placement | None) -> Array:
    if place is None:
        return np.asarray(a, dtype=np.float64)
    torch = bk.get_torch()
    t = torch.as_tensor(a, dtype=torch.float64).to(place.storage)
    return t.to(device=place.device, dtype=place.compute)


def _to_numpy(a: Array, place: _Placement | None) -> np.ndarray:
    if place is None:
        return np.asarray(a, dtype=np.float64)
    torch = bk.get_torch()
    return a.to(place.storage).to(device="cpu", dtype=torch.float64).numpy()


# ---------------------------------------------------------------- validation


def _as_array(x: Any, name: str = "x") -> np.ndarray:
    """x as float64, or as it is if it is float32 (widened later, a block at a time)."""
    try:
        a = np.asarray(x)
        if np.iscomplexobj(a):
            raise TypeError("complex")
        if a.dtype != np.float32:
            a = a.astype(np.float64, copy=False)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be an array of real numbers") from exc
    if a.ndim == 0 or a.size == 0:
        raise InputError(f"{name} must have at least one element")
    return a


def _check_eps(eps: float) -> float:
    try:
        eps = float(eps)
    except (TypeError, ValueError) as exc:
        raise InputError(f'epsilon must be a number, not "{str(eps)[:20]}"') from exc
    if not np.isfinite(eps) or eps < 0:
        raise InputError(f"epsilon must be a finite number >= 0, not {eps}")
    return eps


def _affine(param: Any, shape: tuple[int, ...], fill: float, name: str) -> np.ndarray:
    """gamma or beta as an array of `shape`: None gives `fill`; a scalar or a match broadcasts."""
    if param is None:
        return np.full(shape, fill)
    p = np.asarray(param, dtype=np.float64)
    try:
        return np.broadcast_to(p, shape).copy()
    except ValueError as exc:
        raise InputError(f"{name} has shape {p.shape} but must match {shape}") from exc


# ---------------------------------------------------------------- the algorithm


def _standardize(
    ops: _Ops,
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


BLOCK_ELEMENTS = 1 << 17  # numpy's block of rows: 1 MiB of float64, so temporaries stay in cache


def _layer_norm_rows(
    rows: np.ndarray,
    g: np.ndarray,
    b: np.ndarray,
    eps: float,
    unbiased: bool,
    eps_outside: bool,
    place: _Placement | None,
) -> dict[str, np.ndarray]:
    """Statistics and outputs of a (groups, n) block; y only when gamma or beta is given."""
    ops = _Ops("numpy" if place is None else "torch")
    t = _to_backend(rows, place)
    k = t[:, :1]
    mean_d, var, std, x_hat = _standardize(
        ops, t - k, 1, rows.shape[1], eps, unbiased=unbiased, eps_outside=eps_outside
    )
    out = {"mean": k + mean_d, "var": var, "std": std, "x_hat": x_hat}
    if g is not None:
        out["y"] = _to_backend(g, place) * x_hat + _to_backend(b, place)
    return {name: _to_numpy(v, place) for name, v in out.items()}


def _layer_norm_arrays(
    x: Any,
    gamma: Any,
    beta: Any,
    eps: float,
    dims: int,
    unbiased: bool,
    eps_outside: bool,
    backend: str,
    device: str,
    dtype: str,
) -> dict[str, np.ndarray]:
    """x, mean, var, std, x_hat and y; without gamma and beta, y is x_hat itself."""
    a = _as_array(x)
    eps = _check_eps(eps)
    if not 1 <= dims <= a.ndim:
        raise InputError(f"dims must be between 1 and {a.ndim} for an input of shape {a.shape}")
    lead, group = a.shape[: a.ndim - dims], a.shape[a.ndim - dims :]
    n = int(np.prod(group))
    affine = gamma is not None or beta is not None
    g, b = (
        (_affine(gamma, group, 1.0, "gamma").ravel(), _affine(beta, group, 0.0, "beta").ravel())
        if affine
        else (None, None)
    )
    place = _placement(backend, device, dtype)
    rows = a.reshape(-1, n)
    step = max(1, BLOCK_ELEMENTS // n) if place is None else rows.shape[0]
    out = {
        "mean": np.empty((rows.shape[0], 1)),
        "var": np.empty((rows.shape[0], 1)),
        "std": np.empty((rows.shape[0], 1)),
        "x_hat": np.empty(rows.shape),
    }
    if affine:
        out["y"] = np.empty(rows.shape)
    with np.errstate(all="ignore"):  # 0/0 is an answer here (NaN), not a warning
        for start in range(0, rows.shape[0], step):
            block = _layer_norm_rows(
                rows[start : start + step], g, b, eps, unbiased, eps_outside, place
            )
            for name, value in block.items():
                out[name][start : start + step] = value
    stat_shape = lead + (1,) * dims
    arrays = {
        name: v.reshape(a.shape if name in ("x_hat", "y") else stat_shape)
        for name, v in out.items()
    }
    arrays.setdefault("y", arrays["x_hat"])
    return {"x": a} | arrays


def layer_norm(
    x: Any,
    gamma: Any = None,
    beta: Any = None,
    eps: float = DEFAULT_EPS,
    *,
    dims: int = 1,
    unbiased: bool = False,
    eps_outside: bool = False,
    backend: str = "numpy",
    device: str = "auto",
    dtype: str = "float32",
) -> np.ndarray:
    """y = gamma * (x - mean) / sqrt(var + eps) + beta, statistics over the last `dims` axes.

    `unbiased` divides the variance by D - 1 (Bessel); `eps_outside` uses (std + eps) as the
    denominator (the Annotated Transformer's convention). With backend="torch" the same steps
    run on `device` in `dtype`; the result always comes back as a float64 numpy array.
    """
    arrays = _layer_norm_arrays(
        x, gamma, beta, eps, dims, unbiased, eps_outside, backend, device, dtype
    )
    return arrays["y"]


def layer_norm_steps(
    x: Any,
    gamma: Any = None,
    beta: Any = None,
    eps: float = DEFAULT_EPS,
    *,
    dims: int = 1,
    unbiased: bool = False,
    eps_outside: bool = False,
    backend: str = "numpy",
    device: str = "auto",
    dtype: str = "float32",
    row: int = 0,
) -> LayerNormTrace:
    """Layer Norm with every intermediate and the five steps written out for group `row`.

    Takes the arguments of `layer_norm`; `row` picks the group (token) whose numbers are
    substituted into the LaTeX of each step. Every step's `value` holds all groups.
    """
    arrays = _layer_norm_arrays(
        x, gamma, beta, eps, dims, unbiased, eps_outside, backend, device, dtype
    )
    arrays["x"] = np.asarray(arrays["x"], dtype=np.float64)
    steps = _layer_norm_latex(arrays, gamma, beta, float(eps), dims, unbiased, eps_outside, row)
    return LayerNormTrace(**arrays, steps=steps)


def _group(a: np.ndarray, dims: int, row: int) -> np.ndarray:
    """Group `row` of `a`, flattened (the groups are the last `dims` axes)."""
    groups = a.reshape(-1, int(np.prod(a.shape[a.ndim - dims :])))
    if not 0 <= row < groups.shape[0]:
        raise InputError(f"token {row + 1} does not exist: there are {groups.shape[0]}")
    return groups[row]


def _layer_norm_latex(
    arrays: dict[str, np.ndarray],
    gamma: Any,
    beta: Any,
    eps: float,
    dims: int,
    unbiased: bool,
    eps_outside: bool,
    row: int,
) -> tuple[Step, ...]:
    """The five steps of Layer Norm, with the numbers of group `row` substituted."""
    x = _group(arrays["x"], dims, row)
    n = x.size
    mu = float(_group(arrays["mean"], dims, row)[0])
    var = float(_group(arrays["var"], dims, row)[0])
    std = float(_group(arrays["std"], dims, row)[0])
    x_hat = _group(arrays["x_hat"], dims, row)
    y = _group(arrays["y"], dims, row)
    group_shape = arrays["x"].shape[arrays["x"].ndim - dims :]
    g = _affine(gamma, group_shape, 1.0, "gamma").ravel()
    b = _affine(beta, group_shape, 0.0, "beta").ravel()
    m = term(mu)
    divisor = n - 1 if unbiased else n
    mean_s, var_s, std_s, x_hat_s, y_s = STEPS
    var_formula = (
        var_s.formula.replace(r"\dfrac{1}{D}", r"\dfrac{1}{D-1}") if unbiased else (var_s.formula)
    )
    if eps_outside:
        std_formula = r"\sigma_\epsilon = \sigma + \epsilon = \sqrt{\sigma^2} + \epsilon"
        std_sub = rf"\sigma_\epsilon = \sqrt{{{num(var)}}} + {num(eps)} = {num(std)}"
    else:
        std_formula = std_s.formula
        std_sub = rf"\sigma_\epsilon = \sqrt{{{num(var)} + {num(eps)}}} = {num(std)}"
    return (
        Step(
            mean_s.title,
            mean_s.formula,
            rf"\mu = \tfrac{{1}}{{{n}}}\big({joined([term(v) for v in x])}\big) = {num(mu)}",
            arrays["mean"],
        ),
        Step(
            var_s.title + (" (unbiased, D - 1)" if unbiased else ""),
            var_formula,
            rf"\sigma^2 = \tfrac{{1}}{{{divisor}}}\big("
            + joined([f"({term(v)} - {m})^2" for v in x])
            + rf"\big) = {num(var)}",
            arrays["var"],
        ),
        Step(std_s.title, std_formula, std_sub, arrays["std"]),
        Step(
            x_hat_s.title,
            x_hat_s.formula,
            r"\hat{x} = "
            + bracketed([rf"\dfrac{{{term(v)} - {m}}}{{{num(std)}}}" for v in x])
            + rf" = {vector(x_hat)}",
            arrays["x_hat"],
        ),
        Step(
            y_s.title,
            y_s.formula,
            r"y = "
            + bracketed(
                [
                    f"{num(gi)} \\cdot {term(xi)} + {term(bi)}"
                    for gi, xi, bi in zip(g, x_hat, b, strict=True)
                ]
            )
            + rf" = {vector(y)}",
            arrays["y"],
        ),
    )


# ---------------------------------------------------------------- Batch Norm


def _batch_layout(x: Any, mask: Any) -> tuple[np.ndarray, np.ndarray]:
    """(N, D) or (B, S, D) values and their (N,) or (B, S) mask, both flattened to tokens."""
    a = _as_array(x)
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


def batch_norm_steps(
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
    eps = _check_eps(eps)
    d = tokens.shape[1]
    g = _affine(gamma, (d,), 1.0, "gamma")
    b = _affine(beta, (d,), 0.0, "beta")
    place = _placement(backend, device, dtype)
    ops = _Ops(backend)
    first_real = int(np.argmax(m))
    clean = np.where(m[:, None], tokens, tokens[first_real])  # pads can hold anything, even NaN
    t, tm, tg, tb = (_to_backend(v, place) for v in (clean, m[:, None].astype(float), g, b))
    valid = tm > 0
    n = int(m.sum())
    with np.errstate(all="ignore"):
        k = t[first_real : first_real + 1]
        mean_d, var, std, x_hat = _standardize(ops, t - k, 0, n, eps, valid=valid)
        x_hat = ops.xp.where(valid, x_hat, 0.0)  # excluded: 0, even where 0 / 0 (eps = 0)
        y = ops.xp.where(valid, tg * x_hat + tb, 0.0)
        mean, var, std, x_hat, y = (_to_numpy(v, place) for v in (k + mean_d, var, std, x_hat, y))
        unbiased_var = var * n / (n - 1) if n > 1 else np.full_like(var, np.nan)
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

    See `batch_norm_steps` for the mask and the statistics.
    """
    trace = batch_norm_steps(
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
    a = _as_array(x)
    eps = _check_eps(eps)
    g = _affine(gamma, a.shape[-1:], 1.0, "gamma")
    place = _placement(backend, device, dtype)
    ops = _Ops(backend)
    t, tg = _to_backend(a, place), _to_backend(g, place)
    with np.errstate(all="ignore"):
        _, _, _, x_hat = _standardize(ops, t, a.ndim - 1, a.shape[-1], eps, centre=False)
        return _to_numpy(tg * x_hat, place)


def root_mean_square(x: Any, eps: float = 0.0) -> np.ndarray:
    """sqrt(mean(x^2) + eps) over the last axis, in float64: RMSNorm's denominator (with
    eps = 0, the root mean square itself). Scaled like `rms_norm`, so squares cannot overflow."""
    a = _as_array(x)
    eps = _check_eps(eps)
    with np.errstate(all="ignore"):
        _, _, root, _ = _standardize(_Ops("numpy"), a, a.ndim - 1, a.shape[-1], eps, centre=False)
    return np.asarray(root)[..., 0]
