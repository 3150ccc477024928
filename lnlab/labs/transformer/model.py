"""Layer Norm inside a Transformer: Add & Norm, post-norm versus pre-norm, and depth.

Two places for the norm around a sublayer f (attention or feed-forward) on the residual stream:

- post-norm (the original Transformer): x <- LayerNorm(x + f(x))
- pre-norm (GPT-2 and most models since): x <- x + f(LayerNorm(x)), plus one final LayerNorm

Everything here is plain, deterministic numpy (fixed seeds), so every number the page shows can
be recomputed and tested.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from lnlab.core.errors import InputError
from lnlab.core.norms import layer_norm, root_mean_square
from lnlab.core.numbers import DEFAULT_EPS
from lnlab.teach.presets import token_preset

POST_NORM = "post-norm"
PRE_NORM = "pre-norm"
NORM_POSITIONS = (POST_NORM, PRE_NORM)
NO_NORM = "no norm"
VARIANTS = (NO_NORM, POST_NORM, PRE_NORM)  # the three residual stacks of the depth experiment

MIN_DEPTH, MAX_DEPTH, DEFAULT_DEPTH = 1, 48, 24
MIN_LAYERS, MAX_LAYERS, DEFAULT_LAYERS = 1, 96, 12

EXAMPLE_PRESET = "hello"  # the worked example's input: a seed tutorial's token embeddings
EXAMPLE_SEED = 4  # seeds the sublayer's weights in the worked example
STACK_SEED = 0
STACK_WIDTH = 64  # features per token in the depth experiment
STACK_TOKENS = 8
STACK_GAIN = 1.0  # each layer's map has entries N(0, gain^2 / width): it keeps |f(x)| ~ |x|
EPS = DEFAULT_EPS  # PyTorch's default

SECTIONS = (  # the page's three sections: one slide each in presenter mode
    "Add & Norm on a small block",
    "Depth: how big the residual stream gets",
    "How many Layer Norms a prompt passes through",
)
NORMED = "pre-norm LN(x)"  # the depth table's column: RMS of LN of pre-norm's stream

ORIGINAL_ENCODER_LAYERS = 6  # "Attention Is All You Need", base model
ORIGINAL_DECODER_LAYERS = 6

Sublayer = Callable[[np.ndarray], np.ndarray]


# ---------------------------------------------------------------- the block's structure


@dataclass(frozen=True)
class BlockStep:
    """One box of a block diagram.

    kind is "io", "sublayer", "norm", "add" or "add-norm". An add sums the stream that entered
    step `skip_from` (the residual connection) with the output of the step just before it.
    """

    label: str
    kind: str
    repeated: bool  # True inside the block that repeats once per layer
    skip_from: int | None = None


def check_norm_position(norm_position: str) -> str:
    """The norm position if it is one we know, else InputError."""
    if norm_position not in NORM_POSITIONS:
        raise InputError(f"norm position must be one of {', '.join(NORM_POSITIONS)}")
    return norm_position


def block_steps(norm_position: str) -> tuple[BlockStep, ...]:
    """The boxes of one Transformer block (decoder-only), from input to output, in order."""
    if check_norm_position(norm_position) == POST_NORM:
        return (
            BlockStep("Input", "io", repeated=False),
            BlockStep("Multi-Head Attention", "sublayer", repeated=True),
            BlockStep("Add & Norm", "add-norm", repeated=True, skip_from=1),
            BlockStep("Feed-Forward", "sublayer", repeated=True),
            BlockStep("Add & Norm", "add-norm", repeated=True, skip_from=3),
            BlockStep("Output", "io", repeated=False),
        )
    return (
        BlockStep("Input", "io", repeated=False),
        BlockStep("LayerNorm", "norm", repeated=True),
        BlockStep("Multi-Head Attention", "sublayer", repeated=True),
        BlockStep("Add", "add", repeated=True, skip_from=1),
        BlockStep("LayerNorm", "norm", repeated=True),
        BlockStep("Feed-Forward", "sublayer", repeated=True),
        BlockStep("Add", "add", repeated=True, skip_from=4),
        BlockStep("Final LayerNorm", "norm", repeated=False),
        BlockStep("Output", "io", repeated=False),
    )


# ---------------------------------------------------------------- counting Layer Norms


@dataclass(frozen=True)
class LayerNormCount:
    """How many Layer Norms one token passes through in a decoder-only stack of `layers`."""

    layers: int
    post_norm: int  # 2 per layer
    pre_norm: int  # 2 per layer + the final one
    encoder_decoder: int  # the original Transformer (post-norm), 6 + 6 layers


def check_layers(layers: int) -> int:
    """A layer count within [MIN_LAYERS, MAX_LAYERS], else InputError."""
    return _check_int(layers, "the number of layers", MIN_LAYERS, MAX_LAYERS)


def layer_norm_count(layers: int, norm_position: str) -> int:
    """Norms per layer times layers, plus the norms outside the repeated block (pre-norm: 1)."""
    steps = block_steps(norm_position)
    norms = [s for s in steps if s.kind in ("norm", "add-norm")]
    per_layer = sum(s.repeated for s in norms)
    return check_layers(layers) * per_layer + (len(norms) - per_layer)


def encoder_decoder_count(encoder_layers: int, decoder_layers: int) -> int:
    """Post-norm encoder-decoder: 2 norms per encoder layer, 3 per decoder layer.

    A decoder layer has three sublayers (self-attention, cross-attention, feed-forward), each
    followed by its own Add & Norm.
    """
    return 2 * encoder_layers + 3 * decoder_layers


def count_layer_norms(layers: int) -> LayerNormCount:
    """The Layer Norm counts for `layers` layers, both placements."""
    return LayerNormCount(
        layers=check_layers(layers),
        post_norm=layer_norm_count(layers, POST_NORM),
        pre_norm=layer_norm_count(layers, PRE_NORM),
        encoder_decoder=encoder_decoder_count(ORIGINAL_ENCODER_LAYERS, ORIGINAL_DECODER_LAYERS),
    )


# ---------------------------------------------------------------- one residual step


def post_norm_step(x: np.ndarray, sublayer: Sublayer, eps: float = EPS) -> np.ndarray:
    """x + f(x), then Layer Norm over each token's features."""
    return layer_norm(x + sublayer(x), eps=eps)


def pre_norm_step(x: np.ndarray, sublayer: Sublayer, eps: float = EPS) -> np.ndarray:
    """x + f(LayerNorm(x)): the stream itself is never normalized, only the sublayer's input."""
    return x + sublayer(layer_norm(x, eps=eps))


def rms(a: np.ndarray) -> float:
    """Root mean square over all entries: sqrt(mean(a^2)), the size of the activations."""
    return float(root_mean_square(np.ravel(a)))


# ---------------------------------------------------------------- the worked example


@dataclass(frozen=True)
class Stage:
    """One table of the worked example, with each token's mean and (biased) std."""

    title: str
    formula: str  # in plain text, for a caption
    value: np.ndarray  # (tokens, features)

    @property
    def mean(self) -> np.ndarray:
        """Each token's mean; float noise such as -1e-17 is shown as the 0 it stands for."""
        return np.round(self.value.mean(axis=1), 12) + 0.0

    @property
    def std(self) -> np.ndarray:
        return self.value.std(axis=1)


@dataclass(frozen=True)
class AddNormExample:
    """One residual step on a few token embeddings, every intermediate kept."""

    norm_position: str
    tokens: tuple[str, ...]
    features: tuple[str, ...]
    weights: np.ndarray  # W of the sublayer f(x) = ReLU(x W)
    stages: tuple[Stage, ...]  # input first, the step's output last


def example_weights(features: int, seed: int = EXAMPLE_SEED) -> np.ndarray:
    """A fixed (features, features) weight matrix, entries N(0, 1) rounded to one decimal."""
    return np.round(np.random.default_rng(seed).standard_normal((features, features)), 1)


def relu_sublayer(weights: np.ndarray) -> Sublayer:
    """The toy sublayer f(x) = ReLU(x W), a one-layer feed-forward network without bias."""
    return lambda x: np.maximum(x @ weights, 0.0)


def add_and_norm_example(norm_position: str, eps: float = EPS) -> AddNormExample:
    """One post-norm or pre-norm step on the seed preset's tokens, as four tables."""
    preset = token_preset(EXAMPLE_PRESET)
    x = preset.x
    weights = example_weights(x.shape[1])
    f = relu_sublayer(weights)
    if check_norm_position(norm_position) == POST_NORM:
        fx = f(x)
        stages = (
            Stage("x: the residual stream", "x", x),
            Stage("f(x): the sublayer's output", "f(x) = ReLU(xW)", fx),
            Stage("x + f(x): Add", "x + f(x)", x + fx),
            Stage(
                "LayerNorm(x + f(x)): Norm",
                "LN(x + f(x))",
                post_norm_step(x, f, eps),
            ),
        )
    else:
        normed = layer_norm(x, eps=eps)
        stages = (
            Stage("x: the residual stream", "x", x),
            Stage("LayerNorm(x): Norm first", "LN(x)", normed),
            Stage(
                "f(LayerNorm(x)): the sublayer's output",
                "f(LN(x)) = ReLU(LN(x) W)",
                f(normed),
            ),
            Stage("x + f(LayerNorm(x)): Add", "x + f(LN(x))", pre_norm_step(x, f, eps)),
        )
    return AddNormExample(
        norm_position=norm_position,
        tokens=preset.labels,
        features=tuple(f"f{j + 1}" for j in range(x.shape[1])),
        weights=weights,
        stages=stages,
    )


def step_latex(norm_position: str) -> tuple[str, ...]:
    """The residual step as formulas, one line each (pre-norm adds its final Layer Norm)."""
    if check_norm_position(norm_position) == POST_NORM:
        return (r"x_{\ell+1} = \mathrm{LN}\big(x_\ell + f_\ell(x_\ell)\big)",)
    return (
        r"x_{\ell+1} = x_\ell + f_\ell\big(\mathrm{LN}(x_\ell)\big)",
        r"\text{output} = \mathrm{LN}(x_L)",
    )


# ---------------------------------------------------------------- the depth experiment


@dataclass(frozen=True)
class DepthExperiment:
    """RMS of the residual stream after each layer (index 0: the input) for each variant."""

    depth: int
    width: int
    tokens: int
    gain: float
    eps: float
    rms: dict[str, np.ndarray]  # variant -> (depth + 1,)
    pre_norm_sublayer_input_rms: np.ndarray  # (depth,) RMS of LN(x) that each sublayer sees
    pre_norm_final_rms: float  # after the final Layer Norm
    seed: int = STACK_SEED  # of the input and the weights

    @property
    def layers(self) -> np.ndarray:
        return np.arange(self.depth + 1)

    @property
    def pre_norm_sqrt_law(self) -> np.ndarray:
        """sqrt(rms_0^2 + l gain^2): each layer adds a roughly independent f of RMS ~ gain."""
        return np.sqrt(self.rms[PRE_NORM][0] ** 2 + self.layers * self.gain**2)

    @property
    def no_norm_growth_per_layer(self) -> float:
        """Geometric mean of the per-layer growth factor without normalization."""
        ratio = self.rms[NO_NORM][-1] / self.rms[NO_NORM][0]
        return float(ratio ** (1.0 / self.depth))


def check_depth(depth: int) -> int:
    """A depth within [MIN_DEPTH, MAX_DEPTH], else InputError."""
    return _check_int(depth, "the depth", MIN_DEPTH, MAX_DEPTH)


def depth_experiment(
    depth: int,
    *,
    seed: int = STACK_SEED,
    width: int = STACK_WIDTH,
    tokens: int = STACK_TOKENS,
    gain: float = STACK_GAIN,
    eps: float = EPS,
) -> DepthExperiment:
    """Push the same random tokens through the same `depth` random linear layers, three ways.

    Layer l is f_l(x) = x W_l with W_l ~ N(0, gain^2 / width). The input is drawn first and the
    weights one layer at a time, so a shallower stack is a prefix of a deeper one.
    """
    depth = check_depth(depth)
    rng = np.random.default_rng(seed)
    x0 = rng.standard_normal((tokens, width))
    maps = [rng.standard_normal((width, width)) * (gain / np.sqrt(width)) for _ in range(depth)]
    sublayers = [_linear(w) for w in maps]

    steps: dict[str, Callable[[np.ndarray, Sublayer], np.ndarray]] = {
        NO_NORM: lambda x, f: x + f(x),
        POST_NORM: lambda x, f: post_norm_step(x, f, eps),
        PRE_NORM: lambda x, f: pre_norm_step(x, f, eps),
    }
    streams = {variant: _run_stack(x0, sublayers, step) for variant, step in steps.items()}
    pre_norm = streams[PRE_NORM]
    return DepthExperiment(
        depth=depth,
        width=width,
        tokens=tokens,
        gain=gain,
        eps=eps,
        rms={variant: np.array([rms(x) for x in xs]) for variant, xs in streams.items()},
        pre_norm_sublayer_input_rms=np.array([rms(layer_norm(x, eps=eps)) for x in pre_norm[:-1]]),
        pre_norm_final_rms=rms(layer_norm(pre_norm[-1], eps=eps)),
        seed=seed,
    )


def depth_rows(result: DepthExperiment) -> list[dict[str, float | int]]:
    """The depth table, one row per layer (0: the input): the stream's RMS in each variant, and
    the RMS of LN of pre-norm's stream there: what layer l + 1's sublayer gets, and after the
    last layer the output of the final Layer Norm."""
    normed = [*(float(v) for v in result.pre_norm_sublayer_input_rms), result.pre_norm_final_rms]
    return [
        {"layer": layer}
        | {variant: float(result.rms[variant][layer]) for variant in VARIANTS}
        | {NORMED: normed[layer]}
        for layer in range(result.depth + 1)
    ]


# ---------------------------------------------------------------- the page, in one call


@dataclass(frozen=True)
class TransformerLesson:
    """Everything the Transformer page shows, for one choice of its three inputs."""

    norm_position: str
    steps: tuple[BlockStep, ...]
    example: AddNormExample
    depth: DepthExperiment
    count: LayerNormCount


def transformer_lesson(norm_position: str, depth: int, layers: int) -> TransformerLesson:
    """The page's whole computation: the block, the worked example, the depth run, the count."""
    return TransformerLesson(
        norm_position=check_norm_position(norm_position),
        steps=block_steps(norm_position),
        example=add_and_norm_example(norm_position),
        depth=depth_experiment(depth),
        count=count_layer_norms(layers),
    )


# ---------------------------------------------------------------- helpers


def _run_stack(
    x0: np.ndarray,
    sublayers: list[Sublayer],
    step: Callable[[np.ndarray, Sublayer], np.ndarray],
) -> list[np.ndarray]:
    """The residual stream before the first layer and after each one."""
    stream = [x0]
    for f in sublayers:
        stream.append(step(stream[-1], f))
    return stream


def _linear(weights: np.ndarray) -> Sublayer:
    return lambda x: x @ weights


def _check_int(value: int, name: str, low: int, high: int) -> int:
    number = isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool
    )
    if not (number and float(value).is_integer()):
        raise InputError(f"{name} must be a whole number, not {value!r}")
    if not low <= int(value) <= high:
        raise InputError(f"{name} must be between {low} and {high}, not {int(value)}")
    return int(value)
