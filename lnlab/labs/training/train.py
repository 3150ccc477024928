"""One variant trained on the synthetic task with fixed seeds, and its gradients at
initialisation.

Every variant of a run sees the same initial-weight seed and the same batches. Adam with
β = (0.9, 0.98) as in "Attention Is All You Need"; warm-up raises the learning rate linearly
over the first WARMUP_SHARE of the steps, then holds it. A Trainer can stop after any step
and go on later, in another process, to the same bits: the lab trains in pieces of a few
seconds so that other visitors' heavy work need not wait for a whole run.
"""

from __future__ import annotations

import io
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Self

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


@dataclass(frozen=True)
class Recipe:
    """Everything one variant's training depends on: the same recipe gives the same numbers
    (fixed seeds, one CPU thread), so it is also the key its results are kept under."""

    variant: str
    layers: int
    lr: float
    warmup: bool
    padding: float
    steps: int
    seed: int


class Trainer:
    """One variant's training under way: made at step 0, advanced a piece at a time, saved
    and resumed between pieces (state, resume) with every bit kept, then evaluated."""

    def __init__(self, recipe: Recipe, device: str = "cpu") -> None:
        self.recipe, self.device = recipe, device
        self.model = build(recipe.variant, recipe.layers, recipe.seed).to(device)
        self.data = torch.Generator().manual_seed(recipe.seed + 1)
        first_batch = tuple(t.to(device) for t in make_batch(self.data, BATCH, recipe.padding))
        self.grads = layer_grad_norms(self.model, first_batch)
        self.first = next((m for m in self.model.modules() if isinstance(m, BatchNorm)), None)
        self.optimizer = torch.optim.Adam(
            self.model.parameters(), lr=recipe.lr, betas=(0.9, 0.98), foreach=True
        )
        self.losses: list[float] = []
        self.variances: list[float] = []
        self.seconds = 0.0

    @property
    def done(self) -> int:
        """Steps taken so far."""
        return len(self.losses)

    def advance(
        self,
        until: int,
        on_step: Callable[[int], None] | None = None,
        budget_s: float | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> None:
        """Take Adam steps up to step `until` (at most the recipe's steps) on fresh batches;
        with a budget, stop after the step that uses it up, and with `stop`, after the step
        under way when it says so (asked before each step; one step at least either way). Where
        it stops changes nothing of the numbers: a step depends only on the state."""
        start, first = time.perf_counter(), self.done
        r = self.recipe
        for step in range(first, min(until, r.steps)):
            if step > first:
                spent = time.perf_counter() - start
                if budget_s is not None and spent >= budget_s:
                    break
                if stop is not None and stop():
                    break
            for group in self.optimizer.param_groups:
                group["lr"] = learning_rate(step, r.steps, r.lr, r.warmup)
            batch = make_batch(self.data, BATCH, r.padding)
            tokens, mask, targets = (t.to(self.device) for t in batch)
            loss = loss_fn(self.model(tokens, mask), targets)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), CLIP)
            self.optimizer.step()
            self.losses.append(loss.item())
            if self.first is not None:
                self.variances.append(self.first.last_var)
            if on_step is not None:
                on_step(step + 1)
        self.seconds += time.perf_counter() - start

    def result(self) -> VariantRun:
        """The run's numbers, with the held-out loss in both modes (after the last step)."""
        r = self.recipe
        held_out = make_batch(torch.Generator().manual_seed(r.seed + 2), EVAL_BATCH, r.padding)
        held_out = tuple(t.to(self.device) for t in held_out)
        return VariantRun(
            r.variant,
            tuple(self.losses),
            evaluate(self.model, held_out, train_mode=False),
            evaluate(self.model, held_out, train_mode=True),
            self.grads,
            tuple(self.variances),
            self.seconds,
        )

    def state(self) -> bytes:
        """Everything the next step depends on, as bytes (torch.save): weights, running
        statistics, Adam's moments, the data generator, and the numbers so far."""
        buffer = io.BytesIO()
        torch.save(
            {
                "model": self.model.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "data": self.data.get_state(),
                "grads": self.grads,
                "losses": self.losses,
                "variances": self.variances,
                "seconds": self.seconds,
            },
            buffer,
        )
        return buffer.getvalue()

    @classmethod
    def resume(cls, recipe: Recipe, state: bytes, device: str = "cpu") -> Self:
        """The trainer that state() saved, ready to take its next step."""
        saved = torch.load(io.BytesIO(state), map_location=device, weights_only=True)
        trainer = cls.__new__(cls)
        trainer.recipe, trainer.device = recipe, device
        trainer.model = build(recipe.variant, recipe.layers, recipe.seed).to(device)
        trainer.model.load_state_dict(saved["model"])
        trainer.first = next((m for m in trainer.model.modules() if isinstance(m, BatchNorm)), None)
        trainer.optimizer = torch.optim.Adam(
            trainer.model.parameters(), lr=recipe.lr, betas=(0.9, 0.98), foreach=True
        )
        trainer.optimizer.load_state_dict(saved["optimizer"])
        trainer.data = torch.Generator()
        trainer.data.set_state(saved["data"])
        trainer.grads = tuple(saved["grads"])
        trainer.losses, trainer.variances = list(saved["losses"]), list(saved["variances"])
        trainer.seconds = saved["seconds"]
        return trainer


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
    trainer = Trainer(Recipe(variant, layers, lr, warmup, padding, steps, seed), device)
    trainer.advance(steps, on_step)
    return trainer.result()
