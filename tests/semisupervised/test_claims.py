import pytest

from skpaper.papers import get_claims, run_claim


@pytest.fixture(scope="module")
def smoke_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("acp")
    return {c.claim_id: run_claim(c, scale="smoke", seed=0, out_dir=out)
            for c in get_claims("acp-doubly-robust")}, out


def test_acp_claims_run_at_smoke_scale(smoke_results):
    results, out = smoke_results
    assert set(results) == {"efficiency-gain-strong-signal", "no-gain-without-signal",
                            "gain-needs-unlabeled-acp", "coverage"}
    for result in results.values():
        assert result.error is None, result.error
        for artifact in result.artifacts:
            assert (out / "acp-doubly-robust" / artifact).stat().st_size > 0


def test_acp_claim_smoke_figures(smoke_results):
    results, _ = smoke_results
    strong = results["efficiency-gain-strong-signal"].observed
    assert strong["variance_ratio_no_acp_over_acp"] > 1
    assert strong["bias"]["labeled_only"] == pytest.approx(
        strong["spec_prototype_labeled_only_bias"], abs=0.2)
    unlabeled = results["gain-needs-unlabeled-acp"].observed
    assert unlabeled["variance_ratio_acp_labeled_only"] == pytest.approx(1.0, abs=1e-8)
    assert results["gain-needs-unlabeled-acp"].status == "reported"
    # the efficiency check and its signal-0 control are the same paired statistic
    gain = strong["mse_gain"]
    control = results["efficiency-gain-strong-signal"].control.observed["mse_gain_signal0"]
    assert gain["alternative"] == control["alternative"] == "greater"
    assert control["mean"] < gain["mean"]
    coverage = results["coverage"].observed["coverage"]
    assert coverage["labeled_only"] < 0.5 < coverage["acp"]
