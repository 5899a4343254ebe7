import numpy as np
import pytest
import statsmodels.api as sm
from sklearn.linear_model import LogisticRegression

from skpaper.datasets import make_acp_covariate_shift
from skpaper.semisupervised import LabeledOnlyEstimator, WeightedPPIEstimator


@pytest.fixture(scope="module")
def data():
    return make_acp_covariate_shift(300, 1200, signal=1.0, random_state=0)


def test_labeled_only_matches_statsmodels(data):
    R = data.labeled
    D = sm.add_constant(data.X[R])
    est = LabeledOnlyEstimator(target="ols").fit(data.X, data.y)
    ols = sm.OLS(data.y[R], D).fit(cov_type="HC0")
    np.testing.assert_allclose(est.estimate_, ols.params, rtol=1e-8)
    np.testing.assert_allclose(est.se_, ols.bse, rtol=1e-8)
    mean = LabeledOnlyEstimator().fit(data.X, data.y)
    assert mean.estimate_ == pytest.approx(np.nanmean(data.y))
    assert mean.se_ == pytest.approx(np.nanstd(data.y) / np.sqrt(300))


def test_labeled_only_logistic_matches_glm():
    d = make_acp_covariate_shift(300, 100, signal=1.0, outcome="binary", random_state=1)
    R = d.labeled
    est = LabeledOnlyEstimator(target="logistic").fit(d.X, d.y)
    glm = sm.GLM(d.y[R], sm.add_constant(d.X[R]), family=sm.families.Binomial()).fit()
    np.testing.assert_allclose(est.estimate_, glm.params, rtol=1e-6)
    assert np.all((est.predict(d.X) > 0) & (est.predict(d.X) < 1))


def test_labeled_only_is_biased_under_shift(data):
    assert LabeledOnlyEstimator().fit(data.X, data.y).estimate_ - data.true_mean < -1.0


def test_ppi_unweighted_lam_one_is_plain_ppi(data):
    R, f = data.labeled, data.acp
    est = WeightedPPIEstimator(weighted=False, lam=1.0).fit(data.X, data.y, acp=f)
    expected = f[~R].mean() + np.mean(data.y[R] - f[R])
    assert est.estimate_ == pytest.approx(expected)
    zero = WeightedPPIEstimator(weighted=False, lam=0.0).fit(data.X, data.y, acp=f)
    assert zero.estimate_ == pytest.approx(np.nanmean(data.y))


def test_ppi_weighted_uses_normalised_density_ratio(data):
    R, f = data.labeled, data.acp
    est = WeightedPPIEstimator(lam=1.0).fit(data.X, data.y, acp=f)
    prop = LogisticRegression(C=1e4, max_iter=1000).fit(data.X, R.astype(int))
    p = np.clip(prop.predict_proba(data.X)[:, 1], 1e-3, 1 - 1e-3)
    w = ((1 - p) / p)[R]
    w /= w.mean()
    expected = f[~R].mean() + np.mean(w * (data.y[R] - f[R]))
    assert est.estimate_ == pytest.approx(expected, rel=1e-6)
    assert est.effective_sample_size_ == pytest.approx(w.sum() ** 2 / np.sum(w**2), rel=1e-6)


def test_ppi_ols_lam_one_minimises_the_ppi_loss(data):
    # At lam = 1 the PPI++ loss L_L(Y) - L_L(f) + L_U(f) has the unlabeled Gram matrix.
    R, f = data.labeled, data.acp
    D = sm.add_constant(data.X)
    est = WeightedPPIEstimator(target="ols", weighted=False, lam=1.0)
    est.fit(data.X, data.y, acp=f)
    rhs = D[~R].T @ f[~R] / (~R).sum() + D[R].T @ (data.y[R] - f[R]) / R.sum()
    expected = np.linalg.solve(D[~R].T @ D[~R] / (~R).sum(), rhs)
    np.testing.assert_allclose(est.estimate_, expected, rtol=1e-8)


def test_ppi_mean_matches_ppi_python(data):
    ppi_py = pytest.importorskip("ppi_py")
    R, f = data.labeled, data.acp
    weighted = WeightedPPIEstimator(lam=1.0).fit(data.X, data.y, acp=f)
    w = ((1 - weighted.propensity_) / weighted.propensity_)[R]
    theirs = ppi_py.ppi_mean_pointestimate(data.y[R], f[R], f[~R], lam=1.0, w=w / w.mean())
    assert weighted.estimate_ == pytest.approx(float(np.squeeze(theirs)), rel=1e-6)


def test_ppi_tuned_lambda_does_not_increase_variance(data):
    tuned = WeightedPPIEstimator(weighted=False).fit(data.X, data.y, acp=data.acp)
    for lam in (0.0, 0.5, 1.0):
        fixed = WeightedPPIEstimator(weighted=False, lam=lam).fit(data.X, data.y, acp=data.acp)
        assert tuned.se_ <= fixed.se_ * (1 + 1e-2)
    assert 0.0 <= tuned.lam_ <= 1.0


def test_ppi_combined_population_and_scoring(data):
    est = WeightedPPIEstimator(population="combined").fit(data.X, data.y, acp=data.acp)
    assert np.isfinite(est.estimate_) and est.ci_[0] < est.estimate_ < est.ci_[1]
    assert est.score(data.X, data.y) <= 0


def test_baselines_bad_input_raises(data):
    with pytest.raises(ValueError, match="at least one labeled row"):
        LabeledOnlyEstimator().fit(data.X, np.full(len(data.y), np.nan))
    with pytest.raises(ValueError, match="labels in"):
        LabeledOnlyEstimator(target="logistic").fit(data.X, data.y)
    with pytest.raises(ValueError, match="one column; got 2"):
        WeightedPPIEstimator().fit(data.X, data.y, acp=np.column_stack([data.acp, data.acp]))
    with pytest.raises(ValueError, match="acp on the unlabeled rows"):
        WeightedPPIEstimator().fit(data.X, data.y,
                                   acp=np.where(data.labeled, data.acp, np.nan))
    with pytest.raises(ValueError, match="needs unlabeled rows"):
        WeightedPPIEstimator().fit(data.X[:300], data.y[:300], acp=data.acp[:300])
    with pytest.raises(ValueError, match="lam"):
        WeightedPPIEstimator(lam=2.0).fit(data.X, data.y, acp=data.acp)
    message = "X has 2 features, but LabeledOnlyEstimator is expecting 5"
    with pytest.raises(ValueError, match=message):
        LabeledOnlyEstimator().fit(data.X, data.y).predict(data.X[:, :2])


# Sample weights: integer weights must give what repeating the rows gives.

_TIGHT = dict(C=1e4, tol=1e-12, max_iter=10000)


def _weighted_and_repeated(est, d, y=None, seed=1, acp=True):
    y = d.y if y is None else y
    w = np.random.RandomState(seed).randint(0, 4, size=len(y))
    rep = lambda a: np.repeat(a, w, axis=0)  # noqa: E731
    acp_w = d.acp if acp else None
    acp_r = rep(d.acp) if acp else None
    a = est.fit(d.X, y, acp=acp_w, sample_weight=w)
    weighted = (np.copy(a.estimate_), np.copy(a.se_), np.copy(a.ci_))
    b = est.fit(rep(d.X), rep(y), acp=acp_r)
    return weighted, (b.estimate_, b.se_, b.ci_)


@pytest.mark.parametrize("target", ["mean", "ols", "logistic"])
def test_labeled_only_weights_equal_repeated_rows(target):
    d = make_acp_covariate_shift(60, 100, signal=1.0, random_state=2,
                                 outcome="binary" if target == "logistic" else "gaussian")
    weighted, repeated = _weighted_and_repeated(LabeledOnlyEstimator(target=target), d)
    for a, b in zip(weighted, repeated):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("target", ["mean", "ols"])
@pytest.mark.parametrize("population", ["unlabeled", "combined"])
@pytest.mark.parametrize("lam", [None, 0.5])
def test_weighted_ppi_weights_equal_repeated_rows(target, population, lam):
    d = make_acp_covariate_shift(60, 200, signal=1.0, random_state=3)
    est = WeightedPPIEstimator(target=target, population=population, lam=lam,
                               propensity_model=LogisticRegression(**_TIGHT))
    weighted, repeated = _weighted_and_repeated(est, d)
    for a, b in zip(weighted, repeated):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)


def test_weights_change_the_estimate_and_ones_change_nothing(data):
    est = WeightedPPIEstimator(target="ols")
    base = est.fit(data.X, data.y, acp=data.acp).estimate_.copy()
    ones = est.fit(data.X, data.y, acp=data.acp, sample_weight=np.ones(len(data.y))).estimate_
    np.testing.assert_allclose(ones, base, rtol=1e-12)
    w = np.random.RandomState(0).uniform(0.2, 3.0, size=len(data.y))
    weighted = est.fit(data.X, data.y, acp=data.acp, sample_weight=w).estimate_
    assert np.max(np.abs(weighted - base)) > 1e-3
    lab = LabeledOnlyEstimator().fit(data.X, data.y, sample_weight=w)
    R = data.labeled
    assert lab.estimate_ == pytest.approx(np.average(data.y[R], weights=w[R]))


def test_sample_weight_errors(data):
    with pytest.raises(ValueError, match="(?i)negative"):
        LabeledOnlyEstimator().fit(data.X, data.y, sample_weight=-np.ones(len(data.y)))
    w = np.where(data.labeled, 0.0, 1.0)
    with pytest.raises(ValueError, match="every labeled row"):
        LabeledOnlyEstimator().fit(data.X, data.y, sample_weight=w)

    class NoWeights(LogisticRegression):
        def fit(self, X, y):
            return super().fit(X, y)

    with pytest.raises(ValueError, match="propensity_model=NoWeights"):
        WeightedPPIEstimator(propensity_model=NoWeights()).fit(
            data.X, data.y, acp=data.acp, sample_weight=np.ones(len(data.y)))
    # Without weights, such a model is still fine.
    WeightedPPIEstimator(propensity_model=NoWeights()).fit(data.X, data.y, acp=data.acp)


def test_score_takes_sample_weight(data):
    est = LabeledOnlyEstimator(target="ols").fit(data.X, data.y)
    w = np.random.RandomState(0).randint(0, 3, size=len(data.y))
    rep = lambda a: np.repeat(a, w, axis=0)  # noqa: E731
    assert est.score(data.X, data.y, sample_weight=w) == pytest.approx(
        est.score(rep(data.X), rep(data.y)), rel=1e-12)
