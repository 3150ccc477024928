"""The tiny Transformer encoder: embeddings, blocks of attention and MLP with a residual
each, a norm after each residual (post) or before each sublayer (pre, with one more norm
before the head), and a linear head that predicts each token's rank.

Attention never looks at padding (the key mask), padding positions are zero between blocks,
and the loss never counts them: only a norm that pools over the batch (Batch Norm) sees them.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from lnlab.labs.training.norms import make_norm

D_MODEL = 32
HEADS = 2
POST, PRE = "post", "pre"
VARIANTS = {  # key: (label, norm, placement)
    "none": ("no norm", "none", PRE),
    "post": ("post-LN", "layer", POST),
    "pre": ("pre-LN", "layer", PRE),
    "rms": ("RMSNorm (pre)", "rms", PRE),
    "bn": ("naive Batch Norm (post)", "batch", POST),
    "mbn": ("masked Batch Norm (post)", "masked batch", POST),
    "dyt": ("Dynamic Tanh (pre)", "dyt", PRE),
}


class Block(nn.Module):
    """post: x = N(x + Attn(x)); x = N(x + MLP(x)).  pre: x = x + Attn(N(x)); x = x + MLP(N(x))."""

    def __init__(self, d: int, heads: int, norm: str, placement: str) -> None:
        super().__init__()
        self.heads, self.placement = heads, placement
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.norm1, self.norm2 = make_norm(norm, d), make_norm(norm, d)

    def attention(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).transpose(1, 3).unbind(2)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None, None, :])
        return self.proj(y.transpose(1, 2).reshape(b, s, d))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if self.placement == POST:
            x = self.norm1(x + self.attention(x, mask), mask)
            return self.norm2(x + self.mlp(x), mask)
        x = x + self.attention(self.norm1(x, mask), mask)
        return x + self.mlp(self.norm2(x, mask))


class Encoder(nn.Module):
    """Token and position embeddings, `layers` blocks, (pre: a last norm,) the head."""

    def __init__(
        self, vocab: int, seq: int, classes: int, layers: int, norm: str, placement: str
    ) -> None:
        super().__init__()
        self.token = nn.Embedding(vocab, D_MODEL)
        self.position = nn.Embedding(seq, D_MODEL)
        self.blocks = nn.ModuleList(Block(D_MODEL, HEADS, norm, placement) for _ in range(layers))
        self.final = make_norm(norm if placement == PRE else "none", D_MODEL)
        self.head = nn.Linear(D_MODEL, classes)
        for module in self.modules():  # Xavier, as the original Transformer and Xiong et al.
            if isinstance(module, nn.Linear):
                nn.init.xavier_normal_(module.weight)
                nn.init.zeros_(module.bias)

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        keep = mask[..., None].to(torch.get_default_dtype())
        x = (
            self.token(tokens) + self.position(torch.arange(tokens.shape[1], device=tokens.device))
        ) * keep
        for block in self.blocks:
            x = block(x, mask) * keep  # padding stays zero between blocks, as in fairseq
        return self.head(self.final(x, mask))


def loss_fn(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over the real tokens (padding's target is -100, ignored)."""
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-100)
