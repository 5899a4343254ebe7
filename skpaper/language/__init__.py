"""Language-model training methods: DistiLLM-2 distillation and Focus Instruction Tuning."""

from ._distill_losses import (
    forward_kl,
    generalized_jsd,
    reverse_kl,
    skew_kl,
    skew_reverse_kl,
)
from ._distillm2 import ContrastiveDistiller
from ._focus import FOCUS_TYPES, FocusInstructionTuner, focus_labels
from ._focus_lm import DEFAULT_FOCUS_TEMPLATES, FocusInstructionLM, WordTokenizer
from ._lm_model import TinyCausalLM, lm_logits, pad_sequences, sequence_log_probs, token_log_probs
from ._sampling import sample_responses
from ._tiny_lm import LanguageModel
from ._tokenizers import BPETokenizer, CharTokenizer

__all__ = [
    "BPETokenizer",
    "CharTokenizer",
    "ContrastiveDistiller",
    "DEFAULT_FOCUS_TEMPLATES",
    "FOCUS_TYPES",
    "FocusInstructionLM",
    "FocusInstructionTuner",
    "LanguageModel",
    "TinyCausalLM",
    "WordTokenizer",
    "focus_labels",
    "forward_kl",
    "generalized_jsd",
    "lm_logits",
    "pad_sequences",
    "reverse_kl",
    "sample_responses",
    "sequence_log_probs",
    "skew_kl",
    "skew_reverse_kl",
    "token_log_probs",
]
