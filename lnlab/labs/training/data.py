"""The synthetic task: sort the tokens of variable-length sentences, padded into batches.

A sentence is `length` random tokens 1..VOCAB-1; each token's target is its rank in its own
sentence (how many of its tokens are smaller, ties broken by position), which an encoder can
only get by attending to the whole sentence and to nothing else. Sentences are padded with
token 0 to SEQ positions; `mask` is True on real tokens. The padding share sets how short
sentences are: lengths are drawn uniformly with that share of padding on average.
"""

from __future__ import annotations

import torch

VOCAB = 16  # token 0 is PAD
SEQ = 16  # positions per sentence, padding included; also the number of rank classes
PAD = 0


def length_range(padding: float, seq: int = SEQ) -> tuple[int, int]:
    """The lowest and highest sentence length: uniform between them, their mean is
    seq x (1 - padding) up to rounding (padding 0 keeps every sentence full)."""
    mean = seq * (1.0 - padding)
    if mean >= (seq + 1) / 2:
        return max(1, round(2 * mean - seq)), seq
    return 1, max(1, round(2 * mean - 1))


def make_batch(
    generator: torch.Generator, batch: int, padding: float, seq: int = SEQ
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """tokens (batch, seq), mask (batch, seq; True on real tokens) and targets (each real
    token's rank in its sentence; -100, ignored by the loss, on padding)."""
    low, high = length_range(padding, seq)
    lengths = torch.randint(low, high + 1, (batch,), generator=generator)
    tokens = torch.randint(1, VOCAB, (batch, seq), generator=generator)
    mask = torch.arange(seq) < lengths[:, None]
    tokens = tokens.masked_fill(~mask, PAD)
    # rank: smaller real tokens, plus equal ones earlier in the sentence
    before = torch.arange(seq)[None, :, None] > torch.arange(seq)[None, None, :]
    left, right = tokens[:, :, None], tokens[:, None, :]
    smaller = (right < left) | ((right == left) & before)
    ranks = (smaller & mask[:, None, :]).sum(-1)
    targets = ranks.masked_fill(~mask, -100)
    return tokens, mask, targets
