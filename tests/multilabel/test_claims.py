"""Smoke runs of the multilabel-smooth-bounds claims, with checks on what they measure."""

import numpy as np
import pytest

from skpaper.papers import get_claims, run_claim
from skpaper.papers._registry import STATUSES

CLAIMS = {c.claim_id: c for c in get_claims("multilabel-smooth-bounds")}


def test_label_count_claim_smoke_shows_the_lipschitz_growth(tmp_path):
    result = run_claim(CLAIMS["calculator-label-count-shapes"], "smoke", 0, tmp_path)
    assert result.error is None, result.error
    assert result.status == "reported"
    for objective in ("ranking", "hamming"):
        o = result.observed[objective]
        assert o["B1_ratio"] > 1.4  # c = 4 -> 16: sqrt(4) = 2 before the additive terms
        assert abs(o["B3_rate_change"]) < o["B1_ratio"] - 1
    assert result.observed["hamming"]["B1_decomposed_excess"][0] == pytest.approx(
        result.observed["hamming"]["B1_decomposed_excess"][1], rel=0.1)


def test_low_noise_claim_smoke_shows_the_smooth_bounds_shrinking(tmp_path):
    result = run_claim(CLAIMS["optimistic-rate-under-low-noise"], "smoke", 0, tmp_path)
    assert result.error is None, result.error
    assert result.status == "reported"
    for objective in ("ranking", "hamming"):
        o = result.observed[objective]
        assert o["empirical_risk"][0] < o["empirical_risk"][-1]
        assert o["B3_ratio_clean_over_noisy"] < o["B1_ratio_clean_over_noisy"]
        assert o["B4_ratio_clean_over_noisy"] < o["B1_ratio_clean_over_noisy"]


def test_gap_claim_is_reported_and_pairs_both_losses_on_the_same_seeds(tmp_path):
    result = run_claim(CLAIMS["gap-flat-in-label-count"], "smoke", 0, tmp_path)
    assert result.error is None, result.error
    assert result.status == "reported"
    ours, hinge = result.observed["logistic_growth"], result.observed["hinge_growth"]
    assert ours["n"] == hinge["n"] == 2
    assert result.observed["mean_gap"]["logistic"][0] == pytest.approx(ours["baseline_mean"])


@pytest.mark.parametrize("claim_id", ["bound-validity-held-out", "label-count-dependence",
                                      "non-vacuous-regime"])
def test_asserted_bound_claims_declare_effects_and_decide(claim_id, tmp_path):
    claim = CLAIMS[claim_id]
    assert claim.effect_of_interest is not None and claim.control
    result = run_claim(claim, "smoke", 0, tmp_path)
    assert result.error is None, result.error
    assert result.status in STATUSES and result.status != "reported"
    assert result.control.verdict in ("fail", "pass", "undecided")
    assert result.power["n_seeds"] == 2
    assert not result.control.zero_spread


def test_validity_claim_measures_slack_against_held_out_risk(tmp_path):
    result = run_claim(CLAIMS["bound-validity-held-out"], "smoke", 0, tmp_path)
    o = result.observed
    slack = np.subtract(o["B3"], o["held_out_risk"])
    assert o["per_seed"]["B3 slack"] == pytest.approx(list(slack))
    # the control drops the complexity term: the training risk is below the held-out risk
    assert all(v < 0 for v in o["per_seed"]["empirical risk slack"])


def test_dependence_claim_exponents_use_the_same_fits(tmp_path):
    result = run_claim(CLAIMS["label-count-dependence"], "smoke", 0, tmp_path)
    per_seed = result.observed["per_seed"]
    # B1 carries c, B3 only its logarithms: on every seed B1 grows faster
    assert all(b1 > b3 for b1, b3 in zip(per_seed["B1 exponent"], per_seed["B3 exponent"]))


def test_sample_size_claim_marks_the_bound_against_the_trivial_risk(tmp_path):
    result = run_claim(CLAIMS["informative-sample-size"], "smoke", 0, tmp_path)
    assert result.error is None, result.error
    o = result.observed
    # the bound falls with n and the theorem constants are far above the rate ones
    assert o["B3_rate_value"][-1] < o["B3_rate_value"][0]
    assert all(t > r for t, r in zip(o["B3_theorem_value"], o["B3_rate_value"]))
    assert all(abs(t - 0.693) < 0.01 for t in o["trivial_risk"])
