"""One lab run: every chosen variant on the same data and seed, post-LN with and without
warm-up, and the gradients at initialisation for every depth, as one plain result.

The numbers the page states are properties here, so tests check the same numbers.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from lnlab.core.backend import cpu_threads
from lnlab.labs.training.config import MAX_LAYERS, TrainConfig
from lnlab.labs.training.data import make_batch
from lnlab.labs.training.train import BATCH, VariantRun, build, layer_grad_norms, train_variant

Progress = Callable[[int, int], None]  # (steps done, steps in all)


@dataclass(frozen=True)
class LabResult:
    """A run's numbers: no tensors, so it crosses processes and caches cheaply."""

    config: TrainConfig
    runs: tuple[VariantRun, ...]  # the chosen variants, in order
    warmup_on: VariantRun  # post-LN with warm-up (the chosen run when it is one)
    warmup_off: VariantRun  # post-LN without
    depth_grads: dict[str, tuple[tuple[float, ...], ...]]  # post/pre: per depth 1..MAX_LAYERS
    seconds: float

    def run(self, variant: str) -> VariantRun | None:
        """The chosen variant's run, or None when it was not chosen."""
        return next((r for r in self.runs if r.variant == variant), None)


def run_lab(config: TrainConfig, on_progress: Progress | None = None) -> LabResult:
    """Train every chosen variant and post-LN both ways; report each step to `on_progress`.

    On one CPU thread, as the exported script: the same numbers in the worker, the tests
    and the script, to the last bit (the thread count changes how sums are split).
    """
    with cpu_threads(1):
        return _run_lab(config, on_progress)


def _run_lab(config: TrainConfig, on_progress: Progress | None) -> LabResult:
    start = time.perf_counter()
    total = config.trained_runs * config.steps
    done = 0

    def trained(variant: str, warmup: bool) -> VariantRun:
        nonlocal done
        offset = done
        run = train_variant(
            variant,
            config.layers,
            config.lr,
            warmup,
            config.padding,
            config.steps,
            config.seed,
            on_step=None if on_progress is None else lambda k: on_progress(offset + k, total),
        )
        done += config.steps
        return run

    runs = tuple(trained(v, config.warmup) for v in config.variants)
    chosen = next((r for r in runs if r.variant == "post"), None)
    post = {} if chosen is None else {config.warmup: chosen}
    for warmup in (True, False):
        if warmup not in post:
            post[warmup] = trained("post", warmup)
    grads = depth_grads(config.seed, config.padding)
    return LabResult(config, runs, post[True], post[False], grads, time.perf_counter() - start)


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
