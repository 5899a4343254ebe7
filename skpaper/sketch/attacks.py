"""Adaptive attacks on cardinality estimators that answer queries from sketches.

The attacks only call ``estimator.predict(queries)`` with a list of 1-D key
arrays, so they run against any such object. Evaluating how much an attack
recovered needs the secret hash; :func:`secret_lowest_keys` reads it from a
fitted :class:`~skpaper.sketch.RobustCardinalitySketch` for that purpose only.
"""

import numbers

import numpy as np
from sklearn.utils import Bunch, check_random_state

from ..datasets._sketch import _check_positive_int as _check_int
from ..datasets._sketch import make_subset_queries

__all__ = ["correlation_attack", "secret_lowest_keys"]


def secret_lowest_keys(estimator, keys, n):
    """Return the ``n`` keys with the smallest secret hashes (ground truth for evaluation).

    Parameters
    ----------
    estimator : RobustCardinalitySketch
        A fitted estimator.
    keys : array-like of int
        The ground set.
    n : int
        How many keys to return.

    Returns
    -------
    lowest : ndarray
        The ``n`` lowest-hash keys, by increasing hash.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.sketch import RobustCardinalitySketch
    >>> from skpaper.sketch.attacks import secret_lowest_keys
    >>> est = RobustCardinalitySketch(k=8, mode="standard", random_state=0).fit()
    >>> secret_lowest_keys(est, np.arange(100), 3).shape
    (3,)
    """
    keys = np.asarray(keys)
    hashes = estimator._secret_hashes(keys)
    return keys[np.argsort(hashes, kind="stable")[:n]]


def correlation_attack(
    estimator,
    keys,
    *,
    n_queries=None,
    queries=None,
    n_select=None,
    inclusion=0.5,
    true_lowest=None,
    batch_size=256,
    random_state=None,
):
    """Single-batch correlation attack on a cardinality estimator.

    The attacker asks ``n_queries`` random subsets of the ground set ``keys``
    (each key in each with probability ``inclusion``), standardises the
    answers, and scores every key by the mean standardised answer of the
    queries that contain it minus that of the queries that do not. Keys with
    small hashes lower the k-th smallest hash when present and so inflate the
    standard estimate: they score high. The ``n_select`` top keys form
    ``A_in`` and the rest ``A_out``; both are then asked as two final,
    adaptively chosen queries. A broken estimator overestimates ``|A_in|`` and
    underestimates ``|A_out|``.

    Parameters
    ----------
    estimator : object
        Anything with ``predict(queries)`` taking a list of 1-D key arrays,
        e.g. a fitted :class:`~skpaper.sketch.RobustCardinalitySketch`.
    keys : array-like of int of shape (n_keys,)
        The ground set, distinct keys.
    n_queries : int or None, default=None
        Number of random non-adaptive queries (each key takes part in about
        ``inclusion * n_queries`` of them). Required unless ``queries`` is given.
    queries : list of array-like of int or None, default=None
        The non-adaptive queries themselves, as positions into ``keys`` (e.g.
        :func:`~skpaper.datasets.make_participation_queries` with
        ``pattern="pareto"``, where a few keys take part in many queries and
        most in few); replaces the random subsets.
    n_select : int or None, default=None
        Size of ``A_in``; ``None`` uses ``2 * estimator.k``.
    inclusion : float, default=0.5
        Inclusion probability of a key in a random query, in (0, 1).
    true_lowest : array-like or None, default=None
        The truly lowest-hash keys (e.g. from :func:`secret_lowest_keys` with
        ``n_select``) to measure recovery; ``None`` leaves it NaN.
    batch_size : int, default=256
        Queries generated and asked per call of ``predict`` (bounds memory).
    random_state : int, RandomState instance or None, default=None
        Draws the random queries.

    Returns
    -------
    result : Bunch
        ``recovery`` (fraction of ``A_in`` among ``true_lowest``; chance is
        ``n_select / n_keys``), ``ratio_in`` and ``ratio_out`` (estimate over
        true size of ``A_in`` and ``A_out``), ``estimate_in``,
        ``estimate_out``, ``size_in``, ``size_out``, ``selected`` (the keys of
        ``A_in``), ``scores`` (per key), ``answers`` (of the random queries),
        ``n_queries`` (all queries asked, the two final ones included) and
        ``participation`` (mean number of random queries per key) and
        ``max_participation`` (the most queries any key took part in, ``r``).

    Notes
    -----
    The attack follows Ahmadian & Cohen [1]_: a number of non-adaptive queries
    linear in ``k``, then one adaptive post-processing step. The scoring by
    difference of mean standardised answers is a paraphrase of their per-key
    scores, whose exact form was not checked against the paper.

    References
    ----------
    .. [1] S. Ahmadian and E. Cohen, "Unmasking Vulnerabilities: Cardinality
       Sketches under Adaptive Inputs", ICML 2024, arXiv:2405.17780.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.sketch import RobustCardinalitySketch
    >>> from skpaper.sketch.attacks import correlation_attack
    >>> est = RobustCardinalitySketch(k=32, mode="standard", random_state=0).fit()
    >>> res = correlation_attack(est, np.arange(2000), n_queries=512, random_state=0)
    >>> bool(res.ratio_in > 2)
    True
    """
    if not callable(getattr(estimator, "predict", None)):
        raise TypeError(
            f"estimator must have a predict(queries) method, got {type(estimator).__name__}."
        )
    keys = np.asarray(keys)
    if keys.ndim != 1 or keys.size < 2:
        raise ValueError(f"keys must be a 1-D array of at least 2 keys, got shape {keys.shape}.")
    n_keys = keys.size
    if queries is not None:
        queries = [np.asarray(q, dtype=np.int64).reshape(-1) for q in queries]
        if len(queries) < 2 or any(q.size and (q.min() < 0 or q.max() >= n_keys)
                                   for q in queries):
            raise ValueError(
                f"queries must hold at least 2 arrays of positions in [0, {n_keys}).")
        n_queries = len(queries)
    elif n_queries is None:
        raise ValueError("n_queries is required when queries is None.")
    n_queries = _check_int(n_queries, "n_queries", 2)
    batch_size = _check_int(batch_size, "batch_size", 1)
    if n_select is None:
        k = getattr(estimator, "k", None)
        if k is None:
            raise ValueError("n_select is required when estimator has no attribute k.")
        n_select = 2 * int(k)
    n_select = _check_int(n_select, "n_select", 1)
    if n_select >= n_keys:
        raise ValueError(f"n_select must be smaller than the {n_keys} keys, got {n_select}.")
    if not isinstance(inclusion, numbers.Real) or not 0 < inclusion < 1:
        raise ValueError(f"inclusion must be a float in (0, 1), got {inclusion!r}.")
    rng = np.random.default_rng(check_random_state(random_state).randint(0, 2**31 - 1))

    if queries is not None:
        # Positions, each query's distinct ones in order: what a membership row selects.
        queries = [q if q.size < 2 or (q[1:] > q[:-1]).all() else np.unique(q)
                   for q in queries]
    # Random masks are kept bit-packed: r x n booleans would need r * n bytes.
    packed, answers = [], []
    for start in range(0, n_queries, batch_size):
        n_batch = min(batch_size, n_queries - start)
        if queries is None:
            masks = make_subset_queries(n_keys, n_batch, inclusion=inclusion, random_state=rng)
            answers.append(np.asarray(estimator.predict([keys[m] for m in masks]), dtype=float))
            packed.append(np.packbits(masks, axis=1))
        else:
            batch = queries[start : start + n_batch]
            answers.append(np.asarray(estimator.predict([keys[q] for q in batch]), dtype=float))
    answers = np.concatenate(answers)
    sd = answers.std()
    z = (answers - answers.mean()) / sd if sd > 0 else np.zeros_like(answers)

    z_in = np.zeros(n_keys)
    count_in = np.zeros(n_keys)
    if queries is None:
        offset = 0
        for block in packed:
            masks = np.unpackbits(block, axis=1, count=n_keys).astype(np.float64)
            z_in += z[offset : offset + masks.shape[0]] @ masks
            count_in += masks.sum(axis=0)
            offset += masks.shape[0]
    else:
        # Given queries are position lists (often a small part of the keys each):
        # sum each query's standardised answer over its positions, batch by batch.
        sizes = np.array([q.size for q in queries])
        for start in range(0, n_queries, batch_size):
            stop = min(start + batch_size, n_queries)
            positions = np.concatenate(queries[start:stop])
            z_in += np.bincount(positions, weights=np.repeat(z[start:stop], sizes[start:stop]),
                                minlength=n_keys)
            count_in += np.bincount(positions, minlength=n_keys)
    count_out = n_queries - count_in
    # A key in every query (or in none) has no "other" queries to compare with: it
    # carries no signal and scores 0 (z sums to zero only up to rounding, so the
    # difference would otherwise come out as a huge number of either sign).
    informative = (count_in > 0) & (count_out > 0)
    scores = np.zeros(n_keys)
    scores[informative] = (z_in[informative] / count_in[informative]
                           - (z.sum() - z_in[informative]) / count_out[informative])

    order = np.argsort(-scores, kind="stable")
    selected = keys[order[:n_select]]
    rest = keys[order[n_select:]]
    estimate_in, estimate_out = np.asarray(estimator.predict([selected, rest]), dtype=float)
    recovery = np.nan
    if true_lowest is not None:
        true_lowest = np.asarray(true_lowest)
        recovery = np.isin(selected, true_lowest).sum() / n_select
    return Bunch(
        recovery=float(recovery),
        ratio_in=float(estimate_in / selected.size),
        ratio_out=float(estimate_out / rest.size),
        estimate_in=float(estimate_in),
        estimate_out=float(estimate_out),
        size_in=int(selected.size),
        size_out=int(rest.size),
        selected=selected,
        scores=scores,
        answers=answers,
        n_queries=n_queries + 2,
        participation=float(count_in.mean()),
        max_participation=int(count_in.max()),
    )
