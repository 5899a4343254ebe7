"""make_linear_multilabel: shapes, norms, label rates, noise, determinism, bad input."""

import numpy as np
import pytest
from scipy.stats import binom

from skpaper.datasets import make_linear_multilabel


def test_shapes_unit_norms_and_linear_labels():
    X, Y, U, t = make_linear_multilabel(n_samples=300, n_features=7, n_labels=4,
                                        positive_rate=0.3, random_state=0, return_coef=True)
    assert X.shape == (300, 7) and Y.shape == (300, 4) and U.shape == (7, 4)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    np.testing.assert_allclose(np.linalg.norm(U, axis=0), 1.0)
    np.testing.assert_array_equal(Y, (X @ U > t).astype(int))
    assert set(np.unique(Y)) <= {0, 1}


@pytest.mark.parametrize("rate", [0.1, 0.5])
def test_positive_rate_is_the_population_rate(rate):
    n, c = 4000, 5
    _, Y = make_linear_multilabel(n_samples=n, n_features=20, n_labels=c, positive_rate=rate,
                                  random_state=1)
    # two-sided 1e-6 binomial acceptance region for the total count
    low, high = binom.ppf([5e-7, 1 - 5e-7], n * c, rate)
    assert low <= Y.sum() <= high


def test_noise_flips_entries_at_the_given_rate():
    n, c, noise = 3000, 6, 0.1
    clean = make_linear_multilabel(n_samples=n, n_features=10, n_labels=c, random_state=2)[1]
    noisy = make_linear_multilabel(n_samples=n, n_features=10, n_labels=c, noise=noise,
                                   random_state=2)[1]
    low, high = binom.ppf([5e-7, 1 - 5e-7], n * c, noise)
    assert low <= (clean != noisy).sum() <= high


def test_same_seed_same_data_and_per_label_rates():
    a = make_linear_multilabel(n_samples=50, n_labels=3, positive_rate=[0.2, 0.5, 0.8],
                               random_state=5)
    b = make_linear_multilabel(n_samples=50, n_labels=3, positive_rate=[0.2, 0.5, 0.8],
                               random_state=5)
    for left, right in zip(a, b):
        np.testing.assert_array_equal(left, right)


@pytest.mark.parametrize("kwargs,match", [
    ({"n_samples": 0}, "n_samples"),
    ({"n_features": 1}, "n_features"),
    ({"n_labels": 1}, "n_labels"),
    ({"positive_rate": 1.0}, "positive_rate"),
    ({"positive_rate": [0.5, 0.5]}, "positive_rate"),
    ({"noise": 0.7}, "noise"),
])
def test_bad_arguments_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_linear_multilabel(**{"n_labels": 3, **kwargs})
