"""A linear multi-label classifier trained on a smooth (or Lipschitz) multi-label surrogate."""

import numbers
import warnings

import numpy as np
from scipy import sparse
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from ..utils._sklearn import Interval, StrOptions, _fit_context, validate_data
from ._losses import BASE_LOSSES, get_base_loss
from ._objectives import OBJECTIVES, surrogate_value_and_grad
from ._validation import check_indicator

__all__ = ["SmoothMultiLabelClassifier"]

#: Temperatures of the log-sum-exp continuation that minimises the subset loss.
_SUBSET_TEMPERATURES = (1.0, 0.1, 0.01, 0.001)


class SmoothMultiLabelClassifier(MultiOutputMixin, ClassifierMixin, BaseEstimator):
    """Linear multi-label classifier minimising a smooth multi-label surrogate.

    One weight matrix ``W`` (a column per label) is trained jointly on a
    regularised multi-label surrogate built from a base loss of the margin:
    the Hamming, subset or ranking loss of [1]_. The smooth base losses
    (logistic, squared hinge, squared, Huberised hinge) are those for which
    [1]_ proves generalization bounds free of the label count ``c`` up to
    logarithms; the hinge loss is the Lipschitz, non-smooth reference. The
    fitted model plugs into :func:`generalization_bounds`.

    Parameters
    ----------
    loss : {"logistic", "squared_hinge", "squared", "huberized_hinge", "hinge"}, \
            default="logistic"
        Base loss ``l(t)`` of the margin ``t``.
    alpha : float, default=1e-3
        Regularisation strength (see ``constraint``).
    constraint : {"per_label", "frobenius"}, default="per_label"
        Which norm ball the penalty stands for. ``"per_label"`` penalises
        ``(alpha / 2) * mean_j ||w_j||^2``, the Lagrangian of the per-label
        constraints ``||w_j|| <= Lambda`` with one multiplier per label, so each
        label keeps its own budget as ``c`` grows. ``"frobenius"`` penalises
        ``(alpha / 2) * ||W||_F^2``, one budget shared by all labels.
    objective : {"hamming", "subset", "ranking"}, default="hamming"
        Multi-label surrogate to minimise: the mean over labels, the max over
        labels, or the mean over (relevant, irrelevant) label pairs of the base
        loss.
    max_iter : int, default=300
        Maximum number of solver iterations.
    tol : float, default=1e-6
        Stopping tolerance on the largest gradient entry.
    solver : {"lbfgs", "gd"}, default="lbfgs"
        ``"lbfgs"`` is scipy's L-BFGS-B; ``"gd"`` is full-batch gradient
        descent with Armijo backtracking (the plain method the bounds are
        usually illustrated with).
    fit_intercept : bool, default=True
        Whether to fit an unpenalised intercept per label.
    huber_width : float, default=1.0
        Width ``h`` of the quadratic part of the Huberised hinge (its
        smoothness constant is ``1/h``); ignored by the other losses.
    random_state : int, RandomState instance or None, default=None
        Seeds the small random starting point of the solver. Every objective
        is convex, so the solution does not depend on it beyond ``tol``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_labels, n_features)
        Weight vectors ``w_j``, one row per label column: per label of an
        indicator ``Y``; per class of a 1-D ``y`` (a single row for a binary
        ``y``, two with ``objective="ranking"``).
    intercept_ : ndarray of shape (n_labels,)
        Intercepts ``b_j`` (zeros when ``fit_intercept=False``).
    classes_ : ndarray
        ``arange(n_labels)`` for an indicator ``Y``; the class labels for a
        1-D ``y``.
    n_iter_ : int
        Number of solver iterations run.
    objective_value_ : float
        Final value of the regularised objective.
    threshold_ : float
        Score above which :meth:`predict` marks a label relevant: 0 for the
        Hamming and subset objectives; for ``objective="ranking"`` with an
        indicator target, the threshold that minimises the Hamming loss of
        the training predictions (see Notes).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    generalization_bounds : Evaluate the bounds of [1]_ on a fitted model.
    sklearn.multiclass.OneVsRestClassifier : Independent per-label binary fits.

    Notes
    -----
    With scores ``f(x) = W^T x + b`` and signs ``s_j = 2 y_j - 1``, ``fit``
    minimises ``(1/n) sum_i L(f(x_i), y_i) + (alpha/2) Omega(W)`` where ``L``
    is the Hamming loss ``(1/c) sum_j l(s_j f_j)``, the subset loss
    ``max_j l(s_j f_j)`` or the ranking loss
    ``mean_{p in Y+, q in Y-} l(f_p - f_q)`` (Section 2 of [1]_). The base
    losses' constants on ``|t| <= B`` are: logistic ``rho = 1``,
    ``gamma = 1/4``; squared hinge and squared ``rho = 2(1 + B)``,
    ``gamma = 2``; Huberised hinge ``rho = 1``, ``gamma = 1/h``; hinge
    ``rho = 1`` and not smooth.

    With ``objective="hamming"`` and ``constraint="per_label"`` the problem
    separates into one L2-regularised binary problem per label, each
    equivalent to ``LogisticRegression(C=1 / (alpha * n_samples))`` for the
    logistic loss. The subset loss is not differentiable where two labels tie
    for the maximum; the solver follows a subgradient there.

    A 1-D ``y`` (binary or multiclass) is one-hot encoded and treated as a
    multi-label problem whose prediction is the top-scoring class.

    *Decision rule of the ranking objective.* The ranking loss only sees
    score differences within a sample, so the level of the scores, and a
    threshold at 0, carry no meaning. For an indicator target, ``fit`` then
    learns one threshold ``threshold_`` on the training scores: the value
    ``t`` minimising the training Hamming loss of ``[f_j(x) > t]`` (exact,
    over the midpoints of the sorted training scores).
    :meth:`decision_function` returns ``f(x) - threshold_``, a shift common
    to every label that leaves the ranking loss, the ranking metrics and
    the fitted surrogate unchanged, so that :meth:`predict` is, for every
    objective, ``decision_function(X) > 0``.

    References
    ----------
    .. [1] Y.-F. Zhang and M.-L. Zhang, "Tight and Fast Bounds for Multi-Label
       Learning", Proceedings of the 42nd International Conference on Machine
       Learning (ICML), PMLR 267:76909-76938, 2025.

    Examples
    --------
    >>> from skpaper.datasets import make_linear_multilabel
    >>> from skpaper.multilabel import SmoothMultiLabelClassifier
    >>> X, Y = make_linear_multilabel(n_samples=200, n_labels=5, random_state=0)
    >>> clf = SmoothMultiLabelClassifier(alpha=1e-2, random_state=0).fit(X, Y)
    >>> clf.predict(X[:2]).shape
    (2, 5)
    >>> bool(clf.score(X, Y) > 0.5)
    True
    """

    _parameter_constraints: dict = {
        "loss": [StrOptions(set(BASE_LOSSES))],
        "alpha": [Interval(numbers.Real, 0, None, closed="left")],
        "constraint": [StrOptions({"per_label", "frobenius"})],
        "objective": [StrOptions(set(OBJECTIVES))],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "solver": [StrOptions({"lbfgs", "gd"})],
        "fit_intercept": ["boolean"],
        "huber_width": [Interval(numbers.Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        loss="logistic",
        alpha=1e-3,
        constraint="per_label",
        objective="hamming",
        max_iter=300,
        tol=1e-6,
        solver="lbfgs",
        fit_intercept=True,
        huber_width=1.0,
        random_state=None,
    ):
        self.loss = loss
        self.alpha = alpha
        self.constraint = constraint
        self.objective = objective
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.fit_intercept = fit_intercept
        self.huber_width = huber_width
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, Y, sample_weight=None):
        """Fit the weight matrix on the chosen multi-label surrogate.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels) or (n_samples,)
            A 0/1 label indicator matrix with at least two columns, or a 1-D
            array of class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the rows: the empirical risk becomes the
            weighted mean ``sum_i w_i l_i / sum_i w_i`` (an integer weight is
            the same as repeating the row), and so does the Hamming error the
            ranking objective's threshold minimises. The penalty ``alpha`` is
            not rescaled. None weighs every row 1.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X, Y = validate_data(
            self,
            X,
            Y,
            accept_sparse=("csr", "csc"),
            multi_output=True,
            dtype=np.float64,
        )
        T = self._encode_targets(Y)
        weights = None
        if sample_weight is not None:
            weights = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                           ensure_non_negative=True)
        base = get_base_loss(self.loss, self.huber_width)
        rng = check_random_state(self.random_state)
        n_features, n_labels = X.shape[1], T.shape[1]
        # a small random start breaks the label symmetry of the subset max
        w0 = np.zeros((n_features + 1) * n_labels)
        w0[: n_features * n_labels] = rng.normal(scale=1e-3, size=n_features * n_labels)
        # The subset max is minimised through log-sum-exp smoothings of
        # decreasing temperature (continuation): a subgradient method started
        # where every label ties stalls at W = 0.
        temperatures = _SUBSET_TEMPERATURES if self.objective == "subset" else (None,)
        w, n_iter = w0, 0
        for temperature in temperatures:
            fun = self._make_objective(X, T, base, temperature, weights)
            solve = self._solve_lbfgs if self.solver == "lbfgs" else self._solve_gd
            w, value, stage_iter = solve(fun, w)
            n_iter += stage_iter
        if stage_iter >= self.max_iter:
            warnings.warn(
                f"{type(self).__name__} did not converge in max_iter={self.max_iter} "
                "iterations; increase max_iter or tol.",
                ConvergenceWarning,
                stacklevel=3,
            )
        if temperature is not None:
            value = self._make_objective(X, T, base, None, weights)(w)[0]
        W = w[: n_features * n_labels].reshape(n_features, n_labels)
        self.coef_ = np.ascontiguousarray(W.T)
        self.intercept_ = w[n_features * n_labels :].copy()
        self.n_iter_ = int(n_iter)
        self.objective_value_ = float(value)
        self.threshold_ = 0.0
        if self.objective == "ranking" and self._target_kind == "multilabel":
            self.threshold_ = _hamming_threshold(
                np.asarray(X @ self.coef_.T) + self.intercept_, T, weights)
        return self

    def _encode_targets(self, Y):
        Y_dense = Y.toarray() if sparse.issparse(Y) else np.asarray(Y)
        if Y_dense.ndim == 2:
            T = check_indicator(Y_dense, name="Y")
            self.classes_ = np.arange(T.shape[1])
            self._target_kind = "multilabel"
            return T
        check_classification_targets(Y_dense)
        self.classes_ = np.unique(Y_dense)
        if self.classes_.size < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes in the data, "
                f"but the data contain only 1 class: {self.classes_[0]!r}."
            )
        onehot = (Y_dense[:, None] == self.classes_[None, :]).astype(np.uint8)
        if self.classes_.size > 2:
            self._target_kind = "multiclass"
            return onehot
        # A binary problem is one label column, except for the ranking loss,
        # which needs a relevant and an irrelevant column in every sample.
        if self.objective == "ranking":
            self._target_kind = "binary_pairwise"
            return onehot
        self._target_kind = "binary"
        return onehot[:, 1:]

    def _make_objective(self, X, T, base, temperature, sample_weight=None):
        n_features, n_labels = X.shape[1], T.shape[1]
        n_weights = n_features * n_labels
        scale = self.alpha / n_labels if self.constraint == "per_label" else self.alpha
        fit_intercept = self.fit_intercept
        objective = self.objective

        def fun(w):
            W = w[:n_weights].reshape(n_features, n_labels)
            F = X @ W
            if fit_intercept:
                F = F + w[n_weights:]
            value, G = surrogate_value_and_grad(F, T, base, objective, temperature,
                                                sample_weight)
            grad = np.empty_like(w)
            grad[:n_weights] = (np.asarray(X.T @ G) + scale * W).ravel()
            grad[n_weights:] = G.sum(axis=0) if fit_intercept else 0.0
            return value + 0.5 * scale * float(np.dot(w[:n_weights], w[:n_weights])), grad

        return fun

    def _solve_lbfgs(self, fun, w0):
        nonsmooth = self.objective == "subset" or self.loss == "hinge"
        # At a kink the subgradient need not vanish (and the last subset
        # smoothing is nearly a max), so these stop on a relative decrease of
        # tol instead of on the gradient alone.
        ftol = self.tol if nonsmooth else 64 * np.finfo(float).eps
        result = minimize(
            fun,
            w0,
            method="L-BFGS-B",
            jac=True,
            options={
                "maxiter": self.max_iter,
                "maxls": 50,
                "gtol": self.tol,
                "ftol": ftol,
            },
        )
        return result.x, result.fun, result.nit

    def _solve_gd(self, fun, w0):
        w = w0
        value, grad = fun(w)
        step = 1.0
        n_iter = 0
        for n_iter in range(1, self.max_iter + 1):
            if np.max(np.abs(grad)) <= self.tol:
                n_iter -= 1
                break
            sq_norm = float(np.dot(grad, grad))
            while True:
                candidate = w - step * grad
                new_value, new_grad = fun(candidate)
                if new_value <= value - 0.5 * step * sq_norm or step < 1e-12:
                    break
                step *= 0.5
            w, value, grad = candidate, new_value, new_grad
            step *= 2.0
        return w, value, max(n_iter, 1)

    def _scores(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=np.float64, reset=False)
        return np.asarray(X @ self.coef_.T) + self.intercept_

    def decision_function(self, X):
        """Label scores ``f(x) = W^T x + b``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_labels) or (n_samples,)
            One score per label, ``W^T x + b - threshold_`` (``threshold_``
            is 0 except for the ranking objective); a single column of scores
            for a binary 1-D target, as in scikit-learn's binary classifiers.
        """
        F = self._scores(X) - self.threshold_
        if self._target_kind == "binary":
            return F[:, 0]
        if self._target_kind == "binary_pairwise":
            return F[:, 1] - F[:, 0]
        return F

    def predict(self, X):
        """Predict the label indicator (or the class for a 1-D target).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        Y_pred : ndarray of shape (n_samples, n_labels) or (n_samples,)
            ``1`` where :meth:`decision_function` is positive (the label
            score exceeds ``threshold_``), for an indicator target; the
            top-scoring class for a 1-D target.
        """
        scores = self.decision_function(X)
        if self._target_kind == "multilabel":
            return (scores > 0).astype(int)
        if self._target_kind == "multiclass":
            return self.classes_[np.argmax(scores, axis=1)]
        return self.classes_[(scores > 0).astype(int)]

    def _has_proba(self):
        return self.loss == "logistic"

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Label probabilities of the logistic model (``loss="logistic"`` only).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_labels) or (n_samples, n_classes)
            ``sigmoid(f_j(x))`` per label for an indicator target; for a 1-D
            target the class probabilities (one-vs-rest sigmoids normalised to
            sum to one). They are calibrated only for ``objective="hamming"``;
            other objectives give a monotone map of the scores.
        """
        scores = self.decision_function(X)
        if self._target_kind == "multilabel":
            return expit(scores)
        if self._target_kind == "multiclass":
            proba = expit(scores)
            return proba / proba.sum(axis=1, keepdims=True)
        p = expit(scores)
        return np.column_stack([1.0 - p, p])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_label = True
        return tags


def _hamming_threshold(scores, T, sample_weight=None):
    """The threshold ``t`` minimising the Hamming loss of ``scores > t`` against ``T``.

    Errors at a threshold between sorted scores ``s_(k)`` and ``s_(k+1)``:
    the positives among the ``k`` lowest plus the negatives above them, each
    counted with its row's weight. Ties are kept on one side; the midpoint of
    the best gap is returned.
    """
    s = scores.ravel()
    y = T.ravel().astype(bool)
    if sample_weight is None:
        w = np.ones(s.size)
    else:
        w = np.repeat(np.asarray(sample_weight, dtype=float), T.shape[1])
    order = np.argsort(s, kind="stable")
    s, y, w = s[order], y[order], w[order]
    # k = 0..N entries at or below the threshold
    pos_below = np.concatenate([[0.0], np.cumsum(w * y)])
    neg_above = (w * ~y).sum() - np.concatenate([[0.0], np.cumsum(w * ~y)])
    errors = pos_below + neg_above
    # a cut inside a run of tied scores is not realisable
    valid = np.ones(s.size + 1, dtype=bool)
    valid[1:-1] = s[1:] > s[:-1]
    k = int(np.flatnonzero(valid)[np.argmin(errors[valid])])
    if k == 0:
        return float(s[0] - 1.0)
    if k == s.size:
        return float(s[-1])
    return float(0.5 * (s[k - 1] + s[k]))

