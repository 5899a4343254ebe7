"""Model checks of the latent Gaussian CI test and its chi-square fallback."""

import warnings

import numpy as np
import pytest
from scipy.special import ndtr
from scipy.stats import chi2, chi2_contingency

from skpaper.datasets import make_discrete_network, make_discretized_chain
from skpaper.independence import PC, DiscretizedCITest, skeleton_f1


@pytest.fixture(scope="module")
def network():
    # Near-deterministic tables: the pairwise latent estimates reach |sigma| > 0.99 and
    # their matrix is not positive definite.
    return make_discrete_network(1000, 6, 0.4, 4, noise=0.05, random_state=1)


def _stratified_chi2(X, a, b, cond):
    """Reference: sum of per-stratum Pearson statistics from scipy, with their dofs."""
    stat, dof = 0.0, 0
    keys = [tuple(row) for row in X[:, list(cond)]] if cond else [()] * len(X)
    for key in set(keys):
        rows = np.array([k == key for k in keys])
        table = np.zeros((X[:, a].max() + 1, X[:, b].max() + 1))
        np.add.at(table, (X[rows, a], X[rows, b]), 1)
        table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
        if min(table.shape) > 1:
            s, _, d, _ = chi2_contingency(table, correction=False)
            stat, dof = stat + s, dof + d
    return chi2.sf(stat, dof) if dof else 1.0


def test_network_is_outside_the_model(network):
    X, _ = network
    corr = DiscretizedCITest().fit(X).latent_corr_
    assert np.abs(corr[np.triu_indices(6, 1)]).max() > 0.99
    assert np.linalg.eigvalsh(corr).min() < 0


def test_fallback_warns_names_the_columns_and_matches_scipy(network):
    X, dag = network
    ci = DiscretizedCITest(unconditional_test="wald").fit(X)
    assert dag[2, 1] == 1
    # A true edge whose chi-square p-value is ~1e-95; the Wald test on the eigenvalue-
    # clipped estimate used to return p = 0.46 here.
    with pytest.warns(UserWarning, match=r"columns 1 and 2 given \[4\].*chi-square"):
        res = ci.test(1, 2, [4])
    assert res.pvalue == pytest.approx(_stratified_chi2(X, 1, 2, (4,)), rel=1e-6)
    assert res.pvalue < 1e-50
    reason = ci.fallbacks_[(1, 2, (4,))]
    assert "|sigma(1, 2)|" in reason and "not positive definite" in reason
    with pytest.warns(UserWarning, match="columns 1 and 2"):
        unconditional = ci.test(1, 2)
    table = np.zeros((4, 4))
    np.add.at(table, (X[:, 1], X[:, 2]), 1)
    assert unconditional.pvalue == pytest.approx(
        chi2_contingency(table, correction=False)[1], rel=1e-6)
    # The signed deviate keeps the result's p-value.
    assert float(2 * ndtr(-abs(res.statistic))) == pytest.approx(res.pvalue, rel=1e-6)
    assert res.statistic < 0  # the codes of columns 1 and 2 are negatively correlated


def test_fallback_raise_refuses(network):
    X, _ = network
    ci = DiscretizedCITest(fallback="raise").fit(X)
    with pytest.raises(ValueError, match="does not fit the test of columns 1 and 2 given"):
        ci.test(1, 2, [4])
    with pytest.raises(ValueError, match="'fallback' parameter"):
        DiscretizedCITest(fallback="ignore").fit(X)


def test_pc_records_fallbacks_and_recovers_the_edges(network):
    X, dag = network
    with pytest.warns(UserWarning, match=r"PC: \d+ of \d+ conditional independence tests fell"):
        pc = PC().fit(X)
    assert pc.fallback_tests_
    assert all(set(t) == {"i", "j", "cond", "reason"} and t["reason"]
               for t in pc.fallback_tests_)
    assert len(pc.fallback_tests_) == len(pc.ci_test_.fallbacks_) <= pc.n_tests_
    truth = dag | dag.T
    recall = (pc.skeleton_ & truth).sum() / truth.sum()
    # With eigenvalue clipping instead of the fallback, this network's recall was 0.17.
    assert recall >= 0.8
    assert skeleton_f1(dag, pc.skeleton_) >= 0.8


def test_too_few_informative_cells_triggers_the_fallback():
    rng = np.random.default_rng(0)
    x0 = rng.integers(0, 4, 500)
    x1 = x0.copy()  # deterministic copy: four cells for seven parameters
    x2 = rng.integers(0, 4, 500)
    X = np.column_stack([x0, x1, x2])
    for method in ("gmm", "binarize"):
        ci = DiscretizedCITest(method=method).fit(X)
        with pytest.warns(UserWarning, match="columns 1 and 2 given \\[0\\]"):
            res = ci.test(1, 2, [0])
        reason = ci.fallbacks_[(1, 2, (0,))]
        assert "informative (non-empty) cells" in reason and "columns 0 and 1" in reason
        assert res.pvalue == pytest.approx(_stratified_chi2(X, 1, 2, (0,)))


def test_mixed_columns_fall_back_on_quartile_codes():
    rng = np.random.default_rng(1)
    x0 = rng.integers(0, 3, 400)
    x1 = x0.copy()
    z = rng.normal(size=400) + x0
    ci = DiscretizedCITest().fit(np.column_stack([x0, x1, z]))
    with pytest.warns(UserWarning, match="chi-square"):
        p = ci.pvalue(1, 2, [0])
    assert 0.0 <= p <= 1.0


def test_latent_gaussian_data_never_fall_back():
    # The paper's setting is inside the model: no warning, no fallback (for the GMM test;
    # DCT's 2 x 2 tables can have an empty cell at n = 200, a boundary estimate).
    for method in ("gmm",):
        for seed in range(5):
            X = make_discretized_chain(200, n_levels=4, direct_effect=0.25, random_state=seed)
            ci = DiscretizedCITest(method=method, unconditional_test="wald").fit(X)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                ci.test(0, 2, [1])
                ci.test(0, 1)
            assert ci.fallbacks_ == {}
