"""Two-layer ReLU student network in the mean-field scaling (the nonlinear check of [1]).

.. [1] J. Tahir, S. Ganguli and G. M. Rotskoff, "Features are fate", ICML 2025, Section 4.
"""

import copy
import warnings
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_array, check_random_state

from ..datasets._representation import relu_teacher_kernel
from ..utils._sklearn import Interval, _fit_context
from ._deep_linear import (
    _GD_PARAMETER_CONSTRAINTS,
    _check_inference_data,
    _check_training_data,
    _set_population_width,
    _TransferableNetwork,
    auto_feature_rank,
)

__all__ = ["TwoLayerReLURegressor"]

_N_ITER_NO_CHANGE = 10


def _arccos_terms(A, B, v):
    """Arc-cosine kernel ``K(A, B)`` and ``G_i = sum_j v_j grad_a k(a, B_j)`` at ``a = A_i``.

    ``k(a, b) = ||a|| ||b|| (sin(phi) + (pi - phi) cos(phi)) / (2 pi)`` is
    ``E[relu(a^T x) relu(b^T x)]`` and its gradient in ``a`` is
    ``((pi - phi) b + ||b|| sin(phi) a / ||a||) / (2 pi)``, ``phi`` the angle between them.
    """
    na = np.linalg.norm(A, axis=1)
    nb = np.linalg.norm(B, axis=1)
    safe_a = np.where(na > 0, na, 1.0)
    safe_b = np.where(nb > 0, nb, 1.0)
    u = np.clip((A @ B.T) / np.outer(safe_a, safe_b), -1.0, 1.0)
    rest = np.pi - np.arccos(u)
    sin = np.sqrt(1.0 - u * u)
    K = np.outer(na, nb) * (sin + u * rest) / (2.0 * np.pi)
    G = ((rest * v) @ B + (sin @ (v * nb))[:, None] * (A / safe_a[:, None])) / (2.0 * np.pi)
    return K, G


class _EmpiricalLoss:
    """``mean((relu(X W^T) c / m - y)^2)`` and its per-neuron gradients."""

    def __init__(self, X, y):
        self.X, self.y = X, y
        n = X.shape[0]
        self.lam_max = float(np.linalg.norm(X, 2) ** 2 / n) if X.size else 0.0
        self.y_rms = float(np.sqrt(np.mean(y * y))) if n else 0.0

    def __call__(self, W, c):
        m = W.shape[0]
        pre = self.X @ W.T
        H = np.maximum(pre, 0.0)
        r = H @ c / m - self.y
        n = self.X.shape[0]
        r2 = (2.0 / n) * r
        grad_c = H.T @ r2
        grad_W = c[:, None] * (((pre > 0) * r2[:, None]).T @ self.X)
        return float(r @ r) / n, grad_W, grad_c


class _PopulationLoss:
    """``E[(f(x) - f_*(x))^2]`` for ``x ~ N(0, I)`` against a ReLU teacher, in closed form.

    Every expectation is an arc-cosine kernel, so infinite-data training costs
    ``O(m (m + m_*) d)`` per step whatever the amount of source data.
    """

    def __init__(self, W_star, c_star):
        self.W_star, self.c_star = W_star, c_star / W_star.shape[0]
        self.const = float(self.c_star @ relu_teacher_kernel(W_star, W_star) @ self.c_star)
        self.lam_max = 1.0
        self.y_rms = np.sqrt(self.const)

    def __call__(self, W, c):
        a = c / W.shape[0]
        K_ss, G_ss = _arccos_terms(W, W, a)
        K_st, G_st = _arccos_terms(W, self.W_star, self.c_star)
        Ka, Kb = K_ss @ a, K_st @ self.c_star
        loss = float(a @ Ka - 2.0 * a @ Kb) + self.const
        return loss, 2.0 * c[:, None] * (G_ss - G_st), 2.0 * (Ka - Kb)


def _relu_gd(W, c, loss_fn, lr, max_iter, tol, weight_decay):
    """Full-batch gradient descent on ``loss_fn`` over ``(W, c)``, in place.

    Steps are taken per neuron (the true gradient times ``m``), the usual mean-field
    time scale, so that ``lr`` does not depend on the width. Returns ``(n_iter, losses)``.
    """
    m = W.shape[0]
    losses = []
    best, stall, start = np.inf, 0, None
    for it in range(1, max_iter + 1):
        loss, grad_W, grad_c = loss_fn(W, c)
        if weight_decay:
            loss += weight_decay * (float(np.sum(W * W)) + float(c @ c)) / (2.0 * m)
        if not np.isfinite(loss):
            raise ValueError(
                f"gradient descent diverged at iteration {it} (loss={loss}); lower lr, "
                f"got lr={lr}."
            )
        losses.append(loss)
        start = loss if start is None else start
        if loss <= tol:
            return it - 1, losses
        # The stall rule waits until the loss has left the plateau of a small start.
        if loss < best * (1.0 - tol) or loss > 0.5 * start:
            best, stall = min(best, loss), 0
        else:
            stall += 1
            if stall >= _N_ITER_NO_CHANGE:
                return it - 1, losses
        if weight_decay:
            grad_c = grad_c + weight_decay * c
            grad_W = grad_W + weight_decay * W
        c -= lr * grad_c
        W -= lr * grad_W
    warnings.warn(
        f"gradient descent stopped at max_iter={max_iter} before the loss stalled; "
        "increase max_iter.",
        ConvergenceWarning,
        stacklevel=5,
    )
    return max_iter, losses


class TwoLayerReLURegressor(_TransferableNetwork, RegressorMixin, BaseEstimator):
    """Two-layer ReLU network ``f(x) = (1/m) sum_i c_i relu(w_i^T x)`` trained by gradient descent.

    The student of the nonlinear experiments of [1]_ (Section 4): a wide network in the
    mean-field scaling, trained full batch on the squared loss. It plugs into
    :class:`TransferRegressor` like :class:`DeepLinearRegressor`; its hidden features are
    the ``m`` activations ``relu(w_i^T x)``.

    Parameters
    ----------
    n_hidden : int, default=100
        Width ``m``.
    init_scale : float, default=1.0
        Output weights start at ``init_scale * N(0, 1)``; input weights at ``N(0, I/d)``.
        The ``1/m`` output scaling already starts the function near zero.
    lr : float or "auto", default="auto"
        Step size per neuron (the gradient is multiplied by ``m``, the mean-field time).
        ``"auto"`` uses ``0.5 / (lambda_max * max(1, s, 2 rms(y)))`` with ``lambda_max`` the
        largest eigenvalue of ``X^T X / n`` (1 for the population loss) and ``s`` the mean
        of ``c_i^2 + ||w_i||^2`` at the start, a bound on the curvature of the loss.
    max_iter : int, default=2000
        Maximum number of gradient steps.
    tol : float, default=1e-5
        Stop when the loss falls below ``tol`` or has not dropped by a relative ``tol``
        in 10 consecutive steps.
    weight_decay : float, default=0.0
        L2 penalty ``weight_decay / (2m) * (||W||^2 + ||c||^2)``.
    random_state : int, RandomState instance or None, default=None
        Draws the initial weights.

    Attributes
    ----------
    hidden_weights_ : ndarray of shape (n_hidden, n_features)
        Input weights ``w_i``.
    output_weights_ : ndarray of shape (n_hidden,)
        Output weights ``c_i``.
    n_iter_ : int
        Gradient steps taken.
    loss_curve_ : list of float
        Training loss before each step.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during :meth:`fit`. Defined only when ``X`` has feature
        names that are all strings.

    See Also
    --------
    DeepLinearRegressor : The solvable linear model of the same paper.
    TransferRegressor : Scratch training, linear transfer and fine-tuning from a source.

    Notes
    -----
    [1]_ pretrains a width-1000 student on a teacher with 100 unit-norm neurons in
    ``d = 100`` and removes a fraction of the teacher's neurons to make the source task.
    The initialisation and step size here are not given in the paper text available to
    us and were chosen for this library (reconstructed).

    References
    ----------
    .. [1] J. Tahir, S. Ganguli and G. M. Rotskoff, "Features are fate: a theory of
       transfer learning in high-dimensional regression", ICML 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.representation import TwoLayerReLURegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 5)); y = np.maximum(X[:, 0], 0)
    >>> net = TwoLayerReLURegressor(n_hidden=50, tol=1e-4, random_state=0).fit(X, y)
    >>> bool(net.score(X, y) > 0.9)
    True
    """

    _parameter_constraints = {
        "n_hidden": [Interval(Integral, 1, 2**16, closed="both")],
        **_GD_PARAMETER_CONSTRAINTS,
    }

    def __init__(
        self,
        *,
        n_hidden=100,
        init_scale=1.0,
        lr="auto",
        max_iter=2000,
        tol=1e-5,
        weight_decay=0.0,
        random_state=None,
    ):
        self.n_hidden = n_hidden
        self.init_scale = init_scale
        self.lr = lr
        self.max_iter = max_iter
        self.tol = tol
        self.weight_decay = weight_decay
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Train from a random initialisation.

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
        return self._train(*self._init_weights(X.shape[1]), _EmpiricalLoss(X, y))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_population(self, teacher_weights, teacher_coef):
        """Train on the population loss of a ReLU teacher (infinite data, ``x ~ N(0, I)``).

        The teacher is ``f_*(x) = (1/m*) sum_j a_j relu(v_j^T x)``; the loss
        ``E[(f(x) - f_*(x))^2]`` and its gradients are arc-cosine kernels.

        Parameters
        ----------
        teacher_weights : array-like of shape (m_star, n_features)
            Teacher input weights ``v_j``.
        teacher_coef : array-like of shape (m_star,)
            Teacher output weights ``a_j``.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        V = check_array(teacher_weights, dtype=np.float64, input_name="teacher_weights")
        a = check_array(teacher_coef, ensure_2d=False, dtype=np.float64,
                        input_name="teacher_coef")
        if a.shape != (V.shape[0],):
            raise ValueError(
                f"teacher_coef must have shape ({V.shape[0]},) to match teacher_weights, "
                f"got {a.shape}."
            )
        _set_population_width(self, V.shape[1])
        return self._train(*self._init_weights(V.shape[1]), _PopulationLoss(V, a))

    def _init_weights(self, d):
        rng = check_random_state(self.random_state)
        alpha = float(self.init_scale)
        W = alpha * rng.standard_normal((self.n_hidden, d)) / np.sqrt(d)
        c = alpha * rng.standard_normal(self.n_hidden)
        return W, c

    def _step_size(self, W, c, loss_fn):
        if self.lr != "auto":
            return float(self.lr)
        curvature = float(np.mean(c * c + np.sum(W * W, axis=1)))
        scale = max(1.0, curvature, 2.0 * loss_fn.y_rms)
        return 0.5 / (max(loss_fn.lam_max, 1e-12) * scale)

    def _train(self, W, c, loss_fn):
        lr = self._step_size(W, c, loss_fn)
        with np.errstate(over="ignore", invalid="ignore"):  # divergence is raised on
            n_iter, losses = _relu_gd(W, c, loss_fn, lr, self.max_iter, self.tol,
                                      self.weight_decay)
        self.hidden_weights_ = W
        self.output_weights_ = c
        self.n_iter_ = n_iter
        self.loss_curve_ = losses
        return self

    def _hidden(self, X):
        return np.maximum(X @ self.hidden_weights_.T, 0.0) / self.hidden_weights_.shape[0]

    def predict(self, X):
        """Predict ``(1/m) sum_i c_i relu(w_i^T x)``.

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
        return self._hidden(X) @ self.output_weights_

    # Transfer protocol -------------------------------------------------------------------

    def _selected(self, rank):
        m = self.hidden_weights_.shape[0]
        if rank is None:
            return np.arange(m)
        weight = np.abs(self.output_weights_) * np.linalg.norm(self.hidden_weights_, axis=1)
        order = np.argsort(-weight, kind="stable")
        if rank == "auto":
            rank = auto_feature_rank(weight[order])
        elif int(rank) > m:
            raise ValueError(f"feature_rank must be at most n_hidden={m}, got {rank}.")
        return np.sort(order[: int(rank)])

    def _transfer_features(self, X, rank):
        sel = self._selected(rank)
        return self._hidden(X)[:, sel], sel.size

    def _with_readout(self, coef, rank):
        sel = self._selected(rank)
        new = copy.deepcopy(self)
        new.output_weights_ = np.zeros_like(self.output_weights_)
        new.output_weights_[sel] = coef
        return new

    def _continue_fit(self, X, y):
        return self._train(self.hidden_weights_.copy(), self.output_weights_.copy(),
                           _EmpiricalLoss(X, y))
