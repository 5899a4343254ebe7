"""Data generators for `skpaper.bandits` (numpy only; no torch import)."""

__all__ = []
