"""Data generators for `skpaper.kg` (numpy only; no torch import)."""

__all__ = []
