"""One lab run: every chosen variant on the same data and seed, post-LN with and without
warm-up, and the gradients at initialisation for every depth, as one plain result.

The numbers the page states are properties here, so tests check the same numbers.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping
from dataclasses import astuple, dataclass

import torch

from lnlab.core.backend import cpu_threads
from lnlab.labs.training.config import MAX_LAYERS, TrainConfig
from lnlab.labs.training.data import make_batch
from lnlab.labs.training.train import (
    BATCH,
    Recipe,
    VariantRun,
    build,
    layer_grad_norms,
    train_variant,
)

Progress = Callable[[int, int], None]  # (steps done, steps in all)


@dataclass(frozen=True)
class LabResult:
    """A run's numbers: no tensors, so it crosses processes and caches cheaply."""

    config: TrainConfig
    runs: tuple[VariantRun, ...]  # the chosen variants, in order
    warmup_on: VariantRun  # post-LN with warm-up (the chosen run when it is one)
    warmup_off: VariantRun  # post-LN without
    depth_grads: dict[str, tuple[tuple[float, ...], ...]]  # post/pre: per depth 1..MAX_LAYERS
    seconds: float  # training time, summed over the variants

    def run(self, variant: str) -> VariantRun | None:
        """The chosen variant's run, or None when it was not chosen."""
        return next((r for r in self.runs if r.variant == variant), None)


def recipes(config: TrainConfig) -> tuple[Recipe, ...]:
    """The trainings a lab run is made of: each chosen variant, then post-LN with the other
    warm-up setting (both settings when post-LN is not chosen)."""

    def recipe(variant: str, warmup: bool) -> Recipe:
        c = config
        return Recipe(variant, c.layers, c.lr, warmup, c.padding, c.steps, c.seed)

    chosen = tuple(recipe(v, config.warmup) for v in config.variants)
    post = {config.warmup} if "post" in config.variants else set()
    return chosen + tuple(recipe("post", w) for w in (True, False) if w not in post)


def assemble(
    config: TrainConfig,
    runs: Mapping[Recipe, VariantRun],
    grads: dict[str, tuple[tuple[float, ...], ...]],
) -> LabResult:
    """The lab's result from its trainings (keyed by recipe) and the depth gradients."""
    needed = recipes(config)
    post = {r.warmup: runs[r] for r in needed if r.variant == "post"}
    chosen = tuple(runs[r] for r in needed[: len(config.variants)])
    seconds = sum(runs[r].seconds for r in needed)
    return LabResult(config, chosen, post[True], post[False], grads, seconds)


def run_lab(config: TrainConfig, on_progress: Progress | None = None) -> LabResult:
    """Train every chosen variant and post-LN both ways; report each step to `on_progress`.

    On one CPU thread, as the exported script: the same numbers in the worker, the tests
    and the script, to the last bit (the thread count changes how sums are split).
    """
    total = config.trained_runs * config.steps
    runs = {}
    with cpu_threads(1):
        for k, recipe in enumerate(recipes(config)):
            offset = k * config.steps
            on_step = None if on_progress is None else lambda s, o=offset: on_progress(o + s, total)
            runs[recipe] = train_variant(*astuple(recipe), on_step=on_step)
        return assemble(config, runs, depth_grads(config.seed, config.padding))


def final_loss(run: VariantRun, window: int = 10) -> float:
    """The mean training loss over the last `window` steps: one step's loss is noisy."""
    return statistics.fmean(run.losses[-window:])


def fluctuation(values: tuple[float, ...]) -> float:
    """Standard deviation over mean of a statistic over the last three quarters of training
    (the first quarter is the model moving fast)."""
    tail = values[len(values) // 4 :]
    return statistics.pstdev(tail) / abs(statistics.fmean(tail))


def depth_grads(seed: int, padding: float) -> dict[str, tuple[tuple[float, ...], ...]]:
    """Per-block gradient norms at initialisation, post-LN and pre-LN, at every depth."""
    batch = make_batch(torch.Generator().manual_seed(seed + 1), BATCH, padding)
    return {
        v: tuple(
            layer_grad_norms(build(v, depth, seed), batch) for depth in range(1, MAX_LAYERS + 1)
        )
        for v in ("post", "pre")
    }
