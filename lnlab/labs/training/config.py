"""The lab's settings, checked, with the caps that keep every run small.

A configuration names everything a run depends on, so it is also the run's cache key: the
same configuration always gives the same curves (fixed seeds, one CPU thread).
"""

from __future__ import annotations

from dataclasses import dataclass

from lnlab.core.errors import InputError
from lnlab.labs.training.model import VARIANTS

LEARNING_RATES = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)
PADDINGS = (0.0, 0.25, 0.5, 0.75)  # share of the batch's positions that are padding, on average
MIN_LAYERS, MAX_LAYERS = 1, 8
MIN_STEPS, MAX_STEPS = 20, 300
MAX_SEED = 9999
MAX_WORK = 8_000  # layers x steps x trained runs: about 25 s on one shared CPU thread
DEFAULT_VARIANTS = ("post", "pre", "bn", "mbn")


@dataclass(frozen=True)
class TrainConfig:
    """What one lab run trains: the variants (keys of model.VARIANTS), the number of blocks,
    Adam's learning rate, warm-up on or off, the padding share, the steps and the seed."""

    variants: tuple[str, ...] = DEFAULT_VARIANTS
    layers: int = 6  # the default shows post-LN failing without warm-up
    lr: float = 1e-2
    warmup: bool = False
    padding: float = 0.5
    steps: int = 100
    seed: int = 0

    def __post_init__(self) -> None:
        problems = []
        unknown = [v for v in self.variants if v not in VARIANTS]
        if unknown:
            problems.append(f"unknown variant {unknown[0]!r} (one of {', '.join(VARIANTS)})")
        if not self.variants or len(set(self.variants)) != len(self.variants):
            problems.append("choose at least one variant, each once")
        for name, value, low, high in (
            ("layers", self.layers, MIN_LAYERS, MAX_LAYERS),
            ("steps", self.steps, MIN_STEPS, MAX_STEPS),
            ("seed", self.seed, 0, MAX_SEED),
        ):
            if not isinstance(value, int) or not low <= value <= high:
                problems.append(f"{name} must be a whole number from {low} to {high}, not {value}")
        if self.lr not in LEARNING_RATES:
            problems.append(
                f"the learning rate must be one of {', '.join(map(str, LEARNING_RATES))}"
            )
        if self.padding not in PADDINGS:
            problems.append(f"the padding share must be one of {', '.join(map(str, PADDINGS))}")
        if not problems and self.work > MAX_WORK:
            problems.append(
                f"{self.layers} layers x {self.steps} steps x {self.trained_runs} runs = "
                f"{self.work:,} is over the cap of {MAX_WORK:,}: use fewer layers, steps or "
                "variants"
            )
        if problems:
            raise InputError("; ".join(problems))

    @property
    def trained_runs(self) -> int:
        """The chosen variants, plus post-LN with the other warm-up setting."""
        return len(self.variants) + 1 + ("post" not in self.variants)

    @property
    def work(self) -> int:
        """layers x steps x trained runs: what a run's time grows with."""
        return self.layers * self.steps * self.trained_runs
