"""The shape-orientation claims at smoke scale.

They run, assert over seeds, and report their figures.
"""

import pytest

from skpaper.papers._registry import STATUSES, get_claims, run_claim

CLAIM_IDS = {"l2-collapse", "two-stage-up-accuracy", "conformal-coverage", "flipper-options"}


@pytest.fixture(scope="module")
def smoke_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("claims")
    return {c.claim_id: run_claim(c, scale="smoke", seed=0, out_dir=out)
            for c in get_claims("shape-orientation")}


def test_shape_orientation_claims_run_at_smoke_scale(smoke_results):
    assert set(smoke_results) == CLAIM_IDS
    claims = {c.claim_id: c for c in get_claims("shape-orientation")}
    for claim_id, result in smoke_results.items():
        assert result.error is None, result.error
        assert result.artifacts and result.observed
        if claim_id == "flipper-options":
            assert claims[claim_id].reported and result.status == "reported"
        else:
            assert claims[claim_id].control and result.control is not None
            assert claims[claim_id].effect_of_interest is not None
            assert result.status in STATUSES and result.status != "error"
            assert result.power["n_seeds"] == 2


def test_shape_orientation_claim_figures_are_in_range(smoke_results):
    collapse = smoke_results["l2-collapse"].observed
    assert collapse["n_seeds"] == 2
    assert all(0 <= v <= 1 for v in collapse["quotient_fraction_below_10deg_per_seed"])
    assert collapse["check"]["alternative"] == "greater"
    accuracy = smoke_results["two-stage-up-accuracy"].observed
    for name in ("two_stage", "naive", "pca", "naive_flipper"):
        assert all(0 <= v <= 1 for v in accuracy[f"up_accuracy_{name}_per_seed"])
    # top-4 can only be as good as top-1 or better
    assert all(t4 >= t1 for t4, t1 in zip(accuracy["up_accuracy_two_stage_top4_per_seed"],
                                          accuracy["up_accuracy_two_stage_per_seed"]))
    conformal = smoke_results["conformal-coverage"]
    coverage = conformal.observed["coverage"]
    low, high = coverage["clopper_pearson_95"]
    assert low <= coverage["coverage"] <= high
    sizes = conformal.observed["per_seed"]["flipper"]
    assert all(1 <= v <= 24 for v in sizes)
    assert conformal.observed["check"]["alternative"] == "less"
    # the control flipper has nothing to learn: its sets stay large
    control_sizes = conformal.observed["per_seed"]["control_flipper"]
    assert min(control_sizes) > 12
    options = smoke_results["flipper-options"].observed
    assert all(t4 >= t1 for t4, t1 in zip(options["up_accuracy_forward_top4_per_seed"],
                                          options["up_accuracy_forward_top1_per_seed"]))
