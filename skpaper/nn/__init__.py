"""Torch estimators: the base class, reusable modules and reference MLPs."""

from ._base import BaseTorchEstimator, Callback, EarlyStopping, resolve_device
from ._mlp import MLPClassifier, MLPRegressor, make_mlp

__all__ = [
    "BaseTorchEstimator",
    "Callback",
    "EarlyStopping",
    "MLPClassifier",
    "MLPRegressor",
    "make_mlp",
    "resolve_device",
]
