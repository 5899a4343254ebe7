"""Representation learning: what pretrained features transfer, and how to read them.

Feature-centric transfer learning in deep linear networks (Tahir et al., ICML 2025):
:class:`DeepLinearRegressor`, :class:`TwoLayerReLURegressor`, :class:`TransferRegressor`
and the closed forms in :mod:`~skpaper.representation.transfer_theory`.
"""

from . import _deep_linear_theory as transfer_theory
from ._deep_linear import DeepLinearRegressor
from ._deep_linear_relu import TwoLayerReLURegressor
from ._deep_linear_theory import (
    finetune_risk,
    finetune_transferability,
    linear_transfer_risk,
    linear_transferability,
    negative_transfer_region,
    phase_diagram,
    scratch_risk,
)
from ._deep_linear_transfer import TransferRegressor

__all__ = [
    "DeepLinearRegressor",
    "TransferRegressor",
    "TwoLayerReLURegressor",
    "finetune_risk",
    "finetune_transferability",
    "linear_transfer_risk",
    "linear_transferability",
    "negative_transfer_region",
    "phase_diagram",
    "scratch_risk",
    "transfer_theory",
]
