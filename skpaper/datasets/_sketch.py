"""Data generators for `skpaper.sketch` (numpy only; no torch import)."""

__all__ = []
