"""Fixtures for the torch-module tests."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _restore_global_torch_rng():
    # Some module-level tests seed torch's global RNG to build raw modules; restore the
    # state afterwards so no test leaks global randomness into another.
    with torch.random.fork_rng():
        yield
