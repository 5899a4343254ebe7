"""Assertions on the smoke runs of the SSA paper's claims."""

import pytest

from skpaper.papers import get_claims, run_claim


@pytest.fixture(scope="module")
def claims():
    return {c.claim_id: c for c in get_claims("ssa-tta")}


def test_ssa_claims_are_registered(claims):
    assert set(claims) == {"ssa-beats-tent", "label-shift", "lr-robustness", "step-vs-noise"}
    assert claims["lr-robustness"].reported
    for name in ("ssa-beats-tent", "label-shift", "step-vs-noise"):
        assert claims[name].control


def test_step_vs_noise_smoke_tracks_injected_noise_and_control_fails(claims, tmp_path):
    result = run_claim(claims["step-vs-noise"], scale="smoke", seed=0, out_dir=tmp_path)
    assert result.error is None, result.error
    # alpha = sqrt(S / (eta^2 sigma^2)) and sigma grows with the injected std: slope -1
    assert result.observed["ramp_loglog_slope"] == pytest.approx(-1.0, abs=0.1)
    assert result.observed["ramp_spearman"] <= -0.99
    assert all(r <= -0.99 for r in result.observed["stream_spearman_step_vs_sigma2"])
    # with the filter off the step stays at 1: the check must fail
    assert result.control.passed is False
    assert result.control.observed["ramp_loglog_slope"] == pytest.approx(0.0, abs=1e-12)
    assert result.status == "reproduced"


def test_ssa_beats_tent_smoke_pairs_every_arm(claims, tmp_path):
    result = run_claim(claims["ssa-beats-tent"], scale="smoke", seed=0, out_dir=tmp_path)
    assert result.error is None, result.error
    acc = result.observed["accuracy"]
    n = acc["no adaptation"]["n"]
    assert n >= 2
    for arm in ("TENT+SSA", "TENT at SSA step", "TENT (SSA off)", "TENT, kappa=0"):
        assert acc[arm]["n"] == n
        assert all(0.0 <= a <= 1.0 for a in acc[arm]["values"])
    # the constant-step baseline runs at SSA's held-out mean step, below the base rate
    steps = result.observed["ssa_mean_step_calibration"]
    assert all(0.0 < s < result.observed["learning_rate"] for s in steps)
    assert result.status in ("reproduced", "not reproduced", "uninformative")
    assert set(result.arms) == set(acc)


def test_lr_robustness_smoke_reports_every_method(claims, tmp_path):
    result = run_claim(claims["lr-robustness"], scale="smoke", seed=0, out_dir=tmp_path)
    assert result.error is None, result.error
    observed = result.observed
    for key in ("accuracy_tent", "accuracy_tent_ssa", "accuracy_no_adaptation",
                "accuracy_tent_averaging"):
        assert len(observed[key]) == len(observed["learning_rates"])
        assert all(0.0 <= a <= 1.0 for a in observed[key])
    # the unadapted source does not depend on the learning rate
    assert len(set(observed["accuracy_no_adaptation"])) == 1
    assert result.status == "reported"
