import pytest

from skpaper.papers import get_claims, run_claim


@pytest.fixture(scope="module")
def smoke_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("gmm-ci-test")
    return {c.claim_id: run_claim(c, scale="smoke", seed=0, out_dir=out)
            for c in get_claims("gmm-ci-test")}


def test_gmm_ci_test_claims_run_with_controls_and_report_rates(smoke_results):
    assert set(smoke_results) == {"type-one-error", "power-vs-dct", "pc-skeleton-f1"}
    for result in smoke_results.values():
        assert result.error is None and result.artifacts
        assert result.status in ("reproduced", "not reproduced", "uninformative")
        assert isinstance(result.control.passed, bool) and result.control.observed
    size = smoke_results["type-one-error"].observed
    rates = size["rejection_rates"]
    for name in ("GMM one-step", "GMM two-step", "DCT (binarized)", "Fisher-z on codes"):
        assert len(rates[name]) == len(size["n"]) and all(0 <= r <= 1 for r in rates[name])
    for check in size["GMM one-step"]:
        low, high = check["clopper_pearson_99"]
        assert low <= check["rate"] <= high
    # Even at smoke scale the naive test's inflation is visible.
    assert sum(rates["Fisher-z on codes"]) > sum(rates["GMM one-step"])
    power = smoke_results["power-vs-dct"].observed
    assert all(0 <= r <= 1 for r in power["power"]["GMM one-step"] +
               power["power"]["DCT (binarized)"])
    assert len(power["paired_gain_gmm_minus_dct"]) == len(power["n"])
    f1 = smoke_results["pc-skeleton-f1"].observed["skeleton_f1"]
    assert all(0 <= v["mean"] <= 1 for v in f1.values())
    # At K = 2 the GMM and DCT tests coincide: the control's paired gain is exactly zero.
    control = smoke_results["pc-skeleton-f1"].control.observed["K2_paired_f1_gmm_minus_dct"]
    assert control["mean"] == 0.0 and not smoke_results["pc-skeleton-f1"].control.passed
