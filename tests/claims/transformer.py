"""The transformer lab's claims, checked on both norm positions, many depths and layer counts,
and depth stacks of other seeds and widths than the page's (8 tokens of width 64, seed 0).

The page takes the norm position, the depth and the layer count; its words must also hold for
any other draw of the stack, so some cases swap in a stack of another seed or width (down to
2 features, where a Layer Norm's output is far from unit size). Every check rebuilds what it
needs here from the documented recipes, in float64 numpy: the worked example's step (the seed
preset's tokens, W ~ N(0, 1) rounded to one decimal with seed 4) and the three stacks (x0, then
W_l ~ N(0, 1/width), drawn from one generator).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from lnlab.labs.transformer import model as tf
from lnlab.labs.transformer.lesson import slides
from lnlab.teach.claims import Said
from lnlab.teach.lesson import Lesson
from lnlab.teach.presets import token_preset

EPS = 1e-5
TOKENS, WIDTH, SEED = 8, 64, 0  # the page's stack
AT_ONE = 1e-3  # an RMS "is 1" this close to it
SQRT_LAW = 0.1  # "like the square root of depth": within 10% of the law at every layer


@dataclass(frozen=True)
class Stack:
    """Where the norm sits, the depth and the layer count; the stack's seed and width."""

    position: str
    depth: int
    layers: int = tf.DEFAULT_LAYERS
    seed: int = SEED
    width: int = WIDTH

    def __repr__(self) -> str:
        stack = f"seed {self.seed} width {self.width}"
        return f"{self.position} depth {self.depth} layers {self.layers} {stack}"


def cases() -> list[Stack]:
    shapes = [
        {"depth": 1, "layers": 1},
        {"depth": 2},
        {"depth": 24},
        {"depth": 48, "layers": 96},
        {"depth": 24, "seed": 1},
        {"depth": 48, "seed": 7},
        {"depth": 12, "width": 256},
        {"depth": 24, "width": 8},
        {"depth": 48, "width": 4, "seed": 5},
        {"depth": 48, "width": 2, "seed": 3},
        {"depth": 3, "width": 2, "seed": 1},
    ]
    return [Stack(position, **shape) for position in tf.NORM_POSITIONS for shape in shapes]


def lessons(case: Stack) -> Iterator[Lesson]:
    lesson = tf.transformer_lesson(case.position, case.depth, case.layers)
    if (case.seed, case.width) != (SEED, WIDTH):
        stack = tf.depth_experiment(case.depth, seed=case.seed, width=case.width)
        lesson = dataclasses.replace(lesson, depth=stack)
    yield slides(lesson)


# ---------------------------------------------------------------- the checks' own numbers


def _ln(x: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=1, keepdims=True) + EPS)


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(x**2)))


@functools.cache
def _streams(case: Stack) -> dict[str, list[np.ndarray]]:
    """The three stacks' streams, the input first: no norm, post-norm, pre-norm."""
    rng = np.random.default_rng(case.seed)
    x0 = rng.standard_normal((TOKENS, case.width))
    shape, scale = (case.width, case.width), 1 / np.sqrt(case.width)  # gain 1
    maps = [scale * rng.standard_normal(shape) for _ in range(case.depth)]
    steps = {
        "none": lambda x, w: x + x @ w,
        "post": lambda x, w: _ln(x + x @ w),
        "pre": lambda x, w: x + _ln(x) @ w,
    }
    streams = {}
    for name, step in steps.items():
        xs = [x0]
        for w in maps:
            xs.append(step(xs[-1], w))
        streams[name] = xs
    return streams


def _sizes(case: Stack, name: str) -> np.ndarray:
    return np.array([_rms(x) for x in _streams(case)[name]])


def _normed(case: Stack) -> np.ndarray:
    """RMS of LN of pre-norm's stream before each layer, then after the last (the final LN)."""
    return np.array([_rms(_ln(x)) for x in _streams(case)["pre"]])


def _within(off: float, said: Said) -> bool:
    """An RMS "is 1": off by at most AT_ONE, and by no more than the bound the sentence gave."""
    return off <= AT_ONE and off <= float(str(said.facts["bound"]))


def _leaves_unit(case: Stack, said: Said) -> bool:
    """Post-norm's worked step: LN(x + ReLU(xW)) has mean 0 and std 1, within AT_ONE and the
    bound said."""
    x = token_preset(tf.EXAMPLE_PRESET).x
    w = np.round(np.random.default_rng(4).standard_normal((x.shape[1], x.shape[1])), 1)
    out = _ln(x + np.maximum(x @ w, 0.0))
    centred = np.all(np.abs(out.mean(axis=1)) <= 1e-9)
    return bool(centred and _within(float(np.max(np.abs(out.std(axis=1) - 1))), said))


def _sqrt_law(case: Stack) -> bool:
    pre = _sizes(case, "pre")
    law = np.sqrt(pre[0] ** 2 + np.arange(case.depth + 1))  # gain 1
    return bool(np.max(np.abs(pre / law - 1)) <= SQRT_LAW)


def _post_off(case: Stack) -> float:
    return float(np.max(np.abs(_sizes(case, "post")[1:] - 1)))


def _about(position: str) -> Callable[[Stack, Said], bool]:
    return lambda case, said: case.position == position


CHECKS: dict[str, Callable[[Stack, Said], bool]] = {
    **{f"transformer.about_{p}": _about(p) for p in tf.NORM_POSITIONS},
    "transformer.leaves_unit": _leaves_unit,
    "transformer.no_norm_explodes": lambda c, s: _sizes(c, "none")[-1] > 100 * _sizes(c, "none")[0],
    "transformer.no_norm_grows": lambda c, s: _sizes(c, "none")[-1] > _sizes(c, "none")[0],
    "transformer.no_norm_grows_every_layer": lambda c, s: np.all(np.diff(_sizes(c, "none")) > 0),
    "transformer.post_norm_at_1": lambda c, s: _within(_post_off(c), s),
    "transformer.pre_norm_grows": lambda c, s: _sizes(c, "pre")[-1] > _sizes(c, "pre")[0],
    "transformer.pre_norm_sqrt": lambda c, s: _sqrt_law(c),
    "transformer.fed_at_1": lambda c, s: _within(float(np.max(np.abs(_normed(c)[:-1] - 1))), s),
    "transformer.final_at_1": lambda c, s: _within(abs(float(_normed(c)[-1]) - 1), s),
}
