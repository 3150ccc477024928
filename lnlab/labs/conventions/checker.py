"""A checker for the numbers tutorials print: which claims hold, and under which convention.

`check_claims(x_text, ...)` reads a tutorial's input and its claimed statistics and outputs
as written; each claim is judged against every way the conventions (lnlab.labs.conventions.compare)
compute that quantity. A claim written with k decimals holds when the truth rounds to it:
|truth - claim| <= 10^-k / 2, plus the slack a printout computed in float32 needs.

That slack follows float32's real error. Rounding an input x to float32 moves it by up to
u |x| (u = 2^-24), at most u (|mean| + max |x - mean|), and the mean and x - mean round as
much again: each x - mean, and so the std, is off by up to e = K u (|mean| + max |x - mean|).
Normalizing divides that by the denominator, so an output is off by up to
e (1 + |y|) / (denominator - e), never over a denominator smaller than ε allows: far more
than 7 significant digits on a token far from zero next to its spread (|mean| / std large).
Every value has K u of itself more, for float32 storing it. `float32_error` gives e,
`Reading.slack` each value's slack.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from lnlab.core.errors import InputError
from lnlab.core.norms import LayerNormTrace, layer_norm_trace, root_mean_square
from lnlab.core.parse import parse_embeddings
from lnlab.labs.conventions.compare import CONVENTIONS, Convention, compare_conventions
from lnlab.teach.claims import claim

QUANTITIES = {"mean": "mean", "var": "variance", "std": "std", "out": "output"}
UNIT_ROUNDOFF = 2.0**-24  # u: rounding to float32 moves a number by at most u times itself
# K, measured: float32 printouts of torch's layer_norm, rms_norm and x.std(), of a
# Keras-style x * inv - mean * inv and of NumPy's class, on scales 1e-6 to 1e6, |mean| / std up
# to 1e8 and D from 2 to 4096, stay within 4.5 u (|mean| + max |x - mean|) (1 + |y|) / σ_ε of
# float64 (tests/labs/conventions/test_slack.py repeats a sample); 6 leaves a third more.
ROUNDINGS = 6
_WRITTEN = re.compile(
    r"(?<![\w.])[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?(?![\w.])"
)


_EXPONENT_CAP = 10**7  # farther than any float64's exponent plus any text's decimals


def half_unit(written: str) -> float:
    """Half a unit in the last written place: "0.364" -> 5e-4, "5" -> 0.5, "1.5e-3" -> 5e-5.

    A claim holds when the truth rounds to what was written, i.e. lies within this distance.
    A place beyond float64's range ("0e400") gives the largest float64, never an overflow.
    """
    mantissa, _, exponent = written.lower().lstrip("+-").partition("e")
    decimals = len(mantissa.partition(".")[2])
    power = _exponent(exponent) - decimals
    return 0.5 * 10.0**power if power <= sys.float_info.max_10_exp else sys.float_info.max


def _exponent(text: str) -> int:
    """The value of an exponent's digits ("-05" -> -5, "" -> 0), capped at +-_EXPONENT_CAP.

    Not int() of the whole text: a written "1e-000...01" may have thousands of digits, which
    int() reads in quadratic time and refuses beyond 4,300.
    """
    digits = text.lstrip("+-").lstrip("0")
    value = int(digits or 0) if len(digits) < len(str(_EXPONENT_CAP)) else _EXPONENT_CAP
    return -value if text.startswith("-") else value


@dataclass(frozen=True)
class Claim:
    """One number a tutorial printed: what it is, for which token (and feature), as written."""

    quantity: str  # a key of QUANTITIES
    token: int  # 0-based row of x
    feature: int | None  # 0-based, for outputs only
    written: str
    value: float

    @property
    def half_unit(self) -> float:
        """Half a unit in the last written place: how far a truth that rounds to it may lie."""
        return half_unit(self.written)


@dataclass(frozen=True)
class Reading:
    """One way to compute a quantity, with its value for every token (or token and feature)
    and `slack`, how far a float32 computation of that value may land from it."""

    key: str
    label: str
    conventions: tuple[str, ...]  # keys of the conventions that compute it this way
    value: np.ndarray
    slack: np.ndarray


@dataclass(frozen=True)
class Verdict:
    """A claim against every reading of its quantity."""

    claim: Claim
    matches: tuple[str, ...]  # keys of the readings it rounds from
    conventions: tuple[str, ...]  # keys of the conventions it holds under
    usual_value: float  # the first reading: what PyTorch's Layer Norm computes
    nearest: str  # label of the closest reading, measured in its tolerance
    nearest_value: float
    tolerance: float  # the closest reading's: half a unit plus its float32 slack

    @property
    def holds(self) -> bool:
        return bool(self.matches)

    @property
    def ratio(self) -> float:
        """The distance from the closest reading over its tolerance: at most 1 iff it holds."""
        return _ratio(abs(self.claim.value - self.nearest_value), self.tolerance)


@dataclass(frozen=True)
class CheckResult:
    """Every claim's verdict, and every reading, for tokens x."""

    x: np.ndarray
    labels: tuple[str, ...]
    readings: dict[str, tuple[Reading, ...]]
    verdicts: tuple[Verdict, ...]

    def holding_under(self, key: str) -> int:
        """How many claims hold under the convention `key`."""
        return sum(key in v.conventions for v in self.verdicts)

    @property
    def consistent(self) -> tuple[str, ...]:
        """Keys of the conventions under which every claim holds (none if there are no claims)."""
        if not self.verdicts:
            return ()
        return tuple(c.key for c in CONVENTIONS if self.holding_under(c.key) == len(self.verdicts))


def float32_error(trace: LayerNormTrace) -> np.ndarray:
    """e for every token of a (T, D) trace: how far float32 may move each x - mean, and so
    the std (its inputs round by up to u (|mean| + max |x - mean|), the mean and the
    subtraction as much again; ROUNDINGS, K, covers the three with room)."""
    with np.errstate(all="ignore"):
        reach = np.max(np.abs(trace.x - trace.mean), axis=1)
        return ROUNDINGS * UNIT_ROUNDOFF * (np.abs(trace.mean[:, 0]) + reach)


def _output_slack(
    e: np.ndarray, y: np.ndarray, denominator: np.ndarray, floor: float, widen: float
) -> np.ndarray:
    """How far float32 may move outputs y = (x - mean) / denominator: x - mean by e, the
    denominator by `widen` e, so y by e (1 + widen |y|) over the smallest denominator float32
    may reach (never under `floor`, where ε keeps it: √ε in the root, ε on the std)."""
    with np.errstate(all="ignore"):
        lowest = np.maximum(denominator - widen * e, floor)
        return e[:, None] * (1 + widen * np.abs(y)) / lowest[:, None]


def readings(x: np.ndarray) -> dict[str, tuple[Reading, ...]]:
    """Every way the conventions compute the mean, variance, std and output of tokens x, each
    with the slack a float32 printout of it needs."""
    biased = layer_norm_trace(x, eps=0.0)
    unbiased = layer_norm_trace(x, eps=0.0, unbiased=True)
    comparison = compare_conventions(x)
    e = float32_error(biased)
    d = x.shape[1]
    bessel = np.sqrt(d / (d - 1)) if d > 1 else np.nan  # D - 1 widens each error so much
    square = root_mean_square(x)
    centred = tuple(c.key for c in CONVENTIONS if c.centred)
    uses_biased = tuple(c.key for c in CONVENTIONS if c.centred and not c.unbiased)
    uses_unbiased = tuple(c.key for c in CONVENTIONS if c.centred and c.unbiased)
    uncentred = tuple(c.key for c in CONVENTIONS if not c.centred)
    sd, sd_u = biased.std[:, 0], unbiased.std[:, 0]
    with np.errstate(all="ignore"):
        var_slack = e * (2 * sd + e)  # (σ + e)² - σ²
        var_u_slack = bessel**2 * e * (2 * sd + e)
        square_slack = e * (2 * square + e)
    found = {
        "mean": (Reading("mean", "mean", centred, biased.mean[:, 0], e),),
        "var": (
            Reading("biased", "biased variance (÷D)", uses_biased, biased.var[:, 0], var_slack),
            Reading(
                "unbiased",
                "unbiased variance (÷(D−1))",
                uses_unbiased,
                unbiased.var[:, 0],
                var_u_slack,
            ),
            Reading("mean_square", "mean of squares", uncentred, square**2, square_slack),
        ),
        "std": (
            Reading("biased", "biased std (÷D)", uses_biased, sd, e),
            Reading("unbiased", "unbiased std (÷(D−1))", uses_unbiased, sd_u, bessel * e),
            *(
                Reading(
                    r.convention.key,
                    f"{r.convention.name}: divided by",
                    (r.convention.key,),
                    r.denominator,
                    _widen(r.convention, bessel) * e,
                )
                for r in comparison.runs
            ),
        ),
        "out": tuple(
            Reading(
                r.convention.key,
                f"{r.convention.name}: output",
                (r.convention.key,),
                r.y,
                _output_slack(
                    e, r.y, r.denominator, _floor(r.convention), _widen(r.convention, bessel)
                ),
            )
            for r in comparison.runs
        ),
    }
    return {q: tuple(_stored(r) for r in rs) for q, rs in found.items()}


def _stored(r: Reading) -> Reading:
    """`r` with room for float32 storing the value itself (and ε): K u |value| more."""
    with np.errstate(all="ignore"):
        return replace(r, slack=r.slack + ROUNDINGS * UNIT_ROUNDOFF * np.abs(r.value))


def _widen(c: Convention, bessel: float) -> float:
    """How much more than e a convention's denominator may move: √(D/(D−1)) with D − 1."""
    return bessel if c.unbiased else 1.0


def _floor(c: Convention) -> float:
    """The least denominator a convention's ε allows: ε on the std, else √ε."""
    return c.eps if c.eps_outside else float(np.sqrt(c.eps))


def _ratio(error: float, tolerance: float) -> float:
    """error / tolerance, with 0 / 0 = 0 (an exact claim held exactly) and NaN as ∞."""
    if not np.isfinite(error):
        return np.inf
    return error / tolerance if tolerance > 0 else (0.0 if error == 0 else np.inf)


def judge(claim: Claim, options: tuple[Reading, ...]) -> Verdict:
    """Which readings the claim rounds from (within half a unit plus each reading's float32
    slack), and the closest one in its own tolerance.

    The first of `options` is the usual Layer Norm reading (biased, PyTorch's output).
    """
    index = (claim.token,) if claim.feature is None else (claim.token, claim.feature)
    truths = [float(r.value[index]) for r in options]
    tolerances = [claim.half_unit + float(np.nan_to_num(r.slack[index])) for r in options]
    ratios = [_ratio(abs(t - claim.value), tol) for t, tol in zip(truths, tolerances, strict=True)]
    matched = [r for r, q in zip(options, ratios, strict=True) if q <= 1]
    closest = int(np.argmin(ratios))
    return Verdict(
        claim,
        tuple(r.key for r in matched),
        tuple(c.key for c in CONVENTIONS if any(c.key in r.conventions for r in matched)),
        truths[0],
        options[closest].label,
        truths[closest],
        tolerances[closest],
    )


def written_numbers(text: str) -> list[str]:
    """The numbers of `text` as written (inside the brackets of a literal, if it has any)."""
    if "[" in text and "]" in text:
        text = text[text.index("[") : text.rindex("]") + 1]
    return _WRITTEN.findall(text.replace("\u2212", "-"))


def parse_claims(text: str, quantity: str, shape: tuple[int, ...]) -> list[Claim]:
    """The claims in `text` for a quantity of `shape`: (T,) statistics or (T, D) outputs."""
    if not text.strip():
        return []
    name = QUANTITIES[quantity]
    try:
        values = parse_embeddings(text).ravel()
    except InputError as err:
        raise InputError(f"claimed {name}: {err}") from err
    written = written_numbers(text)
    if len(written) != values.size:
        raise InputError(
            f"claimed {name}: could not tell how each number was written; "
            "paste the numbers alone, separated by commas or spaces"
        )
    expected = int(np.prod(shape))
    if values.size != expected:
        what = "one per feature of every token" if len(shape) == 2 else "one per token"
        raise InputError(
            f"claimed {name}: {values.size} numbers, but the vector needs {expected} ({what})"
        )
    positions = np.ndindex(shape)
    return [
        Claim(quantity, pos[0], pos[1] if len(pos) == 2 else None, w, float(v))
        for pos, w, v in zip(positions, written, values, strict=True)
    ]


def check_claims(
    x_text: str,
    mean_text: str = "",
    std_text: str = "",
    var_text: str = "",
    out_text: str = "",
    labels: tuple[str, ...] | None = None,
) -> CheckResult:
    """Check a tutorial's claimed statistics (one per token) and outputs for tokens x_text.

    Blank claim texts are skipped. Each claim is judged against every reading of its
    quantity (see `readings`): it holds under the conventions whose reading rounds to it.
    """
    try:
        x = parse_embeddings(x_text)
    except InputError as err:
        raise InputError(f"vector: {err}") from err
    tokens = x.shape[0]
    labels = labels if labels is not None and len(labels) == tokens else _row_labels(tokens)
    options = readings(x)
    claims = [
        *parse_claims(mean_text, "mean", (tokens,)),
        *parse_claims(var_text, "var", (tokens,)),
        *parse_claims(std_text, "std", (tokens,)),
        *parse_claims(out_text, "out", x.shape),
    ]
    verdicts = tuple(judge(c, options[c.quantity]) for c in claims)
    return CheckResult(x, tuple(labels), options, verdicts)


def _row_labels(n: int) -> tuple[str, ...]:
    return ("x",) if n == 1 else tuple(f"row {i}" for i in range(1, n + 1))


def claim_name(claim: Claim, labels: tuple[str, ...]) -> str:
    """A short name for where a claim sits: "std, row 2" or "output 3, row 1"."""
    what = QUANTITIES[claim.quantity]
    if claim.feature is not None:
        what = f"{what} {claim.feature + 1}"
    return what if len(labels) == 1 else f"{what}, {labels[claim.token]}"


def verdict_table(result: CheckResult) -> pd.DataFrame:
    """One row per claim: as written, tolerance, verdict, conventions, true values."""
    names = {c.key: c.short for c in CONVENTIONS}
    return pd.DataFrame(
        [
            {
                "claim": claim_name(v.claim, result.labels),
                "written": v.claim.written,
                "± tolerance": v.tolerance,
                "verdict": "holds" if v.holds else "wrong",
                "holds under": ", ".join(names[k] for k in v.conventions) or "none",
                "Layer Norm value": v.usual_value,
                "closest reading": v.nearest,
                "its value": v.nearest_value,
            }
            for v in result.verdicts
        ],
        columns=[
            "claim",
            "written",
            "± tolerance",
            "verdict",
            "holds under",
            "Layer Norm value",
            "closest reading",
            "its value",
        ],
    )


def tally_table(result: CheckResult) -> pd.DataFrame:
    """For each convention, how many of the claims hold under it."""
    return pd.DataFrame(
        [
            {
                "convention": c.name,
                "claims that hold": result.holding_under(c.key),
                "of": len(result.verdicts),
            }
            for c in CONVENTIONS
        ]
    )


def readings_table(result: CheckResult) -> pd.DataFrame:
    """The true statistics of every row under every reading: the values claims are held to."""
    rows = {"mean": result.readings["mean"][0].value}
    for quantity in ("var", "std"):
        for r in result.readings[quantity]:
            rows[r.label] = r.value
    return pd.DataFrame(rows, index=list(result.labels)).T


def quantity_table(result: CheckResult) -> pd.DataFrame:
    """The verdicts in brief, one row per quantity claimed: how many hold, and the
    conventions under which every claim about it holds (what a slide has room for)."""
    names = {c.key: c.short for c in CONVENTIONS}
    rows = []
    for quantity, name in QUANTITIES.items():
        verdicts = [v for v in result.verdicts if v.claim.quantity == quantity]
        if verdicts:
            everywhere = [k for k in names if all(k in v.conventions for v in verdicts)]
            rows.append(
                {
                    "claims that hold": f"{sum(v.holds for v in verdicts)} of {len(verdicts)} "
                    + (name if len(verdicts) == 1 else f"{name}s"),
                    "all hold under": ", ".join(names[k] for k in everywhere) or "none",
                }
            )
    return pd.DataFrame(rows, columns=["claims that hold", "all hold under"])


def summary(result: CheckResult) -> tuple[bool, str]:
    """(whether one convention explains every claim, the verdict in one sentence)."""
    names = ", ".join(c.name for c in CONVENTIONS if c.key in result.consistent)
    wrong = sum(not v.holds for v in result.verdicts)
    some = claim(
        "conventions.wrong_everywhere",
        wrong > 0,
        f"; {wrong} {'claim is' if wrong == 1 else 'claims are'} wrong under every "
        "convention, by more than float32's rounding explains",
        wrong=wrong,
    )
    every = claim(
        "conventions.consistent",
        bool(result.consistent),
        f"Every claim holds under: {names}.",
        f"No single convention explains every claim{some}.",
    )
    held = len(result.verdicts) - wrong
    return bool(result.consistent), f"{held} of {len(result.verdicts)} claims hold. {every}"
