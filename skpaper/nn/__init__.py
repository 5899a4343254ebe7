"""Torch estimators: the base class, callbacks, reusable modules and reference MLPs.

The reusable modules are the LAuReL residual connections and one configurable
transformer block; :func:`train_seeds` trains several seeds of one small module as
one batched model; the tiny causal language model and its tokenizers live in
:mod:`skpaper.language`.
"""

from ._base import BaseTorchEstimator, BaseTorchState, resolve_device, resolve_optimizer
from ._batched import predict_seeds, train_seeds
from ._callbacks import (
    Callback,
    Checkpoint,
    EarlyStopping,
    GradNormClipping,
    HalveOnPlateau,
    LRScheduler,
    ValidationSplit,
)
from ._convnet import LaurelConvNetClassifier, make_laurel_convnet
from ._laurel import (
    LAUREL_VARIANTS,
    LaurelBlock,
    LaurelResidual,
    LaurelSequential,
    laurel_param_count,
    with_laurel,
)
from ._laurel_estimators import LaurelMLPClassifier, LaurelMLPRegressor, make_laurel_mlp
from ._mlp import MLPClassifier, MLPRegressor, make_mlp
from ._transformer import SelfAttention, TransformerBlock

__all__ = [
    "BaseTorchEstimator",
    "BaseTorchState",
    "Callback",
    "Checkpoint",
    "EarlyStopping",
    "GradNormClipping",
    "HalveOnPlateau",
    "LRScheduler",
    "LAUREL_VARIANTS",
    "LaurelBlock",
    "LaurelConvNetClassifier",
    "LaurelMLPClassifier",
    "LaurelMLPRegressor",
    "LaurelResidual",
    "LaurelSequential",
    "MLPClassifier",
    "MLPRegressor",
    "laurel_param_count",
    "make_laurel_convnet",
    "make_laurel_mlp",
    "make_mlp",
    "predict_seeds",
    "SelfAttention",
    "TransformerBlock",
    "train_seeds",
    "ValidationSplit",
    "resolve_device",
    "resolve_optimizer",
    "with_laurel",
]
