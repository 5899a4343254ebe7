"""Seeding helpers: every random draw flows from an estimator's ``random_state``."""

import numpy as np
from sklearn.utils import check_random_state

_MAX_SEED = 2**31 - 1


def derive_seed(random_state):
    """Draw one integer seed in ``[0, 2**31 - 1)`` from ``random_state``.

    Parameters
    ----------
    random_state : int, RandomState instance or None

    Returns
    -------
    seed : int
    """
    return int(check_random_state(random_state).randint(_MAX_SEED))


def spawn_seeds(random_state, n):
    """Draw ``n`` independent integer seeds from ``random_state`` (for parallel jobs)."""
    if int(n) < 0:
        raise ValueError(f"n must be non-negative, got {n}.")
    rng = check_random_state(random_state)
    return [int(s) for s in rng.randint(_MAX_SEED, size=int(n))]


def check_torch_generator(random_state, device="cpu"):
    """Return a local :class:`torch.Generator` seeded from ``random_state``.

    The global torch RNG is never touched.
    """
    import torch

    gen = torch.Generator(device=device)
    gen.manual_seed(derive_seed(random_state))
    return gen


def rng_integers(rng, high, size=None):
    """``rng.randint`` that also accepts a :class:`numpy.random.Generator`."""
    if isinstance(rng, np.random.Generator):
        return rng.integers(high, size=size)
    return rng.randint(high, size=size)
