"""The microscopy-mae claims at smoke scale: statuses, effects of interest, the pre-check."""

import json

import numpy as np
import pytest

from skpaper.papers import STATUSES, get_claims, run_claim


@pytest.fixture(scope="module")
def claims():
    return {c.claim_id: c for c in get_claims("microscopy-mae")}


def test_every_claim_asserts_with_an_effect_of_interest(claims):
    assert set(claims) == {"tvn-replicate-consistency", "intermediate-block-beats-last",
                           "curation-improves-probe"}
    assert claims["intermediate-block-beats-last"].effect_of_interest.source == "paper"
    for claim in claims.values():
        assert claim.control and claim.effect_of_interest.value > 0


@pytest.mark.parametrize("claim_id", ["tvn-replicate-consistency",
                                      "intermediate-block-beats-last"])
def test_smoke_run_records_eoi_and_power(claims, claim_id, tmp_path):
    result = run_claim(claims[claim_id], "smoke", 0, tmp_path)
    assert result.error is None, result.error
    assert result.status in STATUSES and result.status != "error"
    payload = json.loads((tmp_path / "microscopy-mae" / f"{claim_id}.json").read_text())
    assert "value" in payload["effect_of_interest"]
    assert {"n_seeds", "sd", "seeds_needed"} <= set(payload["power"])


def test_precheck_compares_the_mae_with_standardised_pixels():
    from skpaper.papers import microscopy_mae as mm

    pre = mm._precheck("smoke", 0)
    assert len(pre["screens"]) == mm._PLATES["smoke"]["precheck_seeds"]
    row = pre["screens"][0]
    assert 0.0 <= row["standardised_pixel_pca"] <= 1.0 and 0.0 <= row["mae_best_block"] <= 1.0
    assert pre["passed"] == (pre["mae_minus_pixel_pca"] > 0)
    d = mm._plates("smoke", row["seed"])
    pixels = mm._standardised_pixels(d).reshape(d.images.shape)
    np.testing.assert_allclose(pixels.mean(axis=(-2, -1)), 0.0, atol=1e-6)
    # channel gains and offsets do not survive the standardisation
    shifted = d.images * 3.0 + 1.0
    d2 = type(d)(**{**d, "images": shifted})
    # (float32 images and the 1e-6 variance floor leave differences of about 1e-4)
    np.testing.assert_allclose(mm._standardised_pixels(d2), mm._standardised_pixels(d),
                               atol=5e-4)


def test_failed_precheck_ends_uninformative_without_training(claims, tmp_path, monkeypatch):
    from skpaper.papers import microscopy_mae as mm

    failed = {"screens": [{"seed": 1, "mae_best_block": 0.2, "standardised_pixel_pca": 0.3,
                           "chance": 0.2}], "mae_minus_pixel_pca": -0.1, "passed": False}
    monkeypatch.setattr(mm, "_precheck", lambda scale, seed: failed)
    monkeypatch.setattr(mm, "_curated_maes", lambda *a: pytest.fail("trained an MAE"))
    result = run_claim(claims["curation-improves-probe"], "smoke", 0, tmp_path)
    assert result.error is None, result.error
    assert result.status == "uninformative"
    assert "[pre-check failed: " in result.notes
    assert result.observed["precheck"]["passed"] is False
