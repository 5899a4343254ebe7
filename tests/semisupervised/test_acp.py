import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from joblib import parallel_config
from scipy.special import expit
from scipy.stats import binom
from sklearn.base import clone
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from skpaper.datasets import make_acp_covariate_shift
from skpaper.semisupervised import ACPShiftEstimator


@pytest.fixture(scope="module")
def data():
    return make_acp_covariate_shift(300, 1200, signal=3.0, random_state=0)


def _nuisances(d):
    """The estimator's default nuisances without cross-fitting, rebuilt by hand."""
    R = d.labeled
    XS = np.column_stack([d.X, d.acp])
    prop = LogisticRegression(C=1e4, max_iter=1000).fit(d.X, R.astype(int))
    p = np.clip(prop.predict_proba(d.X)[:, 1], 1e-3, 1 - 1e-3)
    mb = LinearRegression().fit(XS[R], d.y[R]).predict(XS)
    m = LinearRegression().fit(d.X, mb).predict(d.X)
    return R, p, mb, m


def test_acp_mean_matches_closed_form(data):
    R, p, mb, m = _nuisances(data)
    y = np.nan_to_num(data.y)
    w = (1 - p) / p
    n_u = (~R).sum()
    theta = (np.sum((w * (y - mb))[R]) + np.sum((1 - p) * (mb - m)) + np.sum(m[~R])) / n_u
    est = ACPShiftEstimator(n_folds=1).fit(data.X, data.y, acp=data.acp)
    assert est.estimate_ == pytest.approx(theta, rel=1e-6)
    assert est.se_ == pytest.approx(np.sqrt(np.sum(est.influence_**2)) / len(y), rel=1e-10)
    theta0 = (np.sum((w * (y - m))[R]) + np.sum(m[~R])) / n_u
    assert est.estimate_no_acp_ == pytest.approx(theta0, rel=1e-6)


def test_acp_ols_closed_form_matches_direct_solve(data):
    R, p, mb, m = _nuisances(data)
    y = np.nan_to_num(data.y)
    D = np.column_stack([np.ones(len(y)), data.X])
    w = (1 - p) / p
    rhs = (D[R].T @ (w * (y - mb))[R] + D.T @ ((1 - p) * (mb - m)) + D[~R].T @ m[~R])
    beta = np.linalg.solve(D[~R].T @ D[~R], rhs)
    est = ACPShiftEstimator(target="ols", n_folds=1).fit(data.X, data.y, acp=data.acp)
    np.testing.assert_allclose(est.estimate_, beta, rtol=1e-6)
    np.testing.assert_allclose(est.predict(data.X[:5]), D[:5] @ beta, rtol=1e-6)
    assert est.ci_.shape == (6, 2) and est.influence_.shape == (1500, 6)


def test_acp_combined_population_formula(data):
    R, p, mb, m = _nuisances(data)
    y = np.nan_to_num(data.y)
    theta = np.mean(mb + R / p * (y - mb))
    est = ACPShiftEstimator(population="combined", n_folds=1).fit(data.X, data.y, acp=data.acp)
    assert est.estimate_ == pytest.approx(theta, rel=1e-6)


def test_acp_labeled_mask_equals_nan_marking(data):
    y_hidden = data.y_full.copy()
    a = ACPShiftEstimator(random_state=0).fit(data.X, data.y, acp=data.acp)
    b = ACPShiftEstimator(random_state=0).fit(data.X, y_hidden, acp=data.acp,
                                              labeled=data.labeled)
    assert a.estimate_ == b.estimate_ and a.se_ == b.se_


def _replicate(reps, signal=1.0, **params):
    errors = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(reps):
            d = make_acp_covariate_shift(300, 1200, signal=signal, random_state=seed)
            est = ACPShiftEstimator(n_folds=1, **params).fit(d.X, d.y, acp=d.acp)
            errors.append(est.estimate_ - d.true_mean)
    return np.array(errors)


def test_acp_doubly_robust_correct_propensity_wrong_outcome():
    errors = _replicate(40, outcome_model=DummyRegressor())
    mc_se = errors.std(ddof=1) / np.sqrt(errors.size)
    assert abs(errors.mean()) < 4 * mc_se
    # Both nuisances wrong: the labeled mean, biased by about -1.7, is what remains.
    both_wrong = _replicate(10, outcome_model=DummyRegressor(),
                            propensity_model=DummyClassifier(strategy="prior"))
    assert both_wrong.mean() < -1.4


def test_acp_doubly_robust_wrong_propensity_correct_outcome():
    errors = _replicate(40, propensity_model=DummyClassifier(strategy="prior"))
    mc_se = errors.std(ddof=1) / np.sqrt(errors.size)
    assert abs(errors.mean()) < 4 * mc_se


def test_acp_logistic_target_doubly_robust_with_wrong_outcome(global_random_seed):
    # A mild shift and a constant outcome model: the augmentation alone corrects the
    # fit, so its sign matters (the opposite sign lands far from the truth).
    rng = np.random.default_rng(global_random_seed)
    n = 4000
    X = rng.normal(size=(n, 1))
    labeled = rng.uniform(size=n) < expit(-0.7 * X[:, 0])
    y = (rng.uniform(size=n) < expit(0.3 + X[:, 0])).astype(float)
    est = ACPShiftEstimator(target="logistic", outcome_model=DummyClassifier(strategy="prior"),
                            random_state=0)
    est.fit(X, np.where(labeled, y, np.nan), acp=rng.normal(size=n))
    z = (est.estimate_ - np.array([0.3, 1.0])) / est.se_
    assert np.all(np.abs(z) < 4), z


def test_acp_coverage_within_binomial_band():
    reps, covered = 100, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(reps):
            d = make_acp_covariate_shift(300, 1200, signal=3.0, random_state=1000 + seed)
            est = ACPShiftEstimator(n_folds=2, random_state=seed).fit(d.X, d.y, acp=d.acp)
            covered += est.ci_[0] <= d.true_mean <= est.ci_[1]
    assert binom.ppf(0.001, reps, 0.95) <= covered <= reps


def test_acp_gain_large_with_signal_and_near_one_without():
    strong = make_acp_covariate_shift(300, 1200, signal=3.0, random_state=5)
    null = make_acp_covariate_shift(300, 1200, signal=0.0, random_state=5)
    gain_strong = ACPShiftEstimator(random_state=0).fit(strong.X, strong.y,
                                                        acp=strong.acp).efficiency_gain_
    gain_null = ACPShiftEstimator(random_state=0).fit(null.X, null.y,
                                                      acp=null.acp).efficiency_gain_
    assert gain_strong > 3
    assert 0.8 < gain_null < 1.2


def test_acp_gain_vanishes_when_acp_only_on_labeled(data):
    acp = np.where(data.labeled, data.acp, np.nan)
    est = ACPShiftEstimator(random_state=0).fit(data.X, data.y, acp=acp)
    no_acp = ACPShiftEstimator(random_state=0, use_acp=False).fit(data.X, data.y, acp=data.acp)
    assert est.efficiency_gain_ == pytest.approx(1.0, abs=1e-10)
    assert est.estimate_ == pytest.approx(no_acp.estimate_, rel=1e-9)
    assert est.se_ == pytest.approx(no_acp.se_, rel=1e-9)


def test_acp_without_acp_argument_equals_use_acp_false(data):
    a = ACPShiftEstimator(random_state=0).fit(data.X, data.y)
    b = ACPShiftEstimator(random_state=0, use_acp=False).fit(data.X, data.y, acp=data.acp)
    assert a.estimate_ == b.estimate_ and a.efficiency_gain_ == b.efficiency_gain_ == 1.0


def test_acp_bootstrap_interval_agrees_with_influence(data):
    boot = ACPShiftEstimator(ci="bootstrap", n_bootstrap=300, random_state=0)
    boot.fit(data.X, data.y, acp=data.acp)
    infl = ACPShiftEstimator(random_state=0).fit(data.X, data.y, acp=data.acp)
    assert boot.estimate_ == infl.estimate_
    assert 0.7 < boot.se_ / infl.se_ < 1.4
    assert boot.ci_[0] < boot.estimate_ < boot.ci_[1]
    again = clone(boot).fit(data.X, data.y, acp=data.acp)
    np.testing.assert_array_equal(again.ci_, boot.ci_)


def test_acp_n_jobs_gives_identical_results(data):
    one = ACPShiftEstimator(random_state=0, ci="bootstrap", n_bootstrap=50)
    one.fit(data.X, data.y, acp=data.acp)
    with parallel_config(backend="threading"):
        two = clone(one).set_params(n_jobs=2).fit(data.X, data.y, acp=data.acp)
    np.testing.assert_array_equal(one.ci_, two.ci_)
    np.testing.assert_array_equal(one.propensity_, two.propensity_)


def test_acp_reports_clipping_and_effective_sample_size(data):
    est = ACPShiftEstimator(clip=0.05, random_state=0).fit(data.X, data.y, acp=data.acp)
    assert est.propensity_.min() >= 0.05 and est.propensity_.max() <= 0.95
    assert est.n_clipped_ > 0
    assert 1 <= est.effective_sample_size_ <= est.n_labeled_


def test_acp_pipeline_gridsearch_and_pickle(data):
    pipe = Pipeline([("scale", StandardScaler()),
                     ("est", ACPShiftEstimator(target="ols", n_folds=2, random_state=0))])
    pipe.fit(data.X, data.y, est__acp=data.acp)
    assert pipe.predict(data.X).shape == (1500,)
    search = GridSearchCV(ACPShiftEstimator(n_folds=2, random_state=0), {"clip": [1e-3, 0.05]},
                          cv=KFold(2, shuffle=True, random_state=0))
    search.fit(data.X, data.y, acp=data.acp)
    assert search.best_params_["clip"] in (1e-3, 0.05)
    assert np.isfinite(search.best_score_)
    est = pipe.named_steps["est"]
    restored = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(restored.estimate_, est.estimate_)
    assert restored.score(data.X, data.y) == est.score(data.X, data.y)


@settings(max_examples=15, deadline=None)
@given(scale=st.floats(0.1, 10.0), shift=st.floats(-5.0, 5.0), seed=st.integers(0, 50))
def test_acp_mean_is_affine_equivariant(scale, shift, seed):
    d = make_acp_covariate_shift(60, 90, signal=2.0, random_state=seed)
    est = ACPShiftEstimator(n_folds=1)
    base = est.fit(d.X, d.y, acp=d.acp)
    theta, se = base.estimate_, base.se_
    moved = clone(est).fit(d.X, scale * d.y + shift, acp=d.acp)
    assert moved.estimate_ == pytest.approx(scale * theta + shift, rel=1e-6, abs=1e-8)
    assert moved.se_ == pytest.approx(scale * se, rel=1e-6)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 1000))
def test_acp_invariant_to_row_order_without_cross_fitting(seed):
    d = make_acp_covariate_shift(50, 80, signal=1.0, random_state=seed)
    order = np.random.default_rng(seed).permutation(130)
    a = ACPShiftEstimator(n_folds=1).fit(d.X, d.y, acp=d.acp)
    b = ACPShiftEstimator(n_folds=1).fit(d.X[order], d.y[order], acp=d.acp[order])
    assert b.estimate_ == pytest.approx(a.estimate_, rel=1e-8)
    np.testing.assert_allclose(b.influence_, a.influence_[order], rtol=1e-6, atol=1e-10)


def test_acp_bad_input_raises(data):
    X, y, acp = data.X, data.y, data.acp
    with pytest.raises(ValueError, match="at least one labeled row"):
        ACPShiftEstimator().fit(X, np.full(len(y), np.nan), acp=acp)
    with pytest.raises(ValueError, match="acp has 10 rows, but X has 1500"):
        ACPShiftEstimator().fit(X, y, acp=acp[:10])
    partial = acp.copy()
    partial[-1] = np.nan
    with pytest.raises(ValueError, match="partial pattern"):
        ACPShiftEstimator().fit(X, y, acp=partial)
    on_labeled = acp.copy()
    on_labeled[0] = np.nan
    with pytest.raises(ValueError, match="every labeled row"):
        ACPShiftEstimator().fit(X, y, acp=on_labeled)
    with pytest.raises(ValueError, match="needs unlabeled rows"):
        ACPShiftEstimator().fit(X[:300], y[:300], acp=acp[:300])
    with pytest.raises(ValueError, match="labels in"):
        ACPShiftEstimator(target="logistic").fit(X, y, acp=acp)
    with pytest.raises(ValueError, match="n_folds=5 needs at least 5 labeled"):
        ACPShiftEstimator().fit(X[296:], y[296:], acp=acp[296:])
    with pytest.raises(ValueError, match="labeled must be a 1-D boolean mask"):
        ACPShiftEstimator().fit(X, y, acp=acp, labeled=np.ones(3, dtype=bool))
    with pytest.raises(ValueError, match="y is NaN on"):
        ACPShiftEstimator().fit(X, y, acp=acp, labeled=np.ones(len(y), dtype=bool))
    with pytest.raises(ValueError, match="clip"):
        ACPShiftEstimator(clip=0.6).fit(X, y, acp=acp)
    with pytest.raises(ValueError, match="needs at least one labeled row"):
        ACPShiftEstimator(n_folds=1).fit(X, y, acp=acp).score(X, np.full(len(y), np.nan))


def test_acp_positivity_failure_without_clipping_raises():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = np.where(np.arange(200) < 100, rng.normal(size=200), np.nan)
    # Cross-fitted trees predict hard 0/1 propensities, some 0 on labeled rows.
    est = ACPShiftEstimator(propensity_model=DecisionTreeClassifier(random_state=0), clip=0.0,
                            n_folds=2, random_state=0)
    with pytest.raises(ValueError, match=r"positivity fails\); set clip > 0"):
        est.fit(X, y, acp=rng.normal(size=200))


def test_acp_propensity_one_on_unlabeled_rows_warns():
    X = np.linspace(-1, 1, 40).reshape(-1, 1)
    y = np.where(np.arange(40) % 2 == 0, X[:, 0], np.nan)
    prop = DummyClassifier(strategy="constant", constant=1)
    with pytest.warns(UserWarning, match="is 1 on 20 unlabeled rows"):
        ACPShiftEstimator(propensity_model=prop, clip=0.0, n_folds=1).fit(X, y)


# Sample weights: with n_folds=1, integer weights give what repeating the rows gives.

_TIGHT = dict(C=1e4, tol=1e-12, max_iter=10000)


def _fit_pair(est, d, y=None, seed=1):
    y = d.y if y is None else y
    w = np.random.RandomState(seed).randint(0, 4, size=len(y))
    rep = lambda a: np.repeat(a, w, axis=0)  # noqa: E731
    a = est.fit(d.X, y, acp=d.acp, sample_weight=w)
    weighted = {k: np.copy(getattr(a, k)) for k in
                ("estimate_", "se_", "ci_", "efficiency_gain_", "estimate_no_acp_",
                 "effective_sample_size_")}
    b = est.fit(rep(d.X), rep(y), acp=rep(d.acp))
    return weighted, b, w


@pytest.mark.parametrize("target", ["mean", "ols", "logistic"])
@pytest.mark.parametrize("population", ["unlabeled", "combined"])
def test_weights_equal_repeated_rows_without_cross_fitting(target, population):
    binary = target == "logistic"
    d = make_acp_covariate_shift(60, 200, signal=2.0, random_state=4,
                                 outcome="binary" if binary else "gaussian")
    outcome = LogisticRegression(**_TIGHT) if binary else LinearRegression()
    est = ACPShiftEstimator(target=target, population=population, n_folds=1,
                            propensity_model=LogisticRegression(**_TIGHT),
                            outcome_model=outcome)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a logistic one-step fallback may warn, on both fits
        weighted, repeated, w = _fit_pair(est, d)
    for key, value in weighted.items():
        np.testing.assert_allclose(value, getattr(repeated, key), rtol=1e-6, atol=1e-8,
                                   err_msg=key)


def test_weighted_bootstrap_draws_gamma_multipliers_with_the_repeated_rows_law(data):
    # Same law, not the same draws: the bootstrap standard errors agree to Monte Carlo error.
    d = make_acp_covariate_shift(80, 240, signal=2.0, random_state=5)
    est = ACPShiftEstimator(n_folds=1, ci="bootstrap", n_bootstrap=2000, random_state=0,
                            propensity_model=LogisticRegression(**_TIGHT))
    weighted, repeated, w = _fit_pair(est, d)
    np.testing.assert_allclose(weighted["estimate_"], repeated.estimate_, rtol=1e-6)
    # 2000 draws: the relative standard error of a bootstrap sd is about 1/sqrt(2*2000) ~ 1.6%.
    assert weighted["se_"] == pytest.approx(repeated.se_, rel=0.08)
    # ... and both agree with the weighted influence-function standard error.
    infl = ACPShiftEstimator(n_folds=1, propensity_model=LogisticRegression(**_TIGHT))
    se_infl = infl.fit(d.X, d.y, acp=d.acp, sample_weight=w).se_
    assert weighted["se_"] == pytest.approx(se_infl, rel=0.1)


def test_weights_with_cross_fitting_run_and_move_the_estimate(data):
    w = np.random.RandomState(0).uniform(0.2, 3.0, size=len(data.y))
    est = ACPShiftEstimator(random_state=0)
    base = est.fit(data.X, data.y, acp=data.acp).estimate_
    weighted = est.fit(data.X, data.y, acp=data.acp, sample_weight=w)
    assert abs(weighted.estimate_ - base) > 1e-3
    assert weighted.ci_[0] < weighted.estimate_ < weighted.ci_[1]
    ones = est.fit(data.X, data.y, acp=data.acp, sample_weight=np.ones(len(data.y)))
    assert ones.estimate_ == pytest.approx(base, rel=1e-10)


def test_nuisance_models_must_take_weights_when_weights_are_given(data):
    class NoWeights(LinearRegression):
        def fit(self, X, y):
            return super().fit(X, y)

    est = ACPShiftEstimator(outcome_model=NoWeights(), n_folds=2, random_state=0)
    with pytest.raises(ValueError, match="outcome_model=NoWeights"):
        est.fit(data.X, data.y, acp=data.acp, sample_weight=np.ones(len(data.y)))
    est.fit(data.X, data.y, acp=data.acp)  # unweighted: fine
