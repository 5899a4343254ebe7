import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.special import ndtr, ndtri

from skpaper.independence import polychoric_corr
from skpaper.independence._bvn import GridCDF, bvn_pdf
from skpaper.independence._latent import (
    continuous_pair,
    encode_ordinal,
    normal_scores,
    ordinal_pair,
    ordinal_thresholds,
    polyserial_pair,
)


def _latent_pair(rng, rho, n):
    return rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=n)


def test_thresholds_match_marginal_frequencies(rng):
    codes = rng.choice(4, size=500, p=[0.1, 0.4, 0.3, 0.2])
    h = ordinal_thresholds(codes, 4)
    cum = np.cumsum(np.bincount(codes, minlength=4))[:-1] / len(codes)
    np.testing.assert_allclose(ndtr(h), cum, atol=1e-14)
    assert np.all(np.diff(h) > 0)


@given(st.lists(st.integers(-5, 5), min_size=2, max_size=40).filter(lambda v: len(set(v)) > 1))
def test_encode_ordinal_is_invariant_to_increasing_relabelling(values):
    x = np.array(values)
    codes, k = encode_ordinal(x)
    codes2, k2 = encode_ordinal(3 * x**3 + 11)
    assert k == k2 == len(set(values))
    np.testing.assert_array_equal(codes, codes2)
    assert codes.min() == 0 and codes.max() == k - 1


def test_encode_ordinal_rejects_non_integer_and_constant_columns():
    with pytest.raises(ValueError, match="non-integer"):
        encode_ordinal(np.array([0.0, 1.5, 2.0]), name="column 3")
    with pytest.raises(ValueError, match="column 3 is constant"):
        encode_ordinal(np.array([2, 2, 2]), name="column 3")


def test_polychoric_ml_matches_brute_force_likelihood_maximum():
    table = np.array([[20, 9, 3], [8, 25, 12], [2, 10, 22]])
    x = np.repeat(np.arange(3), table.sum(axis=1))
    y = np.concatenate([np.repeat(np.arange(3), row) for row in table])
    grid = GridCDF(ordinal_thresholds(x, 3), ordinal_thresholds(y, 3))

    def argmax_loglik(rhos):
        with np.errstate(divide="ignore"):
            loglik = [table.ravel() @ np.log(grid.cell_probs(r).ravel()) for r in rhos]
        return rhos[int(np.argmax(loglik))]

    coarse = argmax_loglik(np.linspace(-0.99, 0.99, 1981))
    best = argmax_loglik(np.linspace(coarse - 0.002, coarse + 0.002, 401))
    assert polychoric_corr(x, y) == pytest.approx(best, abs=2e-5)


@pytest.mark.parametrize("rho", [-0.6, 0.0, 0.7])
def test_polychoric_recovers_the_latent_correlation(rng, rho):
    z = _latent_pair(rng, rho, 4000)
    x, y = np.digitize(z[:, 0], [-0.8, 0.3]), np.digitize(z[:, 1], [-1.0, 0.0, 0.9])
    assert polychoric_corr(x, y) == pytest.approx(rho, abs=0.05)
    assert polychoric_corr(x, y, method="gmm") == pytest.approx(rho, abs=0.05)
    assert polychoric_corr(10 * x + 1, y**2) == polychoric_corr(x, y)


def test_polychoric_corr_bad_input():
    with pytest.raises(ValueError, match="same length"):
        polychoric_corr([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="non-integer"):
        polychoric_corr([0.5, 1, 0], [0, 1, 1])
    with pytest.raises(ValueError, match="y is constant"):
        polychoric_corr([0, 1, 0], [1, 1, 1])
    with pytest.raises(ValueError, match="method"):
        polychoric_corr([0, 1, 0], [1, 0, 1], method="mle")


def _mc_check(estimate, make, n_reps):
    """Monte Carlo variance of sigma_hat against the mean influence-based variance."""
    sigmas, variances = [], []
    for r in range(n_reps):
        sigma, xi = estimate(*make(r))
        sigmas.append(sigma)
        variances.append(np.mean(xi**2) / len(xi))
        assert abs(np.mean(xi)) < 1e-8 or estimate is not ordinal_pair
    return np.var(sigmas), np.mean(variances)


def test_ordinal_pair_influence_variance_matches_monte_carlo():
    cuts_a, cuts_b = [-0.8, 0.1, 0.9], [-1.0, -0.2, 0.6]

    def make(r):
        z = _latent_pair(np.random.default_rng(r), 0.5, 400)
        ca, cb = np.searchsorted(cuts_a, z[:, 0]), np.searchsorted(cuts_b, z[:, 1])
        return ca, cb, ordinal_thresholds(ca, 4), ordinal_thresholds(cb, 4)

    mc, est = _mc_check(ordinal_pair, make, 150)
    # 150 replications: the Monte Carlo variance is within about +-35% (3 sd).
    assert 0.7 < mc / est < 1.4


@pytest.mark.parametrize("rho", [0.0, 0.6])
def test_polyserial_influence_accounts_for_ranks_and_thresholds(rho):
    cuts = [-1.0, -0.2, 0.6]

    def make(r):
        z = _latent_pair(np.random.default_rng(r), rho, 400)
        cd = np.searchsorted(cuts, z[:, 1])
        return normal_scores(np.exp(z[:, 0])), cd, ordinal_thresholds(cd, 4)

    mc, est = _mc_check(polyserial_pair, make, 150)
    assert 0.7 < mc / est < 1.4


def test_continuous_pair_influence_matches_pearson_variance():
    def make(r):
        z = _latent_pair(np.random.default_rng(r), -0.6, 300)
        return normal_scores(z[:, 0] ** 3), normal_scores(z[:, 1])

    mc, est = _mc_check(continuous_pair, make, 150)
    assert 0.7 < mc / est < 1.4
    assert est == pytest.approx((1 - 0.36) ** 2 / 300, rel=0.2)


def test_binarized_pair_reduces_to_the_dct_bridge_equation(rng):
    """On a 2 x 2 table the GMM machinery is the exactly identified DCT estimator."""
    z = _latent_pair(rng, 0.4, 600)
    xa, xb = (z[:, 0] > 0.3).astype(int), (z[:, 1] > -0.2).astype(int)
    ha, hb = ordinal_thresholds(xa, 2), ordinal_thresholds(xb, 2)
    sigma, xi = ordinal_pair(xa, xb, ha, hb, min_cell_prob=0.0)

    # DCT: P(X_a = 1, X_b = 1) = P(Z_a > h_a, Z_b > h_b; sigma), h = Phi^{-1}(1 - mean).
    pa, pb, pab = xa.mean(), xb.mean(), np.mean(xa * xb)
    h1, h2 = ndtri(1 - pa), ndtri(1 - pb)

    def upper(rho):
        return GridCDF([-h1], [-h2])(rho)[1, 1]

    assert sigma == pytest.approx(brentq(lambda r: upper(r) - pab, -0.999, 0.999), abs=1e-7)
    # Influence e_1^T J^{-1} psi_i with psi = (x_a x_b - pi_ab, x_a - pi_a, x_b - pi_b).
    phi1, phi2 = np.exp(-h1**2 / 2) / np.sqrt(2 * np.pi), np.exp(-h2**2 / 2) / np.sqrt(2 * np.pi)
    s = np.sqrt(1 - sigma**2)
    jac = np.array([
        [bvn_pdf(h1, h2, sigma), -phi1 * ndtr((sigma * h1 - h2) / s),
         -phi2 * ndtr((sigma * h2 - h1) / s)],
        [0.0, -phi1, 0.0],
        [0.0, 0.0, -phi2],
    ])
    psi = np.column_stack([xa * xb - pab, xa - pa, xb - pb])
    xi_dct = psi @ np.linalg.inv(jac)[0]
    np.testing.assert_allclose(xi, xi_dct, atol=1e-8)
