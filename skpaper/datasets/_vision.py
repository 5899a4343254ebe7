"""Data generators for `skpaper.vision` (numpy only; no torch import)."""

__all__ = []
