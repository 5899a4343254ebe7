import numpy as np
import pytest

from skpaper.papers import get_claims, run_claim


@pytest.mark.parametrize("claim", get_claims("teds"), ids=lambda c: c.claim_id)
def test_teds_claims_run_at_smoke_scale(claim, tmp_path):
    result = run_claim(claim, scale="smoke", seed=0, out_dir=tmp_path)
    assert result.error is None, result.error
    mrrs = {k: v for k, v in result.observed.items() if k.startswith(("mrr_", "no_smoothing"))
            and not k.endswith("per_seed")}
    assert mrrs and all(0 < v <= 1 for v in mrrs.values())
    for name in result.artifacts:
        assert (tmp_path / "teds" / name).stat().st_size > 0
    if claim.claim_id == "diachronic-unseen-timestamps":
        assert len(result.observed["paired_differences"]) == 3
        assert result.observed["margin"] == pytest.approx(
            np.mean(result.observed["paired_differences"]))
