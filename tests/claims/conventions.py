"""The conventions lab's claims, checked on the corpus's tokens and real printouts.

A case is a token input (tests/claims/corpus.py and this lab's own: 1e-3 and 1e-4 scales,
where ε decides which convention divides by more) with the numbers a tutorial printed for the
checker: the ready-made tutorial cases, and float32 printouts of Keras on 100.1 ... 100.4,
right and with one output wrong. Each check works from the raw input in float64 numpy, with
every convention's formula written out here; "constant" means every feature equal.

The checker's verdicts are recomputed here too: a claim holds under a convention when it lies
within half a unit of its last written digit plus the slack of a float32 printout, whose rule
(lnlab/labs/conventions/checker.py) is written out again below. A verdict that a fifth more or
less slack would turn is refused as too close to call, so no case here rests on the margin.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from claims.corpus import TOKENS, Tokens
from lnlab.labs.conventions.cases import CHECK_CASES, CheckCase
from lnlab.labs.conventions.checker import check_claims
from lnlab.labs.conventions.compare import compare_axes, compare_conventions
from lnlab.labs.conventions.lesson import slides
from lnlab.teach.claims import Said
from lnlab.teach.lesson import Lesson

U = 2.0**-24  # float32's unit roundoff
K = 6  # the checker's ROUNDINGS: its measured float32 error, with room
PYTORCH, KERAS, BERT, SMALL = 1e-5, 1e-3, 1e-12, 1e-6  # ε: Annotated's and NumPy's is SMALL
CENTRED = ("pytorch", "keras", "bert", "annotated", "numpy")
BIASED = ("pytorch", "keras", "bert", "numpy")

OWN = [
    Tokens("1e-3 scale, 16 features", 1e-3 * np.random.default_rng(3).standard_normal((2, 16))),
    Tokens("1e-4 scale, feature at the mean", [2e-4, 1e-4, 3e-4]),
    # Bessel's crossover: PyTorch's ε weighs more than D − 1 below σ² ≈ 3e-5, less above
    Tokens("0.0045 scale: below the crossover", 0.0045 * np.array([1.0, 2.0, 3.0, 4.0])),
    Tokens("0.005 scale: above the crossover", 0.005 * np.array([1.0, 2.0, 3.0, 4.0])),
    Tokens("0.05 scale, 64 features", 0.05 * np.random.default_rng(4).standard_normal((1, 64))),
]


KERAS_100 = "100.1, 100.2, 100.3, 100.4"
# Keras's float32 arithmetic, x * inv + (-mean * inv) with inv = 1 / √(var + 1e-3), printed
# as NumPy prints float32: off from float64 by about 1e-4 (tests/labs/conventions/test_slack.py)
KERAS_FLOAT32 = "-1.2908936, -0.43023682, 0.43041992, 1.2910767"


def _printout(name: str, x: str, **claims: str) -> CheckCase:
    """A printout of this test's own, as the checker's boxes take it (a tutorial's have
    their source and title)."""
    return CheckCase(name, name, "", x, **claims)


PRINTOUTS = [
    *CHECK_CASES,
    _printout("Keras float32 on 100.1 ... 100.4", KERAS_100, out=KERAS_FLOAT32),
    _printout(
        "Keras float32, one output wrong",
        KERAS_100,
        out=KERAS_FLOAT32.replace("1.2910767", "1.2810767"),
    ),
    _printout("mean and std of 100.1 ... 100.4", KERAS_100, mean="100.25", std="0.1118"),
    _printout(  # each claim holds, but under different conventions
        "x.std() beside PyTorch's outputs",
        "2, 4, 6, 8",
        std="2.582",
        out="-1.3416, -0.4472, 0.4472, 1.3416",
    ),
]


@dataclass(frozen=True, eq=False)
class Case:
    """A token input with the printout the checker is given."""

    tokens: Tokens
    printout: CheckCase

    def __repr__(self) -> str:
        return f"{self.tokens.name} / {self.printout.key}"


def cases() -> list[Case]:
    inputs = [*TOKENS, *OWN]
    return [Case(t, PRINTOUTS[i % len(PRINTOUTS)]) for i, t in enumerate(inputs)]


def lessons(case: Case) -> Iterator[Lesson]:
    x, p = case.tokens.x, case.printout
    check = check_claims(p.x, p.mean, p.std, p.var, p.out)
    yield slides(compare_conventions(x), case.tokens.token, compare_axes(x), check)


# ---------------------------------------------------------------- the token's own numbers


def constant(row: np.ndarray) -> bool:
    return bool(np.all(row == row[0]))


def outputs(row: np.ndarray) -> dict[str, np.ndarray]:
    """Every centred convention's outputs for one token, each formula written out."""
    centred = row - row.mean()
    var, var_u = np.var(row), (np.var(row, ddof=1) if row.size > 1 else np.nan)
    return {
        "pytorch": centred / np.sqrt(var + PYTORCH),
        "keras": centred / np.sqrt(var + KERAS),
        "bert": centred / np.sqrt(var + BERT),
        "annotated": centred / (np.sqrt(var_u) + SMALL),
        "numpy": centred / (np.sqrt(var) + SMALL),
    }


def _overlap(case: Case, said: Said) -> bool:
    """BERT's and the NumPy class's outputs within 1% of the tallest PyTorch bar."""
    y = outputs(case.tokens.row)
    top = np.max(np.abs(y["pytorch"]))
    return all(np.max(np.abs(y[k] - y["pytorch"])) <= 0.01 * top for k in ("bert", "numpy"))


def _annotated_vs_pytorch(case: Case) -> float:
    """The Annotated Transformer's denominator minus PyTorch's (NaN for D = 1)."""
    row = case.tokens.row
    if row.size == 1:
        return np.nan
    return np.std(row, ddof=1) + SMALL - np.sqrt(np.var(row) + PYTORCH)


def _apart(case: Case) -> bool:
    return case.tokens.row.size > 1 and not constant(case.tokens.row)


def _eps_constant(case: Case, said: Said) -> bool:
    """A constant token; else the ε slide gives factors under 1, none of which may read 1."""
    assert not re.search(r"(PyTorch|Keras|BERT) 1[,.](?!\d)", said.text), said.text
    return constant(case.tokens.row)


# ---------------------------------------------------------------- the checker's verdicts


def _half_unit(written: str) -> float:
    mantissa, _, exponent = written.lower().lstrip("+-").partition("e")
    return 0.5 * 10.0 ** (int(exponent or 0) - len(mantissa.partition(".")[2]))


_WRITTEN = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _claims(text: str) -> list[str]:
    return _WRITTEN.findall(text.replace("\u2212", "-"))


def _readings(row: np.ndarray) -> dict[str, list[tuple[tuple[str, ...], float, float]]]:
    """Per quantity: (conventions, value, float32 slack) for every way it is computed."""
    d, mu = row.size, row.mean()
    centred = row - mu
    e = K * U * (abs(mu) + np.max(np.abs(centred)))
    var, sd = np.var(row), np.std(row)
    bessel = np.sqrt(d / (d - 1)) if d > 1 else np.nan
    var_u, sd_u = var * bessel**2, sd * bessel
    ms = np.mean(row**2)
    dens = {
        "pytorch": (np.sqrt(var + PYTORCH), 1.0, np.sqrt(PYTORCH)),
        "keras": (np.sqrt(var + KERAS), 1.0, np.sqrt(KERAS)),
        "bert": (np.sqrt(var + BERT), 1.0, np.sqrt(BERT)),
        "annotated": (sd_u + SMALL, bessel, SMALL),
        "numpy": (sd + SMALL, 1.0, SMALL),
        "rmsnorm": (np.sqrt(ms + PYTORCH), 1.0, np.sqrt(PYTORCH)),
    }
    ys = outputs(row) | {"rmsnorm": row / dens["rmsnorm"][0]}
    out = []
    for key, (den, widen, floor) in dens.items():
        lowest = max(den - widen * e, floor)
        out.append(((key,), ys[key], e * (1 + widen * np.abs(ys[key])) / lowest))
    return {
        "mean": [(CENTRED, mu, e)],
        "var": [
            (BIASED, var, e * (2 * sd + e)),
            (("annotated",), var_u, bessel**2 * e * (2 * sd + e)),
            (("rmsnorm",), ms, e * (2 * np.sqrt(ms) + e)),
        ],
        "std": [
            (BIASED, sd, e),
            (("annotated",), sd_u, bessel * e),
            *(((k,), den, widen * e) for k, (den, widen, _) in dens.items()),
        ],
        "out": out,
    }


def _held_under(p: CheckCase, room: float) -> list[set[str]]:
    """For each claim of the printout, the conventions it holds under, with `room` times the
    float32 slack (plus float32 storing the value itself)."""
    x = _rows(p.x)
    held = []
    for quantity in ("mean", "var", "std", "out"):
        for n, w in enumerate(_claims(getattr(p, quantity))):
            token, feature = divmod(n, x.shape[1]) if quantity == "out" else (n, None)
            found = set()
            for keys, value, slack in _readings(x[token])[quantity]:
                v = float(value if feature is None else value[feature])
                s = float(slack if feature is None else slack[feature])
                tolerance = _half_unit(w) + room * (np.nan_to_num(s) + K * U * abs(v))
                if abs(v - float(w)) <= tolerance:
                    found |= set(keys)
            held.append(found)
    return held


def _rows(text: str) -> np.ndarray:
    """A printout's tokens: its innermost brackets, or else its lines."""
    inner = re.findall(r"\[([^\[\]]*)\]", text) or text.splitlines()
    return np.array([[float(v) for v in _claims(r)] for r in inner])


def _verdicts(case: Case, condition: Callable[[list[set[str]]], bool]) -> bool:
    """`condition` of the verdicts, refused when a fifth more or less slack would turn it."""
    found = {condition(_held_under(case.printout, room)) for room in (0.8, 1.0, 1.25)}
    assert len(found) == 1, f"{case!r}: a verdict too close to call"
    return found.pop()


def _consistent(held: list[set[str]]) -> bool:
    return bool(held) and bool(set.intersection(*held))


def _some_wrong(held: list[set[str]]) -> bool:
    return any(not h for h in held)


CHECKS: dict[str, Callable[[Case, Said], bool]] = {
    "conventions.overlap": _overlap,
    "conventions.var_finite": lambda c, s: bool(np.isfinite(np.var(c.tokens.row))),
    "conventions.eps_constant": _eps_constant,
    "conventions.bessel_nan": lambda c, s: c.tokens.row.size == 1,
    "conventions.bessel_constant": lambda c, s: c.tokens.row.size > 1 and constant(c.tokens.row),
    "conventions.bessel_smaller": lambda c, s: _apart(c) and _annotated_vs_pytorch(c) > 0,
    "conventions.bessel_larger": lambda c, s: _apart(c) and _annotated_vs_pytorch(c) < 0,
    "figures.some_nan": lambda c, s: False,  # ε = 1e-5 > 0 and finite tokens: no NaN output
    "conventions.consistent": lambda c, s: _verdicts(c, _consistent),
    "conventions.wrong_everywhere": lambda c, s: _verdicts(c, _some_wrong),
    "conventions.wrong_listed": lambda c, s: _verdicts(c, _some_wrong),
}
