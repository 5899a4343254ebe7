"""Vision models: the 1D image tokenizer and anytime-interpolation motion transfer."""

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
    "MaskedReconstruction",
    "TokenObjective",
    "TokenTestTimeOptimizer",
    "VQTokenizer1D",
    "WeightedSum",
    "find_attribute_positions",
    "swap_tokens",
    "token_noise_schedule",
    "train_contrastive_encoders",
]
