"""The normalizations the lab compares, as torch modules over (batch, seq, d) with a mask.

Layer Norm and RMSNorm work on each token alone; Batch Norm on each feature over the batch:
naive Batch Norm counts the padding positions in its statistics, masked Batch Norm only the
real tokens. Both keep running statistics for evaluation, and record the last batch's
variance (averaged over features) so the lab can plot it over training. Dynamic Tanh
(Zhu et al. 2025) has no statistics at all: y = γ tanh(α x) + β.
"""

from __future__ import annotations

import torch
from torch import nn

EPS = 1e-5
NORMS = ("none", "layer", "rms", "batch", "masked batch", "dyt")


class Identity(nn.Module):
    """No normalization."""

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return x


class LayerNorm(nn.Module):
    """y = (x - mean) / sqrt(var + eps) * γ + β over each token's d features."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d, eps=EPS)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


class RMSNorm(nn.Module):
    """y = x / sqrt(mean(x²) + eps) * γ over each token's features: no centring, no β."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * self.weight


class BatchNorm(nn.Module):
    """Each feature normalized over the batch's positions: all of them (naive, padding
    included) or only the real tokens (masked). Training uses the batch's statistics and
    updates running ones (momentum 0.1, unbiased variance, as nn.BatchNorm1d); evaluation
    uses the running ones."""

    def __init__(self, d: int, masked: bool, momentum: float = 0.1) -> None:
        super().__init__()
        self.masked, self.momentum = masked, momentum
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))
        self.register_buffer("running_mean", torch.zeros(d))
        self.register_buffer("running_var", torch.ones(d))
        self.last_var = 1.0  # the last batch's, averaged over features

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if self.training:
            counted = mask if self.masked else torch.ones_like(mask)
            w = counted[..., None].to(x.dtype)
            n = w.sum()
            mean = (x * w).sum((0, 1)) / n
            var = ((x - mean) ** 2 * w).sum((0, 1)) / n
            with torch.no_grad():
                unbiased = var * (n / (n - 1))  # var * n could overflow; the ratio cannot
                self.running_mean.lerp_(mean, self.momentum)
                self.running_var.lerp_(unbiased, self.momentum)
                self.last_var = var.mean().item()
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean) * torch.rsqrt(var + EPS) * self.weight + self.bias


class DynamicTanh(nn.Module):
    """y = γ tanh(α x) + β, α a learned scalar (0.5 at first)."""

    def __init__(self, d: int, alpha: float = 0.5) -> None:
        super().__init__()
        self.alpha = nn.Parameter(torch.tensor(alpha))
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.alpha * x) * self.weight + self.bias


def make_norm(kind: str, d: int) -> nn.Module:
    """The norm called `kind` (one of NORMS) for d features."""
    if kind == "none":
        return Identity()
    if kind == "layer":
        return LayerNorm(d)
    if kind == "rms":
        return RMSNorm(d)
    if kind in ("batch", "masked batch"):
        return BatchNorm(d, masked=kind == "masked batch")
    if kind == "dyt":
        return DynamicTanh(d)
    raise ValueError(f"unknown norm {kind!r}")
