"""The bandit kernels, imported on first use so that importing :mod:`skpaper.bandits`
does not import numba.

The codes of :mod:`._layout` are read without numba; any other name (a kernel)
imports :mod:`._kernels` the first time it is read, which compiles the kernels
or loads them from numba's cache.
"""

from ._layout import *  # noqa: F403


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    from . import _kernels

    value = getattr(_kernels, name)
    globals()[name] = value
    return value
