import numpy as np
import pytest

from skpaper.papers import get_claims, run_claim
from skpaper.papers._registry import STATUSES


@pytest.fixture(scope="module")
def smoke_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("acp")
    return {c.claim_id: run_claim(c, scale="smoke", seed=0, out_dir=out)
            for c in get_claims("acp-doubly-robust")}, out


def test_acp_claims_run_at_smoke_scale(smoke_results):
    results, out = smoke_results
    assert set(results) == {"efficiency-gain-strong-signal", "no-gain-without-signal",
                            "gain-needs-unlabeled-acp", "coverage"}
    for claim in get_claims("acp-doubly-robust"):
        result = results[claim.claim_id]
        assert result.error is None, result.error
        assert result.status in STATUSES
        for artifact in result.artifacts:
            assert (out / "acp-doubly-robust" / artifact).stat().st_size > 0
        if not claim.reported:
            assert claim.effect_of_interest is not None
            assert result.control.verdict in ("fail", "pass", "undecided")


def test_acp_claim_smoke_figures(smoke_results):
    results, _ = smoke_results
    strong = results["efficiency-gain-strong-signal"]
    assert strong.observed["mse_ratio_no_acp_over_acp"] > 1
    # the check and its control run on the same replications (the ACP permuted there)
    per_seed = strong.observed["per_seed"]
    assert len(per_seed["reduction"]) == len(per_seed["reduction, ACP permuted"])
    assert np.mean(per_seed["reduction, ACP permuted"]) < np.mean(per_seed["reduction"])
    unlabeled = results["gain-needs-unlabeled-acp"].observed
    assert unlabeled["variance_ratio_acp_labeled_only"] == pytest.approx(1.0, abs=1e-8)
    assert results["gain-needs-unlabeled-acp"].status == "reported"
    no_gain = results["no-gain-without-signal"].observed["check"]
    assert no_gain["alternative"] == "less" and no_gain["margin"] == pytest.approx(2.29 / 300)
    coverage = results["coverage"].observed["coverage"]
    assert coverage["labeled_only"] < 0.5 < coverage["acp"]


def test_permuted_acp_keeps_the_data():
    from skpaper.datasets import make_acp_covariate_shift
    from skpaper.papers.acp_doubly_robust import _replication

    data = make_acp_covariate_shift(300, 1200, signal=3.0, random_state=5)
    permuted = np.random.default_rng(5).permutation(data.acp)
    assert sorted(permuted) == sorted(data.acp) and not np.array_equal(permuted, data.acp)
    # the no-ACP fit ignores the ACP, so it is one figure for both arms of the control
    assert _replication(3.0, 1200, 5, "no_acp")[0] == _replication(3.0, 1200, 5, "no_acp")[0]
