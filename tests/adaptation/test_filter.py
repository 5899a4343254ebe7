"""SteadyStateFilter: the Bayesian weight-enhancement step of SSA on flat vectors."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from skpaper.adaptation import SteadyStateFilter


def _feed(filt, proxies):
    """Feed steps whose mean weight change divided by lr equals each proxy value."""
    out = []
    w = torch.zeros_like(filt.source)
    for g in proxies:
        w, step, sigma2 = filt(w, w - filt.lr * g)
        out.append((step, sigma2))
    return out, w


def test_filter_without_ssa_or_anchor_returns_the_optimiser_step():
    filt = SteadyStateFilter(torch.zeros(5), lr=0.1, ssa=False, kappa=0.0)
    w_prev, w_new = torch.randn(5), torch.randn(5)
    w, step, _ = filt(w_prev, w_new)
    assert w is w_new and step == 1.0


def test_filter_pulls_towards_the_source_by_kappa():
    source = torch.tensor([1.0, -1.0, 2.0], dtype=torch.float64)
    filt = SteadyStateFilter(source, lr=0.1, ssa=False, kappa=0.25)
    w_new = torch.tensor([3.0, 3.0, 3.0], dtype=torch.float64)
    w, _, _ = filt(torch.zeros(3, dtype=torch.float64), w_new)
    np.testing.assert_allclose(w, 0.75 * w_new + 0.25 * source)


def test_filter_cmf_hidden_model_follows_the_predicted_weights():
    source = torch.zeros(2, dtype=torch.float64)
    filt = SteadyStateFilter(source, lr=0.1, ssa=False, kappa=0.5, anchor="cmf",
                             cmf_decay=0.1, cmf_gain=0.2)
    w_new = torch.ones(2, dtype=torch.float64)
    w, _, _ = filt(torch.zeros(2, dtype=torch.float64), w_new)
    # h <- 0.9 * 0 + 0.1 * 0 = 0, then h <- 0.8 * 0 + 0.2 * 1 = 0.2; w = 0.5 * 1 + 0.5 * 0.2
    np.testing.assert_allclose(filt.hidden, [0.2, 0.2])
    np.testing.assert_allclose(w, [0.6, 0.6])
    filt.reset()
    np.testing.assert_array_equal(filt.hidden, source)


def test_filter_step_follows_the_steady_state_formula():
    window, lr, scale = 8, 0.05, 0.3
    filt = SteadyStateFilter(torch.zeros(4, dtype=torch.float64), lr=lr, kappa=0.0,
                             steady_scale=scale, window=window)
    rng = np.random.default_rng(0)
    proxies = np.r_[rng.normal(0, 1.0, window + 1), rng.normal(0, 3.0, 30)]
    out, _ = _feed(filt, proxies)
    steps = np.array([s for s, _ in out])
    sigma2 = np.array([v for _, v in out])
    assert np.all(steps[:window] == 1.0) and np.all(np.isnan(sigma2[:window]))
    first = np.var(proxies[: window + 1])
    np.testing.assert_allclose(sigma2[window], first, rtol=1e-9)
    np.testing.assert_allclose(filt.noise_floor, scale * lr**2 * first, rtol=1e-9)
    np.testing.assert_allclose(steps[window], math.sqrt(scale), rtol=1e-9)
    for k in range(window, len(proxies)):
        expected = np.var(proxies[k - window: k + 1])
        np.testing.assert_allclose(sigma2[k], expected, rtol=1e-9)
        np.testing.assert_allclose(steps[k], min(math.sqrt(scale * first / expected), 4.0),
                                   rtol=1e-9)
    # the noise rose threefold, so the steady step shrank
    assert steps[-1] < steps[window]


def test_filter_prediction_step_interpolates_between_old_and_new_weights():
    filt = SteadyStateFilter(torch.zeros(3, dtype=torch.float64), lr=1.0, kappa=0.0,
                             sigma_lambda2=0.25, window=2)
    w_prev = torch.zeros(3, dtype=torch.float64)
    for g in (1.0, -1.0):  # fill the window
        filt(w_prev, w_prev - g)
    w, step, sigma2 = filt(w_prev, w_prev - 1.0)
    # proxies (1, -1, 1): variance 8/9, step = sqrt(0.25 / (8/9)) = 0.53
    np.testing.assert_allclose(sigma2, 8 / 9)
    np.testing.assert_allclose(step, math.sqrt(0.25 * 9 / 8))
    np.testing.assert_allclose(w, -step * torch.ones(3, dtype=torch.float64))


def test_filter_latches_the_steady_state_and_clips_the_step():
    # steady_scale = 9: the first proposal is 3 > sqrt(2), so no steady state yet
    filt = SteadyStateFilter(torch.zeros(2, dtype=torch.float64), lr=0.1, kappa=0.0,
                             steady_scale=9.0, window=4, max_step=2.5)
    rng = np.random.default_rng(1)
    out, _ = _feed(filt, rng.normal(0, 1.0, 6))
    assert [s for s, _ in out] == [1.0] * 6 and not filt.steady
    out, _ = _feed(filt, rng.normal(0, 20.0, 6))  # the noise jumps: proposal falls below sqrt 2
    assert filt.steady and out[-1][0] < math.sqrt(2)
    out, _ = _feed(filt, np.zeros(12))  # the noise vanishes: the proposal explodes, clipped
    assert out[-1][0] == 2.5


def test_filter_fixed_noise_floor_makes_the_step_scale_inversely_with_lr():
    rng = np.random.default_rng(2)
    proxies = rng.normal(0, 1.0, 40)
    steps = {}
    for lr in (0.01, 0.1):
        filt = SteadyStateFilter(torch.zeros(2, dtype=torch.float64), lr=lr, kappa=0.0,
                                 sigma_lambda2=1e-6, window=8, max_step=1e9)
        out, _ = _feed(filt, proxies)
        steps[lr] = np.array([s for s, _ in out])[8:]
    np.testing.assert_allclose(steps[0.01] * 0.01, steps[0.1] * 0.1, rtol=1e-9)


def test_filter_reset_can_keep_the_noise_statistics():
    filt = SteadyStateFilter(torch.zeros(2, dtype=torch.float64), lr=0.1, window=3)
    _feed(filt, [1.0, 2.0, 0.5, 1.5, -1.0])
    floor = filt.noise_floor
    filt.reset(keep_noise_statistics=True)
    assert filt.noise_floor == floor and len(filt.proxies) == 3
    filt.reset()
    assert filt.noise_floor is None and len(filt.proxies) == 0 and not filt.steady


@given(kappa=st.floats(0.0, 1.0), values=st.lists(st.floats(-5, 5), min_size=3, max_size=3))
def test_filter_output_is_a_convex_combination_without_ssa(kappa, values):
    source = torch.zeros(3, dtype=torch.float64)
    filt = SteadyStateFilter(source, lr=0.1, ssa=False, kappa=kappa)
    w_new = torch.tensor(values, dtype=torch.float64)
    w, _, _ = filt(torch.zeros(3, dtype=torch.float64), w_new)
    np.testing.assert_allclose(w, (1 - kappa) * w_new, atol=1e-12)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"lr": 0.0}, ValueError, "lr must be in"),
        ({"lr": "fast"}, TypeError, "lr must be a finite real"),
        ({"kappa": 1.5}, ValueError, "kappa must be in"),
        ({"steady_scale": -1.0}, ValueError, "steady_scale must be in"),
        ({"sigma_lambda2": 0.0}, ValueError, "sigma_lambda2 must be in"),
        ({"window": 1}, ValueError, "window must be an int >= 2"),
        ({"max_step": 0.0}, ValueError, "max_step must be in"),
        ({"anchor": "ema"}, ValueError, "anchor must be 'source' or 'cmf'"),
        ({"cmf_gain": 2.0}, ValueError, "cmf_gain must be in"),
    ],
)
def test_filter_rejects_bad_arguments(kwargs, error, match):
    params = {"lr": 0.1, **kwargs}
    with pytest.raises(error, match=match):
        SteadyStateFilter(torch.zeros(2), **params)


def test_filter_rejects_a_non_vector_source():
    with pytest.raises(TypeError, match="source must be a 1-D torch.Tensor"):
        SteadyStateFilter(np.zeros(3), lr=0.1)
    with pytest.raises(TypeError, match="source must be a 1-D torch.Tensor"):
        SteadyStateFilter(torch.zeros(2, 2), lr=0.1)
    filt = SteadyStateFilter(torch.zeros(2), lr=0.1)
    with pytest.raises(ValueError, match=r"must have the source's shape \(2,\)"):
        filt(torch.zeros(3), torch.zeros(3))
