"""skpaper: scikit-learn compatible estimators for nineteen ICML 2025 papers.

Family packages (``skpaper.sketch``, ``skpaper.independence``, ...) are imported
on demand; importing :mod:`skpaper` itself loads neither torch nor numba.
"""

__version__ = "0.1.0.dev0"

__all__ = ["__version__"]
