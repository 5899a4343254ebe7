import pytest

from skpaper.papers import get_claims, run_claim


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
        for artifact in result.artifacts:
            assert (out / "robust-cardinality-sketch" / artifact).exists()


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
