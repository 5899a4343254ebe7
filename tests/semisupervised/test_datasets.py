import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from skpaper.datasets import make_acp_covariate_shift


def test_make_acp_covariate_shift_layout():
    d = make_acp_covariate_shift(30, 70, signal=2.0, rho=0.5, random_state=0)
    assert d.X.shape == (100, 5) and d.acp.shape == (100,)
    assert d.labeled.sum() == 30 and d.labeled[:30].all()
    assert np.isnan(d.y[~d.labeled]).all() and np.isfinite(d.y[d.labeled]).all()
    np.testing.assert_array_equal(d.y[d.labeled], d.y_full[d.labeled])
    again = make_acp_covariate_shift(30, 70, signal=2.0, rho=0.5, random_state=0)
    np.testing.assert_array_equal(again.X, d.X)


def test_make_acp_covariate_shift_gaussian_truth_matches_monte_carlo():
    d = make_acp_covariate_shift(1, 200_000, signal=3.0, rho=0.6, random_state=1)
    unl = ~d.labeled
    y = d.y_full[unl]
    assert abs(y.mean() - d.true_mean) < 4 * y.std() / np.sqrt(y.size)
    D = np.column_stack([np.ones(unl.sum()), d.X[unl]])
    coef = np.linalg.lstsq(D, y, rcond=None)[0]
    np.testing.assert_allclose(coef, d.true_coef, atol=0.03)
    assert d.true_coef[1] == pytest.approx(1.0 + 3.0 * 0.6)
    # The labeled population is the mirror image: its mean is 2 - true_mean.
    lab = make_acp_covariate_shift(100_000, 0, signal=3.0, rho=0.6, random_state=2)
    assert abs(np.mean(lab.y) - (2.0 - lab.true_mean)) < 0.03


def test_make_acp_covariate_shift_binary_truth_matches_monte_carlo():
    d = make_acp_covariate_shift(1, 100_000, signal=2.0, rho=0.3, outcome="binary",
                                 random_state=3)
    unl = ~d.labeled
    y = d.y_full[unl]
    assert set(np.unique(y)) == {0.0, 1.0}
    assert np.all((d.acp > 0) & (d.acp < 1))
    assert abs(y.mean() - d.true_mean) < 4 * y.std() / np.sqrt(y.size)
    fit = LogisticRegression(C=np.inf, max_iter=1000).fit(d.X[unl], y)
    coef = np.concatenate([fit.intercept_, fit.coef_[0]])
    np.testing.assert_allclose(coef, d.true_coef, atol=0.05)


def test_make_acp_covariate_shift_bad_input_raises():
    with pytest.raises(ValueError, match="n_labeled"):
        make_acp_covariate_shift(0, 10)
    with pytest.raises(ValueError, match="rho"):
        make_acp_covariate_shift(10, 10, rho=1.5)
    with pytest.raises(ValueError, match="outcome"):
        make_acp_covariate_shift(10, 10, outcome="poisson")
