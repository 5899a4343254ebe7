"""The paper's claims at smoke scale: what they measure, beyond running."""

import math

import pytest

from skpaper.papers import get_claims, run_claim


@pytest.fixture(scope="module")
def smoke_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("claims")
    return {c.claim_id: run_claim(c, scale="smoke", seed=0, out_dir=out)
            for c in get_claims("cross-learning-bandits")}


def test_flat_claim_measures_all_context_counts(smoke_results):
    result = smoke_results["regret-flat-in-contexts"]
    assert result.error is None
    regrets = result.observed["mean_regret"]
    assert result.observed["contexts"] == [5, 50, 400]
    cross, per_context = regrets["cross-learning (prev. epoch)"], regrets["per-context EXP3-IX"]
    # Even at T=2000, 400 values are too many for separate learners.
    assert cross[-1] < per_context[-1]
    growth = result.observed["cross_learning_growth"]
    assert growth["n"] == 2 and growth["alternative"] == "less"
    assert result.control.observed["per_context_growth"]["margin"] == growth["margin"]


def test_tail_claim_compares_gamma_only_on_the_same_draws(smoke_results):
    result = smoke_results["high-probability-tail"]
    assert result.error is None
    assert result.observed["level"] == pytest.approx(math.sqrt(2 * 1000 * math.log(20)))
    for q in result.observed["quantiles"].values():
        assert q["q50"] <= q["q90"] <= q["q99"]
    ours, control = result.observed["implicit_exploration"], result.control.observed["gamma_0"]
    assert ours["n"] == control["n"] == 60
    assert ours["passed"] == (ours["upper_95"] < 0.05)
    # The unbiased weights have the heavier upper tail on this adversary.
    q = result.observed["quantiles"]
    assert q["cross-learning, gamma=0"]["q99"] > q["cross-learning, implicit exploration"]["q99"]
