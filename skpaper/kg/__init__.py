"""Temporal knowledge-graph completion (TeDS) and tkbc-style baselines."""

from ..datasets._kg import load_tkg, make_synthetic_tkg, train_test_split_tkg
from ._baselines import ComplExLinkPredictor, TeASTLinkPredictor, TNTComplExLinkPredictor
from ._metrics import filter_mask, filtered_ranks, ranking_metrics
from ._quaternion import (
    hamilton_product,
    quaternion_conjugate,
    quaternion_from_angle,
    quaternion_norm,
    quaternion_normalize,
    quaternion_rotate,
)
from ._teds import TeDSLinkPredictor

__all__ = [
    "ComplExLinkPredictor",
    "TNTComplExLinkPredictor",
    "TeASTLinkPredictor",
    "TeDSLinkPredictor",
    "filter_mask",
    "filtered_ranks",
    "hamilton_product",
    "load_tkg",
    "make_synthetic_tkg",
    "quaternion_conjugate",
    "quaternion_from_angle",
    "quaternion_norm",
    "quaternion_normalize",
    "quaternion_rotate",
    "ranking_metrics",
    "train_test_split_tkg",
]
