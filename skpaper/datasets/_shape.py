"""Data generators for `skpaper.shape` (numpy only; no torch import)."""

__all__ = []
