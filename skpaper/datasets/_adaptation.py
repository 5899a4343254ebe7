"""Data generators for `skpaper.adaptation` (numpy only; no torch import)."""

__all__ = []
