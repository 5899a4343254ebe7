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
    assert result.observed["cross_learning_ratio"] == pytest.approx(max(cross) / min(cross))


def test_tail_claim_quantiles_and_bound(smoke_results):
    result = smoke_results["high-probability-tail"]
    assert result.error is None
    assert result.observed["bound"] == pytest.approx(math.sqrt(10 * 1000 * math.log(100)))
    for q in result.observed["quantiles"].values():
        assert q["q50"] <= q["q90"] <= q["q99"]
    assert result.passed == (
        result.observed["quantiles"]["cross-learning (prev. epoch)"]["q99"]
        < min(result.observed["quantiles"]["plain EXP3 (per context)"]["q99"],
              result.observed["bound"])
    )
