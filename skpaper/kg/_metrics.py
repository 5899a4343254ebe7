"""Time-aware filtered ranking metrics for link prediction (numpy only).

A query (s, r, ?, t) is ranked against every entity. In the *time-aware filtered*
setting of the tkbc lineage, candidates e ≠ o for which (s, r, e, t) is a known
fact are removed before ranking; facts at other timestamps are not. The rank of
the answer o is then one plus the number of remaining candidates that score
higher, with ties resolved by ``tie_breaking``.
"""

import numpy as np

__all__ = ["filter_mask", "filtered_ranks", "ranking_metrics"]

_TIES = ("pessimistic", "optimistic", "realistic")


def _as_quadruples(X, name):
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[1] != 4:
        raise ValueError(f"{name} must be an array of shape (n, 4) holding (subject, relation, "
                         f"object, time) ids, got shape {X.shape}.")
    if X.size and not np.issubdtype(X.dtype, np.integer):
        raise TypeError(f"{name} must hold integer ids, got dtype {X.dtype}.")
    if X.size and X.min() < 0:
        raise ValueError(f"{name} must hold non-negative ids, got minimum {X.min()}.")
    return X.astype(np.int64, copy=False)


def _query_keys(X, bases):
    n_rel, n_time = bases
    return (X[:, 0] * n_rel + X[:, 1]) * n_time + X[:, 3]


def filter_mask(queries, facts, n_entities):
    """Mark the objects that known facts give for each (subject, relation, time) query.

    Parameters
    ----------
    queries : array-like of shape (n_queries, 4)
        Integer quadruples (s, r, o, t); the object column is ignored.
    facts : array-like of shape (n_facts, 4)
        Known quadruples (typically train ∪ valid ∪ test).
    n_entities : int
        Number of candidate objects (columns of the mask).

    Returns
    -------
    mask : ndarray of shape (n_queries, n_entities), dtype=bool
        ``mask[i, e]`` is True when (s_i, r_i, e, t_i) is in ``facts``. For head
        queries (?, r, o, t), pass both arrays with columns 0 and 2 swapped.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.kg import filter_mask
    >>> facts = np.array([[0, 0, 1, 0], [0, 0, 2, 0], [0, 0, 3, 1]])
    >>> filter_mask(np.array([[0, 0, 1, 0]]), facts, 4).astype(int).tolist()
    [[0, 1, 1, 0]]
    """
    queries = _as_quadruples(queries, "queries")
    facts = _as_quadruples(facts, "facts")
    n_entities = int(n_entities)
    if n_entities < 1:
        raise ValueError(f"n_entities must be a positive integer, got {n_entities}.")
    if queries.shape[0] == 0 or facts.shape[0] == 0:
        return np.zeros((queries.shape[0], n_entities), dtype=bool)
    both = np.concatenate([queries, facts])
    return FactIndex(facts, bases=(int(both[:, 1].max()) + 1, int(both[:, 3].max()) + 1)).mask(
        queries, n_entities)


class FactIndex:
    """Known facts sorted by (subject, relation, time), for repeated filter look-ups.

    Parameters
    ----------
    facts : ndarray of shape (n_facts, 4), dtype=int64
    bases : (int, int)
        Upper bounds (exclusive) of the relation and time ids of both the facts and
        the queries to come.
    """

    def __init__(self, facts, bases):
        self.bases = bases
        keys = _query_keys(facts, bases)
        order = np.argsort(keys, kind="stable")
        self.keys, self.objects = keys[order], facts[order, 2]

    def mask(self, queries, n_entities):
        """Boolean (n_queries, n_entities) mask of the known objects of each query."""
        if self.objects.size and self.objects.max() >= n_entities:
            raise ValueError(f"facts hold object id {self.objects.max()}, but n_entities is "
                             f"{n_entities}.")
        mask = np.zeros((queries.shape[0], n_entities), dtype=bool)
        query_keys = _query_keys(queries, self.bases)
        left = np.searchsorted(self.keys, query_keys, side="left")
        counts = np.searchsorted(self.keys, query_keys, side="right") - left
        rows = np.repeat(np.arange(queries.shape[0]), counts)
        # Positions left[i], ..., left[i] + counts[i] - 1 of every query, flattened.
        starts = np.repeat(left - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
        mask[rows, self.objects[starts + np.arange(rows.shape[0])]] = True
        return mask


def filtered_ranks(scores, targets, mask=None, tie_breaking="pessimistic"):
    """Rank of each answer among the candidates that are not filtered out.

    Parameters
    ----------
    scores : array-like of shape (n_queries, n_entities)
        Plausibility of every candidate (higher is better).
    targets : array-like of shape (n_queries,)
        Index of the answer of each query.
    mask : array-like of bool, shape (n_queries, n_entities), default=None
        Candidates to remove (other known answers); the target itself is never
        removed. None gives the raw (unfiltered) rank.
    tie_breaking : {"pessimistic", "optimistic", "realistic"}, default="pessimistic"
        How candidates scoring exactly as the answer count: all of them
        (``"pessimistic"``, the tkbc convention ``1 + #{score >= target}``), none
        (``"optimistic"``), or half (``"realistic"``, the mean of the two).

    Returns
    -------
    ranks : ndarray of shape (n_queries,)
        Integer ranks starting at 1 (floats for ``"realistic"``).

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.kg import filtered_ranks
    >>> scores = np.array([[0.1, 0.9, 0.5, 0.7]])
    >>> int(filtered_ranks(scores, [2])[0]), int(filtered_ranks(scores, [2], [[0, 1, 0, 0]])[0])
    (3, 2)
    """
    if tie_breaking not in _TIES:
        raise ValueError(f"tie_breaking must be one of {_TIES}, got {tie_breaking!r}.")
    scores = np.asarray(scores, dtype=np.float64)
    targets = np.asarray(targets)
    if scores.ndim != 2:
        raise ValueError(f"scores must be 2-D (n_queries, n_entities), got shape {scores.shape}.")
    if targets.shape != (scores.shape[0],):
        raise ValueError(f"targets must have shape ({scores.shape[0]},), got {targets.shape}.")
    if targets.size and not np.issubdtype(targets.dtype, np.integer):
        raise TypeError(f"targets must hold integer indices, got dtype {targets.dtype}.")
    if targets.size and (targets.min() < 0 or targets.max() >= scores.shape[1]):
        raise ValueError(f"targets must lie in [0, {scores.shape[1]}), got range "
                         f"[{targets.min()}, {targets.max()}].")
    if np.isnan(scores).any():
        raise ValueError("scores contain NaN.")
    rows = np.arange(scores.shape[0])
    keep = np.ones(scores.shape, dtype=bool)
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != scores.shape:
            raise ValueError(f"mask must have the shape of scores {scores.shape}, got "
                             f"{mask.shape}.")
        keep &= ~mask
    keep[rows, targets] = False
    target_scores = scores[rows, targets][:, None]
    greater = np.count_nonzero((scores > target_scores) & keep, axis=1)
    if tie_breaking == "optimistic":
        return 1 + greater
    ties = np.count_nonzero((scores == target_scores) & keep, axis=1)
    if tie_breaking == "pessimistic":
        return 1 + greater + ties
    return 1.0 + greater + 0.5 * ties


def ranking_metrics(ranks, ks=(1, 3, 10)):
    """Mean reciprocal rank and Hits@k of a vector of ranks.

    Parameters
    ----------
    ranks : array-like of shape (n_queries,)
        Ranks starting at 1.
    ks : tuple of int, default=(1, 3, 10)
        The cut-offs ``k`` of the Hits@k.

    Returns
    -------
    dict
        ``{"mrr": mean(1 / rank), "hits@k": mean(rank <= k), ...}``.

    Examples
    --------
    >>> from skpaper.kg import ranking_metrics
    >>> ranking_metrics([1, 2, 4, 20], ks=(1, 10))
    {'mrr': 0.45..., 'hits@1': 0.25, 'hits@10': 0.75}
    """
    ranks = np.asarray(ranks, dtype=np.float64)
    if ranks.ndim != 1 or ranks.size == 0:
        raise ValueError(f"ranks must be a non-empty 1-D array, got shape {ranks.shape}.")
    if ranks.min() < 1:
        raise ValueError(f"ranks start at 1, got minimum {ranks.min()}.")
    out = {"mrr": float(np.mean(1.0 / ranks))}
    for k in ks:
        out[f"hits@{int(k)}"] = float(np.mean(ranks <= k))
    return out
