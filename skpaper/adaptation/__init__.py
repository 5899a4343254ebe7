"""Test-time adaptation: steady-state adaptation (SSA) and the TTA baselines it wraps."""

__all__ = []
