"""The two-stage orientation pipeline: an orienter modulo O, then the flipper."""

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils.validation import check_is_fitted

from ..utils._docstring import Substitution
from ..utils._sklearn import HasMethods, Interval, _fit_context
from ._base import (
    _SHARED_DOCS,
    _check_channels,
    _cloud_tags,
    apply_rotation,
    check_point_clouds,
    check_rotations,
)
from ._flipper import OctahedralFlipper
from ._orienter import QuotientOrienter, _OrientationMixin
from ._rotations import octahedral_group

__all__ = ["TwoStageOrienter"]


class TwoStageOrienter(_OrientationMixin, TransformerMixin, BaseEstimator):
    """Full orientation estimation: stage-1 orienter, then the octahedral flipper.

    Stage 1 (``orienter``) gives R_hat up to a cube rotation; the clouds are
    re-oriented as X R_hat and stage 2 (``flipper``) predicts the flip g of
    that near-canonical cloud; the final orientation is R_hat g.

    Parameters
    ----------
    orienter : estimator or None, default=None
        Stage 1 with ``fit(X, y)`` and ``predict(X) -> (n, 3, 3)``: a
        :class:`QuotientOrienter` (the default, with default parameters) or a
        :class:`PCAOrienter`. Cloned in :meth:`fit`.
    flipper : estimator or None, default=None
        Stage 2 with ``fit(X)`` on canonical clouds and ``predict(X)`` giving
        flip indices: an :class:`OctahedralFlipper` (the default). Cloned.
    up_threshold_deg : float, default=10.0
        Threshold of :meth:`score`, the up-axis accuracy (exact, no group:
        the pipeline resolves the full orientation).

    Attributes
    ----------
    orienter_ : estimator
        Fitted stage 1.
    flipper_ : estimator
        Fitted stage 2.
    n_features_in_ : int
        Channels per point (3 or 6).

    See Also
    --------
    QuotientOrienter : The learned stage 1.
    OctahedralFlipper : Stage 2, the 24-way flip classifier.
    PCAOrienter : A non-learned stage 1.

    Notes
    -----
    With X = X_c R^T and R_hat = R h (h in O), the oriented cloud is
    X R_hat = X_c h, which the flipper reads as the flip g = h^T, so
    R_hat g = R. Both stages train on canonical shapes: when ``y`` is given
    to :meth:`fit`, the clouds are first canonicalised as X y.

    References
    ----------
    .. [1] Scarvelis, Benhaim & Zhang, "Symmetry-Robust 3D Orientation
       Estimation", ICML 2025 (arXiv:2410.02101).

    Examples
    --------
    >>> from skpaper.datasets import make_synthetic_shapes
    >>> from skpaper.shape import OctahedralFlipper, PCAOrienter, TwoStageOrienter
    >>> X, _ = make_synthetic_shapes(3, 64, random_state=0)
    >>> pipe = TwoStageOrienter(orienter=PCAOrienter(), flipper=OctahedralFlipper(
    ...     n_points=64, max_epochs=2, random_state=0))
    >>> pipe.fit(X).predict(X[:2]).shape
    (2, 3, 3)
    """

    _parameter_constraints = {
        "orienter": [HasMethods(["fit", "predict"]), None],
        "flipper": [HasMethods(["fit", "predict"]), None],
        "up_threshold_deg": [Interval(Real, 0, 180, closed="right")],
    }

    def __init__(self, orienter=None, flipper=None, *, up_threshold_deg=10.0):
        self.orienter = orienter
        self.flipper = flipper
        self.up_threshold_deg = up_threshold_deg

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Fit both stages.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_points, 3 or 6)
            Canonical clouds, or rotated clouds when ``y`` is given.
        y : array-like of shape (n_samples, 3, 3) or None, default=None
            Rotations of the clouds (X = X_canonical y^T).

        Returns
        -------
        self : TwoStageOrienter
            The fitted pipeline.
        """
        X = check_point_clouds(X)
        if y is not None:
            y = check_rotations(y, len(X))
        _check_channels(self, X, reset=True)
        orienter = QuotientOrienter() if self.orienter is None else self.orienter
        flipper = OctahedralFlipper() if self.flipper is None else self.flipper
        self.orienter_ = clone(orienter).fit(X, y)
        canonical = X if y is None else apply_rotation(X, np.swapaxes(y, 1, 2))
        self.flipper_ = clone(flipper).fit(canonical, None)
        return self

    def _validate(self, X):
        check_is_fitted(self)
        return _check_channels(self, check_point_clouds(X), reset=False)

    @Substitution(**_SHARED_DOCS)
    def predict_stages(self, X):
        """Predict the outputs of both stages.

        Parameters
        ----------
        {X_clouds}

        Returns
        -------
        R_stage1 : ndarray of shape (n_samples, 3, 3)
            The orienter's estimate (correct up to O).
        flips : ndarray of shape (n_samples,)
            The flipper's indices into :func:`octahedral_group`.
        """
        X = self._validate(X)
        R1 = self.orienter_.predict(X)
        flips = np.asarray(self.flipper_.predict(apply_rotation(X, np.swapaxes(R1, 1, 2))))
        return R1, flips

    @Substitution(**_SHARED_DOCS)
    def predict(self, X):
        """Predict the full orientations R_hat g.

        Parameters
        ----------
        {X_clouds}

        Returns
        -------
        R : ndarray of shape (n_samples, 3, 3)
            The stage-1 estimate completed by the predicted flip
            (X = X_canonical R^T).
        """
        R1, flips = self.predict_stages(X)
        return R1 @ octahedral_group()[flips]

    @Substitution(**_SHARED_DOCS)
    def predict_top_k(self, X, k=4):
        """Predict the orientations completed by the flipper's ``k`` most probable flips.

        Parameters
        ----------
        {X_clouds}
        k : int, default=4
            Number of orientations, in 1..24.
            Needs a flipper with ``predict_top_k`` (:class:`OctahedralFlipper`).

        Returns
        -------
        R : ndarray of shape (n_samples, k, 3, 3)
            Most probable first; score them with :func:`top_k_axis_errors`.
        """
        X = self._validate(X)
        if not hasattr(self.flipper_, "predict_top_k"):
            raise TypeError(f"predict_top_k needs a flipper with predict_top_k, got "
                            f"{type(self.flipper_).__name__}.")
        R1 = self.orienter_.predict(X)
        flips = np.asarray(self.flipper_.predict_top_k(apply_rotation(
            X, np.swapaxes(R1, 1, 2)), k))
        return R1[:, None] @ octahedral_group()[flips]

    def _score_group(self):
        return None

    def __sklearn_tags__(self):
        return _cloud_tags(super().__sklearn_tags__())
