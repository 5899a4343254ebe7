"""Data generators for `skpaper.reward` (numpy only; no torch import)."""

__all__ = []
