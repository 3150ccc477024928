"""The Layer Norm conventions people meet, side by side: where they differ and by how much.

* `compare_conventions(x)`: the same tokens through PyTorch, Keras, BERT, the Annotated
  Transformer, the NumPy class of "Lecture 5 Transformer - Layer Normalization" and RMSNorm,
  and how far each lands from PyTorch.
* `compare_axes(x)`: per-token Layer Norm against normalizing over the last two axes, as the
  PyTorch notebook of "Add and Norm in the Attention Architecture" does.

The checker of tutorials' numbers is lnlab.labs.conventions.checker; the exports are
lnlab.labs.conventions.export.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from lnlab.core.norms import LayerNormTrace, layer_norm_trace, rms_norm, root_mean_square
from lnlab.core.numbers import DEFAULT_EPS, exact
from lnlab.teach.latex import num

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
    def eps_latex(self) -> str:
        """Its epsilon in LaTeX, as a power of ten where it is one (10^{-12}, never 0)."""
        return _power_of_ten(self.eps)

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

    def run(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mean, denominator, y) for tokens x of shape (T, D); mean is NaN for RMSNorm."""
        if not self.centred:
            return (
                np.full(x.shape[0], np.nan),
                root_mean_square(x, self.eps),
                rms_norm(x, eps=self.eps),
            )
        trace = layer_norm_trace(
            x, eps=self.eps, unbiased=self.unbiased, eps_outside=self.eps_outside
        )
        return trace.mean[:, 0], trace.std[:, 0], trace.y


def _power_of_ten(v: float) -> str:
    """1e-05 -> 10^{-5} in LaTeX, so every epsilon reads the same way; other numbers as num()."""
    exponent = round(np.log10(v)) if v > 0 else 0
    return f"10^{{{exponent}}}" if v > 0 and 10.0**exponent == v else num(v)


# RMSNorm's epsilon in Meta's reference LLaMA code (norm_eps); Hugging Face's LlamaConfig
# defaults rms_norm_eps to 1e-6 instead, and each checkpoint's config sets its own.
LLAMA_EPS = 1e-5

CONVENTIONS: tuple[Convention, ...] = (
    Convention("pytorch", "PyTorch nn.LayerNorm", "PyTorch", DEFAULT_EPS, "torch.nn.LayerNorm"),
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
        "NumPy tutorial (Lecture 5)",
        "NumPy tutorial",
        1e-6,
        '"Lecture 5 Transformer - Layer Normalization": (x - mean) / (np.std(x) + eps), '
        "and np.std is biased",
        eps_outside=True,
    ),
    Convention(
        "rmsnorm",
        "RMSNorm (LLaMA)",
        "RMSNorm",
        LLAMA_EPS,
        "LLaMA: x / sqrt(mean(x^2) + eps), no mean, no beta, eps = 1e-5 as Meta's reference "
        "code sets it (Hugging Face's LlamaConfig defaults to 1e-6; T5 uses the same formula "
        "with 1e-6)",
        centred=False,
    ),
)
REFERENCE = "pytorch"


def convention(key: str) -> Convention:
    """The convention called `key` (KeyError if none)."""
    return {c.key: c for c in CONVENTIONS}[key]


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


def conventions_table(comparison: ConventionComparison) -> pd.DataFrame:
    """Each convention's settings, as text (the distances from PyTorch: `comparison_table`)."""
    return pd.DataFrame(
        [
            {
                "convention": r.convention.short,
                "eps": exact(r.convention.eps),
                "variance": "÷ (D − 1)" if r.convention.unbiased else "÷ D",
                "eps goes": "on the std" if r.convention.eps_outside else "in the root",
                "minus mean": "yes" if r.convention.centred else "no",
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


def compare_axes(x: np.ndarray, eps: float = DEFAULT_EPS) -> AxesComparison:
    """Normalize over the last axis, and over the last two axes of the two layouts of the
    PyTorch notebook in "Add and Norm in the Attention Architecture".

    The notebook reshapes (B, S, E) = (1, S, E) to (S, B, E) = (S, 1, E) and normalizes over
    the last two axes (B, E). With B = 1 each group is one token, so this is per-token Layer
    Norm. Without the reshape the last two axes are (S, E): one mean for the whole sentence.
    """
    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    per_token = layer_norm_trace(x, eps=eps)
    notebook = layer_norm_trace(x[:, None, :], eps=eps, dims=2)
    one_group = layer_norm_trace(x[None, :, :], eps=eps, dims=2)
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
