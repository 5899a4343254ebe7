"""Data generators for `skpaper.graph` (numpy only; no torch import)."""

from numbers import Integral, Real

import numpy as np
from sklearn.datasets import make_sparse_spd_matrix
from sklearn.utils import check_random_state

from ..utils._sklearn import Interval, StrOptions, validate_params

__all__ = ["make_random_lcqp", "make_synthetic_gon", "make_wl_indistinguishable_milp_pair"]


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_constraints": [Interval(Integral, 0, None, closed="left")],
        "n_variables": [Interval(Integral, 1, None, closed="left")],
        "nnz": [Interval(Integral, 0, None, closed="left")],
        "p_equality": [Interval(Real, 0, 1, closed="both")],
        "mixed_integer": ["boolean"],
        "p_integer": [Interval(Real, 0, 1, closed="both")],
        "bound_scale": [Interval(Real, 0, None, closed="neither")],
        "rhs": [StrOptions({"normal", "feasible"})],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_random_lcqp(n_samples=100, n_constraints=10, n_variables=50, nnz=100, p_equality=0.3,
                     mixed_integer=False, p_integer=0.5, bound_scale=10.0, rhs="normal",
                     random_state=None):
    """Random linearly constrained QPs, following the QP-GNN paper's generator.

    Each instance has ``nnz`` nonzero constraint coefficients A_ij ~ N(0, 1) at random
    positions, rows that are equalities with probability ``p_equality`` (else ``<=``),
    c ~ 0.1 N(0, 1), a sparse positive definite Q with unit diagonal, and bounds given by
    two sorted ``N(0, bound_scale**2)`` draws. Right-hand sides are b ~ N(0, 1)
    (``rhs="normal"``, the paper's generator) or built around a feasible point
    (``rhs="feasible"``).

    With ``rhs="normal"`` the feasible fraction depends mostly on the number of
    constraints: more rows, and sparser rows, make infeasibility likelier, more
    variables per row make it rarer. Measured on 100 instances each (defaults
    otherwise; ``(n_constraints, n_variables, nnz)``): about one half for (3, 8, 10),
    (5, 20, 30) and (10, 50, 100); 81% for (10, 100, 150); 32% for (25, 100, 300); 5% for
    (25, 100, 150); none for (50, 100, 200). With ``rhs="feasible"`` every instance is
    feasible at any size: a point x0 is drawn uniformly in the box (rounded inside it
    for integer variables; a variable whose box holds no integer is left continuous),
    equality rows get b = A x0 and inequality rows b = A x0 + s with a slack
    s ~ abs(N(0, 1)). The optimum is not x0, and these instances follow a different
    distribution from the paper's.

    Parameters
    ----------
    n_samples : int, default=100
        Number of QP instances.
    n_constraints : int, default=10
        Number of linear constraints (rows of A).
    n_variables : int, default=50
        Number of variables (columns of A).
    nnz : int, default=100
        Number of nonzero entries of A (at most ``n_constraints * n_variables``).
    p_equality : float, default=0.3
        Probability that a constraint is an equality (else ``<=``).
    mixed_integer : bool, default=False
        Mark each variable integer with probability ``p_integer``.
    p_integer : float, default=0.5
        Probability that a variable is integer, when ``mixed_integer=True``.
    bound_scale : float, default=10.0
        Standard deviation of the normal draws that give the variable bounds.
    rhs : {"normal", "feasible"}, default="normal"
        How right-hand sides are drawn (see above).
    random_state : int, RandomState instance or None, default=None
        Seed of the random draws; an int makes the output reproducible.

    Returns
    -------
    X : list of dict
        QP instances with keys ``Q, c, A, b, sense, lb, ub, integer``.

    References
    ----------
    .. [1] Chen, Chen, Liu, Wang & Yin, "Expressive Power of Graph Neural Networks for
       (Mixed-Integer) Quadratic Programs", ICML 2025.

    Examples
    --------
    >>> from skpaper.datasets import make_random_lcqp
    >>> X = make_random_lcqp(n_samples=3, n_constraints=5, n_variables=20, nnz=30,
    ...                      random_state=0)
    >>> X[0]["A"].shape, X[0]["Q"].shape
    ((5, 20), (20, 20))
    """
    m, n = n_constraints, n_variables
    if nnz > m * n:
        raise ValueError(f"nnz must be at most n_constraints * n_variables = {m * n}, got {nnz}.")
    rng = check_random_state(random_state)
    instances = []
    for _ in range(n_samples):
        A = np.zeros((m, n))
        if nnz:
            flat = rng.choice(m * n, size=nnz, replace=False)
            A.flat[flat] = rng.normal(size=nnz)
        Q = make_sparse_spd_matrix(n, alpha=0.95, norm_diag=True,
                                   random_state=rng.randint(2**31 - 1))
        Q = np.asarray(Q.toarray() if hasattr(Q, "toarray") else Q)
        bounds = np.sort(rng.normal(scale=bound_scale, size=(2, n)), axis=0)
        integer = (rng.uniform(size=n) < p_integer) if mixed_integer else np.zeros(n, bool)
        c = 0.1 * rng.normal(size=n)
        b = rng.normal(size=m)
        sense = np.where(rng.uniform(size=m) < p_equality, 0, -1).astype(np.int8)
        if rhs == "feasible":
            x0 = rng.uniform(bounds[0], bounds[1])
            if mixed_integer:
                inside = np.ceil(bounds[0]) <= np.floor(bounds[1])
                x0 = np.where(integer & inside, np.clip(np.round(x0), np.ceil(bounds[0]),
                                                       np.floor(bounds[1])), x0)
                integer = integer & inside
            b = A @ x0 + np.where(sense == 0, 0.0, np.abs(b))
        instances.append({
            "Q": (Q + Q.T) / 2, "c": c, "A": A, "b": b, "sense": sense,
            "lb": bounds[0], "ub": bounds[1], "integer": integer,
        })
    return instances


def make_wl_indistinguishable_milp_pair():
    """The 6-cycle and two-triangles binary programs of the QP-GNN paper's MI limit.

    Both have six binary variables, Q = I, c = 0 and one equality x_a + x_b = 1 per edge.
    Every constraint has two unit coefficients and every variable sits in two constraints,
    so the two graphs are indistinguishable by the WL test (and by any message-passing GNN),
    yet the 6-cycle is feasible (alternate 0/1) and the triangles are not (odd cycles).
    Their LP relaxations are both feasible (x = 1/2).

    Returns
    -------
    X : list of two dict
        ``[six_cycle, two_triangles]``.
    feasible : ndarray of bool
        ``[True, False]``.

    Examples
    --------
    >>> from skpaper.datasets import make_wl_indistinguishable_milp_pair
    >>> (cycle, triangles), feasible = make_wl_indistinguishable_milp_pair()
    >>> cycle["A"].sum(axis=0).tolist() == triangles["A"].sum(axis=0).tolist()
    True
    >>> feasible.tolist()
    [True, False]
    """
    def program(edges):
        A = np.zeros((6, 6))
        for row, (a, b) in enumerate(edges):
            A[row, a] = A[row, b] = 1.0
        return {"Q": np.eye(6), "c": np.zeros(6), "A": A, "b": np.ones(6),
                "sense": np.zeros(6, dtype=np.int8), "lb": np.zeros(6), "ub": np.ones(6),
                "integer": np.ones(6, dtype=bool)}

    cycle = [(i, (i + 1) % 6) for i in range(6)]
    triangles = [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3)]
    return [program(cycle), program(triangles)], np.array([True, False])


def _inner_family_graph(family, size, rng):
    """Adjacency of one inner graph from a structural family (cycle, tree, ladder, wheel)."""
    adj = np.zeros((size, size))

    def link(a, b):
        adj[a, b] = adj[b, a] = 1.0

    if family == 0:  # cycle
        for i in range(size):
            link(i, (i + 1) % size)
    elif family == 1:  # random tree (star-like: attach to early nodes)
        for i in range(1, size):
            link(i, int(rng.randint(0, max(1, i // 3 + 1))))
    elif family == 2:  # ladder
        half = size // 2
        for i in range(half):
            link(i, i + half)
            if i + 1 < half:
                link(i, i + 1)
                link(i + half, i + 1 + half)
        if size % 2:
            link(size - 1, 0)
    else:  # wheel: hub 0 and a rim cycle
        for i in range(1, size):
            link(0, i)
            link(i, i + 1 if i + 1 < size else 1)
    return adj


@validate_params(
    {
        "n_nodes": [Interval(Integral, 2, None, closed="left")],
        "n_classes": [Interval(Integral, 2, 4, closed="both")],
        "p_in": [Interval(Real, 0, 1, closed="both")],
        "p_out": [Interval(Real, 0, 1, closed="both")],
        "inner_size": [tuple],
        "noise": [Interval(Real, 0, 1, closed="both")],
        "p_mixed": [Interval(Real, 0, 1, closed="both")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_synthetic_gon(n_nodes=600, n_classes=4, p_in=0.04, p_out=0.01, inner_size=(8, 16),
                       noise=0.1, p_mixed=0.3, random_state=None):
    """A synthetic graph-of-nets where neither the outer nor the inner view suffices alone.

    The outer graph is a stochastic block model with one block per class. Node i's inner
    graph is drawn from a structural family tied to its class (cycle, tree, ladder,
    wheel), except that with probability ``p_mixed`` the family is drawn at random;
    ``noise`` adds random edges (that fraction of the inner edge count). Inner node
    features are left to the container (degree one-hots), so the inner signal is
    purely structural.

    Parameters
    ----------
    n_nodes : int, default=600
        Number of outer nodes (one inner graph each).
    n_classes : int, default=4
        At most 4 (one per inner family).
    p_in, p_out : float, default=0.04, 0.01
        Outer edge probabilities within and across classes.
    inner_size : tuple of int, default=(8, 16)
        Inclusive range of inner graph sizes.
    noise : float, default=0.1
        Random edges added to each inner graph, as a fraction of its edge count.
    p_mixed : float, default=0.3
        Probability that an inner graph's family is drawn at random instead of from
        its node's class.
    random_state : int, RandomState instance or None, default=None
        Seed of the random draws; an int makes the output reproducible.

    Returns
    -------
    outer_adj : scipy.sparse.csr_matrix of shape (n_nodes, n_nodes)
        Symmetric adjacency of the outer graph.
    inner_graphs : list of (ndarray, None)
        Inner adjacencies, ready for :class:`skpaper.graph.GraphOfNets`.
    y : ndarray of shape (n_nodes,)
        Class of each outer node.

    Examples
    --------
    >>> from skpaper.datasets import make_synthetic_gon
    >>> outer, inner, y = make_synthetic_gon(n_nodes=40, random_state=0)
    >>> outer.shape, len(inner), sorted(set(y.tolist()))
    ((40, 40), 40, [0, 1, 2, 3])
    """
    import scipy.sparse as sp

    lo, hi = inner_size
    if not (isinstance(lo, Integral) and isinstance(hi, Integral) and 4 <= lo <= hi):
        raise ValueError(
            f"inner_size must be a pair of ints 4 <= low <= high, got {inner_size!r}."
        )
    rng = check_random_state(random_state)
    y = rng.permutation(np.arange(n_nodes) % n_classes)
    same = y[:, None] == y[None, :]
    draws = rng.uniform(size=(n_nodes, n_nodes))
    upper = np.triu(draws < np.where(same, p_in, p_out), k=1)
    outer = sp.csr_matrix((upper | upper.T).astype(np.float64))
    inner = []
    for label in y:
        family = int(rng.randint(4)) if rng.uniform() < p_mixed else int(label)
        size = int(rng.randint(lo, hi + 1))
        adj = _inner_family_graph(family, size, rng)
        n_noise = int(round(noise * adj.sum() / 2))
        for _ in range(n_noise):
            a, b = rng.choice(size, 2, replace=False)
            adj[a, b] = adj[b, a] = 1.0
        inner.append((adj, None))
    return outer, inner, y
