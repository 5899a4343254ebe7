"""A small residual CNN for images whose skips are LAuReL connections."""

import math
from numbers import Integral

from torch import nn

from ..utils._docstring import Substitution
from ._base import TorchClassifierMixin, _torch_docs
from ._laurel import _LAUREL_DOCS, LaurelSequential, with_laurel
from ._laurel_estimators import _ESTIMATOR_DOCS, _BaseLaurelEstimator

__all__ = ["LaurelConvNetClassifier", "make_laurel_convnet"]


def _conv_branch(width, stride):
    # Pre-norm basic block; GroupNorm(1, C) keeps predictions independent of
    # the batch (BatchNorm would not) and works for a batch of one.
    return nn.Sequential(
        nn.GroupNorm(1, width), nn.Conv2d(width, width, 3, stride=stride, padding=1),
        nn.GELU(), nn.GroupNorm(1, width), nn.Conv2d(width, width, 3, padding=1),
    )


class _Unflatten(nn.Module):
    """Reshape flat rows into ``(batch, channels, height, width)`` images."""

    def __init__(self, image_shape):
        super().__init__()
        self.image_shape = tuple(int(s) for s in image_shape)

    def forward(self, x):
        return x.reshape(x.shape[0], *self.image_shape)

    def extra_repr(self):
        return f"image_shape={self.image_shape}"


@Substitution(**_LAUREL_DOCS)
def make_laurel_convnet(image_shape, n_classes, width=16, n_blocks=4, variant="rw+lr", *,
                        rank=4, k_prev=3, weight_norm="softmax", lr_init="xavier",
                        pa_map="lowrank"):
    """Build a small residual CNN on flat image rows, with LAuReL skips.

    A 3x3 stem maps the ``channels`` to ``width``; ``n_blocks`` pre-norm basic
    blocks follow, the one at index ``n_blocks // 2`` (when ``n_blocks >= 2``)
    with stride 2 and a 1x1 projected shortcut; then global average pooling
    and a linear head. The LAuReL maps act on the channel axis, and for the
    downsampling block on the projected shortcut.

    Parameters
    ----------
    image_shape : tuple of int
        ``(channels, height, width)`` of one image; inputs are flat rows of
        ``prod(image_shape)`` values.
    n_classes : int
        Number of classes (outputs of the linear head).
    width : int, default=16
        Channels of the residual stream.
    n_blocks : int, default=4
        Number of residual blocks.
    {variant}
    rank : int, default=4
        Rank ``r`` of the low-rank map over channels (1x1 convolutions).
    {k_prev}
    {weight_norm}
    {lr_init}
    {pa_map}

    Returns
    -------
    module : torch.nn.Sequential
        The network, mapping ``(batch, prod(image_shape))`` rows to
        ``(batch, n_classes)`` logits.

    Examples
    --------
    >>> import torch
    >>> from skpaper.nn import make_laurel_convnet
    >>> net = make_laurel_convnet((1, 8, 8), 10, width=8, n_blocks=2, rank=2)
    >>> net(torch.rand(5, 64)).shape
    torch.Size([5, 10])
    """
    channels = int(image_shape[0])
    down_at = n_blocks // 2 if n_blocks >= 2 else None
    blocks = []
    for i in range(n_blocks):
        stride = 2 if i == down_at else 1
        shortcut = nn.Conv2d(width, width, 1, stride=2, bias=False) if stride == 2 else None
        blocks.append(with_laurel(_conv_branch(width, stride), width, variant, rank=rank,
                                  k_prev=k_prev, weight_norm=weight_norm, lr_init=lr_init,
                                  pa_map=pa_map, feature_dim=1, shortcut=shortcut))
    return nn.Sequential(
        _Unflatten(image_shape), nn.Conv2d(channels, width, 3, padding=1),
        LaurelSequential(*blocks), nn.GroupNorm(1, width), nn.GELU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(width, n_classes),
    )


@Substitution(**{name: piece for name, piece in _torch_docs(
    max_epochs=30, batch_size=64, lr=3e-3, inference_dtype="float64").items() if name != "lr"},
    **_ESTIMATOR_DOCS)
class LaurelConvNetClassifier(TorchClassifierMixin, _BaseLaurelEstimator):
    """Small residual CNN image classifier with LAuReL skip connections.

    Images arrive as flat rows (as in :func:`sklearn.datasets.load_digits`)
    and are reshaped to ``image_shape``. The network is the one of
    :func:`make_laurel_convnet`: basic pre-norm blocks, one of them
    downsampling with a projected shortcut, global pooling and a linear head.

    Parameters
    ----------
    n_blocks : int, default=4
        Number of residual blocks.
    width : int, default=16
        Channels of the residual stream.
    variant : {"standard", "rw", "lr", "pa", "rw+lr", "rw+lr+pa"}, default="rw+lr"
        LAuReL variant of every skip connection.
    rank : int, default=4
        Rank ``r`` of the low-rank map over channels (1x1 convolutions).
    k_prev : int, default=3
        Number of activations mixed by the PA variants (the history restarts
        at the downsampling block).
    {weight_norm}
    {lr_init}
    {pa_map}
    image_shape : tuple of int or None, default=None
        ``(height, width)`` or ``(channels, height, width)``; ``None`` means
        one channel, square when ``n_features`` is a perfect square and a
        ``1 x n_features`` strip otherwise.
    {weight_decay}
    optimizer : str or torch.optim.Optimizer subclass, default="adamw"
        The optimizer: the name of a :mod:`torch.optim` optimizer in any case
        or its class, as skorch takes it. It is built with ``lr`` and two
        parameter groups, matrices and kernels with ``weight_decay`` and the
        rest without (an optimizer without ``weight_decay`` needs
        ``weight_decay=0``).
    optimizer_kwargs : dict or None, default=None
        Further arguments of the optimizer (``{"betas": (0.9, 0.99)}``);
        ``lr`` and ``weight_decay`` are set through their own parameters.
    {max_epochs}
    {batch_size}
    {lr}
    {device}
    {random_state}
    {verbose}
    {callbacks}
    {inference_dtype}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels seen during ``fit``.
    image_shape_ : tuple of int
        ``(channels, height, width)`` used.
    {laurel_attributes}

    See Also
    --------
    LaurelMLPClassifier : The residual MLP version.

    Notes
    -----
    For a block that downsamples, the skip path is a strided 1x1 projection
    ``P``, and LAuReL acts on it: :math:`x_{i+1} = \\alpha f(x_i) + \\beta (P
    x_i + B A P x_i)`. The low-rank map over channels adds :math:`2 r C`
    parameters per block, as the paper's ResNet-50 experiments do [1]_.

    {laurel_references}

    Examples
    --------
    >>> from skpaper.datasets import load_digits_split
    >>> from skpaper.nn import LaurelConvNetClassifier
    >>> d = load_digits_split()
    >>> clf = LaurelConvNetClassifier(n_blocks=2, width=16, rank=2, max_epochs=5,
    ...                               random_state=0, device="cpu").fit(d.X_train, d.y_train)
    >>> clf.image_shape_
    (1, 8, 8)
    >>> bool(clf.score(d.X_test, d.y_test) > 0.8)
    True
    """

    _parameter_constraints = {
        **_BaseLaurelEstimator._parameter_constraints,
        "image_shape": ["array-like", None],
        "optimizer": [str, type],
        "optimizer_kwargs": [dict, None],
    }

    def __init__(
        self,
        *,
        n_blocks=4,
        width=16,
        variant="rw+lr",
        rank=4,
        k_prev=3,
        weight_norm="softmax",
        lr_init="xavier",
        pa_map="lowrank",
        image_shape=None,
        weight_decay=1e-4,
        optimizer="adamw",
        optimizer_kwargs=None,
        max_epochs=30,
        batch_size=64,
        lr=3e-3,
        device="auto",
        random_state=None,
        verbose=0,
        callbacks=None,
        inference_dtype="float64",
    ):
        super().__init__(
            n_blocks=n_blocks, width=width, variant=variant, rank=rank, k_prev=k_prev,
            weight_norm=weight_norm, lr_init=lr_init, pa_map=pa_map, weight_decay=weight_decay,
            max_epochs=max_epochs, batch_size=batch_size, lr=lr, device=device,
            random_state=random_state, verbose=verbose, callbacks=callbacks,
            inference_dtype=inference_dtype,
        )
        self.image_shape = image_shape
        self.optimizer = optimizer
        self.optimizer_kwargs = optimizer_kwargs

    def _build_optimizer(self, module):
        # As the LAuReL MLPs: decay matrices and kernels only; biases, norms and the
        # LAuReL scalars are 0-d or 1-d and stay free.
        decay = [p for p in module.parameters() if p.ndim >= 2]
        free = [p for p in module.parameters() if p.ndim < 2]
        return self._make_optimizer(
            [{"params": decay, "weight_decay": self.weight_decay},
             {"params": free, "weight_decay": 0.0}],
            "adamw", weight_decay=("weight_decay", float(self.weight_decay)))

    def _fit_tensors(self, X, target, target_dtype):
        self.image_shape_ = self._resolve_image_shape(X.shape[1])
        return super()._fit_tensors(X, target, target_dtype)

    def _resolve_image_shape(self, n_features):
        if self.image_shape is None:
            side = math.isqrt(n_features)
            shape = (1, side, side) if side * side == n_features else (1, 1, n_features)
        else:
            shape = tuple(self.image_shape)
            if len(shape) == 2:
                shape = (1, *shape)
            valid = len(shape) == 3 and all(
                isinstance(s, Integral) and not isinstance(s, bool) and s >= 1 for s in shape
            )
            if not valid or math.prod(shape) != n_features:
                raise ValueError(
                    "image_shape must be (height, width) or (channels, height, width) of "
                    f"positive ints whose product is n_features={n_features}, "
                    f"got {self.image_shape!r}."
                )
        return tuple(int(s) for s in shape)

    def _build_module(self):
        return make_laurel_convnet(self.image_shape_, self._n_outputs, self.width,
                                   self.n_blocks, self.variant, **self._laurel_kwargs())
