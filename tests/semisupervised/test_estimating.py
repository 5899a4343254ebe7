import numpy as np
import pytest
import statsmodels.api as sm
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning

from skpaper.semisupervised._estimating import (
    influence_function,
    influence_se,
    multiplier_bootstrap,
    solve_estimating_equation,
    target_design,
)
from skpaper.utils import normal_ci


def _logistic_data(rng, n=400):
    X = rng.normal(size=(n, 2))
    y = (rng.uniform(size=n) < expit(0.3 + X @ np.array([1.0, -0.5]))).astype(float)
    return X, y


def test_solve_estimating_equation_ols_matches_lstsq(rng):
    X = rng.normal(size=(200, 3))
    z = rng.normal(size=200)
    t = (rng.uniform(size=200) < 0.6).astype(float)
    D = target_design(X, "ols")
    beta = solve_estimating_equation(D, z, t, "ols")
    expected = np.linalg.solve((D * t[:, None]).T @ D, D.T @ z)
    np.testing.assert_allclose(beta, expected, rtol=1e-10)


def test_solve_estimating_equation_logistic_matches_glm(rng):
    X, y = _logistic_data(rng)
    D = target_design(X, "logistic")
    beta = solve_estimating_equation(D, y, np.ones_like(y), "logistic")
    glm = sm.GLM(y, D, family=sm.families.Binomial()).fit()
    np.testing.assert_allclose(beta, glm.params, rtol=1e-7, atol=1e-9)


def test_influence_se_matches_sandwich_hc0(rng):
    X = rng.normal(size=(300, 2))
    y = 1.0 + X @ np.array([2.0, -1.0]) + rng.standard_t(5, size=300)
    D = target_design(X, "ols")
    t = np.ones(300)
    beta = solve_estimating_equation(D, y, t, "ols")
    se = influence_se(influence_function(D, y, t, beta, "ols"))
    ols = sm.OLS(y, D).fit(cov_type="HC0")
    np.testing.assert_allclose(se, ols.bse, rtol=1e-8)


def test_logistic_without_root_falls_back_to_one_step(rng):
    X, y = _logistic_data(rng)
    D = target_design(X, "logistic")
    t = np.ones_like(y)
    # Pseudo-outcomes far outside [0, 1]: no logistic fit reaches their moment.
    z = y + 5.0 * (X[:, 0] > 0)
    z_init = np.clip(y * 0.8 + 0.1, 0, 1)
    with pytest.warns(ConvergenceWarning, match="one-step"):
        beta = solve_estimating_equation(D, z, t, "logistic", z_init=z_init)
    beta_init = solve_estimating_equation(D, z_init, t, "logistic")
    mu = expit(D @ beta_init)
    jac = (D * (mu * (1 - mu))[:, None]).T @ D
    np.testing.assert_allclose(beta, beta_init + np.linalg.solve(jac, D.T @ (z - z_init)))
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        solve_estimating_equation(D, z, t, "logistic")


def test_multiplier_bootstrap_is_seeded_and_matches_influence_se(rng):
    y = rng.exponential(size=500)
    D = np.ones((500, 1))
    t = np.ones(500)
    draws = multiplier_bootstrap(D, y, t, "mean", n_bootstrap=400, random_state=3)
    again = multiplier_bootstrap(D, y, t, "mean", n_bootstrap=400, random_state=3)
    np.testing.assert_array_equal(draws, again)
    se = influence_se(influence_function(D, y, t, np.array([y.mean()]), "mean"))
    assert draws.shape == (400, 1)
    assert 0.85 < draws.std(ddof=1) / se[0] < 1.15


def test_normal_ci_is_symmetric_and_widens_with_confidence():
    ci90 = normal_ci(np.array([1.0]), np.array([0.5]), 0.10)
    ci95 = normal_ci(np.array([1.0]), np.array([0.5]), 0.05)
    np.testing.assert_allclose(ci95[0], [1 - 1.959964 * 0.5, 1 + 1.959964 * 0.5], rtol=1e-6)
    assert ci95[0, 0] < ci90[0, 0] < 1.0 < ci90[0, 1] < ci95[0, 1]
