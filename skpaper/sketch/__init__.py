"""Robust cardinality sketches under adaptive queries (Cohen, Singhal & Stemmer, ICML 2025).

:class:`BottomKSketch` is the mergeable bottom-k (KMV) data structure with a
Cython core; :class:`RobustCardinalitySketch` answers cardinality queries from
it in the standard, basic-robust or tracking mode; :mod:`skpaper.sketch.attacks`
holds the adaptive attack that breaks the standard estimator.
"""

from . import attacks, checks
from ._bottomk import DEFAULT_SEED, BottomKSketch, merge_sketches
from ._distributed import sketch_dask_bag
from ._robust import RobustCardinalitySketch, deactivation_budget, resolve_epsilon

__all__ = [
    "DEFAULT_SEED",
    "BottomKSketch",
    "RobustCardinalitySketch",
    "attacks",
    "checks",
    "deactivation_budget",
    "merge_sketches",
    "resolve_epsilon",
    "sketch_dask_bag",
]
