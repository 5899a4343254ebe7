"""Fixtures for the bandit tests: compile the numba kernels once per session."""

import numpy as np
import pytest

from skpaper.bandits import CrossLearningExp3, FirstPriceAuction


@pytest.fixture(scope="session", autouse=True)
def warm_kernels():
    """Load (or compile) every kernel before the timed tests run."""
    env = FirstPriceAuction(n_values=3, n_bids=2, random_state=0).generate(8)
    policy = CrossLearningExp3(n_actions=2, horizon=8, random_state=0)
    policy.fit(None, environment=env)
    policy.score(None, environment=env)
    policy.update(0, policy.select(0), np.zeros(3))


@pytest.fixture
def dense_problem():
    """A small oblivious adversary as a dense (T, C, K) loss array and its contexts."""
    rng = np.random.RandomState(0)
    losses = rng.uniform(size=(400, 5, 4))
    contexts = rng.randint(5, size=(400, 1))
    return contexts, losses
