"""The whole-model check of the latent Gaussian CI test: J tests and the full matrix."""

import warnings

import numpy as np
import pytest

from skpaper.datasets import make_discretized_gaussian_dag
from skpaper.independence import PC, DiscretizedCITest, skeleton_f1
from skpaper.independence._latent import ordinal_pair, ordinal_pair_jtest, ordinal_thresholds


def _table_chain(n, p, k, seed):
    """A chain X0 -> X1 -> ... drawn from random (Dirichlet) conditional tables."""
    rng = np.random.default_rng(seed)
    X = np.zeros((n, p), dtype=int)
    X[:, 0] = rng.integers(k, size=n)
    for j in range(1, p):
        table = rng.dirichlet(np.full(k, 0.7), size=k)
        u = rng.uniform(size=n)[:, None]
        X[:, j] = np.minimum((u > np.cumsum(table[X[:, j - 1]], axis=1)).sum(axis=1), k - 1)
    dag = np.eye(p, k=1, dtype=int)
    return X, dag


def test_discrete_tables_are_detected_and_pc_warns_naming_the_columns():
    X, _ = _table_chain(500, 6, 4, seed=0)
    report = DiscretizedCITest().fit(X).check_model()
    assert not report["fits"] and report["rejected_pairs"]
    assert set(report["columns"]) >= {c for pair in report["rejected_pairs"] for c in pair}
    with pytest.warns(UserWarning, match=r"latent Gaussian model of the CI test does not fit "
                                         r"the data \(columns \[0, 1"):
        pc = PC().fit(X)
    assert pc.model_check_["rejected_pairs"] == report["rejected_pairs"]


def test_detection_rate_on_discrete_tables():
    detected = [not DiscretizedCITest().fit(_table_chain(400, 5, 4, seed)[0])
                .check_model()["fits"] for seed in range(10)]
    assert sum(detected) == 10


def test_false_alarm_rate_on_latent_gaussian_data_is_at_most_5_percent():
    alarms = []
    for seed in range(40):
        X, _ = make_discretized_gaussian_dag(5, 500, 0.4, 4, random_state=seed)
        alarms.append(not DiscretizedCITest().fit(X).check_model()["fits"])
    assert np.mean(alarms) <= 0.05


def test_no_warning_from_pc_on_latent_gaussian_data():
    X, _ = make_discretized_gaussian_dag(6, 800, 0.4, 4, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pc = PC().fit(X)
    assert pc.model_check_["fits"] and pc.model_check_["jtest"]


def test_jtest_size_on_one_latent_pair():
    rng = np.random.default_rng(0)
    pvalues = []
    for _ in range(100):
        z = rng.multivariate_normal([0, 0], [[1, 0.5], [0.5, 1]], size=400)
        a = np.searchsorted([-0.8, 0.1, 0.9], z[:, 0])
        b = np.searchsorted([-0.5, 0.4], z[:, 1])
        ha, hb = ordinal_thresholds(a, 4), ordinal_thresholds(b, 3)
        sigma = ordinal_pair(a, b, ha, hb)[0]
        stat, dof, p = ordinal_pair_jtest(a, b, ha, hb, sigma)
        assert dof == 3 * 2 - 1
        pvalues.append(p)
    assert 0.0 <= np.mean(np.array(pvalues) < 0.05) <= 0.12
    # A 2 x 2 table has no over-identifying moment.
    assert ordinal_pair_jtest(a > 1, b > 0, ha[1:2], hb[:1], 0.3)[1] == 0


def test_warn_mode_keeps_every_pvalue_and_fallback_mode_tests_the_codes():
    X, dag = _table_chain(600, 6, 4, seed=2)
    tests = [(0, 2, (1,)), (1, 3, (2,)), (0, 1, (3,)), (2, 3, (0, 1))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warn = DiscretizedCITest().fit(X)
        off = DiscretizedCITest(model_check="off").fit(X)
        fall = DiscretizedCITest(model_check="fallback").fit(X)
        assert [warn.pvalue(*t) for t in tests] == [off.pvalue(*t) for t in tests]
        fall.pvalue(0, 1, (3,))
    assert any("J test rejects" in r for r in fall.fallbacks_.values())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f_warn = skeleton_f1(dag, PC().fit(X).skeleton_)
        f_fall = skeleton_f1(dag, PC(ci_test=DiscretizedCITest(model_check="fallback"))
                             .fit(X).skeleton_)
    assert f_fall >= f_warn


def test_model_check_parameters_are_validated():
    X, _ = make_discretized_gaussian_dag(4, 200, 0.5, 3, random_state=0)
    with pytest.raises(ValueError, match="model_check"):
        DiscretizedCITest(model_check="always").fit(X)
    with pytest.raises(ValueError, match="model_check_level"):
        DiscretizedCITest(model_check_level=0.0).fit(X)
    assert PC(ci_test=DiscretizedCITest(model_check="off")).fit(X).model_check_ is None
