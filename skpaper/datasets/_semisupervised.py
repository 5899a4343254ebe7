"""Data generators for `skpaper.semisupervised` (numpy only; no torch import)."""

__all__ = []
