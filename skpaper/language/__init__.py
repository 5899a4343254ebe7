"""Language-model training methods: DistiLLM-2 distillation and Focus Instruction Tuning."""

__all__ = []
