"""Base losses, their constants, and the gradients of the multi-label surrogates."""

import numpy as np
import pytest
from scipy.optimize import check_grad

from skpaper.multilabel import SmoothMultiLabelClassifier
from skpaper.multilabel._losses import BASE_LOSSES, get_base_loss
from skpaper.multilabel._objectives import surrogate_losses, surrogate_value_and_grad

# points away from the kinks of the hinge losses (t = 1, t = 1 - h)
_GRID = np.concatenate([np.linspace(-4.0, 0.45, 40), np.linspace(0.55, 0.95, 9),
                        np.linspace(1.05, 4.0, 30)])


@pytest.mark.parametrize("name", BASE_LOSSES)
def test_base_loss_derivative_matches_finite_differences(name):
    loss = get_base_loss(name, huber_width=0.5)
    eps = 1e-6
    numeric = (loss.value(_GRID + eps) - loss.value(_GRID - eps)) / (2 * eps)
    np.testing.assert_allclose(loss.derivative(_GRID), numeric, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", BASE_LOSSES)
def test_base_loss_constants_hold_on_the_interval(name, rng):
    loss = get_base_loss(name, huber_width=0.5)
    bound = 3.0
    s, t = rng.uniform(-bound, bound, size=(2, 5000))
    values = loss.value(np.concatenate([s, t]))
    assert values.min() >= 0.0
    assert values.max() <= loss.sup(bound) + 1e-12
    slope = np.abs(loss.value(s) - loss.value(t)) / np.abs(s - t)
    assert slope.max() <= loss.rho(bound) + 1e-9
    if loss.is_smooth:
        curvature = np.abs(loss.derivative(s) - loss.derivative(t)) / np.abs(s - t)
        assert curvature.max() <= loss.gamma + 1e-9
    else:
        assert name == "hinge" and loss.gamma == np.inf


def test_base_loss_rejects_unknown_names_and_widths():
    with pytest.raises(ValueError, match="loss must be one of"):
        get_base_loss("exponential")
    with pytest.raises(ValueError, match="huber_width must be > 0"):
        get_base_loss("huberized_hinge", huber_width=0.0)


def _scores_and_labels(rng, n=7, c=5):
    F = rng.normal(scale=1.5, size=(n, c))
    Y = (rng.random((n, c)) < 0.4).astype(np.uint8)
    Y[0] = 0  # a sample without relevant labels
    Y[1] = 1  # and one with every label relevant
    return F, Y


@pytest.mark.parametrize("objective,temperature",
                         [("hamming", None), ("ranking", None), ("subset", 0.3)])
@pytest.mark.parametrize("name", ["logistic", "squared_hinge", "squared", "huberized_hinge"])
def test_surrogate_gradient_matches_finite_differences(objective, temperature, name, rng):
    F, Y = _scores_and_labels(rng)
    base = get_base_loss(name, huber_width=0.7)

    def value(f):
        return surrogate_value_and_grad(f.reshape(F.shape), Y, base, objective, temperature)[0]

    def grad(f):
        return surrogate_value_and_grad(f.reshape(F.shape), Y, base, objective,
                                        temperature)[1].ravel()

    assert check_grad(value, grad, F.ravel(), epsilon=1e-7) < 1e-5


def test_subset_subgradient_and_smoothing_bracket_the_max(rng):
    F, Y = _scores_and_labels(rng)
    base = get_base_loss("logistic")
    exact = surrogate_losses(F, Y, base, "subset").mean()
    value, grad = surrogate_value_and_grad(F, Y, base, "subset")
    assert value == pytest.approx(exact)
    # the subgradient touches one label per sample
    assert ((grad != 0).sum(axis=1) <= 1).all()
    tau = 0.05
    smooth = surrogate_value_and_grad(F, Y, base, "subset", tau)[0]
    assert exact <= smooth <= exact + tau * np.log(F.shape[1]) + 1e-12


def test_ranking_surrogate_matches_a_direct_double_loop(rng):
    F, Y = _scores_and_labels(rng)
    base = get_base_loss("squared_hinge")
    expected = []
    for f, y in zip(F, Y):
        pos, neg = np.flatnonzero(y), np.flatnonzero(1 - y)
        pairs = [base.value(f[p] - f[q]) for p in pos for q in neg]
        expected.append(np.mean(pairs) if pairs else 0.0)
    np.testing.assert_allclose(surrogate_losses(F, Y, base, "ranking"), expected)


@pytest.mark.parametrize("objective", ["hamming", "ranking", "subset"])
@pytest.mark.parametrize("constraint", ["per_label", "frobenius"])
def test_regularised_objective_gradient_in_the_weights(objective, constraint, rng):
    X = rng.normal(size=(12, 4))
    Y = (rng.random((12, 3)) < 0.5).astype(int)
    clf = SmoothMultiLabelClassifier(objective=objective, constraint=constraint, alpha=0.1,
                                     loss="logistic")
    temperature = 0.2 if objective == "subset" else None
    fun = clf._make_objective(X, Y.astype(np.uint8), get_base_loss("logistic"), temperature)
    w = rng.normal(size=(4 + 1) * 3)
    assert check_grad(lambda v: fun(v)[0], lambda v: fun(v)[1], w, epsilon=1e-7) < 1e-5
