"""Data generators for `skpaper.independence` (numpy only; no torch import)."""

import numbers

import numpy as np
from sklearn.utils import check_random_state

from ..utils._sklearn import Interval, StrOptions, validate_params

__all__ = ["make_discrete_network", "make_discretized_chain", "make_discretized_gaussian_dag"]


def _random_thresholds(rng, n_levels, threshold_range):
    return np.sort(rng.uniform(-threshold_range, threshold_range, size=n_levels - 1))


def _discretize(z, thresholds):
    return np.searchsorted(thresholds, z).astype(np.int64)


@validate_params(
    {
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_levels": [Interval(numbers.Integral, 2, None, closed="left")],
        "structure": [StrOptions({"chain", "fork", "collider"})],
        "coef": [Interval(numbers.Real, -1, 1, closed="neither")],
        "direct_effect": [Interval(numbers.Real, -1, 1, closed="neither")],
        "threshold_range": [Interval(numbers.Real, 0, None, closed="neither")],
        "return_latent": ["boolean"],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_discretized_chain(
    n_samples=500,
    *,
    n_levels=4,
    structure="chain",
    coef=0.6,
    direct_effect=0.0,
    threshold_range=1.2,
    return_latent=False,
    random_state=None,
):
    """Three discretized latent Gaussians on a chain, fork or collider.

    Latent variables have unit variance. ``"chain"``: ``Z1 -> Z2 -> Z3``;
    ``"fork"``: ``Z1 <- Z2 -> Z3``; ``"collider"``: ``Z1 -> Z2 <- Z3``; each
    arrow has coefficient ``coef``. ``direct_effect`` adds ``Z1 -> Z3``. Each
    variable is cut into ``n_levels`` levels at thresholds drawn uniformly in
    ``(-threshold_range, threshold_range)``.

    With ``direct_effect=0``, ``Z1 indep Z3 | Z2`` holds for the chain and the
    fork and ``Z1 indep Z3`` for the collider: the nulls of calibration
    studies. A non-zero ``direct_effect`` gives the alternative for power.

    Parameters
    ----------
    n_samples : int, default=500
        Number of samples.
    n_levels : int, default=4
        Number of levels of each observed variable.
    structure : {"chain", "fork", "collider"}, default="chain"
        Causal structure of the three latent Gaussians.
    coef : float, default=0.6
        Coefficient of the structural arrows.
    direct_effect : float, default=0.0
        Coefficient of the extra edge ``Z1 -> Z3``.
    threshold_range : float, default=1.2
        Thresholds are drawn uniformly in ``(-threshold_range, threshold_range)``.
    return_latent : bool, default=False
        Also return the latent Gaussian sample.
    random_state : int, RandomState instance or None, default=None
        Seed of the random draws; an int makes the output reproducible.

    Returns
    -------
    X : ndarray of shape (n_samples, 3) of int64
        Codes ``0..n_levels-1``.
    Z : ndarray of shape (n_samples, 3)
        Latent variables, only when ``return_latent=True``.

    Examples
    --------
    >>> from skpaper.datasets import make_discretized_chain
    >>> X = make_discretized_chain(100, n_levels=3, random_state=0)
    >>> X.shape, int(X.max())
    ((100, 3), 2)
    """
    rng = check_random_state(random_state)
    c, d = float(coef), float(direct_effect)
    e = rng.standard_normal((n_samples, 3))
    z = np.empty((n_samples, 3))
    if structure == "chain":
        z[:, 0] = e[:, 0]
        z[:, 1] = c * z[:, 0] + np.sqrt(1 - c * c) * e[:, 1]
        explained = c * c + d * d + 2 * c * d * c
        parents = c * z[:, 1] + d * z[:, 0]
    elif structure == "fork":
        z[:, 1] = e[:, 1]
        z[:, 0] = c * z[:, 1] + np.sqrt(1 - c * c) * e[:, 0]
        explained = c * c + d * d + 2 * c * d * c
        parents = c * z[:, 1] + d * z[:, 0]
    else:
        z[:, 0] = e[:, 0]
        explained = d * d
        parents = d * z[:, 0]
    if explained >= 1.0:
        raise ValueError(
            f"coef={coef} and direct_effect={direct_effect} leave no noise variance for Z3 "
            f"(explained variance {explained:.3f} >= 1); use smaller coefficients."
        )
    z[:, 2] = parents + np.sqrt(1.0 - explained) * e[:, 2]
    if structure == "collider":
        mix = c * z[:, 0] + c * z[:, 2]
        var_mix = 2 * c * c + 2 * c * c * d
        if var_mix >= 1.0:
            raise ValueError(
                f"coef={coef} is too large for a unit-variance collider; use |coef| < 0.7."
            )
        z[:, 1] = mix + np.sqrt(1.0 - var_mix) * e[:, 1]
    X = np.column_stack([
        _discretize(z[:, j], _random_thresholds(rng, n_levels, threshold_range))
        for j in range(3)
    ])
    return (X, z) if return_latent else X


@validate_params(
    {
        "n_nodes": [Interval(numbers.Integral, 2, None, closed="left")],
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "edge_prob": [Interval(numbers.Real, 0, 1, closed="both")],
        "n_levels": [Interval(numbers.Integral, 2, None, closed="left")],
        "weight_range": [tuple],
        "n_continuous": [Interval(numbers.Integral, 0, None, closed="left")],
        "threshold_range": [Interval(numbers.Real, 0, None, closed="neither")],
        "return_latent": ["boolean"],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_discretized_gaussian_dag(
    n_nodes=8,
    n_samples=500,
    edge_prob=0.3,
    n_levels=4,
    *,
    weight_range=(0.5, 1.0),
    n_continuous=0,
    threshold_range=1.2,
    return_latent=False,
    random_state=None,
):
    """Random Erdos-Renyi DAG over latent Gaussians, observed through discretization.

    Each ordered pair (in a random topological order) is an edge with
    probability ``edge_prob``, with a weight of random sign and magnitude
    uniform in ``weight_range``. Every latent variable is rescaled to unit
    variance (exactly, from the model covariance), then cut into ``n_levels``
    levels at thresholds uniform in ``(-threshold_range, threshold_range)``;
    ``n_continuous`` randomly chosen nodes stay continuous.

    Parameters
    ----------
    n_nodes : int, default=8
        Number of nodes of the DAG.
    n_samples : int, default=500
        Number of samples.
    edge_prob : float, default=0.3
        Expected degree is ``edge_prob * (n_nodes - 1)``.
    n_levels : int, default=4
        Number of levels of each discretized node.
    weight_range : tuple of float, default=(0.5, 1.0)
        ``(low, high)`` with ``0 <= low <= high``.
    n_continuous : int, default=0
        Number of nodes left continuous (at most ``n_nodes``).
    threshold_range : float, default=1.2
        Thresholds are drawn uniformly in ``(-threshold_range, threshold_range)``.
    return_latent : bool, default=False
        Also return the latent Gaussian sample.
    random_state : int, RandomState instance or None, default=None
        Seed of the random draws; an int makes the output reproducible.

    Returns
    -------
    X : ndarray of shape (n_samples, n_nodes)
        Codes (int64 when ``n_continuous=0``, else float with the continuous
        columns holding latent values).
    dag : ndarray of shape (n_nodes, n_nodes) of int
        ``dag[i, j] == 1`` iff ``i -> j``.
    Z : ndarray of shape (n_samples, n_nodes)
        Latent variables, only when ``return_latent=True``.

    Examples
    --------
    >>> from skpaper.datasets import make_discretized_gaussian_dag
    >>> X, dag = make_discretized_gaussian_dag(5, 200, 0.5, 3, random_state=0)
    >>> X.shape, dag.shape
    ((200, 5), (5, 5))
    """
    if (len(weight_range) != 2 or not all(isinstance(w, numbers.Real) for w in weight_range)
            or not 0 <= weight_range[0] <= weight_range[1]):
        raise ValueError(
            f"weight_range must be a pair (low, high) with 0 <= low <= high, got {weight_range!r}."
        )
    if n_continuous > n_nodes:
        raise ValueError(
            f"n_continuous must be at most n_nodes={n_nodes}, got {n_continuous}."
        )
    rng = check_random_state(random_state)
    order = rng.permutation(n_nodes)
    weights = np.zeros((n_nodes, n_nodes))
    for a in range(n_nodes):
        for b in range(a + 1, n_nodes):
            if rng.uniform() < edge_prob:
                w = rng.uniform(*weight_range) * rng.choice([-1.0, 1.0])
                weights[order[a], order[b]] = w
    cov = np.zeros((n_nodes, n_nodes))
    z = np.zeros((n_samples, n_nodes))
    noise = rng.standard_normal((n_samples, n_nodes))
    for node in order:
        w = weights[:, node]
        var = w @ cov @ w + 1.0
        scale = 1.0 / np.sqrt(var)
        z[:, node] = scale * (z @ w + noise[:, node])
        col = scale * (cov @ w)
        cov[:, node] = cov[node, :] = col
        cov[node, node] = 1.0
    continuous = np.zeros(n_nodes, dtype=bool)
    continuous[rng.choice(n_nodes, size=n_continuous, replace=False)] = True
    columns = [
        z[:, j] if continuous[j]
        else _discretize(z[:, j], _random_thresholds(rng, n_levels, threshold_range))
        for j in range(n_nodes)
    ]
    X = np.column_stack(columns)
    if n_continuous == 0:
        X = X.astype(np.int64)
    dag = (weights != 0).astype(int)
    return (X, dag, z) if return_latent else (X, dag)


@validate_params(
    {
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_nodes": [Interval(numbers.Integral, 2, None, closed="left")],
        "edge_prob": [Interval(numbers.Real, 0, 1, closed="both")],
        "n_levels": [Interval(numbers.Integral, 2, None, closed="left")],
        "noise": [Interval(numbers.Real, 0, 1, closed="both")],
        "max_parents": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_discrete_network(
    n_samples=1000,
    n_nodes=6,
    edge_prob=0.4,
    n_levels=4,
    *,
    noise=0.05,
    max_parents=3,
    random_state=None,
):
    """Random discrete Bayesian network with near-deterministic conditional tables.

    A random DAG (each ordered pair of a random topological order is an edge
    with probability ``edge_prob``, at most ``max_parents`` parents per node);
    roots are uniform over ``n_levels`` codes, and each other node takes a
    level drawn at random for each configuration of its parents, replaced by
    a uniform level with probability ``noise``. Such networks (many classic
    benchmark networks look like this) lie outside the latent Gaussian model
    of :class:`~skpaper.independence.DiscretizedCITest`: relations are
    non-monotone and nearly deterministic, which is what its model checks
    detect.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of samples.
    n_nodes : int, default=6
        Number of nodes of the DAG.
    edge_prob : float, default=0.4
        Probability that an ordered pair of the topological order is an edge.
    n_levels : int, default=4
        Number of levels of each node.
    noise : float, default=0.05
        Probability that a node ignores its parents (0 gives deterministic
        relations).
    max_parents : int, default=3
        Largest number of parents of a node.
    random_state : int, RandomState instance or None, default=None
        Seed of the random draws; an int makes the output reproducible.

    Returns
    -------
    X : ndarray of shape (n_samples, n_nodes) of int64
        Codes ``0..n_levels-1``.
    dag : ndarray of shape (n_nodes, n_nodes) of int
        ``dag[i, j] == 1`` iff ``i -> j``.

    Examples
    --------
    >>> from skpaper.datasets import make_discrete_network
    >>> X, dag = make_discrete_network(200, 5, random_state=0)
    >>> X.shape, dag.shape
    ((200, 5), (5, 5))
    """
    rng = check_random_state(random_state)
    order = rng.permutation(n_nodes)
    dag = np.zeros((n_nodes, n_nodes), dtype=int)
    for b in range(1, n_nodes):
        for a in range(b):
            if rng.uniform() < edge_prob and dag[:, order[b]].sum() < max_parents:
                dag[order[a], order[b]] = 1
    X = np.zeros((n_samples, n_nodes), dtype=np.int64)
    for node in order:
        parents = np.flatnonzero(dag[:, node])
        if parents.size == 0:
            X[:, node] = rng.randint(n_levels, size=n_samples)
            continue
        table = rng.randint(n_levels, size=n_levels ** parents.size)
        config = np.ravel_multi_index(X[:, parents].T, (n_levels,) * parents.size)
        values = table[config]
        flip = rng.uniform(size=n_samples) < noise
        values[flip] = rng.randint(n_levels, size=int(flip.sum()))
        X[:, node] = values
    return X, dag
