"""Data generators for `skpaper.sketch` (numpy only; no torch import)."""

import numbers

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["make_participation_queries", "make_subset_queries"]


def _check_positive_int(value, name, minimum=1):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int >= {minimum}, got {type(value).__name__}.")
    if value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value}.")
    return int(value)


def _as_generator(random_state):
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(check_random_state(random_state).randint(0, 2**31 - 1))


def make_subset_queries(n_keys, n_queries, *, inclusion=0.5, random_state=None):
    """Random subsets of a ground set, as a boolean membership matrix.

    Each key joins each query independently with probability ``inclusion``:
    the non-adaptive batch of the correlation attack of Ahmadian & Cohen
    (ICML 2024), in which every key takes part in about ``inclusion *
    n_queries`` queries.

    Parameters
    ----------
    n_keys : int
        Size of the ground set (keys ``0, ..., n_keys - 1``).
    n_queries : int
        Number of queries (rows).
    inclusion : float, default=0.5
        Probability that a key belongs to a query, in (0, 1).
    random_state : int, RandomState instance, Generator or None, default=None
        Seed of the random draws; an int makes the output reproducible.

    Returns
    -------
    membership : ndarray of bool of shape (n_queries, n_keys)
        ``membership[q, k]`` is True when key ``k`` belongs to query ``q``.

    Examples
    --------
    >>> from skpaper.datasets import make_subset_queries
    >>> make_subset_queries(1000, 4, random_state=0).shape
    (4, 1000)
    """
    n_keys = _check_positive_int(n_keys, "n_keys")
    n_queries = _check_positive_int(n_queries, "n_queries", minimum=0)
    if not isinstance(inclusion, numbers.Real) or not 0 < inclusion < 1:
        raise ValueError(f"inclusion must be a float in (0, 1), got {inclusion!r}.")
    rng = _as_generator(random_state)
    return rng.random((n_queries, n_keys)) < inclusion


def make_participation_queries(
    n_keys, n_queries, *, query_size=1000, pattern="uniform", pareto_shape=1.5,
    max_participation=None, random_state=None,
):
    """Draw queries of fixed size whose per-key participation is uniform or heavy-tailed.

    ``"uniform"``: every query is a uniform random subset of size
    ``query_size``, so each key takes part in about ``n_queries * query_size /
    n_keys`` queries. ``"pareto"``: keys carry Pareto(``pareto_shape``) weights
    and queries sample keys without replacement proportionally to them, so a
    few keys take part in most queries and most keys in few (the regime where
    the maximum participation ``r`` is far below the number of queries ``t``).

    Parameters
    ----------
    n_keys : int
        Size of the ground set (keys ``0, ..., n_keys - 1``).
    n_queries : int
        Number of queries.
    query_size : int, default=1000
        Keys per query, at most ``n_keys``.
    pattern : {"uniform", "pareto"}, default="uniform"
    pareto_shape : float, default=1.5
        Tail index of the Pareto weights (smaller is heavier).
    max_participation : int or None, default=None
        Largest number of queries one key may take part in (``r``): a key
        that has reached it is left out of later queries. ``None``: no cap
        (under ``"pareto"`` the heaviest keys then sit in nearly every query,
        ``r`` close to ``n_queries``).
    random_state : int, RandomState instance, Generator or None, default=None
        Seed of the random draws; an int makes the output reproducible.

    Returns
    -------
    queries : list of ndarray of int64
        Sorted keys of each query.
    participation : ndarray of int64 of shape (n_keys,)
        Number of queries each key belongs to.

    Examples
    --------
    >>> from skpaper.datasets import make_participation_queries
    >>> queries, part = make_participation_queries(500, 20, query_size=50, random_state=0)
    >>> len(queries), int(part.sum())
    (20, 1000)
    >>> _, part = make_participation_queries(500, 200, query_size=50, pattern="pareto",
    ...                                      max_participation=40, random_state=0)
    >>> int(part.max())
    40
    """
    n_keys = _check_positive_int(n_keys, "n_keys")
    n_queries = _check_positive_int(n_queries, "n_queries", minimum=0)
    query_size = _check_positive_int(query_size, "query_size")
    if query_size > n_keys:
        raise ValueError(f"query_size must be at most n_keys={n_keys}, got {query_size}.")
    if pattern not in ("uniform", "pareto"):
        raise ValueError(f"pattern must be 'uniform' or 'pareto', got {pattern!r}.")
    if not isinstance(pareto_shape, numbers.Real) or not pareto_shape > 0:
        raise ValueError(f"pareto_shape must be a positive float, got {pareto_shape!r}.")
    if max_participation is not None:
        max_participation = _check_positive_int(max_participation, "max_participation")
    rng = _as_generator(random_state)
    if pattern == "pareto":
        # Gumbel-top-k on log-weights samples without replacement proportionally to weight.
        log_w = np.log1p(rng.pareto(pareto_shape, n_keys))
    queries = []
    participation = np.zeros(n_keys, dtype=np.int64)
    for _ in range(n_queries):
        if max_participation is not None:
            free = np.flatnonzero(participation < max_participation)
            if free.size < query_size:
                raise ValueError(
                    f"max_participation={max_participation} leaves {free.size} keys for a "
                    f"query of query_size={query_size}; raise it or lower n_queries.")
        else:
            free = None
        if pattern == "uniform":
            q = rng.choice(n_keys, size=query_size, replace=False) if free is None else \
                rng.choice(free, size=query_size, replace=False)
        else:
            scores = log_w + rng.gumbel(size=n_keys)
            if free is not None:
                scores[participation >= max_participation] = -np.inf
            q = np.argpartition(-scores, query_size - 1)[:query_size]
        q = np.sort(q).astype(np.int64)
        participation[q] += 1
        queries.append(q)
    return queries, participation
