"""Torch estimators: the base class, reusable modules and reference MLPs."""

from ._base import BaseTorchEstimator, Callback, EarlyStopping, resolve_device
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

__all__ = [
    "BaseTorchEstimator",
    "Callback",
    "EarlyStopping",
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
    "resolve_device",
    "with_laurel",
]
