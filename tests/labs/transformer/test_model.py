"""Tests for lnlab.labs.transformer.model: the block, the worked example, the depth run, the count.

Reference numbers come from a plain re-implementation of the stacks here (its own Layer Norm),
from torch.nn.functional.layer_norm, or from hand arithmetic, never from lnlab itself.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from lnlab.core.errors import InputError
from lnlab.labs.transformer.lesson import depth_detail
from lnlab.labs.transformer.model import (
    NO_NORM,
    NORMED,
    POST_NORM,
    PRE_NORM,
    add_and_norm_example,
    block_steps,
    count_layer_norms,
    depth_experiment,
    depth_rows,
    encoder_decoder_count,
    layer_norm_count,
    step_latex,
    transformer_lesson,
)
from lnlab.teach.presets import token_preset


@pytest.fixture(scope="module")
def deep():
    return depth_experiment(48)


def _plain_ln(h: np.ndarray, eps: float) -> np.ndarray:
    mean = h.mean(axis=1, keepdims=True)
    var = ((h - mean) ** 2).mean(axis=1, keepdims=True)
    return (h - mean) / np.sqrt(var + eps)


def _plain_stacks(depth: int, seed: int, eps: float) -> dict[str, np.ndarray]:
    """The three stacks again, from the documented recipe: x0, then W_l ~ N(0, 1/64)."""
    rng = np.random.default_rng(seed)
    x0 = rng.standard_normal((8, 64))
    maps = [rng.standard_normal((64, 64)) / 8.0 for _ in range(depth)]
    out = {}
    for variant in (NO_NORM, POST_NORM, PRE_NORM):
        x, sizes = x0, [np.sqrt(np.mean(x0**2))]
        for w in maps:
            if variant == NO_NORM:
                x = x + x @ w
            elif variant == POST_NORM:
                x = _plain_ln(x + x @ w, eps)
            else:
                x = x + _plain_ln(x, eps) @ w
            sizes.append(np.sqrt(np.mean(x**2)))
        out[variant] = np.array(sizes)
    return out


# ---------------------------------------------------------------- the depth experiment


def test_stack_matches_a_plain_reimplementation(deep):
    expected = _plain_stacks(48, seed=0, eps=1e-5)
    for variant, sizes in expected.items():
        np.testing.assert_allclose(deep.rms[variant], sizes, rtol=1e-10)


def test_stack_is_deterministic_and_depends_on_the_seed(deep):
    again = depth_experiment(48)
    for variant in deep.rms:
        np.testing.assert_array_equal(deep.rms[variant], again.rms[variant])
    other = depth_experiment(48, seed=1)
    assert not np.allclose(other.rms[NO_NORM], deep.rms[NO_NORM])


def test_a_shallower_stack_is_a_prefix_of_a_deeper_one(deep):
    short = depth_experiment(10)
    assert short.depth == 10
    for variant in deep.rms:
        assert len(short.rms[variant]) == 11
        np.testing.assert_array_equal(short.rms[variant], deep.rms[variant][:11])


def test_post_norm_stream_has_unit_rms_after_every_layer(deep):
    # LN output per token: mean 0, biased variance var/(var+eps), so its mean square (the RMS^2)
    # is 1 - eps/(var+eps): exactly 1 when eps = 0, a hair below 1 otherwise.
    exact = depth_experiment(48, eps=0.0).rms[POST_NORM][1:]
    np.testing.assert_allclose(exact, 1.0, atol=1e-12)
    shrink = 1.0 - deep.rms[POST_NORM][1:]
    assert np.all(shrink > 0)
    assert np.all(shrink < 1e-5)


def test_post_norm_rms_follows_the_epsilon_formula():
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((8, 64))
    w = rng.standard_normal((64, 64)) / 8.0
    h = x0 + x0 @ w
    var = h.var(axis=1)
    eps = 0.5  # large, so the shrink is visible
    expected = np.sqrt(np.mean(1.0 - eps / (var + eps)))
    assert depth_experiment(1, eps=eps).rms[POST_NORM][1] == pytest.approx(expected, rel=1e-12)
    assert expected < 0.9


def test_no_norm_grows_monotonically_and_explodes(deep):
    sizes = deep.rms[NO_NORM]
    assert np.all(np.diff(sizes) > 0)
    assert sizes[24] / sizes[0] > 1e3
    assert sizes[48] / sizes[0] > 1e6
    # x + xW with W ~ N(0, 1/64): E|x + xW|^2 = 2 |x|^2, so about sqrt(2) per layer.
    assert deep.no_norm_growth_per_layer == pytest.approx(np.sqrt(2), rel=0.05)


def test_pre_norm_grows_sublinearly_like_a_square_root(deep):
    sizes = deep.rms[PRE_NORM]
    assert sizes[48] > sizes[0]
    assert sizes[48] / sizes[12] < 2.5  # linear growth would give about 4, sqrt about 1.94
    law = np.sqrt(sizes[0] ** 2 + np.arange(49))
    np.testing.assert_allclose(deep.pre_norm_sqrt_law, law)
    np.testing.assert_allclose(sizes / law, 1.0, atol=0.1)


def test_pre_norm_sublayers_see_normalized_input_and_final_norm_restores_scale(deep):
    assert deep.pre_norm_sublayer_input_rms.shape == (48,)
    np.testing.assert_allclose(deep.pre_norm_sublayer_input_rms, 1.0, atol=1e-5)
    assert deep.pre_norm_final_rms == pytest.approx(1.0, abs=1e-5)
    assert deep.rms[PRE_NORM][-1] > 5


@pytest.mark.parametrize("depth", [0, 49, 2.5, "ten", True])
def test_depth_outside_the_slider_is_refused(depth):
    with pytest.raises(InputError):
        depth_experiment(depth)


def _bounds(detail: str) -> list[float]:
    """The numbers in "within <bound>", in order: post-norm, the sublayers' input, the output."""
    return [float(b) for b in re.findall(r"within (\d[0-9.e+-]*)", detail)]


def test_the_depth_detail_holds_at_every_depth(deep):
    """Its words at every depth of the slider (their conditions on other stacks: tests/claims)."""
    for depth in range(1, 49):
        result = depth_experiment(depth)
        detail = depth_detail(result)
        none, post, pre = (result.rms[v] for v in (NO_NORM, POST_NORM, PRE_NORM))
        assert ("explodes" in detail) == (none[-1] / none[0] > 100)
        assert np.all(np.diff(none) > 0)
        assert f"to {none[-1]:.3g}" in detail
        post_bound, fed_bound, final_bound = _bounds(detail)
        assert np.max(np.abs(post[1:] - 1)) <= post_bound <= 1e-5
        assert np.max(np.abs(result.pre_norm_sublayer_input_rms - 1)) <= fed_bound <= 1e-5
        assert abs(result.pre_norm_final_rms - 1) <= final_bound <= 1e-5
        assert pre[-1] > pre[0]  # "lets the stream grow"
        assert np.max(np.abs(pre / result.pre_norm_sqrt_law - 1)) < 0.1  # "like a square root"
        assert "but only like the square root of depth" in detail
        assert f"{pre[-1]:.3g} after {depth} layers" in detail
    assert "**No normalization** explodes" in depth_detail(deep)
    assert "**No normalization** grows" in depth_detail(depth_experiment(1))


def test_the_depth_table_has_a_number_in_every_cell(deep):
    """Issue 36: its first row read NaN (no sublayer before layer 1). The last column is now
    LN of pre-norm's stream: the next sublayer's input, and after the last layer the output."""
    rows = depth_rows(deep)
    assert len(rows) == 49 and all(np.isfinite(v) for r in rows for v in r.values())
    normed = [r[NORMED] for r in rows]
    assert normed[:-1] == deep.pre_norm_sublayer_input_rms.tolist()
    assert normed[-1] == deep.pre_norm_final_rms


# ---------------------------------------------------------------- counting


@pytest.mark.parametrize(
    ("layers", "post", "pre"), [(1, 2, 3), (12, 24, 25), (24, 48, 49), (96, 192, 193)]
)
def test_layer_norm_count(layers, post, pre):
    assert layer_norm_count(layers, POST_NORM) == post
    assert layer_norm_count(layers, PRE_NORM) == pre
    count = count_layer_norms(layers)
    assert (count.layers, count.post_norm, count.pre_norm) == (layers, post, pre)


def test_original_encoder_decoder_has_thirty_layer_norms():
    assert encoder_decoder_count(6, 6) == 30  # 6 x 2 + 6 x 3
    assert count_layer_norms(12).encoder_decoder == 30


@pytest.mark.parametrize("layers", [0, 97, -3, 1.5, "12", None])
def test_layer_count_outside_the_input_is_refused(layers):
    with pytest.raises(InputError):
        count_layer_norms(layers)


# ---------------------------------------------------------------- the block and the example


def test_block_steps_in_order_with_residuals_around_each_sublayer():
    post = block_steps(POST_NORM)
    assert [s.label for s in post] == [
        "Input",
        "Multi-Head Attention",
        "Add & Norm",
        "Feed-Forward",
        "Add & Norm",
        "Output",
    ]
    pre = block_steps(PRE_NORM)
    assert [s.label for s in pre] == [
        "Input",
        "LayerNorm",
        "Multi-Head Attention",
        "Add",
        "LayerNorm",
        "Feed-Forward",
        "Add",
        "Final LayerNorm",
        "Output",
    ]
    assert [i for i, s in enumerate(post) if s.skip_from is not None] == [2, 4]
    assert [s.skip_from for s in post if s.skip_from is not None] == [1, 3]
    assert [s.skip_from for s in pre if s.skip_from is not None] == [1, 4]
    assert not pre[7].repeated and pre[6].repeated
    with pytest.raises(InputError):
        block_steps("sandwich")


def _torch_ln(a: np.ndarray) -> np.ndarray:
    t = torch.tensor(a, dtype=torch.float64)
    return F.layer_norm(t, (a.shape[1],), eps=1e-5).numpy()


def test_post_norm_example_against_torch():
    example = add_and_norm_example(POST_NORM)
    x = token_preset("hello").x
    w = example.weights
    assert w.shape == (4, 4)
    np.testing.assert_allclose(w * 10, np.round(w * 10))  # one decimal, readable
    x_, fx, added, out = (s.value for s in example.stages)
    np.testing.assert_array_equal(x_, x)
    np.testing.assert_allclose(fx, np.maximum(x @ w, 0))
    assert (fx == 0).any() and (fx > 0).any()  # the ReLU does something
    np.testing.assert_allclose(added, x + fx)
    np.testing.assert_allclose(out, _torch_ln(x + fx), atol=1e-12)
    np.testing.assert_allclose(example.stages[-1].mean, 0.0, atol=1e-12)
    np.testing.assert_allclose(example.stages[-1].std, np.sqrt(1 - 1e-5 / (added.var(1) + 1e-5)))
    assert example.tokens == ("Hello", ",", " how", " are", " you", "?")
    assert example.features == ("f1", "f2", "f3", "f4")


def test_pre_norm_example_against_torch_and_by_hand():
    example = add_and_norm_example(PRE_NORM)
    x = token_preset("hello").x
    w = example.weights
    _, normed, fx, out = (s.value for s in example.stages)
    # token "Hello" = [0.1, 0.3, -0.2, 0.8]: mean 0.25, var (0.0225+0.0025+0.2025+0.3025)/4
    by_hand = np.array([-0.15, 0.05, -0.45, 0.55]) / np.sqrt(0.1325 + 1e-5)
    np.testing.assert_allclose(normed[0], by_hand, rtol=1e-12)
    np.testing.assert_allclose(normed, _torch_ln(x), atol=1e-12)
    np.testing.assert_allclose(fx, np.maximum(normed @ w, 0))
    np.testing.assert_allclose(out, x + fx)
    assert np.all(np.abs(example.stages[-1].mean) > 0.1)  # the stream is not normalized


def test_stage_means_show_no_negative_zero():
    means = add_and_norm_example(POST_NORM).stages[-1].mean
    assert np.all(means == 0)
    assert not np.any(np.signbit(means))


def test_lesson_bundles_everything_and_validates():
    lesson = transformer_lesson(PRE_NORM, 5, 12)
    assert lesson.steps == block_steps(PRE_NORM)
    assert lesson.example.norm_position == PRE_NORM
    assert lesson.depth.depth == 5
    assert (lesson.count.post_norm, lesson.count.pre_norm) == (24, 25)
    assert "LN(x_L)" in step_latex(PRE_NORM)[-1].replace(r"\mathrm{LN}", "LN")
    with pytest.raises(InputError):
        transformer_lesson("middle-norm", 5, 12)
    with pytest.raises(InputError):
        transformer_lesson(POST_NORM, 5, 0)
