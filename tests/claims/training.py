"""The training lab's claims, checked on real and made-up runs.

A case is one lab result, with the default four variants (post-LN, pre-LN, naive and masked
Batch Norm: the words that change with the chosen variants are which slides and lists show,
not claims about numbers; tests/labs/training covers the other choices). Training takes a
whole run per seed, so the trained numbers (losses, Batch Norm's variance, the held-out
gaps) are made up, one case for each branch of the words; the gradients at initialisation,
which need no training, are the real ones of three seeds (run.depth_grads, about 1 s each,
computed once): seed 1 (post-LN grows by over 20 % towards the output), seed 4 (post-LN's
largest next to the output, but by under 20 %: "this run agrees on the first, not on the
second" was false there), seed 6 (pre-LN's last block grows with depth). Made-up gradients
cover the rest: post-LN below pre-LN, every block alike, numbers at 1e-9, the ratio
shrinking with depth.

Each check recomputes its condition from the result's numbers in float64 numpy: a change
counts beyond 1.2x, as the words say ("by over 20 %").
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterator

import numpy as np

from lnlab.core.backend import cpu_threads
from lnlab.labs.training.config import MAX_LAYERS, TrainConfig
from lnlab.labs.training.lesson import slides
from lnlab.labs.training.run import LabResult, depth_grads
from lnlab.labs.training.train import VariantRun
from lnlab.teach.claims import Said
from lnlab.teach.lesson import Lesson

MARGIN = 1.2  # "by over 20 %"
DEFAULT = TrainConfig()
Grads = dict[str, tuple[tuple[float, ...], ...]]


@dataclasses.dataclass(frozen=True, eq=False)
class Run:
    """A case: a lab result and its name (the test's id)."""

    name: str
    result: LabResult

    def __repr__(self) -> str:
        return self.name


@dataclasses.dataclass(frozen=True)
class Profile:
    """Made-up gradient norms at initialisation: `one` for a one-block model's block; block 1
    of an L-block model goes geometrically from `one` (L = 1) to `deep` (L = MAX_LAYERS), and
    the last block has `growth` times block 1's."""

    one: float
    deep: float
    growth: float

    def at(self, layers: int) -> tuple[float, ...]:
        first = self.one * (self.deep / self.one) ** ((layers - 1) / (MAX_LAYERS - 1))
        if layers == 1:
            return (first,)
        return tuple(first * self.growth ** (j / (layers - 1)) for j in range(layers))


def made_up_grads(post: Profile, pre: Profile) -> Grads:
    """A depth experiment (run.depth_grads's shape) from made-up profiles."""
    return {
        v: tuple(p.at(k) for k in range(1, MAX_LAYERS + 1))
        for v, p in (("post", post), ("pre", pre))
    }


@functools.cache
def seed_grads(seed: int) -> Grads:
    """The real gradients at initialisation of `seed` (the default padding), as a run has."""
    with cpu_threads(1):
        return depth_grads(seed, DEFAULT.padding)


def swings(level: float, share: float, steps: int) -> tuple[float, ...]:
    """A batch variance alternating level ± share * level: std over mean is `share`."""
    return tuple(level * (1 + (share if k % 2 else -share)) for k in range(steps))


LOSSES = {"post": 2.5, "pre": 1.0, "bn": 1.5, "mbn": 1.2}
GAPS = {"post": 0.0, "pre": 0.0, "bn": 0.1, "mbn": -0.05}


def lab(
    grads: Grads,
    *,
    config: TrainConfig = DEFAULT,
    losses: dict[str, float] = LOSSES,
    warm: tuple[float, float] = (1.0, 2.5),
    fluct: tuple[float, float] = (0.10, 0.04),
    gaps: dict[str, float] = GAPS,
) -> LabResult:
    """A result of the default four variants: flat losses at `losses`, post-LN's at `warm`
    (with warm-up, without), Batch Norm's variance varying by `fluct` (naive, masked), the
    held-out loss higher in evaluation mode by `gaps`, and the gradients `grads`."""
    steps, n = config.steps, config.layers

    def run(variant: str, loss: float) -> VariantRun:
        norms = grads.get(variant, grads["pre"])[n - 1]
        share = {"bn": fluct[0], "mbn": fluct[1]}.get(variant)
        var = () if share is None else swings(1.0, share, steps)
        held = 1.0 + gaps[variant]
        return VariantRun(variant, (loss,) * steps, held, 1.0, norms, var, 1.0)

    on, off = run("post", warm[0]), run("post", warm[1])
    chosen = {v: run(v, losses[v]) for v in config.variants}
    chosen["post"] = on if config.warmup else off
    runs = tuple(chosen[v] for v in config.variants)
    return LabResult(config, runs, on, off, grads, 4.0)


def _cases() -> list[Run]:
    six, one, two, eight = (TrainConfig(layers=k) for k in (6, 1, 2, 8))
    below = made_up_grads(Profile(0.5, 0.5, 0.7), Profile(1.0, 0.5, 1.5))
    alike = made_up_grads(Profile(1.0, 1.0, 1.0), Profile(1.0, 1.0, 1.0))
    tiny = made_up_grads(Profile(3e-9, 3e-9, 2.0), Profile(1e-9, 2e-9, 1.0))
    shrinking = made_up_grads(Profile(4.0, 1.0, 1.1), Profile(1.0, 2.0, 1.0))
    return [
        Run("seed 1, 6 blocks", lab(seed_grads(1))),
        Run("seed 4, 6 blocks", lab(seed_grads(4))),
        Run("seed 6, 6 blocks, warm-up on", lab(seed_grads(6), config=TrainConfig(warmup=True))),
        Run("seed 4, 1 block", lab(seed_grads(4), config=one)),
        Run("seed 1, 2 blocks", lab(seed_grads(1), config=two)),
        Run(
            "seed 6's gradients, 8 blocks, padding 0.75",
            lab(seed_grads(6), config=TrainConfig(layers=8, padding=0.75)),
        ),
        Run("post-LN below pre-LN", lab(below, config=six, warm=(2.5, 1.0))),
        Run("every block alike", lab(alike, config=six, warm=(1.0, 1.1), fluct=(0.05, 0.05))),
        Run("alike, one block", lab(alike, config=one, fluct=(0.04, 0.10))),
        Run(
            "numbers at 1e-9",
            lab(
                tiny,
                config=eight,
                losses={"post": 4e-5, "pre": 1e-5, "bn": 3e-5, "mbn": 2e-5},
                warm=(1e-5, 4e-5),
                fluct=(1e-6, 4e-6),
                gaps={"post": 0.0, "pre": 0.0, "bn": 3e-7, "mbn": -1e-7},
            ),
        ),
        Run("ratio shrinking with depth", lab(shrinking, config=TrainConfig(padding=0.0))),
        Run(
            "a Layer Norm gap, a Batch Norm without",
            lab(alike, config=six, gaps={"post": 0.02, "pre": 0.0, "bn": 0.0, "mbn": 0.3}),
        ),
        Run(
            "warm-up helps, no larger gradient",
            lab(alike, config=TrainConfig(warmup=True), warm=(1.0, 3.0)),
        ),
    ]


@functools.cache
def _corpus() -> tuple[Run, ...]:
    return tuple(_cases())


def cases() -> list[Run]:
    """The same objects on every call: the claims test caches each case's lessons by it."""
    return list(_corpus())


def lessons(case: Run) -> Iterator[Lesson]:
    yield slides(case.result.config, case.result)


# ---------------------------------------------------------------- the checks, from the numbers


def _run(case: Run, variant: str) -> VariantRun:
    return next(r for r in case.result.runs if r.variant == variant)


def _norms(case: Run, variant: str) -> np.ndarray:
    return np.asarray(_run(case, variant).grad_norms, np.float64)


def _final(case: Run, variant: str) -> float:
    return float(np.mean(np.asarray(_run(case, variant).losses, np.float64)[-10:]))


def _finals(case: Run) -> dict[str, float]:
    return {r.variant: _final(case, r.variant) for r in case.result.runs}


def _fluct(case: Run, variant: str) -> float:
    v = np.asarray(_run(case, variant).bn_var, np.float64)
    tail = v[v.size // 4 :]
    return float(np.std(tail) / abs(np.mean(tail)))


def _gaps(case: Run) -> dict[str, float]:
    return {
        r.variant: float(np.float64(r.eval_loss) - r.eval_loss_train_mode) for r in case.result.runs
    }


def _last_by_depth(case: Run, variant: str) -> np.ndarray:
    """The last block's gradient norm of models of 1..MAX_LAYERS blocks."""
    return np.array([g[-1] for g in case.result.depth_grads[variant]], np.float64)


def _ratios(case: Run) -> np.ndarray:
    return _last_by_depth(case, "post") / _last_by_depth(case, "pre")


def _warm(case: Run) -> tuple[float, float]:
    tail = [
        np.mean(np.asarray(r.losses, np.float64)[-10:])
        for r in (case.result.warmup_on, case.result.warmup_off)
    ]
    return float(tail[0]), float(tail[1])


def _over(a: float, b: float) -> bool:
    return bool(a > MARGIN * b)


def _at_depth(case: Run) -> tuple[float, float]:
    """Post-LN's and pre-LN's last block at the run's depth, from the depth experiment."""
    n = case.result.config.layers
    return tuple(float(case.result.depth_grads[v][n - 1][-1]) for v in ("post", "pre"))


def _is_extreme(pick: Callable[..., float]) -> Callable[[Run, Said], bool]:
    def check(case: Run, said: Said) -> bool:
        finals = _finals(case)
        return finals[said.facts["variant"]] == pick(finals.values())

    return check


def _widest_gap(case: Run, said: Said) -> bool:
    gaps = _gaps(case)
    return abs(gaps[said.facts["variant"]]) == max(abs(g) for g in gaps.values())


def _only_batch_norm_gaps(case: Run, said: Said) -> bool:
    return all((g != 0) == (v in ("bn", "mbn")) for v, g in _gaps(case).items())


CHECKS: dict[str, Callable[[Run, Said], bool]] = {
    "training.one_block": lambda c, s: c.result.config.layers == 1,
    "training.warmup_on": lambda c, s: c.result.config.warmup,
    "training.lowest_loss": _is_extreme(min),
    "training.highest_loss": _is_extreme(max),
    "training.post_larger": lambda c, s: _over(_norms(c, "post")[-1], _norms(c, "pre")[-1]),
    "training.pre_larger": lambda c, s: _over(_norms(c, "pre")[-1], _norms(c, "post")[-1]),
    "training.post_grows": lambda c, s: _over(_norms(c, "post")[-1], _norms(c, "post")[0]),
    "training.post_shrinks": lambda c, s: _over(_norms(c, "post")[0], _norms(c, "post")[-1]),
    "training.pre_grows": lambda c, s: _over(_norms(c, "pre")[-1], _norms(c, "pre")[0]),
    "training.pre_shrinks": lambda c, s: _over(_norms(c, "pre")[0], _norms(c, "pre")[-1]),
    "training.ratio_grows": lambda c, s: _over(_ratios(c)[-1], _ratios(c)[0]),
    "training.ratio_shrinks": lambda c, s: _over(_ratios(c)[0], _ratios(c)[-1]),
    "training.pre_deep_grows": lambda c, s: _over(
        _last_by_depth(c, "pre")[-1], _last_by_depth(c, "pre")[0]
    ),
    "training.pre_deep_shrinks": lambda c, s: _over(
        _last_by_depth(c, "pre")[0], _last_by_depth(c, "pre")[-1]
    ),
    "training.warmup_helps": lambda c, s: _over(_warm(c)[1], _warm(c)[0]),
    "training.warmup_hurts": lambda c, s: _over(_warm(c)[0], _warm(c)[1]),
    "training.warmup_reason": lambda c, s: _over(*_at_depth(c)),
    "training.naive_varies_more": lambda c, s: _over(_fluct(c, "bn"), _fluct(c, "mbn")),
    "training.masked_varies_more": lambda c, s: _over(_fluct(c, "mbn"), _fluct(c, "bn")),
    "training.largest_gap": _widest_gap,
    "training.only_batch_norm_gaps": _only_batch_norm_gaps,
}
