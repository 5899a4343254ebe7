"""Seeding helpers: every random draw flows from an estimator's ``random_state``."""

import numpy as np
from sklearn.utils import check_random_state

_MAX_SEED = 2**31 - 1


def derive_seed(random_state):
    """Draw one integer seed in ``[0, 2**31 - 1)`` from ``random_state``.

    Parameters
    ----------
    random_state : int, RandomState instance or None
        Source of the seed.

    Returns
    -------
    seed : int
        A seed for a downstream generator.

    See Also
    --------
    spawn_seeds : Several seeds at once.

    Examples
    --------
    >>> from skpaper.utils import derive_seed
    >>> derive_seed(0) == derive_seed(0)
    True
    >>> 0 <= derive_seed(None) < 2**31 - 1
    True
    """
    return int(check_random_state(random_state).randint(_MAX_SEED))


def spawn_seeds(random_state, n):
    """Draw ``n`` independent integer seeds from ``random_state`` (for parallel jobs).

    Parameters
    ----------
    random_state : int, RandomState instance or None
        Source of the seeds.
    n : int
        Number of seeds, at least 0.

    Returns
    -------
    seeds : list of int
        ``n`` seeds in ``[0, 2**31 - 1)``.

    Raises
    ------
    ValueError
        If ``n`` is negative.

    See Also
    --------
    derive_seed : One seed.

    Examples
    --------
    >>> from skpaper.utils import spawn_seeds
    >>> seeds = spawn_seeds(0, 3)
    >>> len(seeds), seeds == spawn_seeds(0, 3)
    (3, True)
    """
    if int(n) < 0:
        raise ValueError(f"n must be non-negative, got {n}.")
    rng = check_random_state(random_state)
    return [int(s) for s in rng.randint(_MAX_SEED, size=int(n))]


def check_torch_generator(random_state, device="cpu"):
    """Return a local :class:`torch.Generator` seeded from ``random_state``.

    The global torch RNG is never touched.

    Parameters
    ----------
    random_state : int, RandomState instance or None
        Source of the generator's seed (see :func:`derive_seed`).
    device : str or torch.device, default="cpu"
        Device of the generator.

    Returns
    -------
    generator : torch.Generator
        A new generator on ``device``.

    Examples
    --------
    >>> import torch
    >>> from skpaper.utils import check_torch_generator
    >>> a = torch.rand(2, generator=check_torch_generator(0))
    >>> b = torch.rand(2, generator=check_torch_generator(0))
    >>> bool(torch.equal(a, b))
    True
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
