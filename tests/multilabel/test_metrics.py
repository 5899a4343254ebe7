"""Multi-label metrics: agreement with scikit-learn, ranges, label-permutation invariance."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import sparse
from sklearn import metrics as skm

from skpaper.multilabel import metrics

PAIR_METRICS = ["hamming_loss", "subset_accuracy", "micro_f1", "macro_f1"]
SCORE_METRICS = ["ranking_loss", "macro_auc", "one_error", "coverage"]


def _data(rng, n=60, c=6, density=0.4):
    T = (rng.random((n, c)) < density).astype(int)
    P = (rng.random((n, c)) < density).astype(int)
    S = rng.normal(size=(n, c)) + T  # informative scores
    return T, P, S


def test_pair_metrics_equal_sklearn(rng):
    T, P, _ = _data(rng)
    assert metrics.hamming_loss(T, P) == pytest.approx(skm.hamming_loss(T, P))
    assert metrics.subset_accuracy(T, P) == pytest.approx(skm.accuracy_score(T, P))
    for zero_division in (0.0, 1.0):
        P_empty = P.copy()
        T_empty = T.copy()
        T_empty[:, 0] = 0
        P_empty[:, 0] = 0  # a label with neither true nor predicted positives
        for average, ours in (("micro", metrics.micro_f1), ("macro", metrics.macro_f1)):
            expected = skm.f1_score(T_empty, P_empty, average=average,
                                    zero_division=zero_division)
            assert ours(T_empty, P_empty, zero_division=zero_division) == pytest.approx(expected)


def test_score_metrics_equal_sklearn(rng):
    T, _, S = _data(rng)
    T[:, 2] = 0
    T[5, 2] = 1  # an imbalanced label
    S = np.round(S, 1)  # ties between labels and between samples
    assert metrics.ranking_loss(T, S) == pytest.approx(skm.label_ranking_loss(T, S))
    assert metrics.macro_auc(T, S) == pytest.approx(skm.roc_auc_score(T, S, average="macro"))
    T_cover = T.copy()
    T_cover[T_cover.sum(axis=1) == 0, 0] = 1
    assert metrics.coverage(T_cover, S) == pytest.approx(skm.coverage_error(T_cover, S) - 1)


def test_one_error_counts_irrelevant_top_labels():
    T = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 0], [1, 1, 0]])
    S = np.array([[3.0, 1, 0], [3.0, 1, 0], [1.0, 2, 3], [0.0, 5, 1]])
    # rows 2 (wrong top) and 3 (no relevant label) are errors
    assert metrics.one_error(T, S) == pytest.approx(0.5)


def test_macro_auc_skips_and_counts_undefined_labels(rng):
    T, _, S = _data(rng)
    T[:, 1] = 0
    T[:, 4] = 1
    with pytest.warns(UserWarning, match="skipped 2 of 6"):
        auc, n_skipped = metrics.macro_auc(T, S, return_n_skipped=True)
    keep = [0, 2, 3, 5]
    assert n_skipped == 2
    assert auc == pytest.approx(skm.roc_auc_score(T[:, keep], S[:, keep], average="macro"))
    with pytest.warns(UserWarning):
        assert np.isnan(metrics.macro_auc(np.zeros((4, 3), int), np.ones((4, 3))))


def test_metrics_accept_sparse_indicators(rng):
    T, P, S = _data(rng)
    assert metrics.hamming_loss(sparse.csr_matrix(T), sparse.csr_matrix(P)) == pytest.approx(
        metrics.hamming_loss(T, P))
    assert metrics.ranking_loss(sparse.csr_matrix(T), S) == pytest.approx(
        metrics.ranking_loss(T, S))


@pytest.mark.parametrize("name", PAIR_METRICS + SCORE_METRICS)
def test_metrics_reject_bad_input(name):
    func = getattr(metrics, name)
    good = np.array([[1, 0], [0, 1], [1, 1]])
    with pytest.raises(ValueError, match="only 0 and 1"):
        func(good * 2, good)
    with pytest.raises(ValueError, match="at least 2 label columns"):
        func(good[:, :1], good[:, :1])
    with pytest.raises(ValueError, match="same shape"):
        func(good, np.ones((3, 3), dtype=int))
    with pytest.raises(TypeError):
        func(good, "not an array")


_shape = st.tuples(st.integers(2, 12), st.integers(2, 6))


@st.composite
def _indicator_and_scores(draw):
    n, c = draw(_shape)
    T = draw(arrays(np.int8, (n, c), elements=st.integers(0, 1)))
    P = draw(arrays(np.int8, (n, c), elements=st.integers(0, 1)))
    S = draw(arrays(np.float64, (n, c), elements=st.floats(-5, 5, allow_nan=False)))
    perm = draw(st.permutations(range(c)))
    return T, P, S, np.asarray(perm)


@given(_indicator_and_scores())
def test_metrics_lie_in_their_ranges(data):
    T, P, S, _ = data
    for name in PAIR_METRICS:
        assert 0.0 <= getattr(metrics, name)(T, P) <= 1.0
    assert 0.0 <= metrics.ranking_loss(T, S) <= 1.0
    assert 0.0 <= metrics.one_error(T, S) <= 1.0
    assert 0.0 <= metrics.coverage(T, S) <= T.shape[1] - 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        auc = metrics.macro_auc(T, S)
    assert np.isnan(auc) or 0.0 <= auc <= 1.0


@given(_indicator_and_scores())
def test_permuting_labels_leaves_label_averaged_metrics_unchanged(data):
    T, P, S, perm = data
    for name in PAIR_METRICS:
        func = getattr(metrics, name)
        assert func(T[:, perm], P[:, perm]) == pytest.approx(func(T, P))
    for name in ("ranking_loss", "coverage"):
        func = getattr(metrics, name)
        assert func(T[:, perm], S[:, perm]) == pytest.approx(func(T, S))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        before, skipped = metrics.macro_auc(T, S, return_n_skipped=True)
        after, skipped_after = metrics.macro_auc(T[:, perm], S[:, perm], return_n_skipped=True)
    assert skipped == skipped_after
    assert after == pytest.approx(before, nan_ok=True)


def _pairwise_ranking_loss(T, S):
    """The documented definition, pair by pair: ties count as errors, degenerate rows as 0."""
    losses = []
    for t, s in zip(T.astype(bool), S):
        pairs = [(p, q) for p in np.flatnonzero(t) for q in np.flatnonzero(~t)]
        losses.append(np.mean([s[p] <= s[q] for p, q in pairs]) if pairs else 0.0)
    return float(np.mean(losses))


@given(_indicator_and_scores(), st.booleans())
def test_ranking_loss_equals_the_pairwise_definition(data, rounded):
    # ranking_loss delegates to sklearn.metrics.label_ranking_loss; this checks
    # that the delegation keeps the definition documented here, ties included.
    T, _, S, _ = data
    S = np.round(S) if rounded else S
    assert metrics.ranking_loss(T, S) == pytest.approx(_pairwise_ranking_loss(T, S))
    assert metrics.ranking_loss(sparse.csr_matrix(T), S) == pytest.approx(
        skm.label_ranking_loss(T, S))
