"""Cases for the node tests of the page's JavaScript (tests/js/*.test.mjs), written by Python.

`python -m tests.js.cases DIR` writes, from a fixed seed:

- ``tokens.f64`` and ``tokens.txt``: at least 100,000 random tokens plus the hard ones (constant
  tokens, D = 1, epsilon 0, 1e-6 and 1e6 scales, 1e8 + x, 1e200, 1e-200 and subnormal values,
  integer tokens whose means are exact ties at 4 decimals), each computed by
  lnlab.layer_norm_trace (numpy, float64). ``tokens.f64`` holds one record per token, float64
  little-endian: D, eps, x (D), gamma (D), beta (D), then numpy's mean, var, std, x_hat (D) and
  y (D); ``tokens.txt`` holds lnlab.core.numbers.fmt of each of those results, one a line, in
  the same order: what the page shows.
- ``numbers.json``: [value, scale, fmt(value, scale)] for values chosen to catch the formatter
  out: exact ties at 4 decimals and at 4 significant digits, the edges of the fixed range, zero
  up to rounding, signs, NaN and infinities, and random values of every size.
- ``steps.json``: for 2,000 tokens, numpy's trace numbers and the five formulas
  lnlab.teach.steps.written_steps writes with them, and the step-through's summary line.
- ``padding.json``: for 200 random padded batches, each batch's rows (PAD or not, values) as
  lnlab.labs.padding.live sends them, and for every statistic one can pick (each feature naive
  and masked, each token row) Python's mean and variance and the three formulas
  lnlab.labs.padding.lesson.statistic_latex writes with them.
- ``mathml.json``: every formula of those two, and each step's rule, with the pieces
  lnlab.teach.mathml.pieces cuts it into (where a line may break).
"""

from __future__ import annotations

import json
import struct
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from lnlab.core.norms import layer_norm_trace
from lnlab.core.numbers import fmt, shortest
from lnlab.labs.padding import batch as pad
from lnlab.labs.padding import live as padding_live
from lnlab.labs.padding.lesson import statistic_latex
from lnlab.labs.step_through.token import token_lesson, token_summary
from lnlab.teach.mathml import pieces
from lnlab.teach.steps import STEPS, written_steps

SEED = 20261126
TOKENS = 100_000
STEP_TOKENS = 2_000
PADDING_BATCHES = 200
EPS_CHOICES = (0.0, 1e-5, 1e-12, 1e-3, 0.1, 1.0)


def _features(rng: np.random.Generator) -> int:
    """D: mostly the few features a lesson shows, sometimes up to the page's 64."""
    band = rng.choice(3, p=(0.4, 0.4, 0.2))
    return int(rng.integers(*((1, 5), (5, 17), (17, 65))[band]))


def _values(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """n tokens of d features, in one of the ways a person or a model writes numbers."""
    kind = rng.choice(5)
    if kind == 0:  # small integers, as typed: 2, 4, 6, 8
        return rng.integers(-20, 21, size=(n, d)).astype(np.float64)
    if kind == 1:  # a few decimals: 0.1, 2.5
        return np.round(rng.normal(size=(n, d)) * 5, int(rng.integers(1, 4)))
    if kind == 2:  # an offset far from 0: 1e4 + x, 1e6 + x
        offset = float(rng.choice((1e4, -1e4, 1e6, 1e8)))
        return offset + rng.normal(size=(n, d)) * 10 ** rng.uniform(-3, 2)
    scale = 10 ** rng.uniform(-8, 8)  # any size, 1e-6 and 1e6 included
    return rng.normal(size=(n, d)) * scale


def _setting(rng: np.random.Generator, d: int, default: float) -> np.ndarray:
    """gamma or beta: the default, one value for every feature, or one per feature."""
    kind = rng.choice(3)
    if kind == 0:
        return np.full(d, default)
    if kind == 1:
        return np.full(d, round(float(rng.normal() * 2), 2))
    return rng.normal(size=d) * 10 ** rng.uniform(-2, 2)


def _eps(rng: np.random.Generator) -> float:
    if rng.random() < 0.6:
        return float(rng.choice(EPS_CHOICES))
    return float(10 ** rng.uniform(-10, 0))


def random_batches(rng: np.random.Generator, tokens: int) -> Iterator[tuple]:
    """(x, gamma, beta, eps) batches of 1 to 64 tokens sharing D, gamma, beta and eps."""
    made = 0
    while made < tokens:
        d, n = _features(rng), int(min(rng.integers(1, 65), tokens - made))
        yield _values(rng, n, d), _setting(rng, d, 1.0), _setting(rng, d, 0.0), _eps(rng)
        made += n


def hard_batches() -> Iterator[tuple]:
    """The cases that break naive code, each with several epsilons."""
    rows = [
        [3.0, 3.0, 3.0, 3.0],  # constant: x_hat = 0, or NaN with eps = 0
        [-7.5] * 16,
        [0.0, 0.0],
        [1e6 + 1, 1e6 + 2, 1e6 + 3, 1e6 + 4],  # 1e6 scale
        [1e-6, 2e-6, 3e-6, 4e-6],  # 1e-6 scale
        [1e8 + 2, 1e8 + 4, 1e8 + 6, 1e8 + 8],  # shifted: the same answer as 2, 4, 6, 8
        [1e200, -1e200, 3e200, 5e200],  # squares overflow
        [1e-200, -1e-200, 3e-200, 5e-200],  # squares underflow
        [1e-310, 2e-310, 3e-310, 4e-310],  # subnormal
        [1.7e308, -1.7e308, 1e308, 0.0],  # near the largest float
        [1e300, 1.0, -1e-300, 2.0],
        [2.0, 4.0, 6.0, 8.0],  # the default token
        [1.0] * 31 + [2.0],  # mean 1.03125: a tie at 4 decimals
        [0.0] * 31 + [1.0],  # mean 0.03125
        [0.0] * 63 + [-2.0],  # mean -0.03125
    ]
    for row in rows:
        x = np.array([row])
        for eps in (0.0, 1e-5, 1.0):
            yield x, np.ones(x.shape[1]), np.zeros(x.shape[1]), eps
            yield x, np.full(x.shape[1], 2.0), np.full(x.shape[1], 0.5), eps
    for d in (1, 2, 64):  # D = 1: x_hat is 0 (or NaN with eps = 0)
        x = np.random.default_rng(d).normal(size=(8, d)) * 3
        for eps in (0.0, 1e-5):
            yield x, np.ones(d), np.zeros(d), eps


def write_tokens(out: Path, rng: np.random.Generator) -> int:
    """tokens.f64 and tokens.txt; returns how many tokens."""
    numbers: list[float] = []
    shown: list[str] = []
    count = 0
    batches = [*hard_batches(), *random_batches(rng, TOKENS)]
    with np.errstate(all="ignore"):
        for x, gamma, beta, eps in batches:
            t = layer_norm_trace(x, gamma, beta, eps)
            d = x.shape[1]
            for i in range(x.shape[0]):
                results = [t.mean[i, 0], t.var[i, 0], t.std[i, 0], *t.x_hat[i], *t.y[i]]
                numbers += [d, eps, *x[i], *gamma, *beta, *results]
                shown += [fmt(v) for v in results]
                count += 1
    (out / "tokens.f64").write_bytes(struct.pack(f"<{len(numbers)}d", *numbers))
    (out / "tokens.txt").write_text("\n".join(shown) + "\n", encoding="utf-8")
    return count


def number_cases(rng: np.random.Generator) -> list[list]:
    """[value, scale, fmt(value, scale), shortest(value)], scale None (the value's own)
    unless said."""
    values: list[float] = []
    odd = np.arange(-4001, 4002, 2)
    values += list(odd / 32)  # exact ties at 4 decimals: ..., -0.03125, 0.03125, 0.09375, ...
    values += list((np.arange(1, 2000, 2) * 1e6 + 1) / 32)  # large ones: 31250.03125, ...
    # integers exactly halfway at 4 significant digits: 1234500, 99995000, ...
    values += [
        float((10 * k + 5) * 10 ** (e - 4)) for k in (1234, 9999, 1000, 2500) for e in (6, 7, 12)
    ]
    values += [-v for v in values[-12:]]
    values += [1234500.0, 1235500.0, 9999500.0, 9998500.0, 1e6, 999999.99995, 999999.99996]
    values += [1e-4, 9.99996e-5, 9.99994e-5, 0.00015, 0.00025, 0.00035, -0.00025, 5e-5]
    values += [1e-5, 2e-5, 1e-9, 1e-10, -1e-9, 1.1e-9, 5e-324, 1.7976931348623157e308]
    values += [0.0, -0.0, 0.5, 2.5, -2.5, 1.00005, 2.00005, 2.2360679774997896]
    values += [k / 2**e for e in range(4, 14) for k in range(1, 400, 2) if 1e-4 <= k / 2**e < 0.1]
    values += [float(v) for v in rng.normal(size=4000) * 10 ** rng.uniform(-12, 12, size=4000)]
    values += [float(v) for v in np.round(rng.normal(size=2000) * 100, 5)]
    cases = [[v, None, fmt(v)] for v in values]
    scaled = ((1e-9, 10.0), (5e-9, 10.0), (2e-8, 10.0), (1e-12, 1e-3), (-5.6e-17, 1.0))
    cases += [[v, s, fmt(v, s)] for v, s in scaled]
    specials = [[float("nan"), None, fmt(float("nan"))]]
    specials += [[float("inf"), None, fmt(float("inf"))], [float("-inf"), None, fmt(float("-inf"))]]
    return [[*c, shortest(c[0])] for c in (*cases, *specials)]


def step_cases(rng: np.random.Generator) -> list[dict]:
    """Tokens with numpy's trace numbers, the written steps and the summary line."""
    cases = []
    for x, gamma, beta, eps in hard_batches():
        cases += _written(x[:1], gamma, beta, eps)
    for x, gamma, beta, eps in random_batches(rng, STEP_TOKENS):
        for row in x:
            cases += _written(row[None, :], gamma, beta, eps)
    return cases


def _written(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> list[dict]:
    with np.errstate(all="ignore"):
        lesson = token_lesson(x, ["t1"], 0, eps, gamma, beta)
    t = layer_norm_trace(x, gamma, beta, eps)
    return [
        {
            "x": [float(v) for v in x[0]],
            "gamma": [float(v) for v in gamma],
            "beta": [float(v) for v in beta],
            "eps": eps,
            "mean": float(t.mean[0, 0]),
            "var": float(t.var[0, 0]),
            "std": float(t.std[0, 0]),
            "xHat": [float(v) for v in t.x_hat[0]],
            "y": [float(v) for v in t.y[0]],
            "latex": [s.latex for s in written_steps(t, 0)],
            "summary": token_summary(lesson),
        }
    ]


def padding_cases(rng: np.random.Generator) -> list[dict]:
    """Random padded batches (1-8 sentences of 1-16 words, embeddings of every size a user can
    type), each with every statistic one can pick and the formulas Python writes for it."""
    cases = []
    words = [f"w{k}" for k in range(40)]
    for _ in range(PADDING_BATCHES):
        sentences = tuple(
            tuple(rng.choice(words, size=int(rng.integers(1, pad.MAX_WORDS + 1))).tolist())
            for _ in range(int(rng.integers(1, pad.MAX_SENTENCES + 1)))
        )
        used = sorted({w for s in sentences for w in s})
        values = _values(rng, len(used), pad.DIM)
        values = np.clip(values, -pad.MAX_ABS_VALUE, pad.MAX_ABS_VALUE)
        overrides = tuple(
            (w, tuple(float(v) for v in row)) for w, row in zip(used, values, strict=True)
        )
        lab = pad.padding_lab(sentences, "hi-nitish", overrides)
        stats = padding_live.statistics(lab)
        picks = []
        for pick, listed in stats.items():
            for index, s in enumerate(listed):
                latex = statistic_latex(lab, pick, index)
                picks.append({"pick": pick, "index": index, **s, "latex": list(latex)})
        rows = [
            {"pad": not real, "values": row}
            for real, row in zip(lab.real.tolist(), lab.tokens.tolist(), strict=True)
        ]
        cases.append({"rows": rows, "features": list(pad.FEATURES), "picks": picks})
    return cases


def formula_cases(steps: list[dict], padding: list[dict]) -> list[list]:
    """[LaTeX, its pieces as lnlab.teach.mathml.pieces cuts them] for every formula above and
    the rules' own (lnlab.teach.steps)."""
    found = {s.formula for s in STEPS}
    found.update(tex for c in steps for tex in c["latex"])
    found.update(tex for c in padding for p in c["picks"] for tex in p["latex"])
    return [[tex, pieces(tex)] for tex in sorted(found)]


def _json(value: object) -> str:
    """JSON that JavaScript's JSON.parse reads: NaN and the infinities as {"float": "nan"},
    {"float": "inf"} and {"float": "-inf"} (tests/js/cases.mjs turns them back into numbers)."""

    def clean(v: object) -> object:
        if isinstance(v, float) and not np.isfinite(v):
            return {"float": str(v)}
        if isinstance(v, list):
            return [clean(a) for a in v]
        if isinstance(v, dict):
            return {k: clean(a) for k, a in v.items()}
        return v

    return json.dumps(clean(value), allow_nan=False)


def write(out: Path) -> dict:
    """Write every file into `out`; returns what was written, for the tests to check."""
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEED)
    tokens = write_tokens(out, rng)
    numbers = number_cases(rng)
    (out / "numbers.json").write_text(_json(numbers), encoding="utf-8")
    steps = step_cases(rng)
    (out / "steps.json").write_text(_json(steps), encoding="utf-8")
    padding = padding_cases(rng)
    (out / "padding.json").write_text(_json(padding), encoding="utf-8")
    picks = sum(len(c["picks"]) for c in padding)
    formulas = formula_cases(steps, padding)
    (out / "mathml.json").write_text(_json(formulas), encoding="utf-8")
    counts = {
        "tokens": tokens,
        "numbers": len(numbers),
        "steps": len(steps),
        "picks": picks,
        "formulas": len(formulas),
    }
    (out / "counts.json").write_text(json.dumps(counts), encoding="utf-8")
    return counts


if __name__ == "__main__":
    print(json.dumps(write(Path(sys.argv[1]))))
