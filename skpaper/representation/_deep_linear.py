"""Deep linear networks trained by full-batch gradient descent from a small initialisation."""

import copy
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_array, check_random_state
from sklearn.utils.validation import check_is_fitted

from ..utils._sklearn import Interval, StrOptions, _fit_context, validate_data

__all__ = ["DeepLinearRegressor"]


def auto_feature_rank(singular_values, min_gap=10.0):
    """Rank at the largest multiplicative gap of a decreasing spectrum.

    Singular values below ``1e-12`` times the largest count as zero. When no consecutive
    ratio reaches ``min_gap`` every non-zero direction is kept.
    """
    s = np.asarray(singular_values, dtype=np.float64)
    if s.size == 0 or s[0] <= 0:
        return 1
    s = s[s > s[0] * 1e-12]
    if s.size == 1:
        return 1
    ratios = s[:-1] / s[1:]
    k = int(np.argmax(ratios))
    return k + 1 if ratios[k] >= min_gap else int(s.size)


def solve_readout(features, y, ridge):
    """Least-squares readout on ``features``: minimum norm, or ridge with penalty ``n * ridge``."""
    n, k = features.shape
    if ridge > 0:
        gram = features.T @ features + n * ridge * np.eye(k)
        return np.linalg.solve(gram, features.T @ y)
    return np.linalg.lstsq(features, y, rcond=None)[0]


#: Parameters shared by the gradient-descent networks.
_GD_PARAMETER_CONSTRAINTS = {
    "init_scale": [Interval(Real, 0, None, closed="neither")],
    "lr": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="left")],
    "weight_decay": [Interval(Real, 0, None, closed="left")],
    "random_state": ["random_state"],
}


def _check_magnitude(*arrays):
    """Reject (X, y) whose squares overflow float64 (gradient descent multiplies them)."""
    for name, array in zip(("X", "y"), arrays):
        top = float(np.abs(array).max(initial=0.0))
        if top > 1e150:
            raise ValueError(f"{name} holds values up to {top:.3g}, whose products overflow "
                             f"float64 in gradient descent; rescale {name}.")


def _check_training_data(estimator, X, y):
    """Validated float64 ``(X, y)`` of a regression fit of the gradient-descent networks."""
    X, y = validate_data(estimator, X, y, dtype=np.float64, y_numeric=True)
    if np.asarray(y).dtype.kind not in "biuf":
        raise ValueError(f"y must be numeric (a regression target), got dtype {y.dtype}.")
    _check_magnitude(X, y)
    return X, y


def _check_inference_data(estimator, X):
    """Validated float64 ``X`` for a fitted network (``predict``)."""
    check_is_fitted(estimator)
    X = validate_data(estimator, X, reset=False, dtype=np.float64)
    _check_magnitude(X)
    return X


def _set_population_width(estimator, n_features):
    """Input width of a fit on a population loss: no data, so no feature names."""
    if hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_
    estimator.n_features_in_ = int(n_features)


class _TransferableNetwork:
    """What :class:`TransferRegressor` needs from a source network.

    ``_transfer_features(X, rank)`` returns the hidden representation that linear transfer
    regresses on and the rank actually used; ``_with_readout(coef, rank)`` returns a fitted
    copy whose last layer is ``coef``; ``_continue_fit(X, y)`` resumes gradient descent from
    the current weights on new data (fine-tuning); ``_predict_array(X)`` predicts on an
    already validated array.
    """

    def _transfer_features(self, X, rank):  # pragma: no cover - interface
        raise NotImplementedError

    def _with_readout(self, coef, rank):  # pragma: no cover - interface
        raise NotImplementedError

    def _continue_fit(self, X, y):  # pragma: no cover - interface
        raise NotImplementedError


class _Quadratic:
    """The squared loss ``mean((X beta - y)^2)`` as a function of the end-to-end ``beta``.

    Built either from data or, for infinite data, from a teacher vector (``X^T X / n = I``).
    """

    def __init__(self, X=None, y=None, beta=None):
        if beta is not None:
            self.d = beta.shape[0]
            self._mode = "population"
            self.c = beta
            self.const = float(beta @ beta)
            self.lam_max = 1.0
            self.beta_min = beta
            self.min_loss = 0.0
            return
        n, d = X.shape
        self.d = d
        self.n = n
        # Gradients cost O(d^2) through the Gram matrix or O(n d) through X.
        if n > d:
            self._mode = "gram"
            self.S = X.T @ X / n
            self.c = X.T @ y / n
            self.const = float(y @ y) / n
        else:
            self._mode = "data"
            self.X, self.y = X, y
        self.lam_max = float(np.linalg.norm(X, 2) ** 2 / n) if n and d else 0.0
        self.beta_min = np.linalg.lstsq(X, y, rcond=None)[0]
        self.min_loss = float(np.mean((X @ self.beta_min - y) ** 2))

    def loss_and_grad(self, beta):
        if self._mode == "population":
            diff = beta - self.c
            return float(diff @ diff), 2.0 * diff
        if self._mode == "gram":
            Sb = self.S @ beta
            return float(beta @ Sb - 2.0 * self.c @ beta + self.const), 2.0 * (Sb - self.c)
        r = self.X @ beta - self.y
        return float(r @ r) / self.n, (2.0 / self.n) * (self.X.T @ r)


def _end_to_end(coefs):
    suffix = coefs[-1]
    for W in coefs[-2:0:-1]:
        suffix = W @ suffix
    return coefs[0] @ suffix


def _gradient_descent(coefs, quad, lr, max_iter, tol, weight_decay):
    """Full-batch gradient descent on ``quad`` over the layers ``coefs`` (updated in place).

    Returns ``(n_iter, loss_curve)``. The gradient of layer ``l`` is the rank-one matrix
    ``(W_1...W_{l-1})^T g (W_{l+1}...W_L)^T`` with ``g`` the gradient in ``beta``, so one
    step costs ``O(L d^2)`` rather than the ``O(L d^3)`` of forming products of layers.
    """
    L = len(coefs)
    losses = []
    prev = np.inf
    for it in range(1, max_iter + 1):
        suffixes = [None] * L
        suffixes[L - 1] = coefs[L - 1]
        for layer in range(L - 2, 0, -1):
            suffixes[layer] = coefs[layer] @ suffixes[layer + 1]
        beta = coefs[0] @ suffixes[1]
        loss, g = quad.loss_and_grad(beta)
        if weight_decay:
            loss += weight_decay * sum(float(np.sum(W * W)) for W in coefs) / 2.0
        if not np.isfinite(loss):
            raise ValueError(
                f"gradient descent diverged at iteration {it} (loss={loss}); lower lr, "
                f"got lr={lr}."
            )
        losses.append(loss)
        if loss - quad.min_loss <= tol or (weight_decay and abs(prev - loss) <= tol):
            return it - 1, losses
        prev = loss
        grads = []
        a = g
        for layer in range(L - 1):
            grads.append(np.outer(a, suffixes[layer + 1]))
            a = coefs[layer].T @ a
        grads.append(a)
        for W, G in zip(coefs, grads):
            if weight_decay:
                G = G + weight_decay * W
            W -= lr * G
    warnings.warn(
        f"gradient descent stopped at max_iter={max_iter} with loss gap "
        f"{losses[-1] - quad.min_loss:.3g} > tol={tol}; increase max_iter.",
        ConvergenceWarning,
        stacklevel=5,
    )
    return max_iter, losses


class DeepLinearRegressor(_TransferableNetwork, RegressorMixin, BaseEstimator):
    """Deep linear network ``f(x) = x^T W_1 ... W_L`` trained by full-batch gradient descent.

    The network of [1]_: ``L - 1`` square hidden layers and a vector output layer, all
    started at a small scale ``init_scale`` (the feature-learning regime) and trained on
    the squared loss. :meth:`fit` trains on data; :meth:`fit_population` trains on the
    population loss ``||beta - W_1 ... W_L||^2`` of infinite data (the source task).

    Parameters
    ----------
    n_layers : int, default=2
        Number of weight matrices ``L`` (at least 2).
    init_scale : float, default=1e-5
        Initial scale ``alpha``: hidden layers start at ``alpha * N(0, 1/d)`` entries, the
        output layer at ``alpha * N(0, 1)``. Small values give the minimum-norm and
        rank-one limits of the theory; about ``1e-3`` and above leave residual features
        that leak into linear transfer.
    lr : float or "auto", default="auto"
        Step size. ``"auto"`` uses ``1 / (2 L lambda_max ||beta_min||^(2 - 2/L))`` with
        ``lambda_max`` the largest eigenvalue of ``X^T X / n`` and ``beta_min`` the
        minimum-norm least-squares solution: about a quarter of the stable step. Smaller
        steps follow gradient flow (and its conserved balancedness) more closely.
    max_iter : int, default=20000
        Maximum number of gradient steps.
    tol : float, default=1e-9
        Stop when the training loss is within ``tol`` of the least-squares minimum
        (with ``weight_decay > 0``: when one step lowers it by less than ``tol``).
    weight_decay : float, default=0.0
        L2 penalty ``weight_decay / 2 * sum ||W_l||^2`` added to the loss.
    random_state : int, RandomState instance or None, default=None
        Draws the initial weights.

    Attributes
    ----------
    coefs_ : list of ndarray
        ``W_1, ..., W_{L-1}`` of shape (n_features, n_features) and ``W_L`` of shape
        (n_features,).
    coef_ : ndarray of shape (n_features,)
        End-to-end vector ``beta = W_1 ... W_L``.
    features_ : ndarray of shape (n_features, rank)
        Rank-truncated hidden features: ``U_r S_r`` from the SVD ``U S V^T`` of
        ``W_1 ... W_{L-1}``, cut at the largest gap of its spectrum. After pretraining
        from a small initialisation this is one column along the source vector.
    n_iter_ : int
        Gradient steps taken.
    loss_curve_ : list of float
        Training loss before each step (and at the end).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during :meth:`fit`. Defined only when ``X`` has feature
        names that are all strings.

    See Also
    --------
    TransferRegressor : Scratch training, linear transfer and fine-tuning from a source.
    sklearn.linear_model.LinearRegression : The minimum-norm least-squares solution that
        gradient descent from a vanishing initialisation converges to.

    Notes
    -----
    Under gradient flow the balancedness
    :math:`D_l = W_l^\\top W_l - W_{l+1} W_{l+1}^\\top` is conserved (eq. 36 of [1]_), so
    from :math:`\\alpha \\to 0` the hidden product ends rank one, aligned with the learned
    vector (Theorem 3.4), and the learned vector is the minimum-norm interpolator
    :math:`X^+ y` (Theorem 3.5). Discrete steps break :math:`D_l` by :math:`O(\\text{lr})`;
    see :meth:`balancedness`. The loss is the mean squared error without the factor 1/2,
    as in the authors' code.

    References
    ----------
    .. [1] J. Tahir, S. Ganguli and G. M. Rotskoff, "Features are fate: a theory of
       transfer learning in high-dimensional regression", ICML 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.representation import DeepLinearRegressor
    >>> beta = np.zeros(10); beta[0] = 1.0
    >>> net = DeepLinearRegressor(random_state=0).fit_population(beta)
    >>> round(net.risk(beta), 6), net.features_.shape
    (0.0, (10, 1))
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((5, 10)); y = X @ beta
    >>> scratch = DeepLinearRegressor(random_state=0).fit(X, y)
    >>> bool(np.allclose(scratch.coef_, np.linalg.pinv(X) @ y, atol=1e-3))
    True
    """

    _parameter_constraints = {
        "n_layers": [Interval(Integral, 2, 256, closed="both")],
        **_GD_PARAMETER_CONSTRAINTS,
    }

    def __init__(
        self,
        *,
        n_layers=2,
        init_scale=1e-5,
        lr="auto",
        max_iter=20000,
        tol=1e-9,
        weight_decay=0.0,
        random_state=None,
    ):
        self.n_layers = n_layers
        self.init_scale = init_scale
        self.lr = lr
        self.max_iter = max_iter
        self.tol = tol
        self.weight_decay = weight_decay
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Train on data from the small initialisation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Target values.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X, y = _check_training_data(self, X, y)
        return self._train(_Quadratic(X=X, y=y), self._init_coefs(X.shape[1]))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_population(self, beta):
        """Train on the population loss of a linear teacher (infinite data).

        With ``x ~ N(0, I)`` the expected squared loss is ``||beta - W_1 ... W_L||^2`` plus
        the noise variance, the source-task pretraining of [1]_.

        Parameters
        ----------
        beta : array-like of shape (n_features,)
            Teacher vector.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        beta = check_array(beta, ensure_2d=False, dtype=np.float64, input_name="beta")
        if beta.ndim != 1:
            raise ValueError(
                f"beta must be a 1-d array of shape (n_features,), got shape {beta.shape}."
            )
        _set_population_width(self, beta.shape[0])
        return self._train(_Quadratic(beta=beta), self._init_coefs(beta.shape[0]))

    def _init_coefs(self, d):
        rng = check_random_state(self.random_state)
        alpha = float(self.init_scale)
        coefs = [alpha * rng.standard_normal((d, d)) / np.sqrt(d)
                 for _ in range(self.n_layers - 1)]
        coefs.append(alpha * rng.standard_normal(d))
        return coefs

    def _step_size(self, quad):
        if self.lr != "auto":
            return float(self.lr)
        L = self.n_layers
        scale = max(1.0, float(np.linalg.norm(quad.beta_min))) ** (2.0 - 2.0 / L)
        return 1.0 / (2.0 * L * max(quad.lam_max, 1e-12) * scale)

    def _train(self, quad, coefs):
        lr = self._step_size(quad)
        with np.errstate(over="ignore", invalid="ignore"):  # divergence is raised on
            n_iter, losses = _gradient_descent(coefs, quad, lr, self.max_iter, self.tol,
                                               self.weight_decay)
        self.coefs_ = coefs
        self.n_iter_ = n_iter
        self.loss_curve_ = losses
        self._set_derived()
        return self

    def _set_derived(self):
        self.coef_ = _end_to_end(self.coefs_)
        # One SVD per fit serves features_ and every rank asked for by linear transfer.
        self._hidden_svd = np.linalg.svd(self._hidden_product())
        self.features_ = self._feature_basis("auto")[0]

    def _hidden_product(self):
        F = self.coefs_[0]
        for W in self.coefs_[1:-1]:
            F = F @ W
        return F

    def _feature_basis(self, rank):
        U, s, Vt = self._hidden_svd
        if rank == "auto":
            r = auto_feature_rank(s)
        elif rank is None:
            r = s.size
        else:
            r = int(rank)
            if r > s.size:
                raise ValueError(
                    f"feature_rank must be at most n_features={s.size}, got {rank}."
                )
        return U[:, :r] * s[:r], Vt[:r].T, r

    def predict(self, X):
        """Predict ``X @ W_1 ... W_L``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted targets.
        """
        return self._predict_array(_check_inference_data(self, X))

    def _predict_array(self, X):
        return X @ self.coef_

    def risk(self, beta):
        """Generalisation error ``||W_1 ... W_L - beta||^2`` against a linear teacher.

        For ``x ~ N(0, I)`` this is the expected squared error on noise-free targets.

        Parameters
        ----------
        beta : array-like of shape (n_features,)
            Teacher vector.

        Returns
        -------
        risk : float
            Squared distance between the end-to-end vector and ``beta``.
        """
        check_is_fitted(self)
        beta = check_array(beta, ensure_2d=False, dtype=np.float64, input_name="beta")
        if beta.shape != (self.n_features_in_,):
            raise ValueError(
                f"beta must have shape ({self.n_features_in_},), got {beta.shape}."
            )
        diff = self.coef_ - beta
        return float(diff @ diff)

    def balancedness(self):
        """The matrices ``D_l = W_l^T W_l - W_{l+1} W_{l+1}^T``, conserved by gradient flow.

        Returns
        -------
        D : list of ndarray of shape (n_features, n_features)
            One per pair of adjacent layers.
        """
        check_is_fitted(self)
        out = []
        for W, W_next in zip(self.coefs_[:-1], self.coefs_[1:]):
            W_next = W_next.reshape(W_next.shape[0], -1)
            out.append(W.T @ W - W_next @ W_next.T)
        return out

    # Transfer protocol -------------------------------------------------------------------

    def _transfer_features(self, X, rank):
        basis, _, r = self._feature_basis(rank)
        return X @ basis, r

    def _with_readout(self, coef, rank):
        basis, V, r = self._feature_basis(rank)
        new = copy.deepcopy(self)
        d = self.n_features_in_
        # The truncated product U_r S_r V_r^T as first layer, identities after it, and the
        # readout mapped back through V_r: the network computes x^T U_r S_r coef.
        new.coefs_ = ([basis @ V.T] + [np.eye(d) for _ in range(self.n_layers - 2)]
                      + [V @ np.asarray(coef, dtype=np.float64)])
        new.coef_ = _end_to_end(new.coefs_)
        # The truncated product's SVD is known; skip recomputing it.
        U, s, Vt = self._hidden_svd
        new._hidden_svd = (U, np.where(np.arange(s.size) < r, s, 0.0), Vt)
        new.features_ = new._feature_basis("auto")[0]
        return new

    def _continue_fit(self, X, y):
        return self._train(_Quadratic(X=X, y=y), [W.copy() for W in self.coefs_])
