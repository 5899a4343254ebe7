"""Vision models: the 1D image tokenizer and anytime-interpolation motion transfer."""

__all__ = []
