"""Shared utilities: the estimator registry, validation helpers and seeding."""

from ._inference import normal_ci
from ._parallel import parallel_map
from ._registry import all_estimators
from ._seeding import check_torch_generator, derive_seed, spawn_seeds

__all__ = [
    "all_estimators",
    "check_torch_generator",
    "derive_seed",
    "normal_ci",
    "parallel_map",
    "spawn_seeds",
]
