"""DeepLinearRegressor and TwoLayerReLURegressor: implicit biases, conservation laws, API."""

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from skpaper.datasets import make_relu_teacher_tasks, make_teacher_tasks
from skpaper.representation import DeepLinearRegressor, TwoLayerReLURegressor
from skpaper.representation._deep_linear import auto_feature_rank
from skpaper.representation._deep_linear_relu import _PopulationLoss


@pytest.fixture(scope="module")
def task():
    return make_teacher_tasks(d=30, theta=np.pi / 5, sigma=0.1, n=12, random_state=3)


def _drift(net, init):
    return max(np.linalg.norm(D - D0) for D, D0 in zip(net.balancedness(), init))


def _initial_balancedness(params, d):
    coefs = DeepLinearRegressor(**params)._init_coefs(d)
    net = DeepLinearRegressor(**params)
    net.coefs_ = coefs
    return net.balancedness()


@pytest.mark.parametrize("n_layers", [2, 3])
def test_balancedness_is_conserved_by_small_step_gradient_descent(task, n_layers):
    params = dict(n_layers=n_layers, init_scale=0.05, random_state=0, max_iter=200000,
                  tol=1e-8)
    init = _initial_balancedness(params, task.X.shape[1])
    drifts = []
    for lr in (0.02, 0.005):
        net = DeepLinearRegressor(lr=lr, **params).fit(task.X, task.y)
        drifts.append(_drift(net, init))
    # D_l moves by O(lr) under discrete steps and not at all under gradient flow.
    assert drifts[1] < 0.4 * drifts[0]
    assert drifts[1] < 0.02


def test_gradient_descent_from_small_init_finds_the_minimum_norm_solution(task):
    net = DeepLinearRegressor(random_state=0).fit(task.X, task.y)
    assert np.allclose(net.coef_, np.linalg.pinv(task.X) @ task.y, atol=1e-4)
    wide = make_teacher_tasks(d=10, theta=0.3, sigma=0.2, n=40, random_state=0)
    net = DeepLinearRegressor(random_state=0).fit(wide.X, wide.y)
    ols = np.linalg.lstsq(wide.X, wide.y, rcond=None)[0]
    assert np.allclose(net.coef_, ols, atol=1e-4)
    assert np.allclose(net.predict(wide.X), wide.X @ net.coef_)


def test_larger_initialisation_leaves_a_null_space_component(task):
    small = DeepLinearRegressor(init_scale=1e-5, random_state=0).fit(task.X, task.y)
    large = DeepLinearRegressor(init_scale=0.5, random_state=0).fit(task.X, task.y)
    pinv = np.linalg.pinv(task.X) @ task.y
    assert np.linalg.norm(large.coef_ - pinv) > 100 * np.linalg.norm(small.coef_ - pinv)


@pytest.mark.parametrize("n_layers", [2, 3])
def test_population_pretraining_learns_one_feature_along_the_source(task, n_layers):
    net = DeepLinearRegressor(n_layers=n_layers, init_scale=1e-3 if n_layers == 3 else 1e-5,
                              random_state=0).fit_population(task.beta_source)
    assert net.risk(task.beta_source) < 1e-8
    assert net.features_.shape == (30, 1)
    feature = net.features_[:, 0]
    assert abs(feature @ task.beta_source) / np.linalg.norm(feature) == pytest.approx(1.0)
    s = np.linalg.svd(net._hidden_product(), compute_uv=False)
    assert s[1] < 1e-2 * s[0]


@given(top=st.integers(1, 6), size=st.integers(7, 12), ratio=st.floats(20.0, 1e6))
def test_auto_feature_rank_cuts_at_the_largest_spectral_gap(top, size, ratio):
    s = np.concatenate([np.linspace(2.0, 1.0, top), np.linspace(1.0, 0.5, size - top) / ratio])
    assert auto_feature_rank(s) == top
    assert auto_feature_rank(np.linspace(2.0, 1.0, size)) == size
    assert auto_feature_rank(np.zeros(size)) == 1


def test_weight_decay_shrinks_the_learned_vector(task):
    plain = DeepLinearRegressor(random_state=0).fit(task.X, task.y)
    decayed = DeepLinearRegressor(weight_decay=0.5, random_state=0).fit(task.X, task.y)
    assert np.linalg.norm(decayed.coef_) < 0.9 * np.linalg.norm(plain.coef_)


def test_divergence_and_non_convergence_are_reported(task):
    with pytest.raises(ValueError, match="diverged.*lr"):
        DeepLinearRegressor(lr=50.0, init_scale=0.5, random_state=0).fit(task.X, task.y)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        DeepLinearRegressor(max_iter=3, random_state=0).fit(task.X, task.y)


def test_deep_linear_is_deterministic_clonable_and_picklable(task):
    net = DeepLinearRegressor(random_state=7).fit(task.X, task.y)
    again = clone(net).fit(task.X, task.y)
    assert np.array_equal(net.coef_, again.coef_)
    restored = pickle.loads(pickle.dumps(net))
    assert np.array_equal(restored.predict(task.X), net.predict(task.X))


def test_deep_linear_rejects_bad_input(task):
    with pytest.raises(ValueError, match="n_layers"):
        DeepLinearRegressor(n_layers=1).fit(task.X, task.y)
    with pytest.raises(ValueError, match="init_scale"):
        DeepLinearRegressor(init_scale=0.0).fit_population(task.beta_source)
    with pytest.raises(ValueError, match="beta must be a 1-d"):
        DeepLinearRegressor().fit_population(np.ones((3, 2)))
    net = DeepLinearRegressor(random_state=0).fit_population(task.beta_source)
    with pytest.raises(ValueError, match="beta must have shape"):
        net.risk(np.ones(4))
    with pytest.raises(ValueError, match="features"):
        net.predict(np.ones((2, 4)))
    with pytest.raises(ValueError, match="feature_rank"):
        net._feature_basis(31)


def test_relu_population_loss_gradients_match_finite_differences():
    rng = np.random.default_rng(0)
    W, c = rng.standard_normal((4, 5)), rng.standard_normal(4)
    loss_fn = _PopulationLoss(rng.standard_normal((3, 5)), rng.standard_normal(3))
    _, grad_W, grad_c = loss_fn(W, c)
    eps = 1e-6
    for i, j in [(0, 0), (2, 3), (3, 4)]:
        step = np.zeros_like(W)
        step[i, j] = eps
        numeric = (loss_fn(W + step, c)[0] - loss_fn(W - step, c)[0]) / (2 * eps)
        assert numeric * 4 == pytest.approx(grad_W[i, j], rel=1e-5, abs=1e-8)
    step = np.zeros(4)
    step[1] = eps
    numeric = (loss_fn(W, c + step)[0] - loss_fn(W, c - step)[0]) / (2 * eps)
    assert numeric * 4 == pytest.approx(grad_c[1], rel=1e-5, abs=1e-8)


def test_relu_population_training_matches_the_teacher_on_samples():
    task = make_relu_teacher_tasks(d=8, n_teacher=6, ablation=0.0, n=10, n_source=0,
                                   n_test=2000, random_state=1)
    net = TwoLayerReLURegressor(n_hidden=30, init_scale=0.01, lr=0.5, max_iter=3000,
                                tol=1e-7, random_state=0)
    net.fit_population(task.source_weights, task.source_coef)
    assert net.loss_curve_[-1] < 1e-3
    # The closed-form population loss is the test error on fresh samples.
    assert np.mean((net.predict(task.X_test) - task.y_test) ** 2) < 5e-3


def test_relu_regressor_fits_data_and_pickles():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((150, 4))
    y = np.maximum(X[:, 0] - X[:, 1], 0)
    net = TwoLayerReLURegressor(n_hidden=40, tol=1e-4, random_state=0).fit(X, y)
    assert net.score(X, y) > 0.95
    restored = pickle.loads(pickle.dumps(net))
    assert np.array_equal(restored.predict(X), net.predict(X))


def test_relu_regressor_rejects_bad_input():
    with pytest.raises(ValueError, match="teacher_coef must have shape"):
        TwoLayerReLURegressor().fit_population(np.ones((3, 2)), np.ones(2))
    with pytest.raises(ValueError, match="n_hidden"):
        TwoLayerReLURegressor(n_hidden=0).fit(np.ones((3, 2)), np.ones(3))
    with pytest.raises(ValueError, match="diverged"):
        TwoLayerReLURegressor(lr=1e3, random_state=0).fit(
            10 * np.random.default_rng(0).standard_normal((20, 3)), np.arange(20.0))
