"""Assertions on the smoke runs of the SSA paper's claims."""

import pytest

from skpaper.papers import get_claims, run_claim


@pytest.fixture(scope="module")
def claims():
    return {c.claim_id: c for c in get_claims("ssa-tta")}


def test_ssa_claims_are_registered(claims):
    assert set(claims) == {"lr-robustness", "label-shift", "step-vs-noise"}


def test_step_vs_noise_smoke_tracks_injected_noise(claims, tmp_path):
    result = run_claim(claims["step-vs-noise"], scale="smoke", seed=0, out_dir=tmp_path)
    assert result.error is None, result.error
    # alpha = sqrt(S / (eta^2 sigma^2)) and sigma grows with the injected std: slope -1
    assert result.observed["ramp_loglog_slope"] == pytest.approx(-1.0, abs=0.1)
    assert result.observed["ramp_spearman"] <= -0.99
    assert all(r <= -0.99 for r in result.observed["stream_spearman_step_vs_sigma2"])
    assert result.passed


def test_lr_robustness_smoke_reports_every_method(claims, tmp_path):
    result = run_claim(claims["lr-robustness"], scale="smoke", seed=0, out_dir=tmp_path)
    assert result.error is None, result.error
    observed = result.observed
    for key in ("accuracy_tent", "accuracy_tent_ssa", "accuracy_no_adaptation",
                "accuracy_tent_cmf", "accuracy_tent_averaging"):
        assert len(observed[key]) == len(observed["learning_rates"])
        assert all(0.0 <= a <= 1.0 for a in observed[key])
    # the unadapted source does not depend on the learning rate
    assert len(set(observed["accuracy_no_adaptation"])) == 1
    assert 0.0 < observed["ssa_effective_lr"] < observed["learning_rates"][0]
