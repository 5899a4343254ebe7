"""Source classifiers with normalisation layers, the models test-time adaptation adapts."""

import torch
from torch import nn

from ..nn import MLPClassifier
from ..nn._mlp import _ACTIVATIONS, _MLP_DOCS, _make_mlp
from ..utils._docstring import Substitution
from ..utils._sklearn import StrOptions

__all__ = ["NormMLPClassifier", "make_norm_mlp"]

_NORMS = {"layer": nn.LayerNorm, "batch": nn.BatchNorm1d}


def make_norm_mlp(n_inputs, hidden_layer_sizes, n_outputs, activation="relu", norm="layer"):
    """Build an MLP whose hidden layers are ``Linear -> Norm -> activation``.

    Parameters
    ----------
    n_inputs : int
        Number of input features.
    hidden_layer_sizes : sequence of int
        Width of each hidden layer.
    n_outputs : int
        Number of outputs.
    activation : {"relu", "tanh", "gelu", "logistic"}, default="relu"
        Activation after each normalisation layer.
    norm : {"layer", "batch"}, default="layer"
        ``nn.LayerNorm`` (per-sample statistics) or ``nn.BatchNorm1d``.

    Returns
    -------
    module : torch.nn.Sequential
        ``Linear``, normalisation and activation layers, then a ``Linear`` head.

    Examples
    --------
    >>> import torch
    >>> from skpaper.adaptation import make_norm_mlp
    >>> net = make_norm_mlp(64, (32,), 10)
    >>> net(torch.zeros(4, 64)).shape
    torch.Size([4, 10])
    """
    if norm not in _NORMS:
        raise ValueError(f"norm must be one of {sorted(_NORMS)}, got {norm!r}.")
    if activation not in _ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(_ACTIVATIONS)}, got {activation!r}.")
    return _make_mlp(n_inputs, hidden_layer_sizes, n_outputs, activation, norm=_NORMS[norm])


@Substitution(**_MLP_DOCS)
class NormMLPClassifier(MLPClassifier):
    """MLP classifier with a normalisation layer after every hidden linear map.

    The source model of :class:`TestTimeAdapter`: test-time adaptation methods
    such as TENT, ROID and SSA adapt only the affine parameters of the
    normalisation layers. Training is that of :class:`skpaper.nn.MLPClassifier`
    (Adam, cross-entropy, weight decay ``alpha``, early stopping on the
    training loss).

    Parameters
    ----------
    hidden_layer_sizes : array-like of int, default=(128,)
        Width of each hidden layer.
    norm : {"layer", "batch"}, default="layer"
        ``"layer"`` (LayerNorm: predictions independent of the batch) or
        ``"batch"`` (BatchNorm1d with running statistics at inference).
    activation : {"relu", "tanh", "gelu", "logistic"}, default="relu"
        Activation after each normalisation layer.
    alpha : float, default=1e-4
        L2 penalty (Adam weight decay).
    tol : float, default=1e-4
        Training stops when the epoch loss has not improved by ``tol`` for
        ``n_iter_no_change`` consecutive epochs.
    n_iter_no_change : int, default=10
        Number of epochs without improvement before training stops.
    {torch_parameters}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels seen during ``fit``.
    {mlp_attributes}

    See Also
    --------
    TestTimeAdapter : Adapts the normalisation parameters on unlabelled test data.
    skpaper.nn.MLPClassifier : The same network without normalisation layers.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from skpaper.adaptation import NormMLPClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = NormMLPClassifier(hidden_layer_sizes=(16,), lr=1e-2, random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    _parameter_constraints = {
        **MLPClassifier._parameter_constraints,
        "norm": [StrOptions(set(_NORMS))],
    }

    def __init__(
        self,
        *,
        hidden_layer_sizes=(128,),
        norm="layer",
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
            hidden_layer_sizes=hidden_layer_sizes, activation=activation, alpha=alpha, tol=tol,
            n_iter_no_change=n_iter_no_change, max_epochs=max_epochs, batch_size=batch_size,
            lr=lr, device=device, random_state=random_state, verbose=verbose,
            callbacks=callbacks, inference_dtype=inference_dtype,
        )
        self.norm = norm

    def _build_module(self):
        return make_norm_mlp(self.n_features_in_, self._check_hidden_layer_sizes(),
                             self._n_outputs, self.activation, self.norm)

    def _iter_batches(self, n_samples, shuffle=True):
        # BatchNorm cannot normalise a batch of one in training mode: a trailing
        # singleton batch joins the one before it.
        batches = list(super()._iter_batches(n_samples, shuffle))
        if self.norm == "batch":
            if n_samples < 2:
                raise ValueError("norm='batch' needs at least 2 training samples, got "
                                 f"n_samples={n_samples}.")
            if len(batches) > 1 and len(batches[-1]) == 1:
                batches[-2:] = [torch.cat(batches[-2:])]
        yield from batches
