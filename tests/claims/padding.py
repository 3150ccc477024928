"""The padding lab's claims, checked on hard padded batches.

A case is a batch of sentences with its embeddings, ε and β, and the page's own choices (the
calculator's batch, the training steps, the edit of another sentence). Every check rebuilds
the padded batch from the case's words here and computes in float64 numpy: the statistics
down each column (naive, and over the real tokens), the Layer Norm rows, the 5 × 3 table and
the running statistics, none of them from lnlab's code.

Each sentence starts with the word "Hi", so the questions' token label ("1.1 Hi") is the same
on every case: the prose test masks numbers, not the words a user typed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from lnlab.core.numbers import DEFAULT_EPS, fmt
from lnlab.labs.padding import batch as pad
from lnlab.labs.padding.lesson import View, slides
from lnlab.teach.claims import Said
from lnlab.teach.lesson import Lesson
from lnlab.teach.presets import BATCH_PRESETS, PADDING_EDIT, PREACTIVATIONS, token_preset

HI = ("Hi Nitish", "How are you today")
LONG = "How are you today and every other day of this long week we all meet"  # 16 words
MOMENTUM = 0.1  # PyTorch's default, as the page trains with


@dataclass(frozen=True, eq=False)
class Batch:
    """Sentences, embeddings that replace the preset's, ε, β, and the page's own choices:
    the training steps, the calculator's (batch, longest, average) and the other sentence's
    edit."""

    name: str
    sentences: tuple[str, ...] = HI
    preset: str = "hi-nitish"
    embeddings: dict[str, tuple[float, ...]] = field(default_factory=dict)
    eps: float = DEFAULT_EPS
    beta: float = 0.0
    steps: int = pad.DEFAULT_STEPS
    count: tuple[int, int, float] = (32, 100, 30.0)
    edit: str = PADDING_EDIT

    def __repr__(self) -> str:
        return self.name

    @property
    def words(self) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(s.split()) for s in self.sentences)

    def embedding(self, word: str) -> np.ndarray:
        """The case's own vector, else the preset's, else the page's hash of the word."""
        presets = next(p for p in BATCH_PRESETS if p.key == self.preset).embeddings
        vector = self.embeddings.get(word) or presets.get(word) or pad.word_embedding(word)
        return np.asarray(vector, np.float64)

    @property
    def rows(self) -> tuple[np.ndarray, np.ndarray]:
        """The stacked (B·S, D) batch, PAD rows 0, and which rows are real tokens."""
        longest = max(len(s) for s in self.words)
        rows, real = [], []
        for sentence in self.words:
            for s in range(longest):
                real.append(s < len(sentence))
                rows.append(self.embedding(sentence[s]) if real[-1] else np.zeros(pad.DIM))
        return np.array(rows), np.array(real)


def _random(name: str, scale: float, offset: float = 0.0, **settings: object) -> Batch:
    """The default sentences with embeddings offset + scale × N(0, 1), seeded by the name."""
    rng = np.random.default_rng(sum(name.encode()))
    words = dict.fromkeys(w for s in HI for w in s.split())
    vectors = {w: tuple(offset + scale * rng.standard_normal(pad.DIM)) for w in words}
    return Batch(name, embeddings=vectors, **settings)  # type: ignore[arg-type]


# f1, f2 and f3 each sum to 0 over the real tokens: naive Batch Norm leaves PAD rows at β
CENTRED = {
    "Hi": (1.0, 2.0, -1.0),
    "Nitish": (-1.0, -2.0, 1.0),
    "How": (2.0, 1.0, 3.0),
    "are": (-2.0, -1.0, -3.0),
    "you": (0.5, 3.0, 2.0),
    "today": (-0.5, -3.0, -2.0),
}
CONSTANT_F1 = {w: (2.0, *v[1:]) for w, v in BATCH_PRESETS[0].embeddings.items()}
ZERO_F1 = {w: (0.0, *v[1:]) for w, v in BATCH_PRESETS[0].embeddings.items()}


def _cases() -> list[Batch]:
    return [
        Batch("hi-nitish"),
        Batch("hi-nitish-contextual", preset="hi-nitish-contextual"),
        Batch("eps 0, beta 2", eps=0.0, beta=2.0),
        Batch("eps 1", eps=1.0),
        Batch("beta 1.5", beta=1.5),
        Batch("eps 1, beta -3", eps=1.0, beta=-3.0),
        *(_random(f"random x{s:g}", s) for s in (1e-8, 1e-4, 1e-2, 1.0, 1e4, 1e8)),
        _random("random x1e-8, eps 0", 1e-8, eps=0.0),
        _random("random x1e-4, beta 1.5", 1e-4, beta=1.5),
        _random("1e4 + x", 1.0, 1e4),
        _random("1e8 + x, eps 0", 1.0, 1e8, eps=0.0),
        Batch("padding-free", ("Hi Nitish", "How are")),
        Batch("one sentence", ("Hi Nitish",)),
        Batch("one word", ("Hi",)),
        Batch("very long and very short", ("Hi", LONG)),
        Batch("mostly padding", ("Hi", "yes", "no", LONG), eps=0.0, beta=1.5),
        Batch("real means 0", embeddings=CENTRED),
        Batch("real means 0, beta 1.5", embeddings=CENTRED, beta=1.5),
        Batch("constant f1", embeddings=CONSTANT_F1),
        Batch("constant f1, eps 0", embeddings=CONSTANT_F1, eps=0.0),
        Batch("zero f1, eps 0", embeddings=ZERO_F1, eps=0.0),
        Batch("one step", steps=1),
        Batch("200 steps", steps=pad.MAX_STEPS),
        Batch("p = 0.1", count=(32, 100, 90.0)),
        Batch("p = 0.5", count=(4, 10, 5.0)),
        Batch("no padding to count", count=(8, 10, 10.0)),
        Batch("edit that changes nothing", edit=HI[1]),
    ]


CASES = _cases()


def cases() -> list[Batch]:
    return CASES


def lessons(case: Batch) -> Iterator[Lesson]:
    lab = pad.padding_lab(
        tuple(case.words),
        case.preset,
        tuple(case.embeddings.items()),
        eps=case.eps,
        beta=case.beta,
        replacement=tuple(case.edit.split()),
    )
    yield slides(lab, View(count=pad.padding_share(*case.count), steps=case.steps))


# ---------------------------------------------------------------- the checks' own numbers


def _moments(values: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and biased variance along `axis`, kept for broadcasting."""
    return values.mean(axis=axis, keepdims=True), values.var(axis=axis, keepdims=True)


def _normalized(x: np.ndarray, mean: np.ndarray, var: np.ndarray, case: Batch) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return (x - mean) / np.sqrt(var + case.eps) + case.beta


def naive(case: Batch) -> np.ndarray:
    """Batch Norm down every column, PAD rows counted."""
    rows, _ = case.rows
    return _normalized(rows, *_moments(rows, 0), case)


def masked(case: Batch) -> np.ndarray:
    """Batch Norm down every column over the real tokens; PAD positions 0."""
    rows, real = case.rows
    y = _normalized(rows, *_moments(rows[real], 0), case)
    return np.where(real[:, None], y, 0.0)


def layer(case: Batch) -> np.ndarray:
    """Layer Norm across every row."""
    rows, _ = case.rows
    return _normalized(rows, *_moments(rows, 1), case)


NORMS = {"Naive Batch Norm": naive, "Masked Batch Norm": masked, "Layer Norm": layer}


def _pads(case: Batch) -> np.ndarray:
    return ~case.rows[1]


def _outputs_finite(case: Batch, said: Said) -> bool:
    rows = case.rows[1] if said.facts["rows"] == "real" else _pads(case)
    return bool(np.isfinite(NORMS[str(said.facts["norm"])](case)[rows]).all())


def _closed_form_is_rounding(case: Batch, _: Said) -> bool:
    """(1 − p)μ and (1 − p)σ² + p(1 − p)μ² against the padded column's own mean and variance,
    within 1e-9 of the column's size."""
    rows, real = case.rows
    p = 1 - real.mean()
    mu, var = rows[real].mean(axis=0), rows[real].var(axis=0)
    size = np.abs(mu) + np.sqrt(var)
    return bool(
        np.all(np.abs((1 - p) * mu - rows.mean(axis=0)) <= 1e-9 * size)
        and np.all(np.abs((1 - p) * var + p * (1 - p) * mu**2 - rows.var(axis=0)) <= 1e-9 * size**2)
    )


def _table(case: Batch, axis: int) -> np.ndarray:
    """The 5 × 3 pre-activations normalized down the columns (axis 0) or across the rows."""
    x = np.array(token_preset(PREACTIVATIONS).rows, np.float64)
    return _normalized(x, *_moments(x, axis), case)


def _table_variances_1(case: Batch, said: Said) -> bool:
    """σ²/(σ² + ε) of every column or row prints as 1."""
    x = np.array(token_preset(PREACTIVATIONS).rows, np.float64)
    var = x.var(axis=int(said.facts["axis"]))  # type: ignore[call-overload]
    return all(fmt(v) == "1" for v in var / (var + case.eps))


def _gaps(case: Batch) -> tuple[np.ndarray, float]:
    """max |eval − train| after each of the case's steps (PyTorch's updates from mean 0 and
    variance 1, the unbiased batch variance), and once the running statistics are the batch's."""
    rows, _ = case.rows
    n = rows.shape[0]
    mean, var = _moments(rows, 0)
    unbiased = var * n / (n - 1) if n > 1 else np.full_like(var, np.nan)
    train = _normalized(rows, mean, var, case)
    running_mean, running_var, gaps = np.zeros_like(mean), np.ones_like(var), []
    for _ in range(case.steps):
        running_mean = (1 - MOMENTUM) * running_mean + MOMENTUM * mean
        running_var = (1 - MOMENTUM) * running_var + MOMENTUM * unbiased
        gaps.append(np.max(np.abs(_normalized(rows, running_mean, running_var, case) - train)))
    settled = np.max(np.abs(_normalized(rows, mean, unbiased, case) - train))
    return np.array(gaps), float(settled)


def _shrinks_every_step(case: Batch, _: Said) -> bool:
    gaps, _settled = _gaps(case)
    return case.steps > 1 and bool(np.all(np.diff(gaps) < 0))


def _first_pad_f1(case: Batch) -> float:
    return float(naive(case)[np.flatnonzero(_pads(case))[0], 0])


CHECKS: dict[str, Callable[[Batch, Said], bool]] = {
    "padding.zeros_pull_f1": lambda c, _: (
        bool(_pads(c).any()) and c.rows[0][c.rows[1], 0].mean() != 0
    ),
    "padding.has_pad_rows": lambda c, _: bool(_pads(c).any()),
    "padding.no_pad_rows": lambda c, _: not _pads(c).any(),
    "padding.outputs_finite": _outputs_finite,
    "padding.pad_rows_move": lambda c, _: bool(np.any(naive(c)[_pads(c)] != 0)),
    "padding.pad_f1_moves": lambda c, _: _first_pad_f1(c) != 0,
    "padding.ln_pad_rows_nan": lambda c, _: bool(np.isnan(layer(c)[_pads(c)]).any()),
    "padding.closed_form_is_rounding": _closed_form_is_rounding,
    "padding.mostly_zeros": lambda c, _: (c.count[1] - c.count[2]) / c.count[1] > 0.5,
    "padding.other_sentence_changes": lambda c, _: (
        len(c.words) > 1 and tuple(c.edit.split()) != c.words[1]
    ),
    "padding.table_means_beta": lambda c, s: bool(
        np.allclose(_table(c, int(s.facts["axis"])).mean(axis=int(s.facts["axis"])), c.beta)  # type: ignore[call-overload]
    ),
    "padding.table_variances_1": _table_variances_1,
    "padding.gap_stays_open": lambda c, _: _gaps(c)[1] > 0,
    "padding.gap_shrinks_every_step": _shrinks_every_step,
}
