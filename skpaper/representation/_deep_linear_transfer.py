"""Transfer from a pretrained network: scratch training, linear transfer and fine-tuning."""

import copy
from numbers import Integral, Real

from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.utils.validation import check_is_fitted

from ..utils._sklearn import HasMethods, Interval, StrOptions, _fit_context
from ._deep_linear import (
    _check_inference_data,
    _check_training_data,
    _TransferableNetwork,
    solve_readout,
)

__all__ = ["TransferRegressor"]


def _unwrap(source):
    return source.estimator if isinstance(source, FrozenEstimator) else source


class TransferRegressor(RegressorMixin, BaseEstimator):
    """Adapt a pretrained network to a target task in one of three ways (Tahir et al. 2025).

    ``mode="scratch"`` trains a fresh copy of the source's architecture on the target data,
    ``"linear"`` keeps the source's hidden features and refits only the last layer, and
    ``"finetune"`` resumes gradient descent on every layer from the pretrained weights.
    The transferability of [1]_ is the risk of ``"scratch"`` minus that of a transfer mode.

    Parameters
    ----------
    source : DeepLinearRegressor or TwoLayerReLURegressor
        The source network. ``"linear"`` and ``"finetune"`` need it fitted (pretrained);
        ``"scratch"`` uses only its hyper-parameters. Wrap a fitted source in
        :class:`sklearn.frozen.FrozenEstimator` to keep it fitted through :func:`clone`
        (and hence in :class:`~sklearn.model_selection.GridSearchCV`); it is never modified.
    mode : {"scratch", "linear", "finetune"}, default="linear"
        How the target is learned.
    ridge : float, default=0.0
        Ridge penalty ``lambda`` of linear transfer, applied as ``n * lambda`` like the
        authors' code (Theorem 3.8); ``0`` gives the minimum-norm least-squares readout.
    feature_rank : int, "auto" or None, default="auto"
        Hidden features kept by linear transfer. For a deep linear source, the top singular
        directions of ``W_1 ... W_{L-1}`` (``"auto"``: up to the largest spectral gap,
        which is the single learned direction after pretraining from a small scale; the
        leftover directions at the initial scale would otherwise leak into the readout).
        For a ReLU source, the neurons with the largest ``|c_i| ||w_i||`` (``"auto"``
        keeps all). ``None`` keeps everything.

    Attributes
    ----------
    estimator_ : DeepLinearRegressor or TwoLayerReLURegressor
        The adapted network used by :meth:`predict`.
    feature_rank_ : int or None
        Number of hidden features linear transfer used (``None`` for other modes).
    n_iter_ : int or None
        Gradient steps of scratch training or fine-tuning (``None`` for linear transfer).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during :meth:`fit`. Defined only when ``X`` has feature
        names that are all strings.

    See Also
    --------
    scratch_risk, linear_transfer_risk, finetune_transferability : The closed forms.

    Notes
    -----
    For a deep linear source pretrained on ``beta_s`` and a target ``beta_t`` at angle
    ``theta``, with ``n = gamma d`` target samples and noise ``sigma`` [1]_:

    - scratch converges to ``X^+ y`` with risk ``(1 - gamma) + sigma^2 gamma / (1 - gamma)``
      below ``gamma = 1`` and ``sigma^2 / (gamma - 1)`` above (eq. 8);
    - linear transfer fits one coefficient on ``beta_s^T x``, with risk
      ``sin^2 theta + (sigma^2 + sin^2 theta) / (n - 2)`` (eq. 10);
    - fine-tuning converges to ``X^+ y + (I - P) beta_s`` (Theorem 3.9), which beats
      scratch iff ``theta < 60`` degrees when ``gamma < 1`` (eq. 15).

    References
    ----------
    .. [1] J. Tahir, S. Ganguli and G. M. Rotskoff, "Features are fate: a theory of
       transfer learning in high-dimensional regression", ICML 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.frozen import FrozenEstimator
    >>> from skpaper.datasets import make_teacher_tasks
    >>> from skpaper.representation import DeepLinearRegressor, TransferRegressor
    >>> task = make_teacher_tasks(d=50, theta=np.pi / 8, sigma=0.2, n=25, random_state=0)
    >>> source = DeepLinearRegressor(random_state=0).fit_population(task.beta_source)
    >>> risks = {}
    >>> for mode in ("scratch", "linear", "finetune"):
    ...     model = TransferRegressor(FrozenEstimator(source), mode=mode).fit(task.X, task.y)
    ...     risks[mode] = model.estimator_.risk(task.beta_target)
    >>> risks["linear"] < risks["finetune"] < risks["scratch"]
    True
    """

    _parameter_constraints = {
        "source": [HasMethods(["fit", "predict"])],
        "mode": [StrOptions({"scratch", "linear", "finetune"})],
        "ridge": [Interval(Real, 0, None, closed="left")],
        "feature_rank": [StrOptions({"auto"}), Interval(Integral, 1, 4096, closed="both"),
                         None],
    }

    def __init__(self, source, *, mode="linear", ridge=0.0, feature_rank="auto"):
        self.source = source
        self.mode = mode
        self.ridge = ridge
        self.feature_rank = feature_rank

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Adapt the source network to ``(X, y)``.

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
        source = _unwrap(self.source)
        if not isinstance(source, _TransferableNetwork):
            raise TypeError(
                "source must be a DeepLinearRegressor or TwoLayerReLURegressor (optionally "
                f"wrapped in FrozenEstimator), got {type(source).__name__}."
            )
        self.feature_rank_ = None
        self.n_iter_ = None
        if self.mode == "scratch":
            self.estimator_ = clone(source).fit(X, y)
            self.n_iter_ = self.estimator_.n_iter_
            return self
        try:
            check_is_fitted(source)
        except NotFittedError as exc:
            raise ValueError(
                f"mode={self.mode!r} needs a fitted (pretrained) source; got an unfitted "
                f"{type(source).__name__}. Fit it first, or use mode='scratch'."
            ) from exc
        if source.n_features_in_ != X.shape[1]:
            raise ValueError(
                f"X has {X.shape[1]} features, but the source network is expecting "
                f"{source.n_features_in_} features as input."
            )
        if self.mode == "linear":
            features, rank = source._transfer_features(X, self.feature_rank)
            readout = solve_readout(features, y, float(self.ridge))
            self.estimator_ = source._with_readout(readout, self.feature_rank)
            self.feature_rank_ = rank
        else:
            self.estimator_ = copy.deepcopy(source)._continue_fit(X, y)
            self.n_iter_ = self.estimator_.n_iter_
        return self

    def predict(self, X):
        """Predict with the adapted network.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted targets.
        """
        X = _check_inference_data(self, X)
        return self.estimator_._predict_array(X)
