"""3D shape orientation estimation robust to symmetries."""

__all__ = []
