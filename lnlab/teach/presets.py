"""Worked examples from the tutorials this project grew from (`shared/seeds/`), as data.

Only inputs live here. Every statistic or output the app shows is computed by lnlab: some of
the numbers those tutorials print next to these inputs are wrong.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lnlab.teach.tutorials import ACTION, ADD_NORM, EXPLAINED, LECTURE_5, TITLES, WHY_NOT_BN


@dataclass(frozen=True)
class TokenPreset:
    """Token embeddings (one row per token) to step through."""

    key: str
    title: str
    rows: tuple[tuple[float, ...], ...]
    labels: tuple[str, ...]
    source: str

    @property
    def x(self) -> np.ndarray:
        return np.array(self.rows, dtype=np.float64)


@dataclass(frozen=True)
class BatchPreset:
    """Sentences with a fixed embedding per word, to pad into one batch."""

    key: str
    title: str
    sentences: tuple[str, ...]
    embeddings: dict[str, tuple[float, ...]]
    source: str


@dataclass(frozen=True)
class PaddingCount:
    """A batch described only by its size and sentence lengths."""

    batch: int
    longest: int
    average: float
    source: str


TOKEN_PRESETS: tuple[TokenPreset, ...] = (
    TokenPreset(
        "token-2468",
        "One token: [2, 4, 6, 8]",
        ((2.0, 4.0, 6.0, 8.0),),
        ("token",),
        f'The single-token walkthrough of "{TITLES[ACTION]}", eps = 1e-5, gamma = 1, beta = 0.',
    ),
    TokenPreset(
        "hello",
        'Prompt: "Hello, how are you?" (6 tokens x 4 features)',
        (
            (0.1, 0.3, -0.2, 0.8),
            (0.0, 0.1, 0.4, -0.1),
            (0.5, -0.3, 0.2, 0.6),
            (0.2, 0.7, -0.4, 0.3),
            (-0.1, 0.4, 0.8, -0.2),
            (0.3, -0.1, 0.1, 0.5),
        ),
        ("Hello", ",", " how", " are", " you", "?"),
        f'"{TITLES[EXPLAINED]}" prints per-token means and stds next to these embeddings; '
        "check them on the Conventions and checker page.",
    ),
    TokenPreset(
        "notebook-2x3",
        "Notebook input: two tokens x 3 features",
        ((0.2, 0.1, 0.3), (0.5, 0.1, 0.1)),
        ("token 1", "token 2"),
        f'The PyTorch notebook of "{TITLES[ADD_NORM]}", which normalizes a (2, 1, 3) tensor '
        "over its last two axes.",
    ),
    TokenPreset(
        "numpy-2x4",
        "NumPy class: two rows x 4 features",
        ((0.2, 0.8, 1.0, 1.2), (1.0, 0.0, 0.5, 1.5)),
        ("row 1", "row 2"),
        f'The NumPy LayerNorm of "{TITLES[LECTURE_5]}", which adds eps = 1e-6 to the std, '
        "not the variance.",
    ),
    TokenPreset(
        "preactivations-5x3",
        "Pre-activations: 5 samples x 3 nodes",
        ((7.0, 5.0, 4.0), (2.0, 3.0, 4.0), (1.0, 2.0, 3.0), (7.0, 5.0, 6.0), (3.0, 3.0, 4.0)),
        ("sample 1", "sample 2", "sample 3", "sample 4", "sample 5"),
        f'The batch-norm table of "{TITLES[WHY_NOT_BN]}": z1, z2, z3 for five samples. '
        "Batch Norm reads it down the columns, Layer Norm across the rows.",
    ),
)

CUSTOM = "custom"  # what the preset chooser shows once the numbers are the visitor's own
CUSTOM_PRESET = TokenPreset(
    CUSTOM, "Your own numbers", (), (), "Typed, pasted or edited by you: no preset."
)

PREACTIVATIONS = "preactivations-5x3"  # the padding page's 5 x 3 table, read both ways

_HI_NITISH_SOURCE = (
    f'"{TITLES[WHY_NOT_BN]}": two sentences padded to four tokens with zero PAD rows, '
    "embedding dimension 3."
)

BATCH_PRESETS: tuple[BatchPreset, ...] = (
    BatchPreset(
        "hi-nitish",
        '"Hi Nitish" / "How are you today": word embeddings',
        ("Hi Nitish", "How are you today"),
        {
            "Hi": (5.0, 1.0, 8.0),
            "Nitish": (3.0, 7.0, 2.0),
            "How": (4.0, 2.0, 6.0),
            "are": (1.0, 8.0, 3.0),
            "you": (7.0, 5.0, 9.0),
            "today": (2.0, 4.0, 1.0),
        },
        _HI_NITISH_SOURCE,
    ),
    BatchPreset(
        "hi-nitish-contextual",
        '"Hi Nitish" / "How are you today": contextual outputs of self-attention',
        ("Hi Nitish", "How are you today"),
        {
            "Hi": (6.5, 2.1, 8.3),
            "Nitish": (4.2, 7.8, 3.1),
            "How": (5.7, 9.2, 1.8),
            "are": (3.4, 6.1, 7.5),
            "you": (8.9, 4.3, 2.6),
            "today": (1.2, 5.8, 9.4),
        },
        _HI_NITISH_SOURCE,
    ),
)

PADDING_COUNT = PaddingCount(
    batch=32,
    longest=100,
    average=30.0,
    source=f'"{TITLES[WHY_NOT_BN]}": 32 sentences in a batch, the longest 100 words, the '
    "average 30.",
)
PADDING_EDIT = "How are we today"  # the padding page's edit of another sentence of the batch


def token_preset(key: str) -> TokenPreset:
    """The token preset called `key` (KeyError if none)."""
    return {p.key: p for p in TOKEN_PRESETS}[key]


def batch_preset(key: str) -> BatchPreset:
    """The batch preset called `key` (KeyError if none)."""
    return {p.key: p for p in BATCH_PRESETS}[key]
