"""Tests of :func:`skpaper.utils._metrics.binary_roc_auc` against scikit-learn's ROC AUC."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import roc_auc_score

from skpaper.utils._metrics import binary_roc_auc


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 300), st.sampled_from([None, 0, 1]))
def test_equals_roc_auc_score_with_and_without_ties(seed, n, decimals):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]  # both classes present
    score = rng.normal(size=n)
    if decimals is not None:  # many tied scores
        score = np.round(score, decimals)
    assert binary_roc_auc(y, score) == pytest.approx(roc_auc_score(y, score), abs=1e-12)


def test_the_larger_label_is_positive_as_in_roc_auc_score():
    y = np.array(["no", "yes", "no", "yes", "yes"])
    score = np.array([0.2, 0.9, 0.5, 0.4, 0.7])
    assert binary_roc_auc(y, score) == pytest.approx(roc_auc_score(y, score), abs=1e-12)
    assert binary_roc_auc(y == "no", score) == pytest.approx(1 - roc_auc_score(y, score))


def test_ties_count_one_half():
    assert binary_roc_auc([0, 1], [0.5, 0.5]) == 0.5
    assert binary_roc_auc([0, 0, 1], [1.0, 0.0, 1.0]) == 0.75


def test_mathematically_equal_aucs_are_bitwise_equal():
    # The same ranking gives the same rank sum, whatever the score values.
    y = np.array([0, 1, 1, 0, 1, 0, 0, 1])
    a = np.array([0.1, 0.8, 0.3, 0.2, 0.9, 0.05, 0.4, 0.7])
    assert binary_roc_auc(y, a) == binary_roc_auc(y, np.exp(3 * a) + 17.0)


def test_other_inputs_go_to_roc_auc_score():
    y, score, w = [0, 1, 1, 0], [0.1, 0.9, 0.2, 0.3], [1.0, 2.0, 1.0, 0.5]
    assert binary_roc_auc(y, score, sample_weight=w) == roc_auc_score(y, score,
                                                                       sample_weight=w)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UndefinedMetricWarning):
            binary_roc_auc([1, 1, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError):
        binary_roc_auc([0, 1], [0.1, np.nan])
    with pytest.raises(ValueError):
        binary_roc_auc([0, 1, 1], [0.1, 0.2])
