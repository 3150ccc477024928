"""Parity with float64: the five steps in torch on a device and dtype against numpy's float64.

Each step's relative error is max |torch - float64| / max |float64| (normwise, so a value near
0 cannot blow it up), and is expected to stay below a bound derived from the unit roundoff u of
the dtype (see `expected_bound`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from lnlab.core import backend as bk
from lnlab.core.errors import InputError
from lnlab.core.norms import LayerNormTrace, layer_norm_trace
from lnlab.core.numbers import DEFAULT_EPS
from lnlab.teach.steps import STEPS, Step, StepInfo, written_steps

SIGNIFICAND_BITS = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}
FUSED_LABEL = "y by the fused F.layer_norm"
FUSED_SYMBOL = "y fused"
# How much each step amplifies the rounding of its input, in units of its condition number:
# storing x moves each x_i by up to u|x_i|, so x - mu moves by up to 2u max|x|; the variance
# (a mean of squares) moves by twice that relative to sigma, the std by half of the variance.
_AMPLIFICATION = {"mean": 2, "var": 4, "std": 2, "x_hat": 4, "y": 4}


def step_label(step: StepInfo) -> str:
    """A step as the parity table names it: its title and symbol ("Mean μ")."""
    return f"{step.title} {step.symbol}"


def unit_roundoff(dtype: str) -> float:
    """u = 2^-p for a dtype with a p-bit significand: the largest relative rounding error."""
    if dtype not in SIGNIFICAND_BITS:
        raise InputError(f'unknown dtype "{dtype}": choose one of {", ".join(SIGNIFICAND_BITS)}')
    return 2.0 ** -SIGNIFICAND_BITS[dtype]


def expected_bound(dtype: str, step: str, kappa: float, kappa_mean: float) -> float:
    """The largest relative error to expect for `step`: u (2 + a kappa).

    kappa = max over tokens of max|x_i| / sigma_eps (over max|x_hat| too, where that is under
    1): how large the inputs are next to their spread (1 to 2 for centred data, huge for
    1000 + small noise; see `condition_numbers`). The mean uses kappa_mean =
    max|x| / max|mu| instead, as its error is relative to the mean itself. `a` is the step's
    amplification (2 for the mean and std, 4 for the variance, x_hat and y). The 2 covers
    rounding the result back to the dtype and the float32 arithmetic.
    """
    k = kappa_mean if step == "mean" else kappa
    return unit_roundoff(dtype) * (2 + _AMPLIFICATION[step] * k)


def relative_error(value: np.ndarray, reference: np.ndarray) -> tuple[float, float]:
    """(max absolute error, max absolute error / max |reference|); NaN counts as infinite."""
    diff = np.abs(np.asarray(value, dtype=np.float64) - reference)
    diff = np.where(np.isnan(diff), np.inf, diff)
    max_abs = float(diff.max())
    scale = float(np.abs(reference).max())
    if scale == 0:
        return max_abs, 0.0 if max_abs == 0 else math.inf
    return max_abs, max_abs / scale


@dataclass(frozen=True)
class ParityRow:
    """One step's error on the device against float64, and the bound to expect."""

    step: str
    max_abs: float
    max_rel: float
    bound: float
    symbol: str  # the step's short name, for a chart's axis

    @property
    def within(self) -> bool:
        return self.max_rel <= self.bound


@dataclass(frozen=True)
class Parity:
    """The steps computed in torch on `device` in `dtype`, beside the float64 reference."""

    device: str
    dtype: str
    unit_roundoff: float
    kappa: float
    kappa_mean: float
    reference: LayerNormTrace  # numpy, float64
    trace: LayerNormTrace  # torch on `device` in `dtype`, returned as float64
    steps: tuple[Step, ...]  # the five steps written out with one token's numbers (`trace`)
    fused_y: np.ndarray  # torch.nn.functional.layer_norm on the same device and dtype
    rows: tuple[ParityRow, ...]  # the five steps, then the fused output
    eps: float


def condition_numbers(reference: LayerNormTrace) -> tuple[float, float]:
    """(kappa, kappa_mean) of the input: see `expected_bound`.

    kappa is the largest input over its token's sigma_eps, divided by the largest |x_hat|
    where that is under 1: an eps far above sigma^2 shrinks x_hat, but not the rounding of
    x - mu, which the relative error then measures against the smaller x_hat."""
    x = reference.x.reshape(-1, reference.x.shape[-1])
    spread = reference.std.reshape(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        largest_x_hat = np.minimum(1.0, np.nanmax(np.abs(reference.x_hat), initial=0.0))
        kappa = float(np.max(np.abs(x).max(axis=1) / spread) / largest_x_hat)
        biggest_mean = float(np.abs(reference.mean).max())
        kappa_mean = float(np.abs(x).max() / biggest_mean) if biggest_mean else math.inf
    return (kappa if np.isfinite(kappa) else math.inf), kappa_mean


def parity(
    x: Any, device: str = "auto", dtype: str = "float32", *, eps: float = DEFAULT_EPS, row: int = 0
) -> Parity:
    """Layer Norm of the tokens `x` (tokens, features) in torch, and its error per step.

    `row` picks the token whose numbers the steps' LaTeX shows.
    """
    resolved = bk.resolve_device(device)
    reference = layer_norm_trace(x, eps=eps)
    trace = layer_norm_trace(x, eps=eps, backend="torch", device=resolved, dtype=dtype)
    steps = written_steps(trace, row)
    fused_y = _fused_layer_norm(reference.x, resolved, dtype, eps)
    kappa, kappa_mean = condition_numbers(reference)
    rows = [
        ParityRow(
            step_label(s),
            *relative_error(getattr(trace, s.key), getattr(reference, s.key)),
            expected_bound(dtype, s.key, kappa, kappa_mean),
            s.symbol,
        )
        for s in STEPS
    ]
    rows.append(
        ParityRow(
            FUSED_LABEL,
            *relative_error(fused_y, reference.y),
            expected_bound(dtype, "y", kappa, kappa_mean),
            FUSED_SYMBOL,
        )
    )
    return Parity(
        resolved,
        dtype,
        unit_roundoff(dtype),
        kappa,
        kappa_mean,
        reference,
        trace,
        steps,
        fused_y,
        tuple(rows),
        eps,
    )


def _fused_layer_norm(x: np.ndarray, device: str, dtype: str, eps: float) -> np.ndarray:
    torch = bk.get_torch()
    t = torch.as_tensor(x, dtype=torch.float64).to(device=device, dtype=bk.torch_dtype(dtype))
    y = torch.nn.functional.layer_norm(t, (x.shape[-1],), eps=eps)
    return y.to(device="cpu", dtype=torch.float64).numpy()


def dtype_range(dtype: str) -> tuple[float, float]:
    """(smallest normal number, largest number) of `dtype`: between them, u describes the
    rounding; under the first a value keeps fewer bits, over the second it overflows."""
    info = bk.get_torch().finfo(bk.torch_dtype(dtype))
    return float(info.tiny), float(info.max)


# the values whose range out_of_range checks, by symbol and LayerNormTrace field
RANGE_CHECKED = (("x", "x"), ("μ", "mean"), ("σ²", "var"), ("σ_ε", "std"), ("x̂", "x_hat"))


def out_of_range(result: Parity) -> tuple[list[str], list[str]]:
    """(the values over the dtype's largest number, those under its smallest normal one):
    x and each step's exact (float64) result, by symbol; 0 is in range."""
    tiny, largest = dtype_range(result.dtype)
    over, under = [], []
    for symbol, name in RANGE_CHECKED:
        size = np.abs(getattr(result.reference, name))
        size = size[np.isfinite(size)]
        if np.any(size > largest):
            over.append(symbol)
        if np.any((size > 0) & (size < tiny)):
            under.append(symbol)
    return over, under


def parity_table(result: Parity) -> list[dict[str, object]]:
    """The parity rows as table records for display."""
    return [
        {
            "step": r.step,
            "max abs error": r.max_abs,
            "max rel error": r.max_rel,
            "expected bound": r.bound,
            "within bound": "yes" if r.within else "NO",
        }
        for r in result.rows
    ]


def dtype_table() -> list[dict[str, object]]:
    """Per dtype: significand bits p, the unit roundoff u = 2^-p, p log10(2) decimal digits,
    and the bound for x̂ on well-conditioned input.

    With kappa = 1 (data centred and spread like N(0, 1)) the bound u (2 + 4 kappa) is 6u:
    about 4e-7 for float32, 3e-3 for float16 and 2e-2 for bfloat16.
    """
    return [
        {
            "dtype": name,
            "bits p": bits,
            "u = 2^-p": 2.0**-bits,
            "digits": round(bits * math.log10(2), 1),
            "x̂ bound at κ = 1": expected_bound(name, "x_hat", 1.0, 1.0),
        }
        for name, bits in SIGNIFICAND_BITS.items()
    ]
