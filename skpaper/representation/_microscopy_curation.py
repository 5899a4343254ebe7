"""Data curation: keep perturbations whose replicates agree (a permutation test)."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..utils._sklearn import Interval, _fit_context, validate_data

__all__ = ["PerturbationConsistencyFilter"]


def _mean_pairwise_cosine(sums, k):
    # mean cosine over the k(k-1)/2 pairs of k unit vectors with sum s: (|s|^2 - k) / (k(k-1))
    return (np.einsum("...j,...j->...", sums, sums) - k) / (k * (k - 1))


class PerturbationConsistencyFilter(BaseEstimator):
    """Curation by phenotypic consistency: keep perturbations whose replicates agree.

    For every perturbation with at least two replicates, the mean pairwise
    cosine similarity of its replicate embeddings is compared with a null of
    the same statistic over random sets of the same size drawn from all rows;
    perturbations with a permutation p-value below ``alpha`` are kept.

    Parameters
    ----------
    n_permutations : int, default=1000
        Random sets drawn per replicate-set size.
    alpha : float, default=0.01
        Significance level of the one-sided test.
    random_state : int, RandomState instance or None, default=None
        Seeds the random sets.

    Attributes
    ----------
    perturbations_ : ndarray of shape (n_perturbations,)
        Sorted perturbation labels.
    n_replicates_ : ndarray of shape (n_perturbations,)
    consistency_ : ndarray of shape (n_perturbations,)
        Mean pairwise replicate cosine (NaN with a single replicate).
    pvalues_ : ndarray of shape (n_perturbations,)
        :math:`(1 + \\#\\{null \\ge observed\\}) / (1 + n_{perm})` (NaN with a
        single replicate).
    consistent_ : ndarray of bool of shape (n_perturbations,)
        ``pvalues_ < alpha``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined only when ``X`` has string column names.

    See Also
    --------
    replicate_consistency_ks : The dataset-level consistency metric.

    Notes
    -----
    Step (1) of the framework of Kenyon-Dean et al. [1]_: to build
    Phenoprints-16M from RPI-93M they keep, among other filters, only
    perturbations whose replicates are consistent under a prior model's
    embeddings (a permutation test of mean replicate cosine similarity against
    random-set nulls, ``p < 0.01``). Pass the embeddings of that prior model as
    ``X``. Quality filters, metadata filters and control subsampling are
    separate steps. The null draws sets from every row, including the
    perturbation's own, which makes the test slightly conservative.

    References
    ----------
    .. [1] K. Kenyon-Dean et al. "ViTally Consistent: Scaling Biological
       Representation Learning for Cell Microscopy". ICML 2025, arXiv:2411.02572.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.representation import PerturbationConsistencyFilter
    >>> rng = np.random.default_rng(0)
    >>> labels = np.repeat(np.arange(6), 4)
    >>> effects = np.r_[3 * rng.normal(size=(3, 10)), np.zeros((3, 10))]
    >>> X = effects[labels] + rng.normal(size=(24, 10))
    >>> filt = PerturbationConsistencyFilter(n_permutations=200, alpha=0.05,
    ...                                      random_state=0).fit(X, labels)
    >>> filt.consistent_.tolist()
    [True, True, True, False, False, False]
    >>> int(filt.sample_mask(labels).sum())
    12
    """

    _parameter_constraints = {
        "n_permutations": [Interval(Integral, 1, None, closed="left")],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(self, *, n_permutations=1000, alpha=0.01, random_state=None):
        self.n_permutations = n_permutations
        self.alpha = alpha
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Test every perturbation's replicate consistency.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Embeddings (wells or images) from a prior model.
        y : array-like of shape (n_samples,)
            Perturbation label of each row.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False)
        rng = check_random_state(self.random_state)
        U = X
        scale = np.abs(X).max(axis=1, keepdims=True)
        if scale.max(initial=0.0) > 1e150:
            # Cosines do not depend on scale: shrink huge rows so that their norms stay finite.
            U = X / np.where(scale > 0, scale, 1.0)
        norms = np.linalg.norm(U, axis=1, keepdims=True)
        U = U / np.where(norms > 0, norms, 1.0)
        self.perturbations_, inverse = np.unique(y, return_inverse=True)
        counts = np.bincount(inverse)
        if counts.max() < 2:
            raise ValueError(
                "PerturbationConsistencyFilter needs at least one perturbation with two or "
                f"more replicates (rows); got n_samples = {X.shape[0]} with {counts.size} "
                "distinct labels.")
        sums = np.zeros((counts.size, U.shape[1]))
        np.add.at(sums, inverse, U)
        self.n_replicates_ = counts
        self.consistency_ = np.full(counts.size, np.nan)
        self.pvalues_ = np.full(counts.size, np.nan)
        for k in np.unique(counts[counts >= 2]):
            # one null per set size k: random k-subsets of all rows (without replacement)
            draws = rng.random((self.n_permutations, U.shape[0])).argsort(axis=1)[:, :k]
            null = _mean_pairwise_cosine(U[draws].sum(axis=1), k)
            which = counts == k
            observed = _mean_pairwise_cosine(sums[which], k)
            exceed = (null[None, :] >= observed[:, None] - 1e-12).sum(axis=1)
            self.consistency_[which] = observed
            self.pvalues_[which] = (1.0 + exceed) / (1.0 + self.n_permutations)
        self.consistent_ = np.nan_to_num(self.pvalues_, nan=1.0) < self.alpha
        return self

    def sample_mask(self, y):
        """Boolean mask of the rows whose perturbation passed the test.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Perturbation labels (labels unseen in fit are dropped).

        Returns
        -------
        mask : ndarray of bool of shape (n_samples,)
            True for the rows whose perturbation passed the test.
        """
        check_is_fitted(self)
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"y must be a 1-D array of perturbation labels, got shape {y.shape}.")
        return np.isin(y, self.perturbations_[self.consistent_])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags
