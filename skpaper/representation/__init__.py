"""Representation learning: what pretrained features transfer, and how to read them.

Feature-centric transfer learning in deep linear networks (Tahir et al., ICML 2025):
:class:`DeepLinearRegressor`, :class:`TwoLayerReLURegressor`, :class:`TransferRegressor`
and the closed forms in :mod:`~skpaper.representation.transfer_theory`.

Sparse probing (Kantamneni, Engels et al., ICML 2025): :class:`SparseAutoencoder`,
:class:`SAEProbeClassifier`, :class:`QuiverOfArrows`, the baselines of
:func:`paper_baselines` tuned by :class:`ProbeSearchCV`, and the regime helpers
:func:`scarcity_split`, :func:`imbalance_split`, :func:`flip_labels` and
:func:`covariate_shift_split`; offline real data from :func:`load_sae_probes_dataset` and
:func:`minilm_activations`.
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
from ._probing import LatentSelector, QuiverOfArrows, SAEProbeClassifier
from ._probing_baselines import paper_baselines
from ._probing_cv import PaperCV, ProbeSearchCV
from ._probing_data import load_sae_probes_dataset, minilm_activations
from ._probing_regimes import (
    covariate_shift_split,
    flip_labels,
    imbalance_split,
    regime_grid,
    scarcity_split,
)
from ._sae import SparseAutoencoder

__all__ = [
    "DeepLinearRegressor",
    "LatentSelector",
    "PaperCV",
    "ProbeSearchCV",
    "QuiverOfArrows",
    "SAEProbeClassifier",
    "SparseAutoencoder",
    "TransferRegressor",
    "TwoLayerReLURegressor",
    "covariate_shift_split",
    "finetune_risk",
    "finetune_transferability",
    "flip_labels",
    "imbalance_split",
    "linear_transfer_risk",
    "linear_transferability",
    "load_sae_probes_dataset",
    "minilm_activations",
    "negative_transfer_region",
    "paper_baselines",
    "phase_diagram",
    "regime_grid",
    "scarcity_split",
    "scratch_risk",
    "transfer_theory",
]
