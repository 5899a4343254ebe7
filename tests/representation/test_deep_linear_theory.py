"""Closed forms of Tahir et al. (2025): known limits, Monte Carlo checks and phase boundaries."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skpaper.representation import (
    finetune_risk,
    finetune_transferability,
    linear_transfer_risk,
    linear_transferability,
    negative_transfer_region,
    phase_diagram,
    scratch_risk,
    transfer_theory,
)


def test_transfer_theory_namespace_exposes_the_closed_forms():
    for name in ("scratch_risk", "linear_transfer_risk", "finetune_transferability",
                 "phase_diagram"):
        assert callable(getattr(transfer_theory, name))


def test_scratch_risk_known_limits():
    assert scratch_risk(0.0, 0.3) == pytest.approx(1.0)
    assert scratch_risk(0.4) == pytest.approx(0.6)
    assert scratch_risk(2.0) == 0.0
    assert scratch_risk(3.0, 0.5) == pytest.approx(0.125)
    assert np.isinf(scratch_risk(1.0, 0.2))
    assert np.isinf(scratch_risk(0.99, 0.2, d=100))  # d - n - 1 = 0
    # Finite d approaches the limit.
    assert scratch_risk(0.5, 0.2, d=100000) == pytest.approx(scratch_risk(0.5, 0.2), rel=1e-3)


def test_scratch_risk_finite_d_matches_pinv_monte_carlo():
    rng = np.random.default_rng(0)
    d, sigma, reps = 40, 0.3, 400
    beta = np.zeros(d)
    beta[0] = 1.0
    for n in (12, 70):
        risks = []
        for _ in range(reps):
            X = rng.standard_normal((n, d))
            y = X @ beta + sigma * rng.standard_normal(n)
            risks.append(np.sum((np.linalg.pinv(X) @ y - beta) ** 2))
        risks = np.asarray(risks)
        se = risks.std() / np.sqrt(reps)
        assert abs(risks.mean() - scratch_risk(n / d, sigma, d=d)) < 4 * se


def test_linear_transfer_risk_matches_one_coefficient_regression():
    rng = np.random.default_rng(1)
    n, theta, sigma, reps = 12, np.pi / 3, 0.4, 4000
    z = rng.standard_normal((reps, n))
    w = rng.standard_normal((reps, n))
    y = np.cos(theta) * z + np.sin(theta) * w + sigma * rng.standard_normal((reps, n))
    b = np.sum(z * y, axis=1) / np.sum(z * z, axis=1)
    risks = (b - np.cos(theta)) ** 2 + np.sin(theta) ** 2
    expected = linear_transfer_risk(n / 100, theta, sigma, d=100)
    assert abs(risks.mean() - expected) < 4 * risks.std() / np.sqrt(reps)


def test_linear_transfer_risk_limits_and_ridge():
    assert linear_transfer_risk(0.5, 0.0, 0.0, d=100) == 0.0
    assert linear_transfer_risk(0.5, np.pi / 6) == pytest.approx(0.25)
    assert linear_transfer_risk(0.5, np.pi / 6, ridge=0.0) == pytest.approx(0.25)
    assert linear_transfer_risk(0.5, np.pi / 2, ridge=3.0) == pytest.approx(1.0)
    assert np.isinf(linear_transfer_risk(0.02, 0.3, d=100))  # n = 2


@given(theta=st.floats(0.0, np.pi / 2 - 1e-3), lam=st.floats(0.0, 10.0))
def test_ridge_never_lowers_the_limiting_linear_transfer_risk(theta, lam):
    base = linear_transfer_risk(1.0, theta)
    assert linear_transfer_risk(1.0, theta, ridge=lam) >= base - 1e-12
    assert linear_transfer_risk(1.0, theta, ridge=lam + 0.5) >= (
        linear_transfer_risk(1.0, theta, ridge=lam) - 1e-12)


@given(theta=st.floats(0.05, np.pi / 2), sigma=st.floats(0.0, 0.9),
       gamma=st.floats(0.01, 3.0))
def test_negative_transfer_region_matches_the_sign_of_eq_11(theta, sigma, gamma):
    region = negative_transfer_region(theta, sigma)
    T = linear_transferability(gamma, theta, sigma)
    bounds = [region.gamma_minus, region.gamma_plus, region.gamma_over, 1.0]
    if any(np.isfinite(b) and abs(gamma - b) < 1e-6 for b in bounds) or abs(T) < 1e-9:
        return
    inside = (np.isfinite(region.gamma_minus)
              and region.gamma_minus < gamma < region.gamma_plus)
    assert (T < 0) == (inside or gamma > region.gamma_over)


def test_negative_transfer_band_exists_iff_theta_exceeds_arccos_one_minus_sigma():
    sigma = 0.2
    threshold = np.arccos(1 - sigma)
    assert np.isnan(negative_transfer_region(threshold - 0.02, sigma).gamma_minus)
    assert np.isfinite(negative_transfer_region(threshold + 0.02, sigma).gamma_minus)
    noiseless = negative_transfer_region(np.pi / 3, 0.0)
    assert noiseless.gamma_minus == pytest.approx(0.25)
    assert noiseless.gamma_plus == pytest.approx(1.0)
    assert noiseless.gamma_over == pytest.approx(1.0)
    assert np.isinf(negative_transfer_region(0.0, 0.1).gamma_over)


def test_finetune_transferability_sign_flips_at_sixty_degrees():
    gammas = np.array([0.1, 0.5, 0.9])
    assert np.all(finetune_transferability(gammas, np.deg2rad(55)) > 0)
    assert np.all(finetune_transferability(gammas, np.deg2rad(65)) < 0)
    assert np.allclose(finetune_transferability(gammas, np.pi / 3), 0.0)
    assert finetune_transferability(1.5, 0.1) == 0.0
    assert finetune_transferability(0.0, 0.0) == pytest.approx(1.0)


def test_balanced_scale_reduces_to_the_paper_without_noise_and_moves_the_break_even():
    g, t = np.array([0.2, 0.6]), np.array([0.3, 1.2])
    assert np.allclose(finetune_transferability(g, t, 0.0, balanced_scale=True),
                       finetune_transferability(g, t))
    # With noise the null-space scale c exceeds 1, so 60 degrees already loses.
    assert finetune_transferability(0.5, np.pi / 3, 1.0, balanced_scale=True) < -0.05
    assert finetune_risk(0.5, 0.4, 0.2) == pytest.approx(
        scratch_risk(0.5, 0.2) - finetune_transferability(0.5, 0.4))


def test_phase_diagram_is_the_grid_of_pointwise_values():
    gammas, thetas = [0.25, 0.5, 1.5], [0.2, 0.8, 1.5]
    T = phase_diagram(gammas, thetas, sigma=0.2)
    assert T.shape == (3, 3)
    for i, g in enumerate(gammas):
        for j, t in enumerate(thetas):
            assert T[i, j] == pytest.approx(linear_transferability(g, t, 0.2))
    F = phase_diagram(gammas, thetas, mode="finetune", d=50)
    assert F[1, 0] == pytest.approx(finetune_transferability(0.5, 0.2, d=50))


def test_scalar_inputs_give_floats_and_arrays_broadcast():
    assert isinstance(scratch_risk(0.5), float)
    assert linear_transfer_risk([0.5, 1.5], [[0.1], [0.2]]).shape == (2, 2)


@pytest.mark.parametrize("call, match", [
    (lambda: scratch_risk(-0.1), "gamma"),
    (lambda: scratch_risk(0.5, -1.0), "sigma"),
    (lambda: scratch_risk(0.5, d=0), "d"),
    (lambda: scratch_risk("a"), "gamma"),
    (lambda: linear_transfer_risk(0.5, np.nan), "theta"),
    (lambda: linear_transfer_risk(0.5, 0.1, ridge=1.0, d=10), "ridge"),
    (lambda: linear_transfer_risk(0.5, 0.1, ridge=-1.0), "ridge"),
    (lambda: linear_transferability(0.5, 0.1, -0.2), "sigma"),
    (lambda: finetune_transferability(-1.0, 0.1), "gamma"),
    (lambda: finetune_risk(0.5, 0.1, balanced_scale="yes"), "balanced_scale"),
    (lambda: negative_transfer_region(0.3, -0.1), "sigma"),
    (lambda: phase_diagram([0.5], [0.1], mode="ridge"), "mode"),
    (lambda: phase_diagram([-0.5], [0.1]), "gammas"),
])
def test_closed_forms_reject_bad_input(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()
