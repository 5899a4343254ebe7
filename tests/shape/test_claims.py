"""The shape-orientation claims at smoke scale: they run and report their figures."""

import pytest

from skpaper.papers._registry import get_claims, run_claim


@pytest.fixture(scope="module")
def smoke_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("claims")
    return {c.claim_id: run_claim(c, scale="smoke", seed=0, out_dir=out)
            for c in get_claims("shape-orientation")}


def test_shape_orientation_claims_run_at_smoke_scale(smoke_results):
    assert set(smoke_results) == {"l2-collapse", "two-stage-up-accuracy", "conformal-coverage"}
    for result in smoke_results.values():
        assert result.error is None, result.error
        assert result.artifacts and result.observed


def test_shape_orientation_claim_figures_are_in_range(smoke_results):
    collapse = smoke_results["l2-collapse"].observed
    assert 0 <= collapse["quotient_fraction_below_10deg"] <= 1
    assert collapse["naive_side_front_norm_mean_on_C2_C4"] >= 0
    accuracy = smoke_results["two-stage-up-accuracy"].observed
    assert all(0 <= accuracy[f"up_accuracy_{k}"] <= 1
               for k in ("two_stage", "naive_l2", "pca_flipper"))
    conformal = smoke_results["conformal-coverage"].observed
    # Conformal coverage holds for any model, even the barely trained smoke one.
    assert conformal["coverage"] >= 0.9 - 3 * (0.09 / conformal["n_test"]) ** 0.5
    assert 1 <= conformal["mean_set_size"] <= 24
