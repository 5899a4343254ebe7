"""PC structure learning (order-independent skeleton, Meek orientation) and graph metrics."""

import numbers
import warnings
from itertools import combinations
from math import comb

import numpy as np
from sklearn.base import BaseEstimator, clone

from ..utils import parallel_map
from ..utils._sklearn import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    validate_data,
    validate_params,
)
from ._citest import DiscretizedCITest

#: With ``max_cond_size="auto"``, PC starts no level that would take the total number of
#: tests past this (one-factor data keep the graph complete, and the tests of a complete
#: graph grow as ``p**2 * C(p - 2, level)``).
AUTO_TEST_BUDGET = 200_000


def _edge_search(edge, neighbours, level, ci_test, alpha):
    """First conditioning set of size ``level`` that separates ``edge``, or None.

    Conditioning sets are drawn from the neighbours of either endpoint as they
    stood at the start of the level (PC-stable), in lexicographic order.
    """
    i, j = edge
    n_tests = 0
    tried = set()
    for candidates in (neighbours[i] - {j}, neighbours[j] - {i}):
        if len(candidates) < level:
            continue
        for cond in combinations(sorted(candidates), level):
            if cond in tried:
                continue
            tried.add(cond)
            n_tests += 1
            if ci_test.pvalue(i, j, cond) > alpha:
                return edge, cond, n_tests
    return edge, None, n_tests


def _level_tests(edges, neighbours, level):
    """Upper bound on the tests of one level (both endpoints' sets, repeats counted)."""
    return sum(comb(len(neighbours[i]) - 1, level) + comb(len(neighbours[j]) - 1, level)
               for i, j in edges)


def _skeleton(ci_test, n_nodes, alpha, max_cond_size, n_jobs, budget=None):
    """Adjacency, separating sets, test count, the last level run and, when the budget
    stopped it, the level not started with its estimated test count (else None)."""
    adj = np.ones((n_nodes, n_nodes), dtype=bool)
    np.fill_diagonal(adj, False)
    sepsets = {}
    n_tests = 0
    level = 0
    stopped = None
    last_level = -1
    while max_cond_size is None or level <= max_cond_size:
        neighbours = {v: set(np.flatnonzero(adj[v]).tolist()) for v in range(n_nodes)}
        edges = [
            (i, j) for i, j in combinations(range(n_nodes), 2)
            if adj[i, j] and max(len(neighbours[i]), len(neighbours[j])) - 1 >= level
        ]
        if not edges:
            break
        if budget is not None:
            planned = _level_tests(edges, neighbours, level)
            if n_tests + planned > budget:
                stopped = (level, planned)
                break
        results = parallel_map(
            _edge_search, edges, n_jobs=n_jobs, prefer="threads",
            neighbours=neighbours, level=level, ci_test=ci_test, alpha=alpha,
        )
        last_level = level
        for (i, j), cond, count in results:
            n_tests += count
            if cond is not None:
                adj[i, j] = adj[j, i] = False
                sepsets[(i, j)] = cond
        level += 1
    return adj, sepsets, n_tests, last_level, stopped


def _meek(G):
    """Apply Meek's rules R1-R3 in place until nothing changes.

    ``G[i, j] = 1`` and ``G[j, i] = 0`` encodes ``i -> j``; both 1 an undirected edge.
    """
    n = len(G)

    def undirected(a, b):
        return G[a, b] and G[b, a]

    def directed(a, b):
        return G[a, b] and not G[b, a]

    def adjacent(a, b):
        return G[a, b] or G[b, a]

    changed = True
    while changed:
        changed = False
        for b in range(n):
            for c in range(n):
                if not undirected(b, c):
                    continue
                # R1: a -> b - c, a and c not adjacent  =>  b -> c.
                if any(directed(a, b) and not adjacent(a, c) for a in range(n) if a != c):
                    G[c, b] = 0
                    changed = True
                    continue
                # R2: b -> a -> c with b - c  =>  b -> c.
                if any(directed(b, a) and directed(a, c) for a in range(n)):
                    G[c, b] = 0
                    changed = True
                    continue
                # R3: b - a1 -> c, b - a2 -> c, a1 and a2 not adjacent  =>  b -> c.
                parents = [a for a in range(n) if undirected(b, a) and directed(a, c)]
                if any(not adjacent(a1, a2) for a1, a2 in combinations(parents, 2)):
                    G[c, b] = 0
                    changed = True
    return G


def _orient(adj, sepsets):
    n = len(adj)
    G = adj.astype(int)
    for k in range(n):
        nbrs = np.flatnonzero(adj[k])
        for i, j in combinations(nbrs, 2):
            if adj[i, j] or k in sepsets.get((min(i, j), max(i, j)), ()):
                continue
            # Collider i -> k <- j; an arrowhead already pointing the other way is kept.
            if G[i, k]:
                G[k, i] = 0
            if G[j, k]:
                G[k, j] = 0
    return _meek(G)


class PC(BaseEstimator):
    """PC algorithm with a pluggable conditional independence test.

    Learns the skeleton with the order-independent ("stable") variant of the
    PC algorithm, orients v-structures from the separating sets and completes
    the orientation with Meek's rules R1-R3, giving a CPDAG.

    Parameters
    ----------
    ci_test : object with ``fit`` and ``pvalue`` methods, default=None
        Conditional independence test, cloned and fitted on ``X``; ``None``
        means ``DiscretizedCITest()`` (the DCT-GMM test).
    alpha : float, default=0.05
        Significance level: an edge is removed when some test's p-value
        exceeds ``alpha``.
    max_cond_size : int, None or "auto", default="auto"
        Largest conditioning set tried; ``None`` for no limit. ``"auto"`` has
        no limit either but starts no level whose tests (counted from the
        adjacency sets before it) would take the total past 200,000, and then
        warns: PC's cost grows as ``C(degree, level)`` per edge, so data whose
        graph stays dense (a one-factor model keeps every pair dependent)
        would otherwise take hours at 20-50 variables. Edges it keeps may have
        been removed by the levels it skips; ``None`` runs them all.
    n_jobs : int, default=None
        Jobs over the edges of one level (threads, so the test's caches are
        shared). ``None`` means 1 unless in a ``joblib.parallel_config``.

    Attributes
    ----------
    ci_test_ : object
        The fitted test.
    skeleton_ : ndarray of shape (n_features_in_, n_features_in_) of int
        Symmetric adjacency matrix of the learned skeleton.
    cpdag_ : ndarray of shape (n_features_in_, n_features_in_) of int
        ``cpdag_[i, j] = 1, cpdag_[j, i] = 0`` for ``i -> j``; both 1 for an
        undirected edge.
    sepsets_ : dict
        ``{(i, j): cond}`` with ``i < j`` for every removed edge.
    n_tests_ : int
        Number of conditional independence tests run.
    max_cond_size_ : int
        Largest conditioning set size tested (``-1`` when no test ran).
    truncated_ : bool
        Whether ``max_cond_size="auto"`` stopped before a level that could
        still remove edges (a warning says which).
    fallback_tests_ : list of dict
        The tests that fell back from the latent Wald test to the chi-square
        test on the codes because the latent Gaussian model did not fit
        (``{"i", "j", "cond", "reason"}`` each; see
        :class:`DiscretizedCITest`); empty when none did or when the test
        does not record fallbacks. A non-empty list also raises one
        ``UserWarning`` at the end of :meth:`fit`.
    model_check_ : dict or None
        The test's whole-model check (:meth:`DiscretizedCITest.check_model`:
        J tests of the latent Gaussian model on every pair of discretized
        columns, the full latent correlation matrix), run once before the
        skeleton; a failed check raises one ``UserWarning`` naming the
        columns. None when the test has no such check or it is switched off
        (``model_check="off"``).
    n_features_in_ : int
        Number of columns seen in :meth:`fit`.

    See Also
    --------
    DiscretizedCITest : The default test and its baselines.
    skeleton_f1, shd : Metrics against a true graph.

    Notes
    -----
    Spirtes, Glymour and Scheines' PC algorithm; the stable variant of Colombo
    and Maathuis (2014) fixes each level's adjacency sets before testing, so
    the result does not depend on the order of the variables or on
    ``n_jobs``. Used with ``DiscretizedCITest`` this is the causal-discovery
    experiment of Sun et al. (2025) [1]_.

    References
    ----------
    .. [1] B. Sun et al., "A Sample Efficient Conditional Independence Test in
       the Presence of Discretization", ICML 2025.

    Examples
    --------
    >>> from skpaper.datasets import make_discretized_chain
    >>> from skpaper.independence import PC
    >>> X = make_discretized_chain(1000, n_levels=4, random_state=0)
    >>> PC().fit(X).skeleton_
    array([[0, 1, 0],
           [1, 0, 1],
           [0, 1, 0]])
    """

    _parameter_constraints: dict = {
        "ci_test": [HasMethods(["fit", "pvalue"]), None],
        "alpha": [Interval(numbers.Real, 0, 1, closed="neither")],
        "max_cond_size": [Interval(numbers.Integral, 0, None, closed="left"), None,
                          StrOptions({"auto"})],
        "n_jobs": [numbers.Integral, None],
    }

    def __init__(self, *, ci_test=None, alpha=0.05, max_cond_size="auto", n_jobs=None):
        self.ci_test = ci_test
        self.alpha = alpha
        self.max_cond_size = max_cond_size
        self.n_jobs = n_jobs

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Learn the skeleton and the CPDAG of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples of the variables, one column per node.
        y : None
            Ignored.

        Returns
        -------
        self : PC
            The fitted estimator.
        """
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=4)
        test = DiscretizedCITest() if self.ci_test is None else clone(self.ci_test)
        test.fit(X)
        self.model_check_ = None
        if isinstance(test, DiscretizedCITest):
            # One summary warning below instead of one per test.
            test._warn_on_fallback = False
            if test.model_check != "off":
                self.model_check_ = test.check_model()
                if not self.model_check_["fits"]:
                    warnings.warn(
                        "PC: the latent Gaussian model of the CI test does not fit the data "
                        f"(columns {self.model_check_['columns']}): "
                        f"{self.model_check_['message']}. Wald tests involving these columns "
                        "can keep large p-values for dependent pairs and drop true edges; "
                        "DiscretizedCITest(model_check='fallback') tests them on the codes.",
                        UserWarning, stacklevel=2)
        auto = self.max_cond_size == "auto"
        adj, sepsets, n_tests, last_level, stopped = _skeleton(
            test, X.shape[1], self.alpha, None if auto else self.max_cond_size, self.n_jobs,
            budget=AUTO_TEST_BUDGET if auto else None,
        )
        self.truncated_ = stopped is not None
        self.max_cond_size_ = last_level
        if stopped is not None:
            warnings.warn(
                f"PC: stopped before conditioning sets of size {stopped[0]} (about "
                f"{stopped[1]} more tests after {n_tests}; max_cond_size='auto' keeps the "
                f"total within {AUTO_TEST_BUDGET}). {int(adj.sum()) // 2} edges remain, some "
                "of which larger sets might remove; max_cond_size=None runs every level.",
                UserWarning, stacklevel=2)
        self.ci_test_ = test
        self.skeleton_ = adj.astype(int)
        self.sepsets_ = sepsets
        self.cpdag_ = _orient(adj, sepsets)
        self.n_tests_ = n_tests
        self.fallback_tests_ = [
            {"i": i, "j": j, "cond": cond, "reason": reason}
            for (i, j, cond), reason in sorted(getattr(test, "fallbacks_", {}).items())
        ]
        if self.fallback_tests_:
            pairs = sorted({(t["i"], t["j"]) for t in self.fallback_tests_})
            shown = ", ".join(map(str, pairs[:8])) + (" ..." if len(pairs) > 8 else "")
            warnings.warn(
                f"PC: {len(self.fallback_tests_)} of {n_tests} conditional independence tests "
                f"fell back to the chi-square test on the codes because the latent Gaussian "
                f"model did not fit, for the column pairs {shown}; see fallback_tests_.",
                UserWarning, stacklevel=2)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        return tags


def _as_square(G, name):
    G = np.asarray(G)
    if G.ndim != 2 or G.shape[0] != G.shape[1]:
        raise ValueError(f"{name} must be a square adjacency matrix, got shape {G.shape}.")
    if not np.all((G == 0) | (G == 1)):
        raise ValueError(f"{name} must hold only 0 and 1 entries.")
    return G.astype(bool)


def _check_pair(a, b, name_a, name_b):
    if a.shape != b.shape:
        raise ValueError(
            f"{name_a} and {name_b} must have the same shape, got {a.shape} and {b.shape}."
        )


@validate_params({"dag": ["array-like"]}, prefer_skip_nested_validation=True)
def dag_to_cpdag(dag):
    """CPDAG (essential graph) of a DAG: its v-structures plus Meek's rules.

    Parameters
    ----------
    dag : array-like of shape (n_nodes, n_nodes)
        ``dag[i, j] = 1`` iff ``i -> j``.

    Returns
    -------
    cpdag : ndarray of shape (n_nodes, n_nodes) of int
        Same encoding as :attr:`PC.cpdag_`.

    Examples
    --------
    >>> from skpaper.independence import dag_to_cpdag
    >>> dag_to_cpdag([[0, 1, 0], [0, 0, 0], [0, 1, 0]])  # a collider stays directed
    array([[0, 1, 0],
           [0, 0, 0],
           [0, 1, 0]])
    """
    dag = _as_square(dag, "dag")
    if np.any(dag & dag.T) or np.any(np.diag(dag)):
        raise ValueError("dag must have no self-loops and no two-way edges.")
    adj = dag | dag.T
    G = adj.astype(int)
    n = len(dag)
    for k in range(n):
        parents = np.flatnonzero(dag[:, k])
        for i, j in combinations(parents, 2):
            if not adj[i, j]:
                G[k, i] = G[k, j] = 0
    return _meek(G)


@validate_params(
    {"true_graph": ["array-like"], "estimated_graph": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def skeleton_f1(true_graph, estimated_graph):
    """F1 score of the estimated skeleton against the true one.

    Edges are compared as unordered pairs, whatever their orientation.

    Parameters
    ----------
    true_graph, estimated_graph : array-like of shape (n_nodes, n_nodes)
        0/1 adjacency matrices (DAG, CPDAG or skeleton).

    Returns
    -------
    f1 : float
        ``2 TP / (2 TP + FP + FN)``; 1.0 when both graphs are empty.

    Examples
    --------
    >>> from skpaper.independence import skeleton_f1
    >>> skeleton_f1([[0, 1, 0], [0, 0, 1], [0, 0, 0]], [[0, 1, 1], [1, 0, 0], [1, 0, 0]])
    0.5
    """
    t = _as_square(true_graph, "true_graph")
    e = _as_square(estimated_graph, "estimated_graph")
    _check_pair(t, e, "true_graph", "estimated_graph")
    iu = np.triu_indices(len(t), 1)
    t = (t | t.T)[iu]
    e = (e | e.T)[iu]
    tp = int(np.sum(t & e))
    fp = int(np.sum(~t & e))
    fn = int(np.sum(t & ~e))
    if tp + fp + fn == 0:
        return 1.0
    return 2.0 * tp / (2.0 * tp + fp + fn)


@validate_params(
    {"true_graph": ["array-like"], "estimated_graph": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def shd(true_graph, estimated_graph):
    """Structural Hamming distance between two graphs in the CPDAG encoding.

    Counts the unordered pairs whose mark differs: a missing or extra edge, a
    reversed arrow, or a directed edge against an undirected one, each 1.
    Compare a learned CPDAG with ``dag_to_cpdag(true_dag)``.

    Parameters
    ----------
    true_graph, estimated_graph : array-like of shape (n_nodes, n_nodes)
        ``G[i, j] = 1, G[j, i] = 0`` for ``i -> j``; both 1 for ``i - j``.

    Returns
    -------
    distance : int
        Number of node pairs whose edge (absent, directed or undirected)
        differs.

    Examples
    --------
    >>> from skpaper.independence import shd
    >>> shd([[0, 1, 0], [0, 0, 1], [0, 0, 0]], [[0, 1, 0], [1, 0, 0], [0, 0, 0]])
    2
    """
    t = _as_square(true_graph, "true_graph")
    e = _as_square(estimated_graph, "estimated_graph")
    _check_pair(t, e, "true_graph", "estimated_graph")
    iu = np.triu_indices(len(t), 1)
    differs = (t[iu] != e[iu]) | (t.T[iu] != e.T[iu])
    return int(np.sum(differs))
