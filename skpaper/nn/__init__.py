"""Torch estimators: the base class, reusable modules and reference MLPs.

The tiny causal language model and its tokenizers (``TinyCausalLM``, ``LanguageModel``,
``CharTokenizer``, ``BPETokenizer``) are implemented in :mod:`skpaper.language` and are
also reachable from here; they load on first access, since the language family itself
builds on this package.
"""

from ._base import (
    BaseTorchEstimator,
    BaseTorchState,
    Callback,
    Checkpoint,
    EarlyStopping,
    GradNormClipping,
    HalveOnPlateau,
    LRScheduler,
    ValidationSplit,
    resolve_device,
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

_LANGUAGE_MODEL_NAMES = ("BPETokenizer", "CharTokenizer", "LanguageModel", "TinyCausalLM")


def __getattr__(name):
    if name in _LANGUAGE_MODEL_NAMES:
        from .. import language

        return getattr(language, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BPETokenizer",
    "BaseTorchEstimator",
    "BaseTorchState",
    "CharTokenizer",
    "Callback",
    "Checkpoint",
    "EarlyStopping",
    "GradNormClipping",
    "HalveOnPlateau",
    "LRScheduler",
    "LAUREL_VARIANTS",
    "LanguageModel",
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
    "TinyCausalLM",
    "ValidationSplit",
    "resolve_device",
    "with_laurel",
]
