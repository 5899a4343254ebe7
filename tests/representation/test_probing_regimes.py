"""Regime helpers (scarcity, imbalance, noise, shift) and the superposition generator."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skpaper.datasets import make_superposition_activations
from skpaper.representation import (
    covariate_shift_split,
    flip_labels,
    imbalance_split,
    regime_grid,
    scarcity_split,
)
from skpaper.utils._sklearn import InvalidParameterError

Y = np.repeat([3, 7], [300, 200])  # any two labels; the larger is positive


@given(n_train=st.integers(1, 150), ratio=st.floats(0.0, 1.0), seed=st.integers(0, 2**16))
def test_imbalance_split_counts_ratio_and_disjointness(n_train, ratio, seed):
    train, test = imbalance_split(Y, ratio, n_train=n_train, random_state=seed)
    assert len(train) == n_train and len(np.intersect1d(train, test)) == 0
    assert np.sum(Y[train] == 7) == int(np.ceil(ratio * n_train))
    if len(test):
        assert np.sum(Y[test] == 7) == int(np.ceil(ratio * len(test)))


@given(n_train=st.integers(1, 200), seed=st.integers(0, 2**16))
def test_scarcity_split_is_balanced(n_train, seed):
    train, test = scarcity_split(Y, n_train, n_test=50, random_state=seed)
    assert np.sum(Y[train] == 7) == int(np.ceil(n_train / 2))
    assert len(test) == 50 and np.sum(Y[test] == 7) == 25
    again = scarcity_split(Y, n_train, n_test=50, random_state=seed)
    np.testing.assert_array_equal(train, again[0])


@given(frac=st.floats(0.0, 0.5), n=st.integers(1, 300), seed=st.integers(0, 2**16))
def test_flip_labels_flips_exactly_the_fraction(frac, n, seed):
    y = np.tile([3, 7], n)[: n + 1]
    noisy = flip_labels(y, frac, random_state=seed)
    assert np.sum(noisy != y) == int(len(y) * frac)
    assert set(np.unique(noisy)) <= {3, 7}


def test_flip_labels_single_observed_zero_one_class():
    assert flip_labels(np.zeros(10, dtype=int), 0.5, random_state=0).sum() == 5


def test_covariate_shift_split_draws_each_side_from_its_domain():
    y = np.tile([0, 1], 200)
    domain = np.repeat([0, 1], 200)
    train, test = covariate_shift_split(y, domain, n_train=100, n_test=60, random_state=0)
    assert np.all(domain[train] == 0) and np.all(domain[test] == 1)
    assert y[train].sum() == 50 and y[test].sum() == 30


def test_regime_grid_matches_the_paper():
    sizes = regime_grid("scarcity")
    assert sizes[0] == 2 and sizes[-1] == 1024 and np.all(np.diff(sizes) > 0)
    np.testing.assert_allclose(regime_grid("imbalance")[[0, 9, -1]], [0.05, 0.5, 0.95])
    np.testing.assert_allclose(regime_grid("noise"), np.arange(11) * 0.05)


def test_regime_helpers_bad_input():
    with pytest.raises(ValueError, match="not enough positive samples for training"):
        scarcity_split(Y, 450)
    with pytest.raises(ValueError, match="exactly two classes"):
        scarcity_split(np.arange(30) % 3, 4)
    with pytest.raises(InvalidParameterError, match="pos_ratio"):
        imbalance_split(Y, 1.5)
    with pytest.raises(InvalidParameterError, match="frac"):
        flip_labels(Y, 0.7)
    with pytest.raises(ValueError, match="at most two classes"):
        flip_labels(np.arange(9) % 3, 0.1)
    with pytest.raises(ValueError, match="domain must have the shape of y"):
        covariate_shift_split(Y, np.zeros(3))
    with pytest.raises(ValueError, match="shifted-domain positives"):
        covariate_shift_split(Y, np.zeros(len(Y)), n_train=10, n_test=10)
    with pytest.raises(InvalidParameterError, match="regime"):
        regime_grid("drift")


def test_superposition_activations_ground_truth():
    data = make_superposition_activations(n_samples=400, n_features=32, n_atoms=100,
                                          n_active=5, concept_rate=0.3, noise=0.0,
                                          random_state=0)
    np.testing.assert_allclose(data.X, data.codes @ data.atoms)
    np.testing.assert_allclose(np.linalg.norm(data.atoms, axis=1), 1.0)
    np.testing.assert_array_equal((data.codes != 0).sum(axis=1), 5)
    np.testing.assert_array_equal(data.y, (data.codes[:, 0] > 0).astype(int))
    assert abs(data.y.mean() - 0.3) < 3 * np.sqrt(0.3 * 0.7 / 400)  # binomial margin
    mags = data.codes[data.codes != 0]
    assert mags.min() >= 0.5 and mags.max() <= 1.5


def test_superposition_activations_context_shift_and_reuse():
    base = make_superposition_activations(n_samples=50, n_atoms=21, random_state=0)
    inside = make_superposition_activations(n_samples=300, n_atoms=21, context="in",
                                            atoms=base.atoms, random_state=1)
    outside = make_superposition_activations(n_samples=300, n_atoms=21, context="out",
                                             atoms=base.atoms, random_state=2)
    used_in = np.flatnonzero((inside.codes[:, 1:] != 0).any(axis=0)) + 1
    used_out = np.flatnonzero((outside.codes[:, 1:] != 0).any(axis=0)) + 1
    assert used_in.max() <= 10 and used_out.min() >= 11
    np.testing.assert_array_equal(inside.atoms, base.atoms)


def test_superposition_activations_bad_input():
    with pytest.raises(ValueError, match="magnitude must be a pair"):
        make_superposition_activations(magnitude=(2.0, 1.0))
    with pytest.raises(ValueError, match=r"atoms must have shape \(n_atoms, n_features\)"):
        make_superposition_activations(atoms=np.ones((3, 3)))
    with pytest.raises(ValueError, match="n_active must be at most"):
        make_superposition_activations(n_atoms=6, n_active=4, context="in")
    with pytest.raises(InvalidParameterError, match="context"):
        make_superposition_activations(context="everywhere")
