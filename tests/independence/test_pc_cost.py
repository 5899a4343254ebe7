"""PC's cost: the test budget of max_cond_size="auto" and the caches of the CI test."""

import warnings

import numpy as np
import pytest

import skpaper.independence._pc as pc_module
from skpaper.datasets import make_discretized_gaussian_dag
from skpaper.independence import PC, DiscretizedCITest


def _one_factor(n, p, seed=0, loading=0.7):
    """Continuous one-factor data: every pair stays dependent given any observed set."""
    rng = np.random.default_rng(seed)
    factor = rng.standard_normal(n)
    return loading * factor[:, None] + np.sqrt(1 - loading**2) * rng.standard_normal((n, p))


def test_auto_stops_before_a_level_past_the_budget_and_warns(monkeypatch):
    monkeypatch.setattr(pc_module, "AUTO_TEST_BUDGET", 1500)
    X = _one_factor(300, 9)
    with pytest.warns(UserWarning, match=r"PC: stopped before conditioning sets of size \d"):
        auto = PC().fit(X)
    assert auto.truncated_ and auto.n_tests_ <= 1500
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        full = PC(max_cond_size=None).fit(X)
    assert not full.truncated_ and full.n_tests_ > auto.n_tests_
    assert full.max_cond_size_ > auto.max_cond_size_
    # Edges removed by the levels that ran are removed in both.
    assert np.all(full.skeleton_ <= auto.skeleton_)


def test_auto_equals_no_limit_on_a_sparse_graph():
    X, _ = make_discretized_gaussian_dag(8, 500, 2.0 / 7.0, 4, random_state=0)
    auto, full = PC().fit(X), PC(max_cond_size=None).fit(X)
    assert not auto.truncated_
    np.testing.assert_array_equal(auto.cpdag_, full.cpdag_)
    assert auto.n_tests_ == full.n_tests_ and auto.max_cond_size_ == full.max_cond_size_
    assert PC(max_cond_size=1).fit(X).max_cond_size_ <= 1
    with pytest.raises(ValueError, match="max_cond_size"):
        PC(max_cond_size="all").fit(X)


def test_stacked_influences_give_the_same_pvalues_as_the_pairwise_loop():
    X, _ = make_discretized_gaussian_dag(7, 400, 0.4, 4, random_state=3)
    tests = [(0, 1, (2, 3)), (2, 5, (0, 1, 4)), (1, 6, (3,)), (3, 4, (0, 1, 2, 5, 6))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loop = DiscretizedCITest(model_check="off").fit(X)
        stacked = DiscretizedCITest().fit(X)
        stacked.check_model()
        assert stacked._xi_stack is not None and loop._xi_stack is None
        for t in tests:
            assert stacked.pvalue(*t) == pytest.approx(loop.pvalue(*t), rel=1e-9, abs=1e-12)
    # PC's fast index path and the general one agree (and the general one validates).
    assert loop.pvalue(0, 1, (2, 3)) == loop.pvalue(np.int64(1), 0, [3, 2])
    with pytest.raises(ValueError, match="must not contain the tested columns"):
        loop.pvalue(0, 1, (1,))
