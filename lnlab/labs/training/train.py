"""One variant trained on the synthetic task with fixed seeds, and its gradients at
initialisation.

Every variant of a run sees the same initial-weight seed and the same batches. Adam with
β = (0.9, 0.98) as in "Attention Is All You Need"; warm-up raises the learning rate linearly
over the first WARMUP_SHARE of the steps, then holds it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from lnlab.labs.training.data import SEQ, VOCAB, make_batch
from lnlab.labs.training.model import VARIANTS, Encoder, loss_fn
from lnlab.labs.training.norms import BatchNorm

BATCH = 32
EVAL_BATCH = 256
WARMUP_SHARE = 0.2
CLIP = 1.0  # gradient-norm clipping: a diverging run stays finite and readable


@dataclass(frozen=True)
class VariantRun:
    """What one variant's training left: plain numbers, no tensors."""

    variant: str
    losses: tuple[float, ...]  # training loss per step
    eval_loss: float  # held-out sentences, evaluation mode (running statistics)
    eval_loss_train_mode: float  # the same sentences with the batch's own statistics
    grad_norms: tuple[float, ...]  # per block, at initialisation
    bn_var: tuple[float, ...]  # first norm's batch variance per step (Batch Norm only)
    seconds: float


def build(variant: str, layers: int, seed: int) -> Encoder:
    """The variant's encoder with the initial weights of `seed`."""
    _, norm, placement = VARIANTS[variant]
    torch.manual_seed(seed)
    return Encoder(VOCAB, SEQ, SEQ, layers, norm, placement)


def layer_grad_norms(model: Encoder, batch: tuple[torch.Tensor, ...]) -> tuple[float, ...]:
    """Each block's gradient norm, over all its parameters, for the loss on `batch`."""
    tokens, mask, targets = batch
    model.zero_grad()
    loss_fn(model(tokens, mask), targets).backward()
    norms = []
    for block in model.blocks:
        squares = sum(p.grad.pow(2).sum() for p in block.parameters() if p.grad is not None)
        norms.append(math.sqrt(float(squares)))
    model.zero_grad()
    return tuple(norms)


def learning_rate(step: int, steps: int, lr: float, warmup: bool) -> float:
    """lr, ramped up linearly over the first WARMUP_SHARE of the steps when warm-up is on."""
    ramp = max(1, round(WARMUP_SHARE * steps))
    return lr * min(1.0, (step + 1) / ramp) if warmup else lr


def evaluate(model: Encoder, batch: tuple[torch.Tensor, ...], train_mode: bool) -> float:
    """The loss on `batch` without learning: running statistics, or the batch's own."""
    tokens, mask, targets = batch
    model.train(train_mode)
    with torch.no_grad():
        snapshot = {k: v.clone() for k, v in model.state_dict().items()}
        loss = float(loss_fn(model(tokens, mask), targets))
        model.load_state_dict(snapshot)  # a train-mode pass moves running statistics
    model.train()
    return loss


def train_variant(
    variant: str,
    layers: int,
    lr: float,
    warmup: bool,
    padding: float,
    steps: int,
    seed: int,
    device: str = "cpu",
    on_step: Callable[[int], None] | None = None,
) -> VariantRun:
    """Train `variant` for `steps` Adam steps on fresh batches (data seed `seed`)."""
    start = time.perf_counter()
    model = build(variant, layers, seed).to(device)
    data = torch.Generator().manual_seed(seed + 1)
    held_out = tuple(
        t.to(device)
        for t in make_batch(torch.Generator().manual_seed(seed + 2), EVAL_BATCH, padding)
    )
    grads = layer_grad_norms(model, tuple(t.to(device) for t in make_batch(data, BATCH, padding)))
    first = next((m for m in model.modules() if isinstance(m, BatchNorm)), None)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98), foreach=True)
    losses, variances = [], []
    for step in range(steps):
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, steps, lr, warmup)
        tokens, mask, targets = (t.to(device) for t in make_batch(data, BATCH, padding))
        loss = loss_fn(model(tokens, mask), targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
        optimizer.step()
        losses.append(loss.item())
        if first is not None:
            variances.append(first.last_var)
        if on_step is not None:
            on_step(step + 1)
    return VariantRun(
        variant,
        tuple(losses),
        evaluate(model, held_out, train_mode=False),
        evaluate(model, held_out, train_mode=True),
        grads,
        tuple(variances),
        time.perf_counter() - start,
    )
