"""Multi-layer perceptrons on tabular data: the reference torch estimators."""

from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted
from torch import nn

from ..utils._sklearn import Interval, StrOptions, _fit_context, validate_data
from ._base import BaseTorchEstimator, EarlyStopping

__all__ = ["MLPClassifier", "MLPRegressor", "make_mlp"]

_ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU, "logistic": nn.Sigmoid}


def make_mlp(n_inputs, hidden_layer_sizes, n_outputs, activation="relu"):
    """Build a plain ``nn.Sequential`` MLP.

    Parameters
    ----------
    n_inputs : int
    hidden_layer_sizes : sequence of int
    n_outputs : int
    activation : {"relu", "tanh", "gelu", "logistic"}, default="relu"

    Returns
    -------
    module : torch.nn.Sequential
    """
    layers, width = [], n_inputs
    for size in hidden_layer_sizes:
        layers += [nn.Linear(width, int(size)), _ACTIVATIONS[activation]()]
        width = int(size)
    layers.append(nn.Linear(width, n_outputs))
    return nn.Sequential(*layers)


class _BaseMLP(BaseTorchEstimator):
    _parameter_constraints = {
        **BaseTorchEstimator._parameter_constraints,
        "hidden_layer_sizes": ["array-like"],
        "activation": [StrOptions(set(_ACTIVATIONS))],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        *,
        hidden_layer_sizes=(100,),
        activation="relu",
        alpha=1e-4,
        tol=1e-4,
        n_iter_no_change=10,
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
        return torch.optim.Adam(module.parameters(), lr=self.lr, weight_decay=self.alpha)

    def _fit_tensors(self, X, target, target_dtype):
        self._check_hidden_layer_sizes()
        self._init_torch_state()
        self._fit_loop((self._to_tensor(X), self._to_tensor(target, target_dtype)))
        return self

    def _extra_callbacks(self):
        # sklearn-style stopping rule on the training loss, after the user's callbacks.
        return [EarlyStopping("train_loss", self.n_iter_no_change, self.tol)]


class MLPClassifier(ClassifierMixin, _BaseMLP):
    """Multi-layer perceptron classifier trained with Adam in torch.

    The reference torch estimator of skpaper: it shows the base class at work
    and matches :class:`sklearn.neural_network.MLPClassifier` in accuracy.

    Parameters
    ----------
    hidden_layer_sizes : array-like of int, default=(100,)
        Width of each hidden layer.
    activation : {"relu", "tanh", "gelu", "logistic"}, default="relu"
    alpha : float, default=1e-4
        L2 penalty (Adam weight decay).
    tol : float, default=1e-4
        Training stops when the epoch loss has not improved by ``tol`` for
        ``n_iter_no_change`` consecutive epochs.
    n_iter_no_change : int, default=10
    max_epochs : int, default=200
    batch_size : int, default=200
    lr : float, default=1e-3
    device : str, default="auto"
    random_state : int, RandomState instance or None, default=None
    verbose : int, default=0
    callbacks : list of Callback or None, default=None
    inference_dtype : {"float32", "float64"}, default="float64"

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    module_ : torch.nn.Sequential
    history_ : list of dict
    n_iter_ : int
    device_ : str
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined only when ``X`` has string column names.

    See Also
    --------
    sklearn.neural_network.MLPClassifier : the numpy implementation.

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
    def fit(self, X, y):
        """Fit the classifier.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : object
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        encoder = LabelEncoder().fit(y)
        self.classes_ = encoder.classes_
        self._n_outputs = len(self.classes_)
        return self._fit_tensors(X, encoder.transform(y), torch.long)

    def _compute_loss(self, output, target):
        return nn.functional.cross_entropy(output, target)

    def predict_proba(self, X):
        """Class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        logits = self._predict_module(X)
        logits -= logits.max(axis=1, keepdims=True)
        proba = np.exp(logits)
        return proba / proba.sum(axis=1, keepdims=True)

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


class MLPRegressor(RegressorMixin, _BaseMLP):
    """Multi-layer perceptron regressor trained with Adam in torch.

    Parameters
    ----------
    hidden_layer_sizes : array-like of int, default=(100,)
    activation : {"relu", "tanh", "gelu", "logistic"}, default="relu"
    alpha : float, default=1e-4
    tol : float, default=1e-4
    n_iter_no_change : int, default=10
    max_epochs : int, default=200
    batch_size : int, default=200
    lr : float, default=1e-3
    device : str, default="auto"
    random_state : int, RandomState instance or None, default=None
    verbose : int, default=0
    callbacks : list of Callback or None, default=None
    inference_dtype : {"float32", "float64"}, default="float64"

    Attributes
    ----------
    module_ : torch.nn.Sequential
    history_ : list of dict
    n_iter_ : int
    device_ : str
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined only when ``X`` has string column names.

    See Also
    --------
    sklearn.neural_network.MLPRegressor : the numpy implementation.

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
    def fit(self, X, y):
        """Fit the regressor.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)

        Returns
        -------
        self : object
        """
        X, y = validate_data(self, X, y, dtype=np.float64, multi_output=True, y_numeric=True)
        if np.asarray(y).dtype.kind not in "biuf":
            raise ValueError(f"y must be numeric (a regression target), got dtype {y.dtype}.")
        self._y_ndim = y.ndim
        target = y.reshape(len(y), -1)
        self._n_outputs = target.shape[1]
        return self._fit_tensors(X, target, torch.float32)

    def _compute_loss(self, output, target):
        return nn.functional.mse_loss(output, target)

    def predict(self, X):
        """Predicted targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_targets)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        out = self._predict_module(X)
        return out.ravel() if self._y_ndim == 1 else out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
