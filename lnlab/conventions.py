"""The Layer Norm conventions people meet, and a checker for the numbers tutorials print.

Three tools, each one function from plain values to a plain result:

* `compare_conventions(x)`: the same tokens through PyTorch, Keras, BERT, the Annotated
  Transformer, a NumPy tutorial and RMSNorm, and how far each lands from PyTorch.
* `compare_axes(x)`: per-token Layer Norm against normalizing over the last two axes, as the
  PyTorch notebook of seed 001 does.
* `check_claims(x_text, ...)`: which of a tutorial's claimed statistics and outputs hold, and
  under which convention. A claim written with k decimals holds when the truth rounds to it.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lnlab.errors import InputError
from lnlab.latex import num
from lnlab.norms import LayerNormTrace, layer_norm_steps, rms_norm
from lnlab.parse import parse_embeddings

# ---------------------------------------------------------------- the conventions


@dataclass(frozen=True)
class Convention:
    """One way to normalize a token: where epsilon goes, which variance, whether to centre."""

    key: str
    name: str
    short: str
    eps: float
    source: str
    centred: bool = True  # False: RMSNorm divides x itself, no mean is subtracted
    unbiased: bool = False  # the variance divides by D - 1 (Bessel), as x.std() does
    eps_outside: bool = False  # the denominator is std + eps, not sqrt(var + eps)

    @property
    def formula(self) -> str:
        """The convention as LaTeX, with its epsilon written out."""
        eps = _power_of_ten(self.eps)
        if not self.centred:
            return rf"y_i = \frac{{x_i}}{{\sqrt{{\frac{{1}}{{D}}\sum_j x_j^2 + {eps}}}}}"
        var = (
            r"\frac{1}{D-1}\sum_j (x_j - \mu)^2"
            if self.unbiased
            else r"\frac{1}{D}\sum_j (x_j - \mu)^2"
        )
        denominator = rf"\sqrt{{{var}}} + {eps}" if self.eps_outside else rf"\sqrt{{{var} + {eps}}}"
        return rf"y_i = \frac{{x_i - \mu}}{{{denominator}}}"

    def differences_from(self, other: Convention) -> str:
        """What this convention does differently from `other`, in words ("" if nothing)."""
        if not self.centred:
            return f"no mean subtracted: divides x by its root mean square; eps {self.eps:g}"
        notes = []
        if self.eps != other.eps:
            notes.append(f"eps {self.eps:g}")
        if self.unbiased != other.unbiased:
            notes.append("unbiased variance (D - 1)" if self.unbiased else "biased variance (D)")
        if self.eps_outside != other.eps_outside:
            notes.append("eps added to the std")
        return ", ".join(notes)

    def run(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mean, denominator, y) for tokens x of shape (T, D); mean is NaN for RMSNorm."""
        if not self.centred:
            return (
                np.full(x.shape[0], np.nan),
                root_mean_square(x, self.eps),
                rms_norm(x, eps=self.eps),
            )
        trace = layer_norm_steps(
            x, eps=self.eps, unbiased=self.unbiased, eps_outside=self.eps_outside
        )
        return trace.mean[:, 0], trace.std[:, 0], trace.y


def _power_of_ten(v: float) -> str:
    """1e-05 -> 10^{-5} in LaTeX, so every epsilon reads the same way; other numbers as num()."""
    exponent = round(np.log10(v)) if v > 0 else 0
    return f"10^{{{exponent}}}" if v > 0 and 10.0**exponent == v else num(v)


CONVENTIONS: tuple[Convention, ...] = (
    Convention("pytorch", "PyTorch nn.LayerNorm", "PyTorch", 1e-5, "torch.nn.LayerNorm"),
    Convention(
        "keras", "Keras LayerNormalization", "Keras", 1e-3, "keras.layers.LayerNormalization"
    ),
    Convention("bert", "BERT (TensorFlow)", "BERT", 1e-12, "the original BERT code (TensorFlow)"),
    Convention(
        "annotated",
        "Annotated Transformer",
        "Annotated",
        1e-6,
        "Harvard NLP's Annotated Transformer: a_2 * (x - mean) / (x.std() + eps) + b_2",
        unbiased=True,
        eps_outside=True,
    ),
    Convention(
        "numpy",
        "NumPy tutorial (seed 004)",
        "NumPy tutorial",
        1e-6,
        "(x - mean) / (np.std(x) + eps): np.std is biased",
        eps_outside=True,
    ),
    Convention(
        "rmsnorm",
        "RMSNorm (LLaMA, T5)",
        "RMSNorm",
        1e-6,
        "LLaMA and T5: x / sqrt(mean(x^2) + eps), no mean, no beta",
        centred=False,
    ),
)
REFERENCE = "pytorch"


def convention(key: str) -> Convention:
    """The convention called `key` (KeyError if none)."""
    return {c.key: c for c in CONVENTIONS}[key]


def root_mean_square(x: np.ndarray, eps: float = 0.0) -> np.ndarray:
    """sqrt(mean(x^2) + eps) per row, scaled by the largest magnitude so squares cannot overflow."""
    s = np.max(np.abs(x), axis=-1)
    s = np.where(s > 0, s, 1.0)
    u = x / s[:, None]
    return s * np.sqrt(np.mean(u * u, axis=-1) + eps / s / s)


def unbiased_ratio(d: int) -> float:
    """sqrt((D - 1) / D): the Annotated Transformer's outputs over PyTorch's, when eps is tiny.

    Dividing the variance by D - 1 instead of D makes the std larger by sqrt(D / (D - 1)).
    """
    return float(np.sqrt((d - 1) / d))


@dataclass(frozen=True)
class ConventionRun:
    """One convention applied to every token."""

    convention: Convention
    mean: np.ndarray  # (T,), NaN for RMSNorm
    denominator: np.ndarray  # (T,): what x - mean (or x) is divided by
    y: np.ndarray  # (T, D)
    max_abs_diff: float  # max |y - y_PyTorch| over every token and feature


@dataclass(frozen=True)
class ConventionComparison:
    """The same tokens through every convention."""

    x: np.ndarray
    runs: tuple[ConventionRun, ...]

    def run(self, key: str) -> ConventionRun:
        return next(r for r in self.runs if r.convention.key == key)


def compare_conventions(x: np.ndarray) -> ConventionComparison:
    """Every convention on tokens `x` (T, D), in float64, and its distance from PyTorch's."""
    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    results = [(c, *c.run(x)) for c in CONVENTIONS]
    reference = next(y for c, _, _, y in results if c.key == REFERENCE)
    runs = tuple(
        ConventionRun(c, mean, den, y, float(np.max(np.abs(y - reference))))
        for c, mean, den, y in results
    )
    return ConventionComparison(x, runs)


SETTING_COLUMNS = ("key", "eps", "unbiased", "eps outside", "mean subtracted")


def conventions_rows(comparison: ConventionComparison, labels: list[str]) -> list[dict]:
    """One row per convention and token: its settings, mean, denominator, outputs, and the
    distance from PyTorch (the rows of the CSV export; the mean is NaN for RMSNorm)."""
    d = comparison.x.shape[1]
    rows = []
    for run in comparison.runs:
        c = run.convention
        settings = dict(
            zip(SETTING_COLUMNS, (c.key, c.eps, c.unbiased, c.eps_outside, c.centred), strict=True)
        )
        for t, label in enumerate(labels):
            rows.append(
                {"convention": c.name}
                | settings
                | {"token": label, "mean": run.mean[t], "divided by": run.denominator[t]}
                | {f"y{i + 1}": run.y[t, i] for i in range(d)}
                | {"max |Δ| from PyTorch": run.max_abs_diff}
            )
    return rows


def comparison_table(comparison: ConventionComparison, labels: list[str]) -> pd.DataFrame:
    """One row per convention and token: mean, denominator, outputs, distance from PyTorch."""
    rows = pd.DataFrame(conventions_rows(comparison, labels))
    return rows.drop(columns=list(SETTING_COLUMNS))


def _finite_or_none(values: np.ndarray) -> list | None:
    """Nested lists for JSON, or None where the values are all NaN (RMSNorm has no mean)."""
    return None if np.all(np.isnan(values)) else values.tolist()


def conventions_json(comparison: ConventionComparison, labels: list[str]) -> str:
    """Every convention's settings and numbers for tokens x, as JSON."""
    return json.dumps(
        {
            "x": comparison.x.tolist(),
            "labels": list(labels),
            "conventions": [
                {
                    "key": r.convention.key,
                    "name": r.convention.name,
                    "eps": r.convention.eps,
                    "unbiased": r.convention.unbiased,
                    "eps_outside": r.convention.eps_outside,
                    "mean_subtracted": r.convention.centred,
                    "mean": _finite_or_none(r.mean),
                    "divided_by": r.denominator.tolist(),
                    "y": r.y.tolist(),
                    "max_abs_diff_from_pytorch": r.max_abs_diff,
                }
                for r in comparison.runs
            ],
        },
        indent=2,
    )


def torch_expression(c: Convention) -> str:
    """The convention in torch, on a float64 tensor x of shape (tokens, d)."""
    eps = repr(c.eps)
    if not c.centred:
        return f"F.rms_norm(x, (d,), eps={eps})"
    if not c.eps_outside and not c.unbiased:
        return f"F.layer_norm(x, (d,), eps={eps})"
    std = f"x.std(-1, keepdim=True, correction={int(c.unbiased)})"
    if c.eps_outside:
        return f"(x - x.mean(-1, keepdim=True)) / ({std} + {eps})"
    return f"(x - x.mean(-1, keepdim=True)) / ({std} ** 2 + {eps}).sqrt()"


_CONVENTIONS_SCRIPT = '''"""Reproduces lnlab's six Layer Norm conventions with PyTorch (float64).

Prints every convention's outputs as JSON: {{convention key: [[y of token 1], ...]}}.
"""

import json

import torch
import torch.nn.functional as F

x = torch.tensor({x}, dtype=torch.float64)  # one row per token
d = x.shape[-1]

outputs = {{
{outputs}
}}
print(json.dumps({{key: y.tolist() for key, y in outputs.items()}}))
'''


def conventions_script(x: np.ndarray) -> str:
    """A runnable script that computes tokens x under every convention with torch."""
    lines = "\n".join(f'    "{c.key}": {torch_expression(c)},  # {c.name}' for c in CONVENTIONS)
    rows = np.atleast_2d(np.asarray(x, dtype=np.float64)).tolist()
    return _CONVENTIONS_SCRIPT.format(x=repr(rows), outputs=lines)


def conventions_table(comparison: ConventionComparison) -> pd.DataFrame:
    """Each convention's settings and how far its outputs land from PyTorch's."""
    return pd.DataFrame(
        [
            {
                "convention": r.convention.name,
                "eps": r.convention.eps,
                "variance": "unbiased (D - 1)" if r.convention.unbiased else "biased (D)",
                "eps goes": "added to the std" if r.convention.eps_outside else "inside the root",
                "mean subtracted": r.convention.centred,
                "max |Δ| from PyTorch": r.max_abs_diff,
            }
            for r in comparison.runs
        ]
    )


# ---------------------------------------------------------------- which axes


@dataclass(frozen=True)
class AxesComparison:
    """Tokens (S, E) normalized per token, as the notebook's (S, 1, E), and as one (1, S, E)."""

    x: np.ndarray
    per_token: LayerNormTrace  # (S, E), dims=1: one group per token
    notebook: LayerNormTrace  # (S, 1, E), dims=2: groups (1, E), still one per token
    one_group: LayerNormTrace  # (1, S, E), dims=2: all S * E numbers share one mean and std
    notebook_vs_per_token: float  # max |y_notebook - y_per_token|
    one_group_vs_per_token: float  # max |y_one_group - y_per_token|


def compare_axes(x: np.ndarray, eps: float = 1e-5) -> AxesComparison:
    """Normalize over the last axis, and over the last two axes of the two layouts of seed 001.

    The notebook reshapes (B, S, E) = (1, S, E) to (S, B, E) = (S, 1, E) and normalizes over
    the last two axes (B, E). With B = 1 each group is one token, so this is per-token Layer
    Norm. Without the reshape the last two axes are (S, E): one mean for the whole sentence.
    """
    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    per_token = layer_norm_steps(x, eps=eps)
    notebook = layer_norm_steps(x[:, None, :], eps=eps, dims=2)
    one_group = layer_norm_steps(x[None, :, :], eps=eps, dims=2)
    return AxesComparison(
        x,
        per_token,
        notebook,
        one_group,
        float(np.max(np.abs(notebook.y[:, 0, :] - per_token.y))),
        float(np.max(np.abs(one_group.y[0] - per_token.y))),
    )


def axes_table(axes: AxesComparison, labels: list[str]) -> pd.DataFrame:
    """Mean, denominator and outputs of every token under the three groupings."""
    groupings = (
        ("last axis (S, E)", axes.per_token.mean[:, 0], axes.per_token.std[:, 0], axes.per_token.y),
        (
            "notebook (S, 1, E), last two",
            axes.notebook.mean[:, 0, 0],
            axes.notebook.std[:, 0, 0],
            axes.notebook.y[:, 0, :],
        ),
        (
            "no reshape (1, S, E), last two",
            np.repeat(axes.one_group.mean[0, 0, 0], len(labels)),
            np.repeat(axes.one_group.std[0, 0, 0], len(labels)),
            axes.one_group.y[0],
        ),
    )
    d = axes.x.shape[1]
    return pd.DataFrame(
        [
            {"grouping": name, "token": label, "mean": mean[t], "divided by": den[t]}
            | {f"y{i + 1}": y[t, i] for i in range(d)}
            for name, mean, den, y in groupings
            for t, label in enumerate(labels)
        ]
    )


# ---------------------------------------------------------------- the claim checker

QUANTITIES = {"mean": "mean", "var": "variance", "std": "std", "out": "output"}
SLACK_REL = 1e-6  # room for a printout computed in float32 (about 7 significant digits)
SLACK_ABS = 1e-12
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
    def tolerance(self) -> float:
        """Half a unit in the last written place, plus a little room for rounding."""
        return half_unit(self.written) + SLACK_REL * abs(self.value) + SLACK_ABS


@dataclass(frozen=True)
class Reading:
    """One way to compute a quantity, with its value for every token (or token and feature)."""

    key: str
    label: str
    conventions: tuple[str, ...]  # keys of the conventions that compute it this way
    value: np.ndarray


@dataclass(frozen=True)
class Verdict:
    """A claim against every reading of its quantity."""

    claim: Claim
    matches: tuple[str, ...]  # keys of the readings it rounds from
    conventions: tuple[str, ...]  # keys of the conventions it holds under
    usual_value: float  # the first reading: what PyTorch's Layer Norm computes
    nearest: str  # label of the closest reading
    nearest_value: float

    @property
    def holds(self) -> bool:
        return bool(self.matches)


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


def readings(x: np.ndarray) -> dict[str, tuple[Reading, ...]]:
    """Every way the conventions compute the mean, variance, std and output of tokens x."""
    biased = layer_norm_steps(x, eps=0.0)
    unbiased = layer_norm_steps(x, eps=0.0, unbiased=True)
    comparison = compare_conventions(x)
    centred = tuple(c.key for c in CONVENTIONS if c.centred)
    uses_biased = tuple(c.key for c in CONVENTIONS if c.centred and not c.unbiased)
    uses_unbiased = tuple(c.key for c in CONVENTIONS if c.centred and c.unbiased)
    uncentred = tuple(c.key for c in CONVENTIONS if not c.centred)
    return {
        "mean": (Reading("mean", "mean", centred, biased.mean[:, 0]),),
        "var": (
            Reading("biased", "biased variance (÷D)", uses_biased, biased.var[:, 0]),
            Reading("unbiased", "unbiased variance (÷(D−1))", uses_unbiased, unbiased.var[:, 0]),
            Reading("mean_square", "mean of squares", uncentred, root_mean_square(x) ** 2),
        ),
        "std": (
            Reading("biased", "biased std (÷D)", uses_biased, biased.std[:, 0]),
            Reading("unbiased", "unbiased std (÷(D−1))", uses_unbiased, unbiased.std[:, 0]),
            *(
                Reading(
                    r.convention.key,
                    f"{r.convention.name}: divided by",
                    (r.convention.key,),
                    r.denominator,
                )
                for r in comparison.runs
            ),
        ),
        "out": tuple(
            Reading(r.convention.key, f"{r.convention.name}: output", (r.convention.key,), r.y)
            for r in comparison.runs
        ),
    }


def judge(claim: Claim, options: tuple[Reading, ...]) -> Verdict:
    """Which readings the claim rounds from, and the closest one.

    The first of `options` is the usual Layer Norm reading (biased, PyTorch's output).
    """
    index = (claim.token,) if claim.feature is None else (claim.token, claim.feature)
    truths = [float(r.value[index]) for r in options]
    errors = [abs(t - claim.value) if np.isfinite(t) else np.inf for t in truths]
    matched = [r for r, e in zip(options, errors, strict=True) if e <= claim.tolerance]
    closest = int(np.argmin(errors))
    return Verdict(
        claim,
        tuple(r.key for r in matched),
        tuple(c.key for c in CONVENTIONS if any(c.key in r.conventions for r in matched)),
        truths[0],
        options[closest].label,
        truths[closest],
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
                "± tolerance": v.claim.tolerance,
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


# ---------------------------------------------------------------- ready-made cases


@dataclass(frozen=True)
class CheckCase:
    """A tutorial's worked example: its input and its claims, exactly as it wrote them."""

    key: str
    title: str
    source: str
    x: str
    mean: str = ""
    std: str = ""
    var: str = ""
    out: str = ""
    labels: tuple[str, ...] | None = None


CHECK_CASES: tuple[CheckCase, ...] = (
    CheckCase(
        "seed000-2468",
        "Seed 000: one token [2, 4, 6, 8]",
        "Layer Normalization in Action, step by step with eps = 1e-5.",
        "2.0, 4.0, 6.0, 8.0",
        mean="5.0",
        std="2.23607",
        var="5.0",
        out="-1.3416, -0.4472, 0.4472, 1.3416",
    ),
    CheckCase(
        "seed002-hello",
        'Seed 002: the "Hello" token',
        "The beginner's guide, steps 2 to 5 for Hello.",
        "0.1, 0.3, -0.2, 0.8",
        mean="0.25",
        std="0.364",
        var="0.1325",
        out="-0.412, 0.137, -1.236, 1.511",
    ),
    CheckCase(
        "seed002-prompt",
        'Seed 002: "Hello, how are you?" per token',
        "The guide's expected output: per-token means and stds (printed from x.std(), which "
        "is unbiased) and the normalized embeddings.",
        "[[0.1, 0.3, -0.2, 0.8],\n [0.0, 0.1, 0.4, -0.1],\n [0.5, -0.3, 0.2, 0.6],\n"
        " [0.2, 0.7, -0.4, 0.3],\n [-0.1, 0.4, 0.8, -0.2],\n [0.3, -0.1, 0.1, 0.5]]",
        mean="tensor([0.2500, 0.1000, 0.2500, 0.2000, 0.2250, 0.2000])",
        std="tensor([0.3640, 0.2082, 0.3742, 0.4243, 0.4240, 0.2449])",
        out="tensor([[-0.4124,  0.1375, -1.2371,  1.5120],\n"
        "        [-0.4804,  0.0000,  1.4414, -0.9610],\n"
        "        [ 0.6682, -1.4706, -0.1336,  0.9360],\n"
        "        [ 0.0000,  1.1785, -1.4142,  0.2357],\n"
        "        [-0.7660,  0.4123,  1.3540, -1.0003],\n"
        "        [ 0.4082, -1.2247, -0.4082,  1.2247]])",
        labels=("Hello", ",", "how", "are", "you", "?"),
    ),
    CheckCase(
        "seed001-notebook",
        "Seed 001: the PyTorch notebook, two tokens",
        "The notebook's printed mean, std (sqrt(var + 1e-5)) and y.",
        "torch.Tensor([[[0.2, 0.1, 0.3], [0.5, 0.1, 0.1]]])",
        mean="tensor([[[0.2000]],\n\n        [[0.2333]]])",
        std="tensor([[[0.0817]],\n\n        [[0.1886]]])",
        out="tensor([[[ 0.0000, -1.2238,  1.2238]],\n\n        [[ 1.4140, -0.7070, -0.7070]]])",
    ),
    CheckCase(
        "seed004-numpy",
        "Seed 004: the NumPy LayerNorm class",
        "The class's printed output for its two sample rows.",
        "[[0.2, 0.8, 1.0, 1.2],\n [1.0, 0.0, 0.5, 1.5]]",
        out="[[-1.60356317  0.          0.53452106  1.06904211]\n"
        " [ 0.4472128  -1.34163839 -0.4472128   1.34163839]]",
    ),
    CheckCase(
        "seed003-ln-rows",
        "Seed 003: Layer Norm row statistics of the 5 x 3 table",
        "Day 79: mu and sigma of each sample's z1, z2, z3.",
        "7, 5, 4\n2, 3, 4\n1, 2, 3\n7, 5, 6\n3, 3, 4",
        mean="5.33, 3.0, 2.0, 6.0, 3.33",
        std="1.25, 0.82, 0.82, 0.82, 0.47",
        labels=("sample 1", "sample 2", "sample 3", "sample 4", "sample 5"),
    ),
    CheckCase(
        "seed003-ln-sample1",
        "Seed 003: Layer Norm of sample 1, [7, 5, 4]",
        "Day 79: the normalization calculation for row 1.",
        "7, 5, 4",
        mean="5.33",
        std="1.25",
        out="1.34, -0.26, -1.06",
    ),
    CheckCase(
        "seed003-bn-columns",
        "Seed 003: Batch Norm column statistics (z1, z2, z3)",
        "Day 79: Batch Norm reads the table down the columns, so here each row is one column.",
        "7, 2, 1, 7, 3\n5, 3, 2, 5, 3\n4, 4, 3, 6, 4",
        mean="4.0, 3.6, 4.2",
        std="2.65, 1.36, 1.09",
        labels=("z1", "z2", "z3"),
    ),
    CheckCase(
        "seed003-contextual",
        "Seed 003: the contextual Hi and How tokens",
        "Day 79: Layer Norm statistics of two self-attention outputs.",
        "6.5, 2.1, 8.3\n5.7, 9.2, 1.8",
        mean="5.63, 5.57",
        std="2.51, 3.04",
        labels=("Hi", "How"),
    ),
)


def check_case(key: str) -> CheckCase:
    """The ready-made case called `key` (KeyError if none)."""
    return {c.key: c for c in CHECK_CASES}[key]
