"""Data generators for `skpaper.multilabel` (numpy only; no torch import)."""

__all__ = []
