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

Microscopy foundation models (Kenyon-Dean et al., ICML 2025): the ViT of
:class:`VisionTransformer` pretrained by :class:`MicroscopyMAE`, intermediate-block
search with :class:`BlockSearchProbe`, batch correction with
:class:`TypicalVariationNormalizer`, curation with
:class:`PerturbationConsistencyFilter`, and the metrics
:func:`replicate_consistency_ks`, :func:`relationship_recall` and
:func:`linear_separability`.
"""

from . import _deep_linear_theory as transfer_theory
from ._batch_correction import TypicalVariationNormalizer
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
from ._mae import MaskedAutoencoderViT, MicroscopyMAE, fourier_loss, mae_loss
from ._microscopy_curation import PerturbationConsistencyFilter
from ._microscopy_metrics import (
    aggregate_embeddings,
    linear_separability,
    relationship_recall,
    replicate_consistency_cvm,
    replicate_consistency_ks,
    replicate_pair_similarities,
)
from ._microscopy_probe import BlockSearchProbe
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
from ._vit import (
    MultiHeadSelfAttention,
    VisionTransformer,
    ViTBlock,
    patchify,
    random_masking,
    sincos_pos_embed_2d,
    unpatchify,
)

__all__ = [
    "BlockSearchProbe",
    "DeepLinearRegressor",
    "LatentSelector",
    "MaskedAutoencoderViT",
    "MicroscopyMAE",
    "MultiHeadSelfAttention",
    "PaperCV",
    "PerturbationConsistencyFilter",
    "ProbeSearchCV",
    "QuiverOfArrows",
    "SAEProbeClassifier",
    "SparseAutoencoder",
    "TransferRegressor",
    "TwoLayerReLURegressor",
    "TypicalVariationNormalizer",
    "ViTBlock",
    "VisionTransformer",
    "aggregate_embeddings",
    "covariate_shift_split",
    "finetune_risk",
    "finetune_transferability",
    "flip_labels",
    "fourier_loss",
    "imbalance_split",
    "linear_separability",
    "linear_transfer_risk",
    "linear_transferability",
    "load_sae_probes_dataset",
    "mae_loss",
    "minilm_activations",
    "negative_transfer_region",
    "paper_baselines",
    "patchify",
    "phase_diagram",
    "random_masking",
    "regime_grid",
    "relationship_recall",
    "replicate_consistency_cvm",
    "replicate_consistency_ks",
    "replicate_pair_similarities",
    "scarcity_split",
    "scratch_risk",
    "sincos_pos_embed_2d",
    "transfer_theory",
    "unpatchify",
]
