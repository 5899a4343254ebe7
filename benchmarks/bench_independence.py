"""DCT-GMM conditional independence tests and PC against causal-learn.

Speed: seconds per conditional independence test (cold: fit plus one test;
cached: a new conditioning set once the pairwise latent correlations are
known) and per PC run, against causal-learn's ``fisherz`` and ``chisq`` tests
and its ``pc``. Cost profile of the official algorithm: its wrappers build the
whole estimator again on ``data[:, [i, j, *S]]`` at every call; the
``recompute`` peer runs our test that way, so the ratio is the gain of caching
the pairwise estimates across PC's calls. PC cases also report the skeleton
F1 and the CPDAG SHD against the true graph. The last case runs PC on a
near-deterministic discrete network, outside the latent Gaussian model, where
the tests fall back to the chi-square test (their number is reported).

Scaling (``--scaling`` runs only these): PC on 400 rows of one-factor data at 8, 16 and
32 variables against causal-learn's ``pc`` on the same data. Every pair of a one-factor
model stays dependent given any observed set, so the graph stays complete and the number
of tests grows as ``p**2 C(p - 2, level)``; ``max_cond_size="auto"`` (the default) stops
before a level that could pass 200,000 tests (an upper bound counted from the adjacency
sets), and causal-learn runs to the same depth.
Continuous data: causal-learn with its ``fisherz``; discretized (4 levels): causal-learn
with our test registered (``to_causallearn``), so both run the same test and the ratio is
that of the search and its caches. Both report their number of distinct tests.

Run: ``python benchmarks/bench_independence.py [--quick] [--scaling] [--json out.json]``.
"""

import sys
import warnings

import numpy as np
from _harness import Case, main_cli
from sklearn.base import BaseEstimator

from skpaper.datasets import make_discrete_network, make_discretized_gaussian_dag
from skpaper.independence import PC, DiscretizedCITest, dag_to_cpdag, shd, skeleton_f1


class _RecomputeTest(BaseEstimator):
    """The official wrappers' cost profile: a fresh estimator on the tested columns per call."""

    def __init__(self, method="gmm"):
        self.method = method

    def fit(self, X, y=None):
        self.X_ = X
        return self

    def pvalue(self, i, j, cond=()):
        cols = [i, j, *cond]
        return DiscretizedCITest(method=self.method).fit(self.X_[:, cols]).pvalue(
            0, 1, range(2, len(cols)))


def _figures(dag, skeleton, cpdag=None):
    out = {"skeleton_f1": skeleton_f1(dag, skeleton)}
    if cpdag is not None:
        out["shd"] = shd(dag_to_cpdag(dag), cpdag)
    return out


def _causallearn_skeleton(graph):
    return ((graph != 0) | (graph.T != 0)).astype(int)


def _causallearn_cpdag(graph):
    # causal-learn: G[j, i] = 1 and G[i, j] = -1 for i -> j; -1 both ways for i - j.
    return ((graph == -1) & ((graph.T == 1) | (graph.T == -1))).astype(int)


def make_cases(quick):
    try:
        from causallearn.search.ConstraintBased.PC import pc as cl_pc
        from causallearn.utils.cit import CIT
    except ImportError:  # pragma: no cover - optional peer
        CIT = cl_pc = None
    n = 500 if quick else 1000
    X, dag = make_discretized_gaussian_dag(8, n, 2.0 / 7.0, 4, random_state=0)
    Xf = X.astype(float)
    cond = (2, 3)
    cases = []

    def cold_gmm():
        DiscretizedCITest().fit(X).pvalue(0, 1, cond)

    if CIT is not None:
        for method in ("fisherz", "chisq"):
            def cold_peer(method=method):
                CIT(Xf, method)(0, 1, cond)

            cases.append(Case(f"cold CI test n={n} |S|=2 vs {method}", ours=cold_gmm,
                              peer=cold_peer, peer_name=f"causal-learn {method}",
                              params={"n": n, "cond_size": 2}))
    warm = DiscretizedCITest().fit(X)
    warm.latent_corr_  # every pair estimated once
    sets = [(1, 0, (2, 3)), (4, 5, (0, 6)), (2, 7, (1, 3, 5))]

    def cached_gmm():
        warm._results.clear()
        for i, j, s in sets:
            warm.pvalue(i, j, s)

    if CIT is not None:
        cl_fisher = CIT(Xf, "fisherz")

        def cached_peer():
            cl_fisher.pvalue_cache.clear()
            cl_fisher.check_cache_method_consistent("fisherz", "NO SPECIFIED PARAMETERS")
            for i, j, s in sets:
                cl_fisher(i, j, s)

        cases.append(Case(f"3 cached CI tests n={n}", ours=cached_gmm, peer=cached_peer,
                          peer_name="causal-learn fisherz", params={"n": n, "tests": 3}))
    else:
        cases.append(Case(f"3 cached CI tests n={n}", ours=cached_gmm))

    def pc_gmm():
        est = PC().fit(X)
        return {**_figures(dag, est.skeleton_, est.cpdag_), "n_tests": est.n_tests_}

    def pc_recompute():
        est = PC(ci_test=_RecomputeTest()).fit(X)
        return {**_figures(dag, est.skeleton_, est.cpdag_), "n_tests": est.n_tests_}

    cases.append(Case(f"PC p=8 n={n}, GMM: cached vs recompute", ours=pc_gmm, peer=pc_recompute,
                      peer_name="recompute/call", params={"n": n, "p": 8}))
    if cl_pc is not None:
        for method in ("fisherz", "chisq"):
            def peer_pc(method=method):
                g = cl_pc(Xf, 0.05, method, show_progress=False).G.graph
                return _figures(dag, _causallearn_skeleton(g), _causallearn_cpdag(g))

            cases.append(Case(f"PC p=8 n={n}: ours GMM vs {method}", ours=pc_gmm, peer=peer_pc,
                              peer_name=f"causal-learn {method}", params={"n": n, "p": 8}))
        name = DiscretizedCITest().to_causallearn()

        def cl_pc_with_ours():
            g = cl_pc(X, 0.05, name, show_progress=False).G.graph
            return _figures(dag, _causallearn_skeleton(g), _causallearn_cpdag(g))

        def cl_pc_chisq():
            g = cl_pc(Xf, 0.05, "chisq", show_progress=False).G.graph
            return _figures(dag, _causallearn_skeleton(g), _causallearn_cpdag(g))

        cases.append(Case(f"causal-learn pc p=8 n={n}: our GMM test vs chisq",
                          ours=cl_pc_with_ours, peer=cl_pc_chisq, peer_name="causal-learn chisq",
                          params={"n": n, "p": 8}))
    Xd, dag_d = make_discrete_network(n, 6, 0.4, 4, noise=0.05, random_state=1)

    def pc_discrete():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            est = PC().fit(Xd)
        return {**_figures(dag_d, est.skeleton_, est.cpdag_), "n_tests": est.n_tests_,
                "n_fallbacks": len(est.fallback_tests_)}

    peer = None
    if cl_pc is not None:
        def peer():
            g = cl_pc(Xd.astype(float), 0.05, "chisq", show_progress=False).G.graph
            return _figures(dag_d, _causallearn_skeleton(g), _causallearn_cpdag(g))

    cases.append(Case(f"PC near-deterministic network p=6 n={n}", ours=pc_discrete, peer=peer,
                      peer_name="causal-learn chisq", params={"n": n, "p": 6}))
    return cases


def _one_factor(n, p, discretize, seed=0, loading=0.7):
    rng = np.random.default_rng(seed)
    factor = rng.standard_normal(n)
    Z = loading * factor[:, None] + np.sqrt(1 - loading**2) * rng.standard_normal((n, p))
    if not discretize:
        return Z
    cuts = np.sort(rng.uniform(-1.2, 1.2, (p, 3)), axis=1)
    return np.column_stack([np.searchsorted(cuts[j], Z[:, j]) for j in range(p)])


def _scaling_cases(quick):
    from causallearn.search.ConstraintBased.PC import pc as cl_pc

    sizes = (8, 16) if quick else (8, 16, 32)
    name = DiscretizedCITest(model_check="off").to_causallearn("skpaper_gmm_bench")
    cases = []
    for discretize in (False, True):
        for p in sizes:
            X = _one_factor(400, p, discretize)
            state = {}

            def ours(X=X, state=state):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    est = PC().fit(X)
                state["depth"] = est.max_cond_size_
                return {"n_tests": est.n_tests_, "depth": est.max_cond_size_,
                        "edges": int(est.skeleton_.sum()) // 2,
                        "truncated": bool(est.truncated_)}

            ours()  # the depth causal-learn is given

            def peer(X=X, state=state, discretize=discretize):
                cg = cl_pc(X.astype(float), 0.05, name if discretize else "fisherz",
                           stable=True, max_k=state["depth"], show_progress=False)
                g = cg.G.graph
                return {"n_tests": len(cg.test.pvalue_cache),
                        "edges": int(_causallearn_skeleton(g).sum()) // 2}

            kind = "discretized, same GMM test" if discretize else "continuous, fisherz"
            cases.append(Case(f"PC one-factor p={p} n=400 ({kind})", ours, peer,
                              "causal-learn pc", params={"p": p, "discretized": discretize}))
    return cases


if __name__ == "__main__":
    scaling_only = "--scaling" in sys.argv
    if scaling_only:
        sys.argv.remove("--scaling")
    main_cli(_scaling_cases if scaling_only else
             (lambda quick: make_cases(quick) + _scaling_cases(quick)),
             description=__doc__.splitlines()[0])
