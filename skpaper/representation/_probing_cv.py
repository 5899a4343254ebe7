"""Validation protocol of the sparse-probing paper: the fold rule and a hyper-parameter search.

Kantamneni, Engels et al. (ICML 2025) choose every hyper-parameter (probe ``C``, PCA
width, ``k`` of KNN, boosting and MLP settings) by the mean validation AUC over folds
that depend on the training-set size; :class:`PaperCV` is that rule and
:class:`ProbeSearchCV` the search that uses it.
"""

import warnings
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.metrics import check_scoring
from sklearn.model_selection import (
    LeavePOut,
    ParameterGrid,
    ParameterSampler,
    StratifiedKFold,
    StratifiedShuffleSplit,
    check_cv,
)
from sklearn.pipeline import Pipeline
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, has_fit_parameter

from ..utils._metrics import binary_roc_auc
from ..utils._sklearn import HasMethods, Interval, StrOptions, _fit_context, validate_data
from ._docs import _SHARED_DOCS, Substitution

__all__ = ["PaperCV", "ProbeSearchCV"]



def check_binary_target(y):
    """Raise the scikit-learn message for non-binary targets; return the two classes."""
    y_type = type_of_target(y, input_name="y", raise_unknown=True)
    if y_type != "binary":
        raise ValueError(
            f"Only binary classification is supported. The type of the target is {y_type}."
        )
    classes = np.unique(y)
    if classes.size != 2:
        raise ValueError(
            f"y must hold samples of both classes of a binary problem; got {classes.size} "
            f"class ({classes!r})."
        )
    return classes


class PaperCV:
    """Folds chosen by training-set size, as in the paper's validation protocol.

    ``n <= 12``: leave-two-out; ``n < 128``: stratified 6-fold; otherwise one holdout
    of ``min(int(0.2 n), 100)`` samples. Only folds whose validation part holds both
    classes are yielded (AUC is undefined otherwise).

    Parameters
    ----------
    random_state : int, RandomState instance or None, default=42
        Shuffles the stratified folds and the holdout. The paper fixes 42.

    Notes
    -----
    The paper's code takes the holdout as the *last* rows of an already shuffled
    training set; here it is a stratified random holdout, which is the same in
    distribution and does not depend on the row order of the caller's data.

    {probing_references}

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.representation import PaperCV
    >>> y = np.tile([0, 1], 5)
    >>> len(list(PaperCV().split(np.zeros((10, 1)), y)))  # pairs with both classes
    25
    """

    def __init__(self, random_state=42):
        self.random_state = random_state

    def __repr__(self):
        return f"PaperCV(random_state={self.random_state!r})"

    def _splitter(self, n, y):
        if n <= 12:
            return LeavePOut(2)
        if n < 128:
            return StratifiedKFold(n_splits=6, shuffle=True, random_state=self.random_state)
        val_size = min(int(0.2 * n), 100)
        classes, counts = np.unique(y, return_counts=True)
        if classes.size < 2 or counts.min() < 2:
            rng = check_random_state(self.random_state)
            order = rng.permutation(n)
            return [(np.sort(order[val_size:]), np.sort(order[:val_size]))]
        return StratifiedShuffleSplit(n_splits=1, test_size=val_size,
                                      random_state=self.random_state)

    def split(self, X, y, groups=None):
        """Yield ``(train, validation)`` index pairs.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; only its length matters.
        y : array-like of shape (n_samples,)
            Binary labels; the fold rule depends on their number, and folds whose
            validation part lacks a class are skipped.
        groups : None
            Ignored.

        Yields
        ------
        train, validation : ndarray of int
            Indices of the training and validation part of a fold.
        """
        y = np.asarray(y)
        n = len(y)
        splitter = self._splitter(n, y)
        with warnings.catch_warnings():
            # Classes smaller than the fold count only make some folds unusable.
            warnings.filterwarnings("ignore", message="The least populated class")
            folds = (list(splitter.split(np.zeros((n, 1)), y)) if hasattr(splitter, "split")
                     else splitter)
        for train, val in folds:
            if np.unique(y[val]).size == 2:
                yield np.asarray(train), np.asarray(val)

    def get_n_splits(self, X=None, y=None, groups=None):
        """Number of usable folds for ``y``.

        Parameters
        ----------
        X : object, default=None
            Ignored.
        y : array-like of shape (n_samples,), default=None
            Binary labels.
        groups : object, default=None
            Ignored.

        Returns
        -------
        n_splits : int
            Number of folds whose validation part holds both classes.
        """
        if y is None:
            raise ValueError("y is required: the folds depend on the labels, got y=None.")
        return sum(1 for _ in self.split(X, y))


def resolve_cv(cv, y):
    """``"auto"`` -> :class:`PaperCV`; otherwise :func:`sklearn.model_selection.check_cv`."""
    if isinstance(cv, str):
        return PaperCV()
    return check_cv(cv, y, classifier=True)


def validation_splits(cv, X, y):
    """The folds of :func:`resolve_cv` on ``(X, y)``; none below four samples."""
    return list(resolve_cv(cv, y).split(X, y)) if len(y) >= 4 else []


def check_probe_weights(sample_weight, X):
    """Validated non-negative ``sample_weight`` (or None)."""
    if sample_weight is None:
        return None
    return _check_sample_weight(sample_weight, X, ensure_non_negative=True)


def fit_weighted(estimator, X, y, sample_weight=None):
    """``estimator.fit(X, y)``, with ``sample_weight`` where it is given.

    A :class:`~sklearn.pipeline.Pipeline` passes the weights to every step whose
    ``fit`` takes them (a scaler, a latent selector, the final classifier) and fits
    the others (PCA) unweighted; its final step must take them. Any other estimator
    must take ``sample_weight`` in ``fit``.
    """
    if sample_weight is None:
        return estimator.fit(X, y)
    if isinstance(estimator, Pipeline):
        steps = [(name, step) for name, step in estimator.steps
                 if step is not None and step != "passthrough"]
        if steps and has_fit_parameter(steps[-1][1], "sample_weight"):
            return estimator.fit(X, y, **{f"{name}__sample_weight": sample_weight
                                          for name, step in steps
                                          if has_fit_parameter(step, "sample_weight")})
        last = type(steps[-1][1]).__name__ if steps else "none"
        raise TypeError(f"sample_weight was given but the pipeline's final step ({last}) "
                        "does not take sample_weight in fit.")
    if has_fit_parameter(estimator, "sample_weight"):
        return estimator.fit(X, y, sample_weight=sample_weight)
    raise TypeError(f"sample_weight was given but {type(estimator).__name__} does not take "
                    "sample_weight in fit.")


def fold_score(estimator, X, y, train, val, scorer, is_auc, sample_weight=None):
    """Score of a clone of ``estimator`` fitted on ``train``, evaluated on ``val``.

    A single-class training fold gets the neutral AUC 0.5 (the paper's convention) or
    ``nan`` for another scorer (then ignored in the mean). With ``sample_weight``, the
    fit and the score are weighted.
    """
    if np.unique(y[train]).size < 2:
        return 0.5 if is_auc else np.nan
    w_train = None if sample_weight is None else sample_weight[train]
    w_val = None if sample_weight is None else sample_weight[val]
    model = fit_weighted(clone(estimator), X[train], y[train], w_train)
    if is_auc:
        return binary_roc_auc(y[val], positive_scores(model, X[val]), sample_weight=w_val)
    if w_val is None:
        return float(scorer(model, X[val], y[val]))
    return float(scorer(model, X[val], y[val], sample_weight=w_val))


def positive_scores(model, X):
    """Positive-class score: ``decision_function`` or else the logit of ``predict_proba``.

    Both rank samples as the probability does (so AUCs agree) and are positive exactly
    where the positive class is predicted.
    """
    if hasattr(model, "decision_function"):
        return np.asarray(model.decision_function(X), dtype=np.float64).ravel()
    p = np.clip(model.predict_proba(X)[:, 1], 1e-12, 1 - 1e-12)
    return np.log(p) - np.log1p(-p)


def cv_mean_score(estimator, X, y, splits, scoring="roc_auc", sample_weight=None):
    """Mean validation score of ``estimator`` over ``splits`` (``nan`` if none usable)."""
    is_auc = scoring == "roc_auc"
    scorer = None if is_auc else check_scoring(estimator, scoring=scoring)
    scores = [fold_score(estimator, X, y, tr, va, scorer, is_auc, sample_weight)
              for tr, va in splits]
    scores = [s for s in scores if np.isfinite(s)]
    return float(np.mean(scores)) if scores else float("nan")


class BestEstimatorMixin:
    """``predict``, ``predict_proba`` and ``decision_function`` of ``best_estimator_``.

    For binary meta-classifiers that choose one fitted estimator (a search, a quiver).
    """

    def predict(self, X):
        """Predict labels with ``best_estimator_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Predicted class of each sample.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self.best_estimator_.predict(X)

    def predict_proba(self, X):
        """Class probabilities of ``best_estimator_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Probability of each class, in the order of ``classes_``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self.best_estimator_.predict_proba(X)

    def decision_function(self, X):
        """Positive-class score of ``best_estimator_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            Its ``decision_function``, or the logit of its positive-class probability.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return positive_scores(self.best_estimator_, X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = False
        return tags


@Substitution(**_SHARED_DOCS)
class ProbeSearchCV(BestEstimatorMixin, ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """Hyper-parameter search with the paper's folds, for binary probes.

    Like :class:`~sklearn.model_selection.GridSearchCV`, but the grid may depend on
    the data size (PCA widths and KNN ``k`` in the paper are capped by the number of
    training samples), folds follow :class:`PaperCV`, single-class training folds
    score a neutral AUC of 0.5, and fewer than four samples skip the search (the
    estimator is fitted as given and its *training* AUC is reported, as in the paper).

    Parameters
    ----------
    estimator : estimator object
        A binary classifier with ``predict_proba`` or ``decision_function``.
    param_grid : dict or callable
        ``{name: list of values}``, or ``f(n_samples, n_features, min_train_size) ->
        dict`` for grids that depend on the data size.
    n_iter : int or None, default=None
        ``None`` tries the whole grid; an int samples that many configurations (as
        the paper does for XGBoost and MLP).
    cv : "auto", int or cross-validation splitter, default="auto"
        ``"auto"`` is :class:`PaperCV`.
    scoring : str or callable, default="roc_auc"
        Validation score, a scikit-learn scorer name or callable.
    random_state : int, RandomState instance or None, default=None
        Seeds the sampled configurations (``n_iter``).

    Attributes
    ----------
    best_estimator_ : estimator
        Refitted on all the data with ``best_params_``.
    best_params_ : dict
    best_score_ : float
        Mean validation score of ``best_params_`` (the "validation AUC" that the
        quiver of arrows compares).
    cv_results_ : dict
        ``params`` and ``mean_test_score`` per configuration.
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined only when ``X`` has string column names.

    See Also
    --------
    paper_baselines : The five baselines of the paper as searches of this kind.

    {probing_references}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skpaper.representation import ProbeSearchCV
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> search = ProbeSearchCV(LogisticRegression(), {"C": np.logspace(5, -5, 10)}).fit(X, y)
    >>> bool(search.best_score_ > 0.8)
    True
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"])],
        "param_grid": [dict, callable],
        "n_iter": [Interval(Integral, 1, None, closed="left"), None],
        "cv": [StrOptions({"auto"}), "cv_object"],
        "scoring": [str, callable],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator, param_grid, *, n_iter=None, cv="auto", scoring="roc_auc",
                 random_state=None):
        self.estimator = estimator
        self.param_grid = param_grid
        self.n_iter = n_iter
        self.cv = cv
        self.scoring = scoring
        self.random_state = random_state

    def _candidates(self, n_samples, n_features, min_train):
        grid = self.param_grid
        if callable(grid):
            grid = grid(n_samples, n_features, min_train)
        if not isinstance(grid, dict):
            raise TypeError(f"param_grid must be or return a dict, got {type(grid).__name__}.")
        if not grid:
            return [{}]
        if self.n_iter is None:
            return list(ParameterGrid(grid))
        return list(ParameterSampler(grid, n_iter=self.n_iter,
                                     random_state=check_random_state(self.random_state)))

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Search the grid with the paper's folds and refit the best configuration.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Binary labels.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weights of the fits (every fold's and the refit, through
            ``estimator.fit``; a pipeline passes them to each step that takes them)
            and of the validation scores. ``estimator`` must take them. The folds
            themselves are drawn on the rows as given: an integer weight ``w``
            equals ``w`` repeated rows in the refit of a given configuration, not
            in the choice of the configuration.

        Returns
        -------
        self : object
            The fitted search.
        """
        X, y = validate_data(self, X, y)
        sample_weight = check_probe_weights(sample_weight, X)
        self.classes_ = check_binary_target(y)
        splits = validation_splits(self.cv, X, y)
        min_train = min((len(tr) for tr, _ in splits), default=X.shape[0])
        candidates = self._candidates(X.shape[0], X.shape[1], min_train)
        if splits:
            scores = [cv_mean_score(clone(self.estimator).set_params(**params), X, y, splits,
                                    self.scoring, sample_weight) for params in candidates]
            finite = np.where(np.isfinite(scores), scores, -np.inf)
            best = int(np.argmax(finite))
            self.best_params_ = candidates[best]
            self.best_score_ = float(scores[best])
        else:
            scores = [float("nan")] * len(candidates)
            self.best_params_ = {}
        self.cv_results_ = {"params": candidates, "mean_test_score": np.asarray(scores)}
        self.best_estimator_ = fit_weighted(
            clone(self.estimator).set_params(**self.best_params_), X, y, sample_weight)
        if not splits:
            # Too few samples to validate: the paper reports the training AUC instead.
            train_scores = positive_scores(self.best_estimator_, X)
            self.best_score_ = binary_roc_auc(y, train_scores, sample_weight=sample_weight)
        return self
