"""Temporal knowledge-graph completion (TeDS)."""

__all__ = []
