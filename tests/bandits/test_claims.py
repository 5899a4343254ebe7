"""The paper's claims at smoke scale: what they measure, beyond running."""

from skpaper.papers import get_claims, run_claim
from skpaper.papers._registry import STATUSES


def _smoke(claim_id, tmp_path):
    claim = next(c for c in get_claims("cross-learning-bandits") if c.claim_id == claim_id)
    return claim, run_claim(claim, scale="smoke", seed=0, out_dir=tmp_path)


def test_flat_claim_is_a_decision_with_its_effect_and_control(tmp_path):
    claim, result = _smoke("regret-flat-in-contexts", tmp_path)
    assert result.error is None and result.status in STATUSES
    assert claim.effect_of_interest.value == 1.5 and claim.effect_of_interest.source == "ours"
    regrets = result.observed["mean_regret"]
    assert result.observed["contexts"] == [5, 50, 400]
    cross, per_context = regrets["cross-learning (prev. epoch)"], regrets["per-context EXP3-IX"]
    # Even at T=2000, 400 values are too many for separate learners.
    assert cross[-1] < per_context[-1]
    check = result.observed["check"]
    assert check["n"] == 2 and check["alternative"] == "less" and check["margin"] == 1.5
    assert result.control.observed["check"]["margin"] == check["margin"]
    assert result.observed["gamma_0_growth"]["n"] == 2
    assert result.power["n_seeds"] == 2


def test_tail_claim_reports_quantiles_of_both_variants_per_horizon(tmp_path):
    _, result = _smoke("high-probability-tail", tmp_path)
    assert result.error is None and result.status == "reported"
    horizons = result.observed["horizons"]
    assert horizons == [250, 500, 1000]
    for q in result.observed["quantiles"].values():
        assert len(q["q50"]) == len(horizons)
        assert all(a <= b <= c for a, b, c in zip(q["q50"], q["q95"], q["q99"]))
    # The unbiased weights have the heavier upper tail on this adversary at the last horizon.
    q = result.observed["quantiles"]
    unbiased = q["cross-learning, gamma=0"]["q99"][-1]
    assert unbiased > q["cross-learning, implicit exploration"]["q99"][-1]
