"""Evaluation metrics of microscopy embeddings: replicate consistency, recall, separability."""

from numbers import Integral, Real

import numpy as np
from scipy import stats
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import check_array, check_random_state

from ..utils._sklearn import Interval, validate_params
from ._docs import _SHARED_DOCS, Substitution

__all__ = [
    "aggregate_embeddings",
    "linear_separability",
    "relationship_recall",
    "replicate_consistency_cvm",
    "replicate_consistency_ks",
    "replicate_pair_similarities",
]


def _unit_rows(X):
    X = check_array(X, dtype=np.float64)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(norms > 0, norms, 1.0)


def _same_length(name, values, n):
    values = np.asarray(values)
    if values.ndim != 1 or values.shape[0] != n:
        raise ValueError(f"{name} must be a 1-D array with one entry per row of X ({n}), "
                         f"got shape {values.shape}.")
    return values


@validate_params(
    {"X": ["array-like"], "perturbations": ["array-like"], "batches": ["array-like", None],
     "max_random_pairs": [Interval(Integral, 1, None, closed="left")],
     "random_state": ["random_state"]},
    prefer_skip_nested_validation=True,
)
@Substitution(**_SHARED_DOCS)
def replicate_pair_similarities(X, perturbations, *, batches=None, max_random_pairs=100_000,
                                random_state=None):
    """Cosine similarities of replicate pairs and of random pairs.

    Parameters
    ----------
    {replicate_parameters}

    Returns
    -------
    replicate, random : ndarray
        Cosine similarities of the two kinds of pairs.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.representation import replicate_pair_similarities
    >>> X = np.array([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [0.1, 1.0]])
    >>> replicate, random = replicate_pair_similarities(X, [0, 0, 1, 1])
    >>> replicate.size, random.size, bool(replicate.min() > random.max())
    (2, 4, True)
    """
    U = _unit_rows(X)
    n = U.shape[0]
    perturbations = _same_length("perturbations", perturbations, n)
    rows, cols = np.triu_indices(n, k=1)
    cosine = np.einsum("ij,ij->i", U[rows], U[cols])
    same = perturbations[rows] == perturbations[cols]
    allowed = np.ones_like(same)
    if batches is not None:
        batches = _same_length("batches", batches, n)
        allowed = batches[rows] != batches[cols]
    replicate = cosine[same & allowed]
    random = cosine[~same & allowed]
    if random.size > max_random_pairs:
        rng = check_random_state(random_state)
        random = random[rng.choice(random.size, max_random_pairs, replace=False)]
    if replicate.size == 0 or random.size == 0:
        raise ValueError("need at least one replicate pair and one random pair (across "
                         "batches when batches is given); check perturbations and batches.")
    return replicate, random


@Substitution(**_SHARED_DOCS)
def replicate_consistency_ks(X, perturbations, *, batches=None, max_random_pairs=100_000,
                             random_state=None):
    """Kolmogorov-Smirnov distance between replicate and random-pair cosines.

    The replicate-consistency metric of Kenyon-Dean et al. [1]_: the larger,
    the more replicates of a perturbation resemble each other compared with
    random pairs of wells.

    Parameters
    ----------
    {replicate_parameters}

    Returns
    -------
    ks : float in [0, 1]
        One-sided statistic :math:`\\sup_t F_{rand}(t) - F_{rep}(t)`, zero when
        replicates are no more similar than random pairs.

    See Also
    --------
    replicate_consistency_cvm : The Cramér-von Mises variant.

    References
    ----------
    .. [1] K. Kenyon-Dean et al. "ViTally Consistent: Scaling Biological
       Representation Learning for Cell Microscopy". ICML 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.representation import replicate_consistency_ks
    >>> rng = np.random.default_rng(0)
    >>> centres = rng.normal(size=(10, 5))
    >>> labels = np.repeat(np.arange(10), 4)
    >>> X = centres[labels] + 0.3 * rng.normal(size=(40, 5))
    >>> bool(replicate_consistency_ks(X, labels) > 0.8)
    True
    """
    rep, rand = replicate_pair_similarities(X, perturbations, batches=batches,
                                            max_random_pairs=max_random_pairs,
                                            random_state=random_state)
    return float(stats.ks_2samp(rep, rand, alternative="less").statistic)


@Substitution(**_SHARED_DOCS)
def replicate_consistency_cvm(X, perturbations, *, batches=None, max_random_pairs=100_000,
                              random_state=None):
    """Two-sample Cramér-von Mises statistic between replicate and random-pair cosines.

    Parameters
    ----------
    {replicate_parameters}

    Returns
    -------
    cvm : float
        :func:`scipy.stats.cramervonmises_2samp` statistic (two-sided).

    See Also
    --------
    replicate_consistency_ks : The one-sided Kolmogorov-Smirnov variant.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.representation import replicate_consistency_cvm
    >>> rng = np.random.default_rng(0)
    >>> labels = np.repeat(np.arange(10), 4)
    >>> X = rng.normal(size=(10, 5))[labels] + 0.3 * rng.normal(size=(40, 5))
    >>> bool(replicate_consistency_cvm(X, labels) > 1.0)
    True
    """
    rep, rand = replicate_pair_similarities(X, perturbations, batches=batches,
                                            max_random_pairs=max_random_pairs,
                                            random_state=random_state)
    return float(stats.cramervonmises_2samp(rep, rand).statistic)


@validate_params(
    {"X": ["array-like"], "labels": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def aggregate_embeddings(X, labels):
    """Mean embedding per label (wells to perturbations, perturbations to genes).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        One embedding per row (well or perturbation).
    labels : array-like of shape (n_samples,)
        Group of each row (its perturbation or gene).

    Returns
    -------
    means : ndarray of shape (n_labels, n_features)
        Mean embedding of each label.
    unique_labels : ndarray of shape (n_labels,)
        Sorted labels, one per row of ``means``.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.representation import aggregate_embeddings
    >>> means, labels = aggregate_embeddings(np.array([[0.0], [2.0], [5.0]]), ["b", "b", "a"])
    >>> means.ravel().tolist(), labels.tolist()
    ([5.0, 1.0], ['a', 'b'])
    """
    X = check_array(X, dtype=np.float64)
    labels = _same_length("labels", labels, X.shape[0])
    unique, inverse = np.unique(labels, return_inverse=True)
    sums = np.zeros((unique.size, X.shape[1]))
    np.add.at(sums, inverse, X)
    return sums / np.bincount(inverse)[:, None], unique


@validate_params(
    {"X": ["array-like"], "relations": ["array-like"],
     "top": [Interval(Real, 0, 0.5, closed="neither")]},
    prefer_skip_nested_validation=True,
)
def relationship_recall(X, relations, *, top=0.05):
    """Share of known relationships found in the tails of the cosine distribution.

    Parameters
    ----------
    X : array-like of shape (n_items, n_features)
        One embedding per item (gene or perturbation, usually aggregated).
    relations : array-like
        Either index pairs of shape (n_relations, 2), or group labels of shape
        (n_items,): every pair of items with the same non-negative label is a
        relationship (negative labels mean "no annotation").
    top : float in (0, 0.5), default=0.05
        Tail share: a relationship is recalled when its cosine is above the
        ``1 - top`` quantile or below the ``top`` quantile of all pairs.

    Returns
    -------
    recall : float in [0, 1]
        Share of the relationships whose cosine is in one of the two tails.

    Notes
    -----
    The relationship benchmark of Kenyon-Dean et al. [1]_ (CORUM, hu.MAP,
    Reactome and StringDB pairs, 5% tails on both sides). Random embeddings
    give a recall of about ``2 * top``.

    References
    ----------
    .. [1] K. Kenyon-Dean et al. "ViTally Consistent: Scaling Biological
       Representation Learning for Cell Microscopy". ICML 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.representation import relationship_recall
    >>> rng = np.random.default_rng(0)
    >>> groups = np.repeat(np.arange(20), 3)
    >>> X = rng.normal(size=(20, 8))[groups] + 0.2 * rng.normal(size=(60, 8))
    >>> bool(relationship_recall(X, groups) > 0.9)
    True
    """
    U = _unit_rows(X)
    n = U.shape[0]
    relations = np.asarray(relations)
    if relations.ndim == 2 and relations.shape[1] == 2:
        pairs = relations.astype(int)
        if pairs.size and (pairs.min() < 0 or pairs.max() >= n):
            raise ValueError(f"relation pairs must index rows of X (0 to {n - 1}).")
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    else:
        labels = _same_length("relations", relations, n)
        rows, cols = np.triu_indices(n, k=1)
        related = labels[rows] == labels[cols]
        if labels.dtype.kind in "iuf":
            related &= labels[rows] >= 0
        pairs = np.c_[rows[related], cols[related]]
    if pairs.shape[0] == 0:
        raise ValueError("relations define no pair of distinct items.")
    rows, cols = np.triu_indices(n, k=1)
    cosine = np.einsum("ij,ij->i", U[rows], U[cols])
    low, high = np.quantile(cosine, [top, 1.0 - top])
    annotated = np.einsum("ij,ij->i", U[pairs[:, 0]], U[pairs[:, 1]])
    return float(np.mean((annotated >= high) | (annotated <= low)))


@validate_params(
    {"X": ["array-like"], "y": ["array-like"], "groups": ["array-like", None],
     "cv": [Interval(Integral, 2, None, closed="left")], "random_state": ["random_state"]},
    prefer_skip_nested_validation=True,
)
def linear_separability(X, y, *, groups=None, cv=5, random_state=None):
    """Cross-validated balanced accuracy of a logistic-regression probe.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Embeddings.
    y : array-like of shape (n_samples,)
        Classes to separate (perturbations, functional groups).
    groups : array-like of shape (n_samples,) or None, default=None
        If given (e.g. plates), folds hold out whole groups (``GroupKFold``),
        so the probe must generalise across batches.
    cv : int, default=5
        Number of folds (at most the number of groups when ``groups`` is given).
    random_state : int, RandomState instance or None, default=None
        Shuffles the stratified folds.

    Returns
    -------
    score : float
        Mean balanced accuracy over folds (chance is ``1 / n_classes``).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from skpaper.representation import linear_separability
    >>> X, y = load_iris(return_X_y=True)
    >>> bool(linear_separability(X, y, random_state=0) > 0.9)
    True
    """
    X = check_array(X, dtype=np.float64)
    y = _same_length("y", y, X.shape[0])
    probe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    if groups is not None:
        groups = _same_length("groups", groups, X.shape[0])
        splitter = GroupKFold(n_splits=min(cv, np.unique(groups).size))
    else:
        rs = check_random_state(random_state).randint(2**31 - 1)
        splitter = StratifiedKFold(n_splits=cv, shuffle=True, random_state=rs)
    scores = cross_val_score(probe, X, y, groups=groups, cv=splitter,
                             scoring="balanced_accuracy")
    return float(np.mean(scores))
