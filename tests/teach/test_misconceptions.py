"""Each misconception's value against an explicit float64 formula or torch, hard cases included."""

import math

import numpy as np
import pytest
import torch

from lnlab.teach import misconceptions as mc

KEYS = ("d_minus_1", "no_eps", "eps_outside", "across_batch", "pad_as_tokens", "gamma_beta_swap")


def test_every_misconception_has_one_home():
    assert set(KEYS) <= set(mc.MISCONCEPTIONS)
    for key, m in mc.MISCONCEPTIONS.items():
        assert m.key == key and m.name and m.why.endswith(".")


@pytest.mark.parametrize("x", [[2.0, 4.0, 6.0, 8.0], [1.0, -3.0], [0.5, 0.5, 0.5], [7.0]])
def test_variance_by_d_and_by_d_minus_1_against_torch(x):
    t = torch.tensor(x, dtype=torch.float64)
    assert mc.variance(x) == pytest.approx(float(t.var(unbiased=False)), abs=1e-15)
    if len(x) == 1:  # D - 1 = 0: undefined (torch warns and gives NaN too)
        assert math.isnan(mc.variance(x, d_minus_1=True))
    else:
        assert mc.variance(x, d_minus_1=True) == pytest.approx(float(t.var()), abs=1e-15)


@pytest.mark.parametrize("eps", [1e-5, 0.0, 4.0])  # 4: an epsilon as large as the variance
def test_each_std_mistake_against_its_formula(eps):
    x = np.array([2.0, 4.0, 6.0, 8.0])  # squared distances 9 + 1 + 1 + 9 = 20
    assert mc.std(x, eps) == pytest.approx(math.sqrt(20 / 4 + eps), abs=1e-15)
    assert mc.std(x, eps, "d_minus_1") == pytest.approx(math.sqrt(20 / 3 + eps), abs=1e-15)
    assert mc.std(x, eps, "no_eps") == pytest.approx(math.sqrt(5.0), abs=1e-15)
    assert mc.std(x, eps, "eps_outside") == pytest.approx(math.sqrt(5.0) + eps, abs=1e-15)
    with pytest.raises(ValueError):
        mc.std(x, eps, "gamma_beta_swap")


def test_x_hat_is_torch_layer_norm_and_the_mistakes_divide_differently():
    x = np.array([2.0, 4.0, 6.0, 8.0])
    t = torch.tensor(x).reshape(1, 4)
    expected = torch.nn.functional.layer_norm(t, (4,), eps=1e-5).numpy().ravel()
    np.testing.assert_allclose(mc.x_hat(x, 1e-5), expected, atol=1e-12)
    np.testing.assert_allclose(mc.x_hat(x, 1e-5, "d_minus_1"), (x - 5) / np.sqrt(20 / 3 + 1e-5))
    np.testing.assert_allclose(mc.x_hat(x, 1e-5, "no_eps"), (x - 5) / np.sqrt(5))


def test_d_equal_1_and_a_constant_token():
    assert mc.x_hat([3.0], 1e-5).tolist() == [0.0]  # 0 / sqrt(eps)
    assert np.isnan(mc.x_hat([3.0], 1e-5, "d_minus_1")).all()  # D - 1 = 0
    assert np.isnan(mc.x_hat([3.0, 3.0], 1e-5, "no_eps")).all()  # 0 / 0
    assert mc.x_hat([3.0, 3.0], 1e-5, "eps_outside").tolist() == [0.0, 0.0]  # 0 / eps


def test_d_equal_2_d_minus_1_doubles_the_variance():
    assert mc.variance([1.0, 3.0], d_minus_1=True) == 2 * mc.variance([1.0, 3.0]) == 2.0


def test_across_batch_is_torch_batch_norm():
    rng = np.random.default_rng(0)
    batch = rng.standard_normal((5, 3))
    t = torch.tensor(batch)
    expected = torch.nn.functional.batch_norm(t, None, None, training=True, eps=1e-5)
    np.testing.assert_allclose(mc.across_batch_x_hat(batch, 1e-5), expected.numpy(), atol=1e-12)
    column = batch[:, 0]
    assert mc.across_batch_x_hat(batch, 1e-5)[2, 0] == pytest.approx(
        (column[2] - column.mean()) / np.sqrt(column.var() + 1e-5), abs=1e-12
    )


def test_mean_counting_pad_rows():
    values = np.array([5.0, 3.0, 0.0, 0.0, 4.0, 1.0, 7.0, 2.0])
    real = np.array([1, 1, 0, 0, 1, 1, 1, 1], bool)
    assert mc.mean_counting_pad(values, real) == 22 / 8
    assert mc.mean_of_real(values, real) == 22 / 6
    everything = np.ones(8, bool)  # PAD share 0: the mistake changes nothing
    assert mc.mean_counting_pad(values, everything) == mc.mean_of_real(values, everything)
    assert math.isnan(mc.mean_of_real(values, np.zeros(8, bool)))
    with pytest.raises(ValueError):
        mc.mean_counting_pad(values, real[:3])


def test_gamma_and_beta_swapped():
    x_hat = np.array([-1.5, 0.5])
    np.testing.assert_allclose(mc.y_swapped(x_hat, 2.0, 0.25), 0.25 * x_hat + 2.0)
    assert mc.y_swapped(x_hat, 1.0, 1.0).tolist() == (1.0 * x_hat + 1.0).tolist()  # the same
