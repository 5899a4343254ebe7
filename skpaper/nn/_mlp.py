"""Multi-layer perceptrons on tabular data: the reference torch estimators."""

from numbers import Integral, Real

import numpy as np
from torch import nn

from ..utils._docstring import Substitution
from ..utils._sklearn import Interval, StrOptions, _fit_context
from ._base import BaseTorchEstimator, TorchClassifierMixin, TorchRegressorMixin, _torch_docs
from ._callbacks import EarlyStopping

__all__ = ["MLPClassifier", "MLPRegressor", "make_mlp"]

_ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU, "logistic": nn.Sigmoid}


def make_mlp(n_inputs, hidden_layer_sizes, n_outputs, activation="relu"):
    """Build a plain ``nn.Sequential`` MLP.

    Parameters
    ----------
    n_inputs : int
        Number of input features.
    hidden_layer_sizes : sequence of int
        Width of each hidden layer.
    n_outputs : int
        Number of outputs.
    activation : {"relu", "tanh", "gelu", "logistic"}, default="relu"
        Activation after each hidden layer.

    Returns
    -------
    module : torch.nn.Sequential
        ``Linear`` and activation layers, then a ``Linear`` head.

    Examples
    --------
    >>> import torch
    >>> from skpaper.nn import make_mlp
    >>> net = make_mlp(3, (8, 8), 2, activation="tanh")
    >>> net(torch.zeros(4, 3)).shape
    torch.Size([4, 2])
    """
    return _make_mlp(n_inputs, hidden_layer_sizes, n_outputs, activation)


def _make_mlp(n_inputs, hidden_layer_sizes, n_outputs, activation, norm=None):
    # Hidden layers are Linear -> [norm(width)] -> activation, then a Linear head.
    layers, width = [], int(n_inputs)
    for size in hidden_layer_sizes:
        layers.append(nn.Linear(width, int(size)))
        if norm is not None:
            layers.append(norm(int(size)))
        layers.append(_ACTIVATIONS[activation]())
        width = int(size)
    layers.append(nn.Linear(width, int(n_outputs)))
    return nn.Sequential(*layers)


#: Docstring pieces of the MLP estimators.
_MLP_DOCS = {
    **{name: piece.replace("Learning rate of the Adam optimizer.",
                           "Learning rate of the optimizer (Adam by default).")
       for name, piece in _torch_docs(max_epochs=200, batch_size=200,
                                      inference_dtype="float64").items()},
    "mlp_parameters": """
        hidden_layer_sizes : array-like of int, default=(100,)
            Width of each hidden layer.
        activation : {"relu", "tanh", "gelu", "logistic"}, default="relu"
            Activation after each hidden layer.
        alpha : float, default=1e-4
            L2 penalty (Adam weight decay).
        tol : float, default=1e-4
            Training stops when the epoch loss has not improved by ``tol`` for
            ``n_iter_no_change`` consecutive epochs.
        n_iter_no_change : int, default=10
            Number of epochs without improvement before training stops.
        optimizer : str or torch.optim.Optimizer subclass, default="adam"
            The optimizer: the name of a :mod:`torch.optim` optimizer in any
            case (``"adam"``, ``"AdamW"``, ``"sgd"``, ...) or its class, as
            skorch takes it. It is built with ``lr`` and with
            ``weight_decay=alpha`` (an optimizer without ``weight_decay``
            needs ``alpha=0``). :class:`torch.optim.LBFGS` is refused: its
            step needs a closure.
        optimizer_kwargs : dict or None, default=None
            Further arguments of the optimizer (``{"momentum": 0.9}`` for
            SGD, ``{"betas": (0.9, 0.99)}`` for Adam); ``lr`` and
            ``weight_decay`` are set through ``lr`` and ``alpha``.
        warm_start : bool, default=False
            When True, :meth:`fit` on a fitted estimator continues from its
            current weights (a new optimizer, ``max_epochs`` more epochs,
            ``history_`` and ``n_iter_`` extended), as scikit-learn's MLPs do;
            the features, classes (a subset of ``classes_``) and
            ``hidden_layer_sizes`` must stay those of the first fit.""",
    "mlp_attributes": """
        module_ : torch.nn.Sequential
            The trained network.
        history_ : list of dict
            One record per epoch (``epoch``, ``train_loss``, ...).
        n_iter_ : int
            Number of epochs run (over every ``fit`` of a warm start and every
            ``partial_fit`` call).
        optimizer_ : torch.optim.Optimizer
            The optimizer of the last fit (kept between ``partial_fit`` calls;
            not pickled, so ``partial_fit`` after unpickling starts a new one).
        device_ : str
            The device actually used.
        n_features_in_ : int
            Number of features seen during ``fit``.
        feature_names_in_ : ndarray of str
            Defined only when ``X`` has string column names.""",
}


#: Parameters added after subclasses of the MLPs were written; a subclass whose
#: ``__init__`` does not take them trains as before (Adam, no warm start).
_LATER_PARAMETERS = ("optimizer", "optimizer_kwargs", "warm_start")


class _BaseMLP(BaseTorchEstimator):
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        missing = set(_LATER_PARAMETERS) - set(cls._get_param_names())
        if missing and "_parameter_constraints" in vars(cls):
            cls._parameter_constraints = {k: v for k, v in cls._parameter_constraints.items()
                                          if k not in missing}

    _parameter_constraints = {
        **BaseTorchEstimator._parameter_constraints,
        "hidden_layer_sizes": ["array-like"],
        "activation": [StrOptions(set(_ACTIVATIONS))],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "optimizer": [str, type],
        "optimizer_kwargs": [dict, None],
        "warm_start": ["boolean"],
    }

    def __init__(
        self,
        *,
        hidden_layer_sizes=(100,),
        activation="relu",
        alpha=1e-4,
        tol=1e-4,
        n_iter_no_change=10,
        optimizer="adam",
        optimizer_kwargs=None,
        warm_start=False,
        max_epochs=200,
        batch_size=200,
        lr=1e-3,
        device="auto",
        random_state=None,
        verbose=0,
        callbacks=None,
        inference_dtype="float64",
    ):
        super().__init__(
            max_epochs=max_epochs, batch_size=batch_size, lr=lr, device=device,
            random_state=random_state, verbose=verbose, callbacks=callbacks,
            inference_dtype=inference_dtype,
        )
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.alpha = alpha
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        names = self._get_param_names()
        for name, value in zip(_LATER_PARAMETERS, (optimizer, optimizer_kwargs, warm_start)):
            if name in names:
                setattr(self, name, value)

    def _check_hidden_layer_sizes(self):
        sizes = np.atleast_1d(np.asarray(self.hidden_layer_sizes))
        if (sizes.ndim != 1 or sizes.dtype.kind not in "iu" or np.any(sizes < 1)
                or np.any(sizes > 4096) or sizes.size > 256):
            raise ValueError(
                "hidden_layer_sizes must be a sequence of at most 256 integers in "
                f"[1, 4096], got {self.hidden_layer_sizes!r}."
            )
        return tuple(int(s) for s in sizes)

    def _build_module(self):
        return make_mlp(self.n_features_in_, self._check_hidden_layer_sizes(),
                        self._n_outputs, self.activation)

    def _build_optimizer(self, module):
        # L2 penalty alpha as in sklearn's MLP, applied through weight decay.
        return self._make_optimizer(module.parameters(), "adam",
                                    weight_decay=("alpha", float(self.alpha)))

    def _fit_tensors(self, X, target, target_dtype, **kwargs):
        spec = (self._check_hidden_layer_sizes(), self.activation)
        resuming = kwargs.get("resume") is not None and getattr(self, "module_", None) is not None
        if resuming and spec != getattr(self, "_module_spec", spec):
            raise ValueError(
                f"hidden_layer_sizes={spec[0]} and activation={spec[1]!r} differ from the "
                f"fitted network's {self._module_spec}; a warm start or partial_fit "
                "continues that network. Set warm_start=False to fit a new one.")
        self._module_spec = spec
        return super()._fit_tensors(X, target, target_dtype, **kwargs)

    def _resume(self):
        return "warm" if getattr(self, "warm_start", False) else None

    def _extra_callbacks(self):
        # sklearn-style stopping rule on the training loss, after the user's callbacks.
        return [EarlyStopping("train_loss", self.n_iter_no_change, self.tol)]


@Substitution(**_MLP_DOCS)
class MLPClassifier(TorchClassifierMixin, _BaseMLP):
    """Multi-layer perceptron classifier trained with Adam in torch.

    The reference torch estimator of skpaper: it shows the base class at work
    and matches :class:`sklearn.neural_network.MLPClassifier` in accuracy.

    Parameters
    ----------
    {mlp_parameters}
    {torch_parameters}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels seen during ``fit``.
    {mlp_attributes}

    See Also
    --------
    sklearn.neural_network.MLPClassifier : The numpy implementation.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from skpaper.nn import MLPClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = MLPClassifier(hidden_layer_sizes=(16,), max_epochs=200, lr=1e-2,
    ...                     random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the classifier.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each row in the cross-entropy. The loss of
            a batch is ``sum_i w_i l_i / n_batch`` with the weights rescaled to
            mean one over the training rows, so over random batches it is, in
            expectation, the loss of the data with row ``i`` repeated ``w_i``
            times (exactly that loss when one batch holds every row). Rows of
            weight 0 are left out. None weights every row equally.

        Returns
        -------
        self : object
            The fitted classifier.
        """
        return self._fit_classifier(X, y, sample_weight, resume=self._resume())

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, sample_weight=None, classes=None):
        """Train one epoch on ``(X, y)``, continuing from the current weights.

        The first call builds the network (``classes`` is required then, as in
        scikit-learn); later calls keep the weights, the optimizer and its
        state, and the batch generator, so ``k`` calls on the same data train
        as ``fit`` with ``max_epochs=k`` and no stopping rule. ``max_epochs``,
        ``tol`` and ``n_iter_no_change`` do not apply.
        The fitted callbacks are kept too, and each call is one training run
        for them (``on_train_begin(partial=True)`` ... ``on_train_end``): a
        scheduler that counts epochs from its start restarts at each call.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,)
            Class labels, all in ``classes_``.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows, as in :meth:`fit` (rescaled within each call).
        classes : array-like of shape (n_classes,), default=None
            Every class label; required on the first call, ignored if equal to
            ``classes_`` afterwards.

        Returns
        -------
        self : object
            The classifier.
        """
        return self._fit_classifier(X, y, sample_weight, resume="partial", classes=classes)


@Substitution(**_MLP_DOCS)
class MLPRegressor(TorchRegressorMixin, _BaseMLP):
    """Multi-layer perceptron regressor trained with Adam in torch.

    Parameters
    ----------
    {mlp_parameters}
    {torch_parameters}

    Attributes
    ----------
    {mlp_attributes}

    See Also
    --------
    sklearn.neural_network.MLPRegressor : The numpy implementation.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.nn import MLPRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(200, 3)); y = X @ [1.0, -2.0, 0.5]
    >>> reg = MLPRegressor(hidden_layer_sizes=(32,), lr=1e-2, random_state=0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.9)
    True
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the regressor.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Numeric targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each row in the squared error. The loss of
            a batch is ``sum_i w_i l_i / n_batch`` with the weights rescaled to
            mean one over the training rows, so over random batches it is, in
            expectation, the loss of the data with row ``i`` repeated ``w_i``
            times (exactly that loss when one batch holds every row). Rows of
            weight 0 are left out. None weights every row equally.

        Returns
        -------
        self : object
            The fitted regressor.
        """
        return self._fit_regressor(X, y, sample_weight, resume=self._resume())

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, sample_weight=None):
        """Train one epoch on ``(X, y)``, continuing from the current weights.

        The first call builds the network; later calls keep the weights, the
        optimizer and its state, and the batch generator, so ``k`` calls on
        the same data train as ``fit`` with ``max_epochs=k`` and no stopping
        rule. ``max_epochs``, ``tol`` and ``n_iter_no_change`` do not apply.
        The fitted callbacks are kept too, and each call is one training run
        for them (``on_train_begin(partial=True)`` ... ``on_train_end``): a
        scheduler that counts epochs from its start restarts at each call.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Numeric targets, with as many columns as on the first call.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows, as in :meth:`fit` (rescaled within each call).

        Returns
        -------
        self : object
            The regressor.
        """
        return self._fit_regressor(X, y, sample_weight, resume="partial")
