"""Shared fixtures and settings for the skpaper test suite."""

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=25, deadline=None)
settings.register_profile(
    "ci",
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("nightly", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

try:
    import torch
except ImportError:  # the non-deep families must run without torch
    torch = None
else:
    # One thread was measured several times faster than two on 2-core machines.
    torch.set_num_threads(1)


def _seeds():
    value = os.environ.get("SKPAPER_TESTS_SEED", "42")
    if value == "all":
        return list(range(100))
    return [int(s) for s in value.split(",")]


@pytest.fixture(params=_seeds())
def global_random_seed(request):
    """Seed for tests that should pass for any seed (``SKPAPER_TESTS_SEED=all`` sweeps 0-99)."""
    return request.param


@pytest.fixture
def rng(global_random_seed):
    """A local numpy Generator seeded from ``global_random_seed``."""
    return np.random.default_rng(global_random_seed)


def pytest_collection_modifyitems(config, items):
    if torch is not None and torch.cuda.is_available():
        return
    skip_gpu = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip_gpu)
