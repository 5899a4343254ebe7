"""Typical variation normalisation: batch correction fitted on control samples."""

from numbers import Integral, Real

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..utils._sklearn import Interval, RealNotInt, _fit_context, validate_data

__all__ = ["TypicalVariationNormalizer"]


def _labels(values, n_samples, name, default):
    if values is None:
        return np.full(n_samples, default)
    values = np.asarray(values)
    if values.ndim != 1 or values.shape[0] != n_samples:
        raise ValueError(f"{name} must be a 1-D array of length n_samples={n_samples}, "
                         f"got shape {values.shape}.")
    return values


def _control_mask(is_control, n_samples):
    mask = _labels(is_control, n_samples, "is_control", True)
    if mask.dtype != bool:
        if not np.isin(mask, (0, 1)).all():
            raise ValueError("is_control must be boolean (or 0/1), got values "
                             f"{np.unique(mask)[:5].tolist()}.")
        mask = mask.astype(bool)
    return mask


def _inverse_sqrt(cov, reg):
    vals, vecs = linalg.eigh(cov + reg * np.eye(cov.shape[0]))
    return (vecs / np.sqrt(np.maximum(vals, reg))) @ vecs.T


class TypicalVariationNormalizer(ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                                 BaseEstimator):
    """Batch correction of embeddings using control samples only (TVN).

    Fit on the negative controls of every batch (plate, experiment): a PCA
    with whitening of the pooled controls, then, per batch, centring and
    scaling by that batch's controls (or, with ``coral=True``, whitening of
    the batch's control covariance). Non-control samples never enter the fit,
    so perturbation effects are kept while the variation that controls share
    (the "typical variation") is normalised away.

    Parameters
    ----------
    whiten : bool, default=True
        Apply the PCA-whitening of the pooled controls first. False keeps the
        input coordinates (then only the per-batch step runs).
    coral : bool, default=False
        Per batch, replace the per-feature scaling by the inverse square root
        of the batch's (regularised) control covariance, aligning second
        moments (CORAL).
    n_components : int, float or None, default=None
        Principal components kept by the whitening: an int, a share of the
        control variance in (0, 1), or None for every component with non-zero
        variance.
    eps : float, default=1e-6
        Regulariser, relative to the mean eigenvalue, added before inverting
        variances and covariances.
    coral_reg : float, default=1.0
        Ridge added to each batch's control covariance for CORAL (in whitened
        units, where the pooled control covariance is the identity).

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        Mean of the pooled controls.
    components_ : ndarray of shape (n_components_, n_features) or None
        Principal axes of the controls (None when ``whiten=False``).
    explained_variance_ : ndarray of shape (n_components_,) or None
    n_components_ : int
        Output dimension.
    batches_ : ndarray of shape (n_batches,)
        Batch labels seen in fit.
    batch_means_ : ndarray of shape (n_batches, n_components_)
        Mean of each batch's controls after whitening.
    batch_scales_ : ndarray of shape (n_batches, n_components_)
        Their standard deviations (used when ``coral=False``).
    batch_coral_ : ndarray of shape (n_batches, n_components_, n_components_) or None
        Per-batch inverse square roots of the control covariances (``coral=True``).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined only when ``X`` has string column names.

    See Also
    --------
    sklearn.decomposition.PCA : PCA with ``whiten=True`` on all samples.
    replicate_consistency_ks : The metric TVN is meant to raise.

    Notes
    -----
    With :math:`\\mu, U, \\lambda` the mean, principal axes and variances of
    the pooled controls, the whitened embedding is
    :math:`z = \\operatorname{diag}(\\lambda + \\epsilon)^{-1/2} U^\\top (x - \\mu)`.
    For a sample of batch ``b`` with control mean :math:`m_b` and standard
    deviation :math:`s_b` of ``z``, TVN returns :math:`(z - m_b) / s_b`; CORAL
    returns :math:`(C_b + \\rho I)^{-1/2} (z - m_b)` with :math:`C_b` the
    covariance of the batch's controls. This is the post-processing of the
    evaluation pipeline of Kenyon-Dean et al. [1]_ (their Section 4; TVN from
    Ando et al. [2]_); the order (pooled whitening, then per-batch steps)
    follows the paper's description, and the regularisers are ours.

    ``batches`` and ``is_control`` are keyword arguments of ``fit`` and
    ``transform``; inside a :class:`~sklearn.pipeline.Pipeline` route them with
    metadata routing (``set_fit_request(batches=True, is_control=True)``).

    References
    ----------
    .. [1] K. Kenyon-Dean et al. "ViTally Consistent: Scaling Biological
       Representation Learning for Cell Microscopy". ICML 2025, arXiv:2411.02572.
    .. [2] D. M. Ando, C. Y. McLean, M. Berndl. "Improving Phenotypic
       Measurements in High-Content Imaging Screens". bioRxiv 161422, 2017.

    Examples
    --------
    >>> from skpaper.datasets import make_plate_embeddings
    >>> from skpaper.representation import (TypicalVariationNormalizer,
    ...                                     replicate_consistency_ks)
    >>> d = make_plate_embeddings(random_state=0)
    >>> tvn = TypicalVariationNormalizer().fit(d.X, batches=d.plate, is_control=d.is_control)
    >>> Z = tvn.transform(d.X, batches=d.plate)
    >>> keep = ~d.is_control
    >>> before = replicate_consistency_ks(d.X[keep], d.perturbation[keep], batches=d.plate[keep])
    >>> after = replicate_consistency_ks(Z[keep], d.perturbation[keep], batches=d.plate[keep])
    >>> bool(after > before)
    True
    """

    _parameter_constraints = {
        "whiten": ["boolean"],
        "coral": ["boolean"],
        "n_components": [Interval(Integral, 1, None, closed="left"),
                         Interval(RealNotInt, 0, 1, closed="neither"), None],
        "eps": [Interval(Real, 0, None, closed="left")],
        "coral_reg": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, *, whiten=True, coral=False, n_components=None, eps=1e-6,
                 coral_reg=1.0):
        self.whiten = whiten
        self.coral = coral
        self.n_components = n_components
        self.eps = eps
        self.coral_reg = coral_reg

    def _project(self, X):
        if self.components_ is None:
            return X - self.mean_
        return (X - self.mean_) @ self.components_.T / np.sqrt(self._variances)

    def _batch_stats(self, Z, label):
        n = Z.shape[0]
        if n < 2:
            raise ValueError(f"batch {label!r} has {n} control sample(s); per-batch "
                             "normalisation needs at least 2 (got 1 sample or fewer).")
        mean = Z.mean(axis=0)
        scale = Z.std(axis=0)
        scale = np.where(scale > np.sqrt(self.eps), scale, 1.0)
        coral = None
        if self.coral:
            cov = np.cov(Z, rowvar=False).reshape(Z.shape[1], Z.shape[1])
            coral = _inverse_sqrt(cov, self.coral_reg + self.eps)
        return mean, scale, coral

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, batches=None, is_control=None):
        """Fit the whitening and the per-batch statistics on the control samples.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored.
        batches : array-like of shape (n_samples,) or None, default=None
            Batch label of each sample; None puts every sample in one batch.
        is_control : array-like of bool of shape (n_samples,) or None, default=None
            Which samples are negative controls; None treats all as controls.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X = validate_data(self, X, dtype=np.float64)
        if np.abs(X).max() > 1e150:
            raise ValueError(f"X holds values up to {np.abs(X).max():.3g}, whose squares "
                             "overflow float64 in the covariance; rescale X.")
        n = X.shape[0]
        batches = _labels(batches, n, "batches", 0)
        controls = _control_mask(is_control, n)
        Xc = X[controls]
        if Xc.shape[0] < 2:
            raise ValueError(f"TypicalVariationNormalizer needs at least 2 control samples, "
                             f"got {Xc.shape[0]} (1 sample or none).")
        self.mean_ = Xc.mean(axis=0)
        if self.whiten:
            _, s, vt = linalg.svd(Xc - self.mean_, full_matrices=False)
            var = s**2 / (Xc.shape[0] - 1)
            positive = var > var.max() * 1e-10 if var.max() > 0 else np.zeros_like(var, bool)
            k = max(int(positive.sum()), 1)
            if isinstance(self.n_components, Integral):
                k = min(k, int(self.n_components))
            elif self.n_components is not None:
                ratio = np.cumsum(var) / var.sum() if var.sum() > 0 else np.ones_like(var)
                k = min(k, int(np.searchsorted(ratio, self.n_components) + 1))
            self.components_ = vt[:k]
            self.explained_variance_ = var[:k]
            self._variances = var[:k] + self.eps * max(var[:k].mean(), 1e-300)
        else:
            self.components_ = self.explained_variance_ = None
        Z = self._project(Xc)
        self.n_components_ = Z.shape[1]
        self.batches_ = np.unique(batches[controls])
        missing = np.setdiff1d(np.unique(batches), self.batches_)
        if missing.size:
            raise ValueError(f"batches {missing[:5].tolist()} have no control samples; every "
                             "batch needs controls for TVN.")
        stats = [self._batch_stats(Z[batches[controls] == b], b) for b in self.batches_]
        self.batch_means_ = np.array([m for m, _, _ in stats])
        self.batch_scales_ = np.array([s for _, s, _ in stats])
        self.batch_coral_ = np.array([c for _, _, c in stats]) if self.coral else None
        self._n_features_out = self.n_components_
        return self

    def fit_transform(self, X, y=None, *, batches=None, is_control=None):
        """Fit on the controls, then normalise every sample of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored.
        batches : array-like of shape (n_samples,) or None, default=None
            Batch labels, as in :meth:`fit`.
        is_control : array-like of bool of shape (n_samples,) or None, default=None
            Control rows, as in :meth:`fit`.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components_)
            The normalised samples, as :meth:`transform` returns them.
        """
        return self.fit(X, batches=batches, is_control=is_control).transform(
            X, batches=batches)

    def transform(self, X, *, batches=None, is_control=None):
        """Whiten with the pooled controls, then normalise each batch by its controls.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        batches : array-like of shape (n_samples,) or None, default=None
            Batch labels; None is allowed only when fit saw a single batch.
        is_control : array-like of bool of shape (n_samples,) or None, default=None
            Needed only for batches not seen in fit: their statistics are then
            estimated from their controls in ``X``.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components_)
            Whitened, batch-normalised samples.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        n = X.shape[0]
        if batches is None:
            if self.batches_.size != 1:
                raise ValueError(f"batches is required: the normalizer was fitted on "
                                 f"{self.batches_.size} batches.")
            batches = np.full(n, self.batches_[0])
        batches = _labels(batches, n, "batches", 0)
        Z = self._project(X)
        out = np.empty_like(Z)
        known = {b: i for i, b in enumerate(self.batches_.tolist())}
        for label in np.unique(batches):
            rows = batches == label
            if label in known:
                i = known[label]
                mean, scale = self.batch_means_[i], self.batch_scales_[i]
                coral = None if self.batch_coral_ is None else self.batch_coral_[i]
            else:
                if is_control is None:
                    raise ValueError(f"batch {label!r} was not seen in fit; pass is_control "
                                     "so that its controls can normalise it.")
                controls = _control_mask(is_control, n)
                mean, scale, coral = self._batch_stats(Z[rows & controls], label)
            centred = Z[rows] - mean
            out[rows] = centred @ coral if coral is not None else centred / scale
        return out
