"""Data generators for `skpaper.independence` (numpy only; no torch import)."""

__all__ = []
