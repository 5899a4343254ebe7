"""Data generators for `skpaper.representation` (numpy only; no torch import)."""

__all__ = []
