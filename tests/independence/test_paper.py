import pytest

from skpaper.papers import get_claims, run_claim


@pytest.fixture(scope="module")
def smoke_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("gmm-ci-test")
    return {c.claim_id: run_claim(c, scale="smoke", seed=0, out_dir=out)
            for c in get_claims("gmm-ci-test")}


def test_gmm_ci_test_claims_run_and_report_rates(smoke_results):
    assert set(smoke_results) == {"type-one-error", "power-vs-dct", "pc-skeleton-f1"}
    for result in smoke_results.values():
        assert result.error is None and result.artifacts
    size = smoke_results["type-one-error"].observed
    for name in ("GMM one-step", "GMM two-step", "DCT (binarized)", "Fisher-z on codes"):
        assert len(size[name]) == len(size["n"]) and all(0 <= r <= 1 for r in size[name])
    # Even at smoke scale the naive test's inflation is visible.
    assert min(size["Fisher-z on codes"]) > max(size["GMM one-step"])
    power = smoke_results["power-vs-dct"].observed
    assert all(0 <= r <= 1 for r in power["GMM one-step"] + power["DCT (binarized)"])
    f1 = smoke_results["pc-skeleton-f1"].observed["mean_skeleton_f1"]
    assert all(0 <= v <= 1 for v in f1.values())
