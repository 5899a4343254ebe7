"""Smoke runs of the multilabel-smooth-bounds claims, with checks on what they measure."""

import pytest

from skpaper.papers import get_claims, run_claim

CLAIMS = {c.claim_id: c for c in get_claims("multilabel-smooth-bounds")}


def test_label_count_claim_smoke_shows_the_lipschitz_growth(tmp_path):
    result = run_claim(CLAIMS["label-count-free-smooth-bound"], "smoke", 0, tmp_path)
    assert result.error is None, result.error
    for objective in ("subset", "ranking", "hamming"):
        o = result.observed[objective]
        assert o["B1_ratio"] > 1.4  # c = 4 -> 16: sqrt(4) = 2 before the additive terms
        assert abs(o["B3_rate_change"]) < o["B1_ratio"] - 1
    assert result.observed["hamming"]["B1_decomposed_excess"][0] == pytest.approx(
        result.observed["hamming"]["B1_decomposed_excess"][1], rel=0.1)


def test_low_noise_claim_smoke_shows_the_smooth_bounds_shrinking(tmp_path):
    result = run_claim(CLAIMS["optimistic-rate-under-low-noise"], "smoke", 0, tmp_path)
    assert result.error is None, result.error
    for objective in ("ranking", "hamming"):
        o = result.observed[objective]
        assert o["empirical_risk"][0] < o["empirical_risk"][-1]
        assert o["B3_ratio_clean_over_noisy"] < o["B1_ratio_clean_over_noisy"]
        assert o["B4_ratio_clean_over_noisy"] < o["B1_ratio_clean_over_noisy"]
