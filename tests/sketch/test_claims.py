import pytest

from skpaper.papers import get_claims, run_claim
from skpaper.papers._registry import STATUSES


@pytest.fixture(scope="module")
def smoke_results(tmp_path_factory):
    pytest.importorskip("matplotlib")
    out = tmp_path_factory.mktemp("claims")
    return {c.claim_id: (run_claim(c, scale="smoke", seed=0, out_dir=out), out)
            for c in get_claims("robust-cardinality-sketch")}


def test_claims_registered(smoke_results):
    assert set(smoke_results) == {"attack-breaks-standard-not-tracking",
                                  "standard-error-without-attack", "error-vs-adaptive-queries",
                                  "pareto-participation"}
    for result, out in smoke_results.values():
        assert result.error is None
        assert result.status in STATUSES
        for artifact in result.artifacts:
            assert (out / "robust-cardinality-sketch" / artifact).exists()


def test_asserting_claims_are_band_equivalences_with_the_basic_control(smoke_results):
    for claim in get_claims("robust-cardinality-sketch"):
        if claim.reported:
            continue
        assert claim.effect_of_interest.value == 0.25
        result = smoke_results[claim.claim_id][0]
        check = result.observed["check"]
        assert check["alternative"] == "less" and check["margin"] == 0.25
        assert result.control.verdict in ("fail", "pass", "undecided")
        assert len(result.observed["per_seed"]["method"]) == 2
    attack = smoke_results["attack-breaks-standard-not-tracking"][0].observed
    assert attack["standard_broken_check"]["margin"] == 3.0
    curve = smoke_results["error-vs-adaptive-queries"][0].observed
    assert curve["decided_at_attack_queries"] == 4 * 64


def test_claims_smoke_standard_breaks_and_rse_matches(smoke_results):
    attack = smoke_results["attack-breaks-standard-not-tracking"][0].observed
    assert attack["standard_ratio_in"]["min"] >= 3
    # Two smoke seeds give a wide t bound: reported, not asserted.
    assert attack["standard_ratio_in_lower_bound"] < attack["standard_ratio_in"]["min"]
    assert attack["standard_recovery"]["min"] > 4 * attack["chance_recovery"]
    assert len(attack["seeds"]) == 2
    rse = smoke_results["standard-error-without-attack"][0]
    assert rse.status == "reported"
    assert rse.observed["relative_gap"] <= 0.15
    # Every mode's non-adaptive bias and the deactivated count are reported.
    assert {"bias_standard", "bias_basic", "bias_tracking",
            "tracking_max_deactivated"} <= set(rse.observed)
    assert max(attack["tracking_deactivated"]) <= attack["tracking_deactivated_max"]
