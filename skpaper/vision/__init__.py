"""Vision models: the 1D image tokenizer and anytime-interpolation motion transfer."""

from ._keypoints import LandmarkDetector, train_landmark_detector
from ._motion import KeypointMotionTransfer
from ._motion_metrics import (
    average_euclidean_distance,
    average_keypoint_distance,
    color_histogram_embedding,
    l1_reconstruction,
    missing_keypoint_rate,
)
from ._tokenizer import VQTokenizer1D
from ._tokenizer_contrastive import train_contrastive_encoders
from ._tokenizer_editing import find_attribute_positions, swap_tokens
from ._tokenizer_objectives import (
    ClassifierGuidance,
    EmbeddingGuidance,
    MaskedReconstruction,
    TokenObjective,
    WeightedSum,
)
from ._tokenizer_tto import TokenTestTimeOptimizer, token_noise_schedule

__all__ = [
    "ClassifierGuidance",
    "EmbeddingGuidance",
    "KeypointMotionTransfer",
    "LandmarkDetector",
    "MaskedReconstruction",
    "TokenObjective",
    "TokenTestTimeOptimizer",
    "VQTokenizer1D",
    "WeightedSum",
    "average_euclidean_distance",
    "average_keypoint_distance",
    "color_histogram_embedding",
    "find_attribute_positions",
    "l1_reconstruction",
    "missing_keypoint_rate",
    "swap_tokens",
    "token_noise_schedule",
    "train_contrastive_encoders",
    "train_landmark_detector",
]
