"""Batch Norm vs Layer Norm on a padded batch of sentences.

Sentences (one per line) become words; each word gets a 3-number embedding (the preset's, a
user's edit, or a deterministic one hashed from the word); the sentences are stacked into a
(B, S, D) batch padded with zero PAD rows up to the longest sentence. Then:

* Batch Norm normalizes each feature column over every token of the batch. Naively that
  includes the PAD zeros; masked, only the real tokens.
* Layer Norm normalizes each token row over its own features, so no other row matters.

Zero padding with share p turns a feature's real-token mean mu and (biased) variance sigma^2
into a padded mean (1 - p) mu and a padded variance (1 - p) sigma^2 + p (1 - p) mu^2.

Sizes are bounded: at most MAX_SENTENCES sentences of MAX_WORDS words, MAX_WORD_CHARS
characters a word.
"""

from __future__ import annotations

import hashlib
import math
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lnlab.core.errors import InputError
from lnlab.core.norms import BatchNormTrace, LayerNormTrace, batch_norm_trace, layer_norm_trace
from lnlab.core.numbers import DEFAULT_EPS
from lnlab.core.parse import parse_number
from lnlab.teach.presets import PADDING_EDIT, PREACTIVATIONS, batch_preset, token_preset

MAX_SENTENCES = 8
MAX_WORDS = 16
MAX_WORD_CHARS = 40
MAX_TEXT_CHARS = MAX_SENTENCES * MAX_WORDS * (MAX_WORD_CHARS + 1)
MAX_OVERRIDES = 128  # edited embeddings kept, including words no longer in the sentences
MAX_ABS_VALUE = 1000.0  # bound on an edited embedding value
DIM = 3  # embedding size, as in the presets
FEATURES = tuple(f"f{j + 1}" for j in range(DIM))
PAD = "[PAD]"
MOMENTUM = 0.1  # PyTorch's default for the running statistics
DEFAULT_REPLACEMENT = PADDING_EDIT  # the "who else is in the batch" edit
_DEFAULT_REPLACEMENT_WORDS = tuple(DEFAULT_REPLACEMENT.split())
DEFAULT_STEPS = 20  # training steps of the running-statistics demo
MAX_STEPS = 200

MAX_EPS = 1.0  # the page's bounds on epsilon and beta
MAX_BETA = 100.0

MAX_CALC_BATCH = 100_000
MAX_CALC_LONGEST = 1_000_000

PICK_NAIVE = "naive"
PICK_MASKED = "masked"
PICK_TOKEN = "token"
PICKS = {
    PICK_NAIVE: "Batch Norm: a feature column, PAD rows included",
    PICK_MASKED: "Batch Norm, masked: a feature column, real tokens only",
    PICK_TOKEN: "Layer Norm: a token row",
}

Sentences = tuple[tuple[str, ...], ...]
Vector = tuple[float, ...]
Overrides = tuple[tuple[str, Vector], ...]  # (word, embedding) pairs: hashable, for caching

_INVISIBLE = {"Cc", "Cf", "Cs"}  # control, format (zero-width) and surrogate characters


# ---------------------------------------------------------------- sentences -> words


def parse_sentences(text: str) -> Sentences:
    """One sentence per line, words split on whitespace; blank lines are skipped."""
    if len(text) > MAX_TEXT_CHARS:
        raise InputError(f"the text has {len(text)} characters: at most {MAX_TEXT_CHARS}")
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise InputError("enter at least one sentence, one sentence per line")
    if len(lines) > MAX_SENTENCES:
        raise InputError(f"{len(lines)} sentences: at most {MAX_SENTENCES}, one per line")
    return tuple(words_of(line, f"sentence {i}") for i, line in enumerate(lines, start=1))


def parse_sentence(text: str) -> tuple[str, ...]:
    """A single sentence (one line) of words."""
    if not text.strip():
        raise InputError("the edited sentence is empty: type at least one word")
    if len(text.splitlines()) > 1:
        raise InputError("the edited sentence must be a single line")
    return words_of(text, "the edited sentence")


def words_of(line: str, where: str) -> tuple[str, ...]:
    """The words of one line, each checked: at most MAX_WORDS, MAX_WORD_CHARS characters, no
    invisible characters; `where` names the line in the message."""
    words = tuple(line.split())
    if len(words) > MAX_WORDS:
        raise InputError(f"{where} has {len(words)} words: at most {MAX_WORDS}")
    for k, word in enumerate(words, start=1):
        if len(word) > MAX_WORD_CHARS:
            raise InputError(
                f'{where}, word {k} ("{word[:20]}...") has {len(word)} characters: '
                f"at most {MAX_WORD_CHARS}"
            )
        bad = next((c for c in word if unicodedata.category(c) in _INVISIBLE), None)
        if bad is not None:
            raise InputError(
                f"{where}, word {k} contains an invisible or control character (U+{ord(bad):04X})"
            )
    return words


def vocabulary(sentences: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """Each distinct word once, in order of first appearance."""
    return tuple(dict.fromkeys(w for sentence in sentences for w in sentence))


# ---------------------------------------------------------------- words -> embeddings


def word_embedding(word: str) -> Vector:
    """A deterministic embedding: SHA-256 of the word seeds a generator; uniform in [0, 10).

    Rounded to one decimal so tables stay readable. The same word always gets the same vector,
    on every machine and every run.
    """
    digest = hashlib.sha256(word.encode("utf-8", "surrogatepass")).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "big"))
    return tuple(round(float(v), 1) for v in rng.uniform(0.0, 10.0, DIM))


def default_embedding(word: str, preset_key: str) -> Vector:
    """The preset's embedding of `word` if it has one, else the hashed one."""
    embeddings = batch_preset(preset_key).embeddings
    return tuple(embeddings[word]) if word in embeddings else word_embedding(word)


@dataclass(frozen=True)
class EmbeddingRow:
    """One word of the embedding table, and where its numbers come from."""

    word: str
    vector: Vector
    source: str  # "preset", "hash of the word" or "edited"


def embedding_table(
    words: Sequence[str], preset_key: str, overrides: Mapping[str, Vector]
) -> tuple[EmbeddingRow, ...]:
    """The embedding of each word: the user's edit, else the preset's, else the hashed one."""
    presets = batch_preset(preset_key).embeddings
    rows = []
    for word in words:
        if word in overrides:
            rows.append(EmbeddingRow(word, tuple(overrides[word]), "edited"))
        elif word in presets:
            rows.append(EmbeddingRow(word, tuple(presets[word]), "preset"))
        else:
            rows.append(EmbeddingRow(word, word_embedding(word), "hash of the word"))
    return tuple(rows)


def embedding_frame(
    words: Sequence[str], preset_key: str, overrides: Mapping[str, Vector], epoch: int
) -> pd.DataFrame:
    """The embedding grid: word, f1..fD and where the numbers come from, one row per word.

    The hidden index ties the grid's edits to these words and to the `epoch` of the last
    reset: new words or a reset give the grid a new identity, so an edit never lands on
    another word.
    """
    rows = embedding_table(words, preset_key, overrides)
    return pd.DataFrame(
        {
            "word": [r.word for r in rows],
            **{f: [r.vector[j] for r in rows] for j, f in enumerate(FEATURES)},
            "from": [r.source for r in rows],
        },
        index=pd.Index(list(words), name=f"table {epoch}"),
    )


def read_overrides(
    words: Sequence[str],
    values: Sequence[Sequence[object]],
    preset_key: str,
    previous: Mapping[str, Vector],
) -> dict[str, Vector]:
    """The user's edits from the embedding grid: rows of DIM numbers, one row per word.

    A row equal to the word's default is not an edit. Edits of words no longer in the
    sentences are kept (the most recent MAX_OVERRIDES), so deleting a word and typing it
    back restores its edit.
    """
    if len(values) != len(words):
        raise InputError(
            f"the embedding table has {len(values)} rows but there are {len(words)} distinct words"
        )
    edited: dict[str, Vector] = {}
    for word, row in zip(words, values, strict=True):
        vector = tuple(embedding_value(v, word, j) for j, v in enumerate(row))
        if len(vector) != DIM:
            raise InputError(f'"{word[:20]}" has {len(vector)} numbers: it needs {DIM}')
        if vector != default_embedding(word, preset_key):
            edited[word] = vector
    kept = {w: v for w, v in previous.items() if w not in words}
    merged = kept | edited
    return dict(list(merged.items())[-MAX_OVERRIDES:])


def embedding_value(value: object, word: str, j: int) -> float:
    """One number of an edited embedding (feature j + 1 of `word`), or InputError."""
    where = f'"{word[:20]}", feature f{j + 1}'
    if value is None or isinstance(value, bool):
        raise InputError(f"{where} is empty: enter a number")
    if isinstance(value, str):  # from a link: read as a typed number is (1e-400 is refused)
        v = parse_number(value, where)
    else:
        try:
            v = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError) as exc:
            raise InputError(f"{where} is not a number") from exc
    if math.isnan(v):  # a cell of the grid that was cleared
        raise InputError(f"{where} is empty: enter a number")
    if not abs(v) <= MAX_ABS_VALUE:
        raise InputError(
            f"{where} is {v:g}: keep values between -{MAX_ABS_VALUE:g} and {MAX_ABS_VALUE:g}"
        )
    return v


# ---------------------------------------------------------------- the padded batch


def checked_settings(eps: float, beta: float) -> tuple[float, float]:
    """epsilon in 0..MAX_EPS and beta in -MAX_BETA..MAX_BETA as floats, or InputError (a NaN
    can reach a number box in a crafted message)."""
    eps, beta = float(eps), float(beta)
    if not 0.0 <= eps <= MAX_EPS:
        raise InputError(f"epsilon must be a number from 0 to {MAX_EPS:g}, not {eps:g}")
    if not -MAX_BETA <= beta <= MAX_BETA:
        raise InputError(f"β must be a number from -{MAX_BETA:g} to {MAX_BETA:g}, not {beta:g}")
    return eps, beta


def padded_batch(
    sentences: Sentences, embed: Mapping[str, Vector]
) -> tuple[np.ndarray, np.ndarray]:
    """The (B, S, D) batch, padded with zero rows to the longest sentence, and its (B, S)
    mask (True = a real token)."""
    longest = max(len(s) for s in sentences)
    x = np.zeros((len(sentences), longest, DIM))
    mask = np.zeros((len(sentences), longest), dtype=bool)
    for b, sentence in enumerate(sentences):
        for s, word in enumerate(sentence):
            x[b, s] = embed[word]
            mask[b, s] = True
    return x, mask


def token_labels(sentences: Sentences) -> tuple[str, ...]:
    """One label per row of the stacked (B*S, D) view: "sentence.position word" or PAD."""
    longest = max(len(s) for s in sentences)
    return tuple(
        f"{b + 1}.{s + 1} {sentence[s] if s < len(sentence) else PAD}"
        for b, sentence in enumerate(sentences)
        for s in range(longest)
    )


def padded_moments(
    share: float | np.ndarray, mean: float | np.ndarray, var: float | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """What zero padding with share p does to a feature's mean mu and biased variance sigma^2.

    padded mean = (1 - p) mu;  padded variance = (1 - p) sigma^2 + p (1 - p) mu^2.
    """
    mean, var = np.asarray(mean, dtype=np.float64), np.asarray(var, dtype=np.float64)
    kept = 1.0 - np.asarray(share, dtype=np.float64)
    return kept * mean, kept * var + share * kept * mean**2


@dataclass(frozen=True)
class ClosedForm:
    """The closed form of the padded statistics next to the ones computed from the batch."""

    share: float  # p: PAD rows / all rows
    real_mean: np.ndarray  # (D,) mu over the real tokens
    real_var: np.ndarray  # (D,) sigma^2 over the real tokens (biased)
    predicted_mean: np.ndarray  # (1 - p) mu
    predicted_var: np.ndarray  # (1 - p) sigma^2 + p (1 - p) mu^2
    computed_mean: np.ndarray  # naive Batch Norm's mean over all rows
    computed_var: np.ndarray  # naive Batch Norm's variance over all rows

    @property
    def mean_error(self) -> np.ndarray:
        return self.predicted_mean - self.computed_mean

    @property
    def var_error(self) -> np.ndarray:
        return self.predicted_var - self.computed_var


@dataclass(frozen=True)
class WhoElse:
    """One sentence's outputs before and after another sentence of the batch is edited.

    Arrays are (tokens of the focus sentence, D): only its real tokens.
    """

    focus: int
    other: int
    before: tuple[str, ...]  # the other sentence as it was
    after: tuple[str, ...]  # and as edited
    words: tuple[str, ...]  # the focus sentence
    naive_bn: tuple[np.ndarray, np.ndarray]  # (before, after)
    masked_bn: tuple[np.ndarray, np.ndarray]
    ln: tuple[np.ndarray, np.ndarray]

    @staticmethod
    def max_change(pair: tuple[np.ndarray, np.ndarray]) -> float:
        """The largest absolute change, max |after - before|."""
        return float(np.max(np.abs(pair[1] - pair[0])))


@dataclass(frozen=True)
class Norms:
    """Naive Batch Norm, masked Batch Norm and Layer Norm of one padded batch."""

    naive_bn: BatchNormTrace
    masked_bn: BatchNormTrace
    ln: LayerNormTrace


@dataclass(frozen=True)
class PaddingLab:
    """Everything the padding page shows, from plain inputs."""

    sentences: Sentences
    embeddings: dict[str, Vector]  # every word of the batch (and of the edit)
    eps: float
    beta: float
    x: np.ndarray  # (B, S, D), PAD rows 0
    mask: np.ndarray  # (B, S), True = real token
    labels: tuple[str, ...]  # one per row of the stacked (B*S, D) view
    norms: Norms
    closed_form: ClosedForm
    who_else: WhoElse | None  # None for a batch of one sentence

    @property
    def tokens(self) -> np.ndarray:
        """The batch as a (B*S, D) stack of rows, the view Batch Norm reduces over."""
        return self.x.reshape(-1, DIM)

    @property
    def real(self) -> np.ndarray:
        """(B*S,) True for the rows that are real tokens."""
        return self.mask.reshape(-1)

    @property
    def pad_count(self) -> int:
        return int((~self.real).sum())


def _norms(x: np.ndarray, mask: np.ndarray, eps: float, beta: float) -> Norms:
    return Norms(
        naive_bn=batch_norm_trace(x, beta=beta, eps=eps, momentum=MOMENTUM),
        masked_bn=batch_norm_trace(x, beta=beta, eps=eps, mask=mask, momentum=MOMENTUM),
        ln=layer_norm_trace(x, beta=beta, eps=eps),
    )


@dataclass(frozen=True)
class LabInputs:
    """What a PaddingLab is built from (padding_lab's arguments), as the page reads them from
    its state: hashable, so the page caches one lab per distinct inputs."""

    sentences: Sentences
    preset_key: str
    overrides: Overrides = ()
    eps: float = DEFAULT_EPS
    beta: float = 0.0
    focus: int = 0
    other: int = 1
    replacement: tuple[str, ...] = _DEFAULT_REPLACEMENT_WORDS

    def lab(self) -> PaddingLab:
        return padding_lab(**vars(self))


def padding_lab(
    sentences: Sentences,
    preset_key: str,
    overrides: Overrides = (),
    eps: float = DEFAULT_EPS,
    beta: float = 0.0,
    focus: int = 0,
    other: int = 1,
    replacement: tuple[str, ...] = _DEFAULT_REPLACEMENT_WORDS,
) -> PaddingLab:
    """Pad the sentences into one batch and normalize it three ways (gamma = 1).

    `focus`, `other` and `replacement` drive the "who else is in the batch" comparison:
    sentence `other` is replaced by `replacement` and sentence `focus` is compared.
    """
    edits = dict(overrides)
    words = vocabulary((*sentences, replacement))
    embed = {w: edits[w] if w in edits else default_embedding(w, preset_key) for w in words}
    x, mask = padded_batch(sentences, embed)
    norms = _norms(x, mask, eps, beta)
    real = x.reshape(-1, DIM)[mask.reshape(-1)]
    share = float((~mask).sum() / mask.size)
    real_mean, real_var = real.mean(axis=0), real.var(axis=0)
    predicted_mean, predicted_var = padded_moments(share, real_mean, real_var)
    closed = ClosedForm(
        share=share,
        real_mean=real_mean,
        real_var=real_var,
        predicted_mean=predicted_mean,
        predicted_var=predicted_var,
        computed_mean=norms.naive_bn.mean,
        computed_var=norms.naive_bn.var,
    )
    who = None
    if len(sentences) > 1:
        who = _who_else(sentences, embed, norms, eps, beta, focus, other, replacement)
    return PaddingLab(
        sentences=sentences,
        embeddings=embed,
        eps=float(eps),
        beta=float(beta),
        x=x,
        mask=mask,
        labels=token_labels(sentences),
        norms=norms,
        closed_form=closed,
        who_else=who,
    )


def _who_else(
    sentences: Sentences,
    embed: Mapping[str, Vector],
    before: Norms,
    eps: float,
    beta: float,
    focus: int,
    other: int,
    replacement: tuple[str, ...],
) -> WhoElse:
    if not (0 <= focus < len(sentences) and 0 <= other < len(sentences)) or focus == other:
        raise InputError("pick two different sentences of the batch")
    edited = tuple(replacement if b == other else s for b, s in enumerate(sentences))
    x, mask = padded_batch(edited, embed)
    after = _norms(x, mask, eps, beta)
    n = len(sentences[focus])

    def pair(name: str) -> tuple[np.ndarray, np.ndarray]:
        return getattr(before, name).y[focus, :n], getattr(after, name).y[focus, :n]

    return WhoElse(
        focus=focus,
        other=other,
        before=sentences[other],
        after=replacement,
        words=sentences[focus],
        naive_bn=pair("naive_bn"),
        masked_bn=pair("masked_bn"),
        ln=pair("ln"),
    )


# ---------------------------------------------------------------- which cells feed a statistic


def highlight_mask(lab: PaddingLab, pick: str, index: int) -> np.ndarray:
    """(B*S, D) True for the cells that feed the picked statistic.

    naive: feature column `index`, every row; masked: that column, real rows only;
    token: row `index` of the stacked view, every feature.
    """
    cells = np.zeros(lab.tokens.shape, dtype=bool)
    if pick == PICK_TOKEN:
        cells[index, :] = True
    elif pick == PICK_NAIVE:
        cells[:, index] = True
    elif pick == PICK_MASKED:
        cells[:, index] = lab.real
    else:
        raise InputError(f"unknown statistic {pick!r}")
    return cells


def picked_moments(lab: PaddingLab, pick: str, index: int) -> tuple[np.ndarray, float, float]:
    """The picked statistic's cells (highlight_mask's order), their mean and their variance
    (population: 1/n, as Batch Norm and Layer Norm normalize with)."""
    cells = lab.tokens[highlight_mask(lab, pick, index)]
    return cells, float(cells.mean()), float(cells.var())


# ---------------------------------------------------------------- the padding calculator


@dataclass(frozen=True)
class PaddingShare:
    """A batch of `batch` sentences padded to `longest` words, `average` words on average."""

    batch: int
    longest: int
    average: float

    @property
    def slots(self) -> int:
        """batch x longest positions in the padded tensor."""
        return self.batch * self.longest

    @property
    def real(self) -> float:
        return self.batch * self.average

    @property
    def zeros(self) -> float:
        return self.slots - self.real

    @property
    def share(self) -> float:
        """p = (longest - average) / longest, the share of PAD zeros."""
        return (self.longest - self.average) / self.longest


def padding_share(batch: float, longest: float, average: float) -> PaddingShare:
    """Validate the calculator's inputs; raise InputError with what is wrong."""
    b = _whole(batch, "the batch size", MAX_CALC_BATCH)
    n = _whole(longest, "the longest sentence", MAX_CALC_LONGEST)
    avg = float(average)
    if not math.isfinite(avg) or avg < 1:
        raise InputError(f"the average length must be at least 1 word, not {avg:g}")
    if avg > n:
        raise InputError(f"the average length ({avg:g}) cannot exceed the longest sentence ({n})")
    floor = (n + b - 1) / b  # the longest sentence plus b - 1 one-word sentences
    if avg < floor:
        raise InputError(
            f"with {b} sentences, one of them {n} words long, the average is at least "
            f"{floor:g} words, not {avg:g}"
        )
    return PaddingShare(b, n, avg)


def _whole(value: float, name: str, most: int) -> int:
    v = float(value)
    if not v.is_integer() or not 1 <= v <= most:
        raise InputError(f"{name} must be a whole number from 1 to {most:,}, not {v:g}")
    return int(v)


# ---------------------------------------------------------------- the 5 x 3 pre-activations


@dataclass(frozen=True)
class TableNorms:
    """A samples x nodes table normalized down the columns (Batch Norm) and across the rows
    (Layer Norm)."""

    x: np.ndarray
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    bn: BatchNormTrace
    ln: LayerNormTrace


def preactivation_norms(eps: float = DEFAULT_EPS, beta: float = 0.0) -> TableNorms:
    """The 5 x 3 pre-activation table (z1, z2, z3 for five samples), both ways."""
    preset = token_preset(PREACTIVATIONS)
    x = preset.x
    return TableNorms(
        x=x,
        rows=preset.labels,
        columns=tuple(f"z{j + 1}" for j in range(x.shape[1])),
        bn=batch_norm_trace(x, beta=beta, eps=eps, momentum=MOMENTUM),
        ln=layer_norm_trace(x, beta=beta, eps=eps),
    )


# ---------------------------------------------------------------- running statistics


@dataclass(frozen=True)
class Running:
    """nn.BatchNorm1d's running statistics after `steps` training steps on the padded batch
    (every row, PAD included, as the layer sees it), and what eval mode then outputs."""

    steps: int
    mean: np.ndarray  # (steps + 1, D): row k after k updates, from 0
    var: np.ndarray  # (steps + 1, D): row k after k updates, from 1
    batch_mean: np.ndarray  # (D,) what every update moves towards
    batch_var: np.ndarray  # (D,) the unbiased batch variance, idem
    train_y: np.ndarray  # (B, S, D) training mode: the batch's own (biased) statistics
    eval_y: np.ndarray  # (B, S, D) eval mode: the running statistics after `steps`
    gaps: np.ndarray  # (steps,) the gap after 1, 2, ..., `steps` updates
    settled_gap: float  # the gap once the running statistics are the batch's (no steps left)

    @property
    def gap(self) -> float:
        """max |eval output - training output| over every cell of the batch."""
        return float(self.gaps[-1])


def running_statistics(lab: PaddingLab, steps: int, momentum: float = MOMENTUM) -> Running:
    """Train on the same padded batch `steps` times, updating as PyTorch does:

    running <- (1 - momentum) running + momentum batch, from mean 0 and variance 1, with the
    unbiased batch variance n / (n - 1) sigma^2. After k steps the running mean is
    (1 - (1 - m)^k) mu: it approaches the batch's but never reaches it, and the variance tends
    to the unbiased one, so eval mode still differs from training mode (Layer Norm never does).
    The gap need not shrink at every step: the mean and the variance move from different
    starts, and their errors can offset each other in a cell.
    """
    if not 1 <= steps <= MAX_STEPS:
        raise InputError(f"the steps must be a whole number from 1 to {MAX_STEPS}, not {steps}")
    bn = lab.norms.naive_bn
    n = bn.count
    # n / (n - 1) first: var * n overflows where var is near the float64 maximum
    unbiased = bn.var * (n / (n - 1)) if n > 1 else np.full_like(bn.var, np.nan)
    mean, var = [np.zeros(DIM)], [np.ones(DIM)]
    for _ in range(steps):
        mean.append((1 - momentum) * mean[-1] + momentum * bn.mean)
        var.append((1 - momentum) * var[-1] + momentum * unbiased)
    outputs = [_eval_output(lab, m, v) for m, v in zip(mean[1:], var[1:], strict=True)]
    return Running(
        steps=steps,
        mean=np.array(mean),
        var=np.array(var),
        batch_mean=bn.mean,
        batch_var=unbiased,
        train_y=bn.y,
        eval_y=outputs[-1],
        gaps=np.array([_gap(y, bn.y) for y in outputs]),
        settled_gap=_gap(_eval_output(lab, bn.mean, unbiased), bn.y),
    )


def _eval_output(lab: PaddingLab, mean: np.ndarray, var: np.ndarray) -> np.ndarray:
    """Eval mode's output of the padded batch with these running statistics (gamma = 1)."""
    return (lab.x - mean) / np.sqrt(var + lab.eps) + lab.beta


def _gap(eval_y: np.ndarray, train_y: np.ndarray) -> float:
    """max |eval output - training output| over every cell (NaN where one is NaN)."""
    return float(np.max(np.abs(eval_y - train_y)))
