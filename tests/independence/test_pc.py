from itertools import permutations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import BaseEstimator

from skpaper.datasets import make_discretized_chain, make_discretized_gaussian_dag
from skpaper.independence import PC, DiscretizedCITest, dag_to_cpdag, shd, skeleton_f1


def _d_separated(dag, i, j, cond):
    """d-separation by moralising the ancestral graph of {i, j} u cond."""
    keep = {i, j, *cond}
    frontier = list(keep)
    while frontier:
        v = frontier.pop()
        for parent in np.flatnonzero(dag[:, v]):
            if parent not in keep:
                keep.add(int(parent))
                frontier.append(int(parent))
    nodes = sorted(keep)
    moral = {v: set() for v in nodes}
    for v in nodes:
        parents = [int(p) for p in np.flatnonzero(dag[:, v]) if p in keep]
        for p in parents:
            moral[v].add(p)
            moral[p].add(v)
        for p, q in permutations(parents, 2):
            moral[p].add(q)
    seen, frontier = {i}, [i]
    while frontier:
        v = frontier.pop()
        for w in moral[v] - set(cond):
            if w == j:
                return False
            if w not in seen:
                seen.add(w)
                frontier.append(w)
    return True


class OracleTest(BaseEstimator):
    """A perfect CI test that reads d-separation off a known DAG."""

    def __init__(self, dag=None):
        self.dag = dag

    def fit(self, X, y=None):
        self.n_features_in_ = X.shape[1]
        return self

    def pvalue(self, i, j, cond=()):
        return 1.0 if _d_separated(np.asarray(self.dag), i, j, tuple(cond)) else 0.0


@st.composite
def dags(draw):
    n = draw(st.integers(2, 7))  # at least one pair, so ``upper`` is never empty
    upper = [(a, b) for a in range(n) for b in range(a + 1, n)]
    edges = draw(st.lists(st.sampled_from(upper), unique=True, max_size=len(upper)))
    order = draw(st.permutations(range(n)))
    dag = np.zeros((n, n), dtype=int)
    for a, b in edges:
        dag[order[a], order[b]] = 1
    return dag


@settings(max_examples=40)
@given(dag=dags())
def test_pc_with_a_perfect_test_recovers_the_cpdag(dag):
    X = np.random.default_rng(0).normal(size=(10, len(dag)))
    pc = PC(ci_test=OracleTest(dag=dag)).fit(X)
    np.testing.assert_array_equal(pc.skeleton_, dag | dag.T)
    np.testing.assert_array_equal(pc.cpdag_, dag_to_cpdag(dag))
    assert shd(dag_to_cpdag(dag), pc.cpdag_) == 0
    for (i, j), cond in pc.sepsets_.items():
        assert i < j and _d_separated(dag, i, j, cond)


def test_pc_recovers_chain_and_orients_collider():
    X = make_discretized_chain(1000, random_state=0)
    pc = PC().fit(X)
    np.testing.assert_array_equal(pc.skeleton_, [[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    np.testing.assert_array_equal(pc.cpdag_, pc.skeleton_)  # no v-structure: undirected
    assert pc.sepsets_ == {(0, 2): (1,)}
    Xc = make_discretized_chain(1000, structure="collider", random_state=0)
    pc = PC().fit(Xc)
    np.testing.assert_array_equal(pc.cpdag_, [[0, 1, 0], [0, 0, 0], [0, 1, 0]])
    assert pc.sepsets_ == {(0, 2): ()}


def test_pc_result_does_not_depend_on_n_jobs():
    X, _ = make_discretized_gaussian_dag(7, 400, 0.4, 4, random_state=1)
    one = PC(n_jobs=1).fit(X)
    two = PC(n_jobs=2).fit(X)
    np.testing.assert_array_equal(one.cpdag_, two.cpdag_)
    assert one.sepsets_ == two.sepsets_ and one.n_tests_ == two.n_tests_


def test_pc_max_cond_size_limits_the_search():
    X, _ = make_discretized_gaussian_dag(6, 300, 0.5, 4, random_state=2)
    pc0 = PC(max_cond_size=0).fit(X)
    assert all(len(cond) == 0 for cond in pc0.sepsets_.values())
    assert pc0.n_tests_ == 15
    assert PC().fit(X).skeleton_.sum() <= pc0.skeleton_.sum()


def test_pc_with_gmm_test_recovers_most_skeleton_edges():
    f1 = []
    for seed in range(6):
        X, dag = make_discretized_gaussian_dag(6, 400, 0.4, 4, random_state=seed)
        pc = PC(ci_test=DiscretizedCITest(method="gmm")).fit(X)
        f1.append(skeleton_f1(dag, pc.skeleton_))
    assert np.mean(f1) > 0.8


def test_pc_bad_input():
    X = make_discretized_chain(50, random_state=0)
    with pytest.raises(ValueError, match="alpha"):
        PC(alpha=1.5).fit(X)
    with pytest.raises(ValueError, match="ci_test"):
        PC(ci_test="gmm").fit(X)
    with pytest.raises(ValueError, match="max_cond_size"):
        PC(max_cond_size=-1).fit(X)
    with pytest.raises(ValueError, match="1 sample"):
        PC().fit(X[:1])


def test_dag_to_cpdag_known_graphs():
    chain = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    np.testing.assert_array_equal(dag_to_cpdag(chain), chain | chain.T)
    # a -> c <- b, c -> d: the collider forces c -> d by Meek's rule R1.
    dag = np.zeros((4, 4), dtype=int)
    dag[0, 2] = dag[1, 2] = dag[2, 3] = 1
    np.testing.assert_array_equal(dag_to_cpdag(dag), dag)
    with pytest.raises(ValueError, match="two-way"):
        dag_to_cpdag([[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="square"):
        dag_to_cpdag([[0, 1, 0]])
    with pytest.raises(ValueError, match="only 0 and 1"):
        dag_to_cpdag([[0, 2], [0, 0]])


def test_skeleton_f1_and_shd_values_and_bad_input():
    truth = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    assert skeleton_f1(truth, truth.T) == 1.0
    assert skeleton_f1(truth, np.zeros((3, 3), dtype=int)) == 0.0
    assert skeleton_f1(np.zeros((3, 3)), np.zeros((3, 3))) == 1.0
    assert skeleton_f1(truth, [[0, 1, 1], [1, 0, 0], [1, 0, 0]]) == 0.5
    assert shd(truth, truth) == 0
    assert shd(truth, truth.T) == 2  # two reversed arrows
    assert shd(truth, truth | truth.T) == 2  # two undirected against directed
    assert shd(truth, np.zeros((3, 3), dtype=int)) == 2
    assert shd(truth, [[0, 1, 1], [0, 0, 1], [0, 0, 0]]) == 1
    with pytest.raises(ValueError, match="same shape"):
        shd(truth, np.zeros((2, 2)))
    with pytest.raises(ValueError, match="same shape"):
        skeleton_f1(truth, np.zeros((4, 4)))
