"""Test-time adaptation: steady-state adaptation (SSA) and the TTA baselines it wraps."""

from ._adapter import TestTimeAdapter, adapted_parameters
from ._filter import SteadyStateFilter
from ._losses import (
    eata_loss,
    entropy_loss,
    prior_correction,
    roid_loss,
    soft_likelihood_ratio,
    softmax_entropy,
    symmetric_cross_entropy,
)
from ._source import NormMLPClassifier, make_norm_mlp

__all__ = [
    "NormMLPClassifier",
    "SteadyStateFilter",
    "TestTimeAdapter",
    "adapted_parameters",
    "eata_loss",
    "entropy_loss",
    "make_norm_mlp",
    "prior_correction",
    "roid_loss",
    "soft_likelihood_ratio",
    "softmax_entropy",
    "symmetric_cross_entropy",
]
