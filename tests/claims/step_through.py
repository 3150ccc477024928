"""The step-through lesson's claims, checked on the corpus's tokens.

Each check works from the case's raw input in float64: x̂ = (x − μ) / √(σ² + ε) with μ and σ²
over the token's D features; "constant" means every feature equal (not σ² == 0 as computed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal, localcontext

import numpy as np
import torch

from claims.corpus import TOKENS, Tokens
from lnlab.labs.step_through.backward import default_dy
from lnlab.labs.step_through.lesson import slides
from lnlab.labs.step_through.token import token_lesson
from lnlab.teach.claims import Said
from lnlab.teach.lesson import Lesson

EXTRA = [
    Tokens("undo: γ = σ_ε, β = μ", [2.0, 4.0, 6.0, 8.0], gamma=float(np.sqrt(5.00001)), beta=5.0),
    Tokens("constant 0.1", [[0.1, 0.1, 0.1], [0.3, 0.1, 0.2]]),
    # the step-through takes any float64 (other pages stop at float32's range): σ² underflows
    # to 0 or overflows to ∞ while x̂ is still computed exactly
    Tokens("1e-200 scale", 1e-200 * np.array([1.0, 2.0, 3.0, 4.0])),
    Tokens("1e-200 scale, eps 0", 1e-200 * np.array([1.0, 2.0, 3.0, 4.0]), eps=0.0),
    Tokens("1e200 scale", 1e200 * np.array([1.0, 2.0, 3.0, 4.0])),
    Tokens("constant 0.1, eps 0", [[0.1, 0.1, 0.1], [0.3, 0.1, 0.2]], eps=0.0),
]


def cases() -> list[Tokens]:
    return [*TOKENS, *EXTRA]


def lessons(case: Tokens) -> Iterator[Lesson]:
    d = case.x.shape[1]
    gamma, beta = np.full(d, case.gamma), np.full(d, case.beta)
    yield slides(token_lesson(case.x, case.labels, case.token, case.eps, gamma, beta))


def constant(row: np.ndarray) -> bool:
    return bool(np.all(row == row[0]))


def undefined(row: np.ndarray, eps: float) -> bool:
    """σ_ε = 0: a constant token with ε = 0, so x̂ = 0 / 0."""
    return constant(row) and eps == 0


def x_hat(row: np.ndarray, eps: float) -> np.ndarray:
    """In decimal arithmetic with 40 digits and no overflow: a token of 1e-200s too."""
    d = row.size
    if constant(row):
        return np.full(d, np.nan if eps == 0 else 0.0)
    with localcontext() as ctx:
        ctx.prec, ctx.Emax, ctx.Emin = 40, 10**6, -(10**6)
        xs = [Decimal(float(v)) for v in row]
        mu = sum(xs) / d
        sigma_eps = (sum((v - mu) ** 2 for v in xs) / d + Decimal(eps)).sqrt()
        return np.array([float((v - mu) / sigma_eps) for v in xs])


def _torch_std_bigger(case: Tokens, said: Said) -> bool:
    xh = x_hat(case.row, case.eps)
    if np.isnan(xh).any() or xh.size < 2:
        return False
    return torch.std(torch.from_numpy(xh)).item() > float(np.sqrt(np.mean((xh - xh.mean()) ** 2)))


def _under_one(case: Tokens, said: Said) -> bool:
    assert "= 1," not in said.text, f"a value under 1 reads as 1: {said.text!r}"
    return not constant(case.row) and case.eps > 0


def _projection(case: Tokens) -> float:
    dy = default_dy(case.row.size) * case.gamma
    return float(np.sum(dy * x_hat(case.row, case.eps)))


def _undoes(case: Tokens) -> bool:
    row = case.row
    mu = float(np.mean(row))
    with np.errstate(all="ignore"):  # 1e200s: their squares overflow, and γ is not ∞
        return case.gamma == float(np.sqrt(np.mean((row - mu) ** 2) + case.eps)) and case.beta == mu


def _rows(case: Tokens, eps_zero: bool) -> bool:
    """Some row is constant, with ε = 0 (NaN) or with ε > 0 (x̂ = 0)."""
    return any(constant(r) for r in case.x) and (case.eps == 0) == eps_zero


def _varying_rows(case: Tokens) -> bool:
    return not all(constant(r) for r in case.x)


def _nan(case: Tokens, said: Said) -> bool:
    return undefined(case.row, case.eps)


CHECKS: dict[str, Callable[[Tokens, Said], bool]] = {
    "step_through.undefined_token": _nan,
    "step_through.constant_token": lambda c, s: constant(c.row) and c.eps > 0,
    "step_through.band_drawn": lambda c, s: not undefined(c.row, c.eps),
    "step_through.x_hat_nan": _nan,
    "step_through.y_drawn": lambda c, s: not undefined(c.row, c.eps),
    "step_through.std_nan": _nan,
    "step_through.std_0": lambda c, s: constant(c.row),
    "step_through.std_1": lambda c, s: c.eps == 0 and not constant(c.row),
    "step_through.std_under_1": _under_one,
    "step_through.torch_std_bigger": _torch_std_bigger,
    "step_through.one_feature": lambda c, s: c.row.size == 1,
    "step_through.undone": lambda c, s: _undoes(c),
    "step_through.undone_others": lambda c, s: _undoes(c),
    "step_through.rows_std_1": lambda c, s: c.eps == 0 and _varying_rows(c),
    "step_through.rows_std": lambda c, s: c.eps > 0 and _varying_rows(c),
    "step_through.rows_constant": lambda c, s: _rows(c, eps_zero=False),
    "step_through.rows_nan": lambda c, s: _rows(c, eps_zero=True),
    "step_through.backward_nan": _nan,
    "step_through.dot_nan": _nan,
    "step_through.dot_0_eps_0": lambda c, s: c.eps == 0 and not constant(c.row),
    "step_through.dot_0_projection_0": lambda c, s: _projection(c) == 0,
    "step_through.dot_not_0": lambda c, s: c.eps > 0 and _projection(c) != 0,
    "step_through.sum_dx_0": lambda c, s: not undefined(c.row, c.eps),
    "step_through.autograd_nan": _nan,
    "step_through.no_eps_note": lambda c, s: not constant(c.row),
    "step_through.more_values": lambda c, s: c.row.size > 8,
}
