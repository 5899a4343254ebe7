"""Intermediate-block search: linear probes on every encoder block, then trimming."""

import warnings

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, TransformerMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import check_scoring, get_scorer_names
from sklearn.model_selection import check_cv, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

from ..utils import parallel_map
from ..utils._sklearn import HasMethods, StrOptions, _fit_context, validate_data

__all__ = ["BlockSearchProbe"]


def _default_probe():
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))


def _probe_has(method):
    def check(self):
        probe = self.probe_ if hasattr(self, "probe_") else (self.probe or _default_probe())
        return hasattr(probe, method)

    return check


def _cv_score(features, *, probe, y, cv, scoring):
    with warnings.catch_warnings():
        # tiny classes in a fold are the caller's data, not an error of the search
        warnings.simplefilter("ignore", UserWarning)
        scores = cross_val_score(clone(probe), features, y, cv=cv, scoring=scoring,
                                 error_score=np.nan)
    return float(np.nanmean(scores)) if np.isfinite(scores).any() else np.nan, scores


class BlockSearchProbe(MetaEstimatorMixin, TransformerMixin, BaseEstimator):
    """Probe every block of an encoder linearly, keep the best block, trim there.

    ``fit`` fits the encoder (unless it is wrapped in
    :class:`sklearn.frozen.FrozenEstimator`, which keeps a pretrained one
    as it is), extracts the features of every block in one pass, scores a
    linear probe on each block by cross-validation, and refits the probe on
    the best block. ``transform`` returns the features of the trimmed encoder,
    ``predict`` those of the probe.

    Parameters
    ----------
    encoder : estimator
        Has ``fit`` and ``transform_all_blocks(X) -> (n_blocks, n, d)`` (e.g.
        :class:`MicroscopyMAE`); ``trim(b)`` is used when it exists, else
        ``transform(X, block=b)``.
    probe : estimator or None, default=None
        Linear model fitted on each block's features; None means
        ``make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))``.
    cv : int, cross-validation generator or iterable, default=5
        Folds over which each block's probe is scored (as in
        :func:`~sklearn.model_selection.check_cv`).
    scoring : str, callable or None, default="balanced_accuracy"
        Scorer of the probe (None uses the probe's ``score``).
    n_jobs : int or None, default=None
        Blocks scored in parallel.

    Attributes
    ----------
    encoder_ : estimator
        The fitted encoder.
    block_scores_ : ndarray of shape (n_blocks,)
        Mean cross-validated score of block ``b`` at index ``b - 1`` (NaN when
        every fold failed).
    block_cv_scores_ : ndarray of shape (n_blocks, n_splits)
        Per-fold scores.
    best_block_ : int
        1-based block with the highest mean score (the earliest on ties).
    best_score_ : float
    probe_ : estimator
        Probe refitted on all samples at ``best_block_``.
    trimmed_encoder_ : estimator or None
        ``encoder_.trim(best_block_)`` when the encoder can trim.
    classes_ : ndarray
        The probe's classes, when it has them.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined only when ``X`` has string column names.

    See Also
    --------
    MicroscopyMAE : An encoder with ``transform_all_blocks`` and ``trim``.

    Notes
    -----
    Step (3) of Kenyon-Dean et al. [1]_: for each block ``b``, mean-pool its
    tokens, fit a logistic-regression probe on cheap proxy tasks (RxRx1 siRNA
    and Anax functional groups in the paper), pick :math:`b^*` by validation
    balanced accuracy, and trim the encoder at :math:`b^*` (block 38 of 48 for
    MAE-G/8). Features are computed once for all blocks, so the search costs
    one forward pass plus ``n_blocks`` probe fits.

    References
    ----------
    .. [1] K. Kenyon-Dean et al. "ViTally Consistent: Scaling Biological
       Representation Learning for Cell Microscopy". ICML 2025, arXiv:2411.02572.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skpaper.representation import BlockSearchProbe, MicroscopyMAE
    >>> X, y = load_digits(return_X_y=True)
    >>> mae = MicroscopyMAE(image_shape=(1, 8, 8), patch_size=2, embed_dim=16, depth=3,
    ...                     n_heads=2, max_epochs=1, random_state=0)
    >>> search = BlockSearchProbe(mae, cv=3).fit(X[:300], y[:300])
    >>> search.block_scores_.shape, 1 <= search.best_block_ <= 3
    ((3,), True)
    >>> search.transform(X[:5]).shape
    (5, 16)
    """

    _parameter_constraints = {
        "encoder": [HasMethods(["fit", "transform_all_blocks"])],
        "probe": [HasMethods(["fit"]), None],
        "cv": ["cv_object"],
        "scoring": [StrOptions(set(get_scorer_names())), callable, None],
        "n_jobs": [None, int],
    }

    def __init__(self, encoder, *, probe=None, cv=5, scoring="balanced_accuracy", n_jobs=None):
        self.encoder = encoder
        self.probe = probe
        self.cv = cv
        self.scoring = scoring
        self.n_jobs = n_jobs

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit the encoder, score a probe on every block, and refit it on the best.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs of the encoder (flattened images for :class:`MicroscopyMAE`).
        y : array-like of shape (n_samples,)
            Labels of the proxy task.

        Returns
        -------
        self : object
            The fitted search.
        """
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False)
        self.encoder_ = clone(self.encoder).fit(X, None)
        blocks = np.asarray(self.encoder_.transform_all_blocks(X))
        if blocks.ndim != 3 or blocks.shape[1] != X.shape[0]:
            raise ValueError("encoder.transform_all_blocks(X) must return an array of shape "
                             f"(n_blocks, {X.shape[0]}, n_features), got {blocks.shape}.")
        probe = self.probe if self.probe is not None else _default_probe()
        cv = check_cv(self.cv, y, classifier=hasattr(probe, "predict_proba")
                      or hasattr(probe, "decision_function"))
        splits = list(cv.split(blocks[0], y))
        results = parallel_map(_cv_score, list(blocks), n_jobs=self.n_jobs, probe=probe, y=y,
                               cv=splits, scoring=self.scoring)
        self.block_scores_ = np.array([mean for mean, _ in results])
        self.block_cv_scores_ = np.array([scores for _, scores in results])
        if not np.isfinite(self.block_scores_).any():
            raise ValueError("the probe failed on every fold of every block; check y and cv "
                             "(each class needs enough samples per fold).")
        self.best_block_ = int(np.nanargmax(self.block_scores_)) + 1
        self.best_score_ = float(self.block_scores_[self.best_block_ - 1])
        self.probe_ = clone(probe).fit(blocks[self.best_block_ - 1], y)
        self.trimmed_encoder_ = (self.encoder_.trim(self.best_block_)
                                 if hasattr(self.encoder_, "trim") else None)
        if hasattr(self.probe_, "classes_"):
            self.classes_ = self.probe_.classes_
        self._n_features_out = blocks.shape[2]
        return self

    def transform(self, X):
        """Return the features of the best block (the trimmed encoder's output).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs of the encoder.

        Returns
        -------
        features : ndarray of shape (n_samples, n_block_features)
            Features of block ``best_block_``.
        """
        return self._features(X)

    def _features(self, X):
        # A numpy array whatever the set_output configuration (of this estimator and
        # of the encoder): transform's wrapper adds the names and the caller's index,
        # and the probe was fitted on arrays.
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        if self.trimmed_encoder_ is not None:
            return np.asarray(self.trimmed_encoder_.transform(X))
        return np.asarray(self.encoder_.transform(X, block=self.best_block_))

    @available_if(_probe_has("predict"))
    def predict(self, X):
        """Probe predictions from the best block's features."""
        check_is_fitted(self)
        return self.probe_.predict(self._features(X))

    @available_if(_probe_has("predict_proba"))
    def predict_proba(self, X):
        """Probe class probabilities from the best block's features."""
        check_is_fitted(self)
        return self.probe_.predict_proba(self._features(X))

    @available_if(_probe_has("decision_function"))
    def decision_function(self, X):
        """Probe decision function from the best block's features."""
        check_is_fitted(self)
        return self.probe_.decision_function(self._features(X))

    def score(self, X, y):
        """Score of the probe on the best block with ``scoring``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs of the encoder.
        y : array-like of shape (n_samples,)
            True labels of the proxy task.

        Returns
        -------
        score : float
            ``scoring`` of ``probe_`` on the best block's features of ``X``.
        """
        check_is_fitted(self)
        scorer = check_scoring(self.probe_, scoring=self.scoring)
        return float(scorer(self.probe_, self._features(X), y))

    def get_feature_names_out(self, input_features=None):
        """Get output feature names for transformation.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Checked against the names seen in ``fit`` (a ``ValueError`` when they
            differ); the output names do not depend on them.

        Returns
        -------
        feature_names_out : ndarray of str objects
            ``blocksearchprobe0``, ``blocksearchprobe1``, ..., one per feature of
            the best block.
        """
        check_is_fitted(self)
        _check_feature_names_in(self, input_features)
        return np.array([f"blocksearchprobe{i}" for i in range(self._n_features_out)],
                        dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags
