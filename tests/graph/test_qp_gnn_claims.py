"""The qp-gnn claims at smoke scale, and the WL counterexample as a unit test."""

import json

import pytest

from skpaper.papers import STATUSES, get_claims, run_claim


@pytest.fixture(scope="module")
def claims():
    return {c.claim_id: c for c in get_claims("qp-gnn")}


def test_capacity_smoke_records_eoi_and_power(claims, tmp_path):
    claim = claims["capacity"]
    assert claim.control and claim.effect_of_interest.value > 0
    result = run_claim(claim, "smoke", 0, tmp_path)
    assert result.error is None, result.error
    assert result.status in STATUSES and result.status != "error"
    payload = json.loads((tmp_path / "qp-gnn" / "capacity.json").read_text())
    assert payload["effect_of_interest"]["source"] == "ours"
    assert {"n_seeds", "sd", "seeds_needed"} <= set(payload["power"])
    errors = result.observed["training_relative_errors"]
    assert all(len(v["root_mean"]) == result.observed["n_seeds"] for v in errors.values())


def test_wl_pair_gets_identical_outputs_and_the_distinguishable_pair_does_not(claims,
                                                                               tmp_path):
    claim = claims["mixed-integer-limit"]
    assert claim.reported and claim.control is None
    result = run_claim(claim, "smoke", 0, tmp_path)
    assert result.error is None, result.error
    assert result.status == "reported"
    obs = result.observed
    assert obs["solver_feasible"] == [True, False]
    # any equivariant network: the WL-indistinguishable pair gets the same output
    assert max(obs["probability_gaps_plain"]) <= 1e-6
    pair = obs["distinguishable_pair"]
    assert pair["solver_feasible"] == [True, False]
    assert min(pair["probability_gaps_plain"]) > 1e-6
