"""Input handling, prediction and scoring shared by the semi-supervised estimators."""

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import (
    check_array,
    check_is_fitted,
    column_or_1d,
    has_fit_parameter,
)

from ..utils import normal_ci
from ..utils._docstring import Substitution
from ..utils._sklearn import (
    Interval,
    StrOptions,
    _check_sample_weight,
    _fit_context,
    validate_data,
)
from ._estimating import (
    TARGETS,
    influence_function,
    influence_se,
    inverse_link,
    percentile_ci,
    target_design,
)

_X_PARAMS = {"dtype": np.float64}
_Y_PARAMS = {"ensure_2d": False, "ensure_all_finite": "allow-nan", "dtype": np.float64}


def class_one_proba(model, X):
    """``P(class == 1 | X)`` from a fitted binary classifier."""
    classes = list(getattr(model, "classes_", []))
    if 1 not in classes:
        raise ValueError(
            f"{type(model).__name__} must be a classifier trained on the labels {{0, 1}}; "
            f"its classes_ are {classes}."
        )
    return model.predict_proba(X)[:, classes.index(1)]


def fit_weighted(model, X, y, sample_weight):
    """``model.fit(X, y)``, with ``sample_weight`` when it is not None."""
    if sample_weight is None:
        return model.fit(X, y)
    return model.fit(X, y, sample_weight=sample_weight)


def check_takes_weights(model, name, sample_weight):
    """Refuse sample weights for a nuisance model whose ``fit`` cannot take them."""
    if sample_weight is not None and not has_fit_parameter(model, "sample_weight"):
        raise ValueError(
            f"{name}={type(model).__name__} does not take sample_weight in fit, so the "
            "weighted estimate cannot be computed; pass a model that does, or no "
            "sample_weight."
        )


def _check_y_1d(y):
    if y.ndim == 2 and y.shape[1] == 1:
        return column_or_1d(y, warn=True)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-dimensional, got an array of shape {y.shape}.")
    return y


def _labeled_mask(y, labeled):
    """Boolean mask of the labeled rows: ``labeled`` if given, else the finite ``y``."""
    n = y.shape[0]
    if labeled is None:
        return np.isfinite(y)
    mask = check_array(labeled, ensure_2d=False, dtype=None, input_name="labeled")
    if mask.ndim != 1 or mask.shape[0] != n:
        raise ValueError(
            f"labeled must be a 1-D boolean mask with one entry per row of X ({n}), got "
            f"shape {mask.shape}."
        )
    if mask.dtype != bool:
        if not np.isin(mask, (0, 1)).all():
            raise ValueError(
                f"labeled must be boolean (or 0/1), got values {np.unique(mask)[:5]}."
            )
        mask = mask.astype(bool)
    if np.isnan(y[mask]).any():
        raise ValueError(
            f"y is NaN on {int(np.isnan(y[mask]).sum())} rows that labeled marks as labeled."
        )
    return mask


def _check_acp(acp, n, labeled):
    """Validate the ACP matrix; return it as (n, q) and whether unlabeled rows observe it.

    The ACP may be observed on every row, or on the labeled rows only (NaN on
    every unlabeled row); any other missingness pattern is refused.
    """
    if acp is None:
        return None, False
    S = check_array(acp, ensure_2d=False, ensure_all_finite="allow-nan", dtype=np.float64,
                    input_name="acp")
    if S.ndim == 1:
        S = S.reshape(-1, 1)
    if S.shape[0] != n:
        raise ValueError(f"acp has {S.shape[0]} rows, but X has {n} rows.")
    missing = np.isnan(S)
    if not missing.any():
        return S, True
    if missing[labeled].any():
        raise ValueError(
            f"acp must be observed on every labeled row; it is NaN on "
            f"{int(missing[labeled].any(axis=1).sum())} labeled rows."
        )
    if not missing[~labeled].all():
        raise ValueError(
            "acp must be observed either on every row or on the labeled rows only (NaN on "
            "every unlabeled row); got a partial pattern on the unlabeled rows."
        )
    return S, False

#: Docstring pieces shared by the estimators, filled in by :data:`fill_doc`.
_SHARED_DOCS = {
    "estimate_attributes": """
    estimate_ : float or ndarray of shape (n_features + 1,)
        Point estimate (a float for ``target="mean"``, intercept first otherwise).
    se_ : float or ndarray of shape (n_features + 1,)
        Standard error.
    ci_ : ndarray of shape (2,) or (n_features + 1, 2)
        Lower and upper ends of the ``1 - alpha`` interval.
    coef_ : ndarray of shape (1,) or (n_features + 1,)
        ``estimate_`` as an array, used by :meth:`predict`.""",
    "count_attributes": """
    n_labeled_, n_unlabeled_ : int
        Row counts.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.""",
    "paper_reference": """
    .. [1] C. Ying, J. Jin, Y. Guo, X. Li, M. Liang and J. Zhao, "Towards the
       Efficient Inference by Incorporating Automated Computational Phenotypes
       under Covariate Shift", Proceedings of the 42nd International Conference
       on Machine Learning (ICML), 2025.""",
}


#: Decorator filling the ``{name}`` placeholders of :data:`_SHARED_DOCS` into a docstring.
fill_doc = Substitution(**_SHARED_DOCS)


class _BaseShiftEstimator(BaseEstimator):
    """Base of the estimators of a target parameter from partly labeled data.

    ``fit(X, y, acp=None, labeled=None, sample_weight=None)`` validates the
    inputs once and hands them to the subclass hook ``_fit_estimate``, which
    fills the shared fitted attributes through ``_set_inference``.
    """

    _parameter_constraints: dict = {
        "target": [StrOptions(set(TARGETS))],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
    }

    # User-supplied nuisance estimators validate their own parameters when fitted.
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, acp=None, labeled=None, sample_weight=None):
        """Estimate the target parameter.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates of every unit, labeled or not.
        y : array-like of shape (n_samples,)
            Gold-standard outcome; NaN marks an unlabeled row (unless
            ``labeled`` is given, in which case ``y`` is ignored on the
            unlabeled rows).
        acp : array-like of shape (n_samples,) or (n_samples, n_acp), default=None
            Automated computational phenotype(s) S. NaN on every unlabeled row
            means the ACP is observed on the labeled rows only.
        labeled : array-like of shape (n_samples,) of bool, default=None
            Explicit mask of the labeled rows.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each row (the number of population units it
            stands for). The estimating equation, the influence function and
            standard error, and the nuisance fits are weighted, so integer
            weights give what repeating each row that many times gives (see
            the class docstring for what cross-fitting and the bootstrap do).
            Nuisance models must then take ``sample_weight`` in ``fit``.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X, y = validate_data(self, X, y, validate_separately=(_X_PARAMS, _Y_PARAMS))
        y = _check_y_1d(y)
        if y.shape[0] != X.shape[0]:
            raise ValueError(
                f"Found input variables with inconsistent numbers of samples: X has "
                f"{X.shape[0]} rows, y has {y.shape[0]}."
            )
        if np.isinf(y).any():
            raise ValueError("y contains infinity; use NaN to mark unlabeled rows.")
        R = _labeled_mask(y, labeled)
        if not R.any():
            raise ValueError(
                f"{type(self).__name__} needs at least one labeled row (a finite y); got 0 "
                f"of {X.shape[0]} rows."
            )
        S, acp_on_unlabeled = _check_acp(acp, X.shape[0], R)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
            if not np.any(sample_weight[R] > 0):
                raise ValueError(
                    "sample_weight is 0 on every labeled row: there is nothing to "
                    "estimate from."
                )
        y = np.where(R, y, 0.0)
        self.n_labeled_ = int(R.sum())
        self.n_unlabeled_ = int(X.shape[0] - self.n_labeled_)
        self._fit_estimate(X, y, S, R, acp_on_unlabeled, sample_weight)
        return self

    def _fit_estimate(self, X, y, S, R, acp_on_unlabeled, sample_weight=None):
        raise NotImplementedError

    def _set_inference(self, D, z, t, beta, draws=None, sample_weight=None):
        """Fill ``estimate_``, ``se_``, ``ci_`` and ``influence_`` from the solved equation.

        ``z`` and ``t`` are unweighted; ``sample_weight`` weights the rows.
        """
        phi = influence_function(D, z, t, beta, self.target, sample_weight)
        if draws is None:
            se = influence_se(phi, sample_weight)
            ci = normal_ci(beta, se, self.alpha)
        else:
            se = np.std(draws, axis=0, ddof=1)
            ci = percentile_ci(draws, self.alpha)
        self.coef_ = beta
        if self.target == "mean":
            self.estimate_ = float(beta[0])
            self.se_ = float(se[0])
            self.ci_ = ci[0]
            self.influence_ = phi[:, 0]
        else:
            self.estimate_ = beta
            self.se_ = se
            self.ci_ = ci
            self.influence_ = phi
        return phi

    def predict(self, X):
        """Fitted target-population model at ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``X~' beta`` for ``target="ols"``, ``expit(X~' beta)`` for
            ``target="logistic"``, and the estimated mean for ``target="mean"``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, **_X_PARAMS)
        return self._predict_validated(X)

    def _predict_validated(self, X):
        # X is already validated: validating again would drop its feature names and warn.
        mu, _ = inverse_link(target_design(X, self.target) @ self.coef_, self.target)
        return mu

    def _score_weights(self, X):
        """Density-ratio weights of the target population relative to the labeled one."""
        model = getattr(self, "propensity_model_", None)
        if model is None:
            return np.ones(X.shape[0])
        eps = max(self.clip, 1e-12)
        p = np.clip(class_one_proba(model, X), eps, 1.0 - eps)
        return (1.0 - p) / p if self.population == "unlabeled" else 1.0 / p

    def score(self, X, y, labeled=None, sample_weight=None):
        """Negative risk of the fitted model in the target population.

        The loss (squared error for ``"mean"`` and ``"ols"``, log-loss for
        ``"logistic"``) on the labeled rows of ``(X, y)`` is averaged with the
        self-normalised density-ratio weights of the fitted propensity model, so
        it estimates the risk in the population the estimator targets. Higher is
        better, as :class:`~sklearn.model_selection.GridSearchCV` expects.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        y : array-like of shape (n_samples,)
            NaN marks unlabeled rows, which are ignored.
        labeled : array-like of shape (n_samples,) of bool, default=None
            Mask of the labeled rows; ``None`` takes the rows where ``y`` is not NaN.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the rows, multiplying the density-ratio
            weights.

        Returns
        -------
        score : float
            Minus the estimated target-population risk (higher is better).
        """
        check_is_fitted(self)
        X, y = validate_data(self, X, y, reset=False, validate_separately=(_X_PARAMS, _Y_PARAMS))
        y = _check_y_1d(y)
        R = _labeled_mask(y, labeled)
        if not R.any():
            raise ValueError("score needs at least one labeled row (a finite y); got 0.")
        weights = np.ones(X.shape[0])
        if sample_weight is not None:
            weights = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
        X, y, weights = X[R], y[R], weights[R]
        pred = self._predict_validated(X)
        if self.target == "logistic":
            pred = np.clip(pred, 1e-12, 1 - 1e-12)
            loss = -(y * np.log(pred) + (1 - y) * np.log1p(-pred))
        else:
            loss = (y - pred) ** 2
        weights = weights * self._score_weights(X)
        if not np.sum(weights) > 0:
            raise ValueError("sample_weight is 0 on every labeled row of score.")
        return -float(np.average(loss, weights=weights))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags


def labeled_weight_ess(weights, sample_weight=None):
    """Kish effective sample size ``(sum s w)^2 / sum s w^2`` of positive weights ``w``.

    ``s`` (sample weights, ones by default) counts each row as that many units.
    """
    weights = np.asarray(weights, dtype=float)
    s = np.ones_like(weights) if sample_weight is None else np.asarray(sample_weight, float)
    return float(np.sum(s * weights) ** 2 / np.sum(s * weights**2))

