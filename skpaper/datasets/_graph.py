"""Data generators for `skpaper.graph` (numpy only; no torch import)."""

__all__ = []
