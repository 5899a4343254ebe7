"""Data generators for `skpaper.language` (numpy only; no torch import)."""

__all__ = []
