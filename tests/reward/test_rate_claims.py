import pytest

from skpaper.papers import rate as rate_paper


@pytest.fixture(scope="module")
def smoke_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("rate")
    claims = {
        "confounding-bias": rate_paper._claim_confounding_bias,
        "ci-coverage": rate_paper._claim_ci_coverage,
        "non-idempotent-control": rate_paper._claim_non_idempotent_control,
    }
    return {name: claim("smoke", 0, out) for name, claim in claims.items()}, out


def test_rate_claim_confounding_bias_smoke(smoke_results):
    results, out = smoke_results
    observed = results["confounding-bias"].observed
    for reward in ("known", "ridge"):
        assert observed[f"{reward}_rate_ate_abs_error_max"] < 0.05
        assert observed[f"{reward}_naive_bias"] < -0.3
        assert observed[f"{reward}_single_rewrite_att_bias"] < -0.3
    assert all((out / name).exists() for name in results["confounding-bias"].artifacts)
    # additive rewards: an exact cancellation; the saturating reward: close, not exact
    assert observed["known_rate_ate_abs_error_max"] < 1e-9
    saturating = observed["saturating_rate_ate"]
    assert 0 < abs(saturating["mean_error"]) < saturating["margin"]
    single = results["confounding-bias"].control.observed["saturating_single_rewrite_att"]
    assert single["margin"] == saturating["margin"] and not single["passed"]


def test_rate_claim_coverage_smoke(smoke_results):
    results, _ = smoke_results
    coverage = results["ci-coverage"].observed
    assert coverage["coverage_ate"] >= 0.8
    assert coverage["coverage_naive"] <= 0.5


def test_rate_claim_non_idempotent_control_smoke(smoke_results):
    results, _ = smoke_results
    control = results["non-idempotent-control"].observed
    assert control["non_idempotent_att_bias"] < 0 < control["non_idempotent_atu_bias"]
    assert abs(control["idempotent_att_bias"]) < 1e-9
    assert abs(control["non_idempotent_ate_bias"]) < abs(control["non_idempotent_att_bias"])
