import numpy as np
import pytest
from scipy.stats import multivariate_normal

from skpaper.independence._bvn import GridCDF, cell_probs, cell_probs_jacobian


@pytest.mark.parametrize("rho", [-0.95, -0.3, 0.0, 0.45, 0.99])
def test_grid_cdf_matches_scipy_including_zero_thresholds(rho):
    h_a = np.array([-1.3, 0.0, 0.7])
    h_b = np.array([-0.4, 0.0, 1.1, 2.0])
    grid = GridCDF(h_a, h_b)(rho)
    ref = multivariate_normal(mean=[0, 0], cov=[[1, rho], [rho, 1]])
    for i, h in enumerate(h_a, start=1):
        for j, k in enumerate(h_b, start=1):
            assert grid[i, j] == pytest.approx(ref.cdf([h, k]), abs=1e-9)
    assert grid[0].max() == 0.0 and grid[:, 0].max() == 0.0
    assert grid[-1, -1] == 1.0


def test_cell_probs_sum_to_one_and_are_independent_products_at_zero(rng):
    h_a = np.sort(rng.normal(size=3))
    h_b = np.sort(rng.normal(size=2))
    probs = cell_probs(h_a, h_b, 0.0)
    from scipy.special import ndtr

    pa = np.diff(np.concatenate(([0.0], ndtr(h_a), [1.0])))
    pb = np.diff(np.concatenate(([0.0], ndtr(h_b), [1.0])))
    np.testing.assert_allclose(probs, np.outer(pa, pb), atol=1e-14)
    assert cell_probs(h_a, h_b, 0.6).sum() == pytest.approx(1.0, abs=1e-13)


def test_cell_probs_jacobian_matches_central_differences(rng):
    h_a = np.sort(rng.normal(size=3))
    h_b = np.array([-0.5, 0.0])
    rho, eps = 0.37, 1e-6
    _, d_rho, d_ha, d_hb = cell_probs_jacobian(h_a, h_b, rho)
    num = (cell_probs(h_a, h_b, rho + eps) - cell_probs(h_a, h_b, rho - eps)) / (2 * eps)
    np.testing.assert_allclose(d_rho, num, atol=1e-8)
    for m in range(len(h_a)):
        step = np.zeros(len(h_a))
        step[m] = eps
        num = (cell_probs(h_a + step, h_b, rho) - cell_probs(h_a - step, h_b, rho)) / (2 * eps)
        np.testing.assert_allclose(d_ha[:, :, m], num, atol=1e-8)
    for m in range(len(h_b)):
        step = np.zeros(len(h_b))
        step[m] = eps
        num = (cell_probs(h_a, h_b + step, rho) - cell_probs(h_a, h_b - step, rho)) / (2 * eps)
        np.testing.assert_allclose(d_hb[:, :, m], num, atol=1e-8)
    # Derivatives of probabilities that sum to one sum to zero.
    assert abs(d_rho.sum()) < 1e-12 and np.abs(d_ha.sum(axis=(0, 1))).max() < 1e-12
