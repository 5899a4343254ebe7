import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import ndtr
from scipy.stats import binom
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from skpaper.datasets import make_discretized_chain, make_discretized_gaussian_dag
from skpaper.independence import PC, CITestResult, DiscretizedCITest, skeleton_f1

METHODS = [
    {"method": "gmm"},
    {"method": "gmm", "weighting": "optimal"},
    {"method": "binarize"},
    {"method": "fisherz"},
    {"method": "gmm", "unconditional_test": "wald"},
]


@pytest.fixture(scope="module")
def dag_data():
    return make_discretized_gaussian_dag(5, 400, 0.5, 4, n_continuous=1, random_state=3)


@pytest.mark.parametrize("params", METHODS)
def test_citest_pvalues_in_unit_interval_and_symmetric(dag_data, params):
    X, _ = dag_data
    ci = DiscretizedCITest(**params).fit(X)
    for i, j, cond in [(0, 1, ()), (1, 3, (0,)), (4, 2, (0, 1)), (0, 4, (1, 2, 3))]:
        res = ci.test(i, j, cond)
        assert isinstance(res, CITestResult)
        assert 0.0 <= res.pvalue <= 1.0
        assert res.pvalue == pytest.approx(float(2 * ndtr(-abs(res.statistic))))
        assert ci.test(j, i, cond) == res
        assert ci.pvalue(i, j, cond[::-1]) == res.pvalue == ci(i, j, list(cond))


@settings(max_examples=15)
@given(seed=st.integers(0, 10_000), n_levels=st.integers(2, 6), data=st.data())
def test_citest_pvalue_in_unit_interval_on_random_small_data(seed, n_levels, data):
    X, _ = make_discretized_gaussian_dag(4, 60, 0.5, n_levels, random_state=seed)
    X = X[:, [j for j in range(4) if len(np.unique(X[:, j])) > 1]]
    if X.shape[1] < 3:
        return
    method = data.draw(st.sampled_from(["gmm", "binarize", "fisherz"]))
    ci = DiscretizedCITest(method=method).fit(X)
    i, j = data.draw(st.permutations(range(X.shape[1])))[:2]
    rest = [v for v in range(X.shape[1]) if v not in (i, j)]
    cond = data.draw(st.lists(st.sampled_from(rest), unique=True, max_size=len(rest)))
    p = ci.pvalue(i, j, cond)
    assert 0.0 <= p <= 1.0


def test_citest_invariant_to_monotone_relabelling_of_codes(dag_data):
    X, _ = dag_data
    discrete = DiscretizedCITest().fit(X).discrete_mask_
    X2 = X.copy()
    X2[:, discrete] = 5 * X[:, discrete] ** 3 - 2
    for params in METHODS[:3]:
        a, b = DiscretizedCITest(**params).fit(X), DiscretizedCITest(**params).fit(X2)
        for i, j, cond in [(0, 1, (2,)), (2, 3, (0, 4))]:
            assert a.pvalue(i, j, cond) == pytest.approx(b.pvalue(i, j, cond), abs=1e-12)


def test_citest_thresholds_match_marginal_frequencies(dag_data):
    X, _ = dag_data
    ci = DiscretizedCITest().fit(X)
    for j in range(X.shape[1]):
        if ci.discrete_mask_[j]:
            values = np.unique(X[:, j])
            cum = np.array([np.mean(X[:, j] <= v) for v in values[:-1]])
            np.testing.assert_allclose(ndtr(ci.thresholds_[j]), cum, atol=1e-13)
            assert ci.n_levels_[j] == len(values)
        else:
            assert ci.thresholds_[j].size == 0 and ci.n_levels_[j] == 0


def test_citest_binarize_cuts_codes_at_their_mean():
    X = make_discretized_chain(300, n_levels=5, random_state=0)
    ci = DiscretizedCITest(method="binarize").fit(X)
    assert np.all(ci.n_levels_ == 2)
    for j in range(3):
        upper = np.mean(X[:, j] >= X[:, j].mean())
        assert ndtr(ci.thresholds_[j][0]) == pytest.approx(1 - upper)


def test_citest_latent_corr_recovers_latent_correlations():
    X, Z = make_discretized_chain(5000, n_levels=4, return_latent=True, random_state=1)
    X = X.astype(float)
    X[:, 2] = np.exp(Z[:, 2])  # one continuous column: polyserial and Pearson pairs
    ci = DiscretizedCITest().fit(X)
    np.testing.assert_array_equal(ci.discrete_mask_, [True, True, False])
    corr = ci.latent_corr_
    np.testing.assert_allclose(corr, corr.T)
    np.testing.assert_allclose(np.diag(corr), 1.0)
    np.testing.assert_allclose(corr, np.corrcoef(Z, rowvar=False), atol=0.05)


def test_citest_caches_pairs_and_results():
    X = make_discretized_chain(300, random_state=2)
    ci = DiscretizedCITest().fit(X)
    first = ci.test(0, 2, [1])
    assert set(ci._pairs) == {(0, 1), (0, 2), (1, 2)}
    cached = dict(ci._pairs)
    assert ci.test(2, 0, (1,)) is first
    ci.test(1, 2, [0])
    assert all(ci._pairs[k] is v for k, v in cached.items())
    refit = ci.fit(X)
    assert refit._pairs == {} and refit.test(0, 2, [1]) == first


def _rejections(params, direct_effect, n, reps, structure="chain", cond=(1,), seed=0):
    count = 0
    for r in range(reps):
        X = make_discretized_chain(n, structure=structure, direct_effect=direct_effect,
                                   random_state=seed + r)
        count += DiscretizedCITest(**params).fit(X).pvalue(0, 2, cond) < 0.05
    return count


def _band(reps, level=0.999):
    return binom.interval(level, reps, 0.05)


def test_citest_gmm_type_one_error_within_binomial_band():
    reps = 150
    lo, hi = _band(reps)
    gmm = _rejections({}, 0.0, 300, reps)
    assert lo <= gmm <= hi
    # The naive Fisher-z on the codes rejects the true null far more often.
    assert _rejections({"method": "fisherz"}, 0.0, 300, reps) > hi


def test_citest_wald_unconditional_type_one_error_on_collider():
    reps = 150
    lo, hi = _band(reps)
    params = {"unconditional_test": "wald"}
    assert lo <= _rejections(params, 0.0, 300, reps, "collider", ()) <= hi
    # Conditioning on the collider creates dependence: the test must see it.
    assert _rejections(params, 0.0, 300, 40, "collider", (1,)) >= 36


def test_citest_mixed_data_type_one_error_within_binomial_band():
    reps = 150
    lo, hi = _band(reps)
    count = 0
    for r in range(reps):
        X, Z = make_discretized_chain(300, return_latent=True, random_state=1000 + r)
        X = X.astype(float)
        X[:, 0] = Z[:, 0] ** 3  # continuous-discretized pairs (polyserial) and
        X[:, 2] = np.exp(Z[:, 2])  # continuous-continuous pairs
        count += DiscretizedCITest().fit(X).pvalue(0, 2, [1]) < 0.05
    assert lo <= count <= hi


def test_citest_gmm_has_power_on_a_direct_edge():
    assert _rejections({}, 0.4, 400, 30) >= 27


def test_citest_bad_input_raises_clear_errors():
    X = make_discretized_chain(100, random_state=0)
    ci = DiscretizedCITest().fit(X)
    with pytest.raises(ValueError, match="i and j must be different"):
        ci.test(1, 1)
    with pytest.raises(ValueError, match="must not contain the tested columns"):
        ci.test(0, 2, [2])
    with pytest.raises(ValueError, match=r"must lie in \[0, 2\]"):
        ci.pvalue(0, 3)
    with pytest.raises(TypeError, match="integer column index"):
        ci.pvalue(0.0, 1)
    with pytest.raises(TypeError, match="cond must be an iterable"):
        ci.pvalue(0, 1, object())
    constant = X.copy()
    constant[:, 1] = 2
    with pytest.raises(ValueError, match="column 1 is constant"):
        DiscretizedCITest().fit(constant)
    with pytest.raises(ValueError, match="column 1 is constant"):
        DiscretizedCITest(discrete_columns="none").fit(constant)
    non_integer = X + np.array([0.0, 0.5, 0.0])
    with pytest.raises(ValueError, match="column 1 is marked discrete.*non-integer"):
        DiscretizedCITest(discrete_columns="all").fit(non_integer)
    with pytest.raises(ValueError, match="boolean mask must have shape"):
        DiscretizedCITest(discrete_columns=[True, False]).fit(X)
    with pytest.raises(ValueError, match="indices must lie in"):
        DiscretizedCITest(discrete_columns=[0, 5]).fit(X)
    with pytest.raises(NotFittedError):
        DiscretizedCITest().test(0, 1)
    with pytest.raises(ValueError, match="needs n_samples"):
        small = np.array([[0, 1, 0], [1, 0, 1], [2, 1, 1], [0, 0, 2]])
        DiscretizedCITest(method="fisherz").fit(small).pvalue(0, 1, [2])


def test_citest_discrete_columns_options_agree():
    X, Z = make_discretized_chain(300, return_latent=True, random_state=4)
    X = X.astype(float)
    X[:, 2] = Z[:, 2]
    auto = DiscretizedCITest().fit(X)
    by_index = DiscretizedCITest(discrete_columns=[0, 1]).fit(X)
    by_mask = DiscretizedCITest(discrete_columns=np.array([True, True, False])).fit(X)
    p = auto.pvalue(0, 2, [1])
    assert by_index.pvalue(0, 2, [1]) == p == by_mask.pvalue(0, 2, [1])
    assert not DiscretizedCITest(discrete_columns="none").fit(X).discrete_mask_.any()


def test_citest_pickle_round_trip_keeps_results():
    X = make_discretized_chain(200, random_state=5)
    ci = DiscretizedCITest().fit(X)
    p = ci.pvalue(0, 2, [1])
    clone = pickle.loads(pickle.dumps(ci))
    assert clone.pvalue(0, 2, [1]) == p
    assert clone.pvalue(0, 1) == ci.pvalue(0, 1)


def test_citest_in_pipeline_and_pc_in_grid_search():
    X, dag = make_discretized_gaussian_dag(5, 300, 0.4, 4, random_state=6)
    pipe = Pipeline([("identity", FunctionTransformer()), ("ci", DiscretizedCITest())]).fit(X)
    assert 0.0 <= pipe[-1].pvalue(0, 1, [2]) <= 1.0

    def f1(estimator, X, y=None):
        return skeleton_f1(dag, estimator.skeleton_)

    search = GridSearchCV(PC(), {"alpha": [0.01, 0.1]}, scoring=f1, cv=2).fit(X)
    assert search.best_params_["alpha"] in (0.01, 0.1)
    assert 0.0 <= search.best_score_ <= 1.0


def test_citest_fisherz_matches_causallearn():
    cit = pytest.importorskip("causallearn.utils.cit")
    X, _ = make_discretized_gaussian_dag(5, 300, 0.5, 4, random_state=7)
    ours = DiscretizedCITest(method="fisherz").fit(X)
    theirs = cit.CIT(X.astype(float), "fisherz")
    for i, j, cond in [(0, 1, ()), (1, 3, (0,)), (2, 4, (0, 1, 3))]:
        assert ours.pvalue(i, j, cond) == pytest.approx(theirs(i, j, cond), abs=1e-10)


def test_citest_to_causallearn_plugs_into_causallearn_pc():
    pytest.importorskip("causallearn")
    from causallearn.search.ConstraintBased.PC import pc
    from causallearn.utils.cit import CIT

    X, _ = make_discretized_gaussian_dag(5, 300, 0.5, 4, random_state=8)
    test = DiscretizedCITest(method="gmm")
    name = test.to_causallearn()
    assert name == "skpaper_gmm"
    wrapped = CIT(X, name)
    ours = DiscretizedCITest().fit(X)
    assert wrapped(3, 1, (0, 2)) == ours.pvalue(1, 3, (0, 2))
    graph = pc(X, 0.05, name, show_progress=False).G.graph
    ours_pc = PC().fit(X)
    np.testing.assert_array_equal(graph != 0, (ours_pc.skeleton_ != 0))
    with pytest.raises(TypeError, match="name must be"):
        test.to_causallearn(name=3)
