"""Language-model training methods: DistiLLM-2 distillation and Focus Instruction Tuning."""

from ._distill_losses import (
    forward_kl,
    generalized_jsd,
    reverse_kl,
    skew_kl,
    skew_reverse_kl,
)
from ._distillm2 import ContrastiveDistiller
from ._tiny_lm import (
    BPETokenizer,
    CharTokenizer,
    LanguageModel,
    TinyCausalLM,
    lm_logits,
    pad_sequences,
    sample_responses,
    sequence_log_probs,
    token_log_probs,
)

__all__ = [
    "BPETokenizer",
    "CharTokenizer",
    "ContrastiveDistiller",
    "LanguageModel",
    "TinyCausalLM",
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
