import numpy as np
import pytest

from skpaper.papers import get_claims, run_claim
from skpaper.papers import rate as rate_paper
from skpaper.papers._registry import STATUSES


@pytest.fixture(scope="module")
def smoke_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("rate")
    return {c.claim_id: run_claim(c, scale="smoke", seed=0, out_dir=out)
            for c in get_claims("rate")}, out


def test_rate_claims_declare_effects_and_return_decisions(smoke_results):
    results, out = smoke_results
    assert set(results) == {"confounding-bias", "ci-coverage", "non-idempotent-control"}
    for claim in get_claims("rate"):
        result = results[claim.claim_id]
        assert result.error is None and result.status in STATUSES
        assert all((out / "rate" / a).exists() for a in result.artifacts)
        if claim.reported:
            assert result.status == "reported"
        else:
            assert claim.effect_of_interest is not None
            assert result.control.verdict in ("fail", "pass", "undecided")
            assert result.power["n_seeds"] >= 2


def test_rate_claim_confounding_bias_smoke(smoke_results):
    results, _ = smoke_results
    observed = results["confounding-bias"].observed
    # additive rewards: an exact cancellation
    assert max(observed["additive_rate_ate_abs_error_max"].values()) < 1e-9
    # the asserted world (additive + per-text noise): RATE's error is not 0 by construction
    assert observed["check"]["alternative"] == "less" and observed["check"]["margin"] == 0.02
    assert np.mean(observed["per_seed"]["RATE ATE"]) > 0
    # the single rewrite keeps the off-target changes: a larger relative error
    assert (np.mean(observed["per_seed"]["single-rewrite ATT"])
            > np.mean(observed["per_seed"]["RATE ATE"]))
    for world in ("saturating", "interaction"):
        setting = observed["out_of_assumption_reported"][world]
        assert setting["check"]["alternative"] == "less" and setting["check"]["margin"] == 0.02
        assert setting["check_verdict"] in ("pass", "contradicted", "undecided")
        assert np.mean(setting["per_seed"]["single-rewrite ATT"]) > setting["check"]["mean"]
    for row in observed["sweep"]["known"]:
        assert row["ate"] == pytest.approx(row["true_ate"])


def test_rate_claim_coverage_smoke(smoke_results):
    results, _ = smoke_results
    coverage = results["ci-coverage"].observed["coverage"]
    assert coverage["ate"] >= 0.8
    assert coverage["naive"] <= 0.5
    over = results["ci-coverage"].observed["over_coverage_check"]
    assert over["alternative"] == "less" and over["margin"] == 0.98


def test_noisy_reward_is_a_function_of_the_text():
    from skpaper.datasets import synthetic_review_reward

    texts = ["a good film", "a bad film~", "a good film"]
    scores = rate_paper._noisy_reward(texts)
    assert scores[0] == scores[2] and scores[0] != synthetic_review_reward(texts)[0]


def test_rate_claim_non_idempotent_control_is_reported(smoke_results):
    results, _ = smoke_results
    control = results["non-idempotent-control"].observed
    assert results["non-idempotent-control"].status == "reported"
    assert control["non_idempotent_att_bias"] < 0 < control["non_idempotent_atu_bias"]
    assert abs(control["idempotent_att_bias"]) < 1e-9
    assert abs(control["non_idempotent_ate_bias"]) < abs(control["non_idempotent_att_bias"])
