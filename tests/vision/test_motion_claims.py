"""The motion-transfer claims at smoke scale: structure and internal consistency."""

import numpy as np
import pytest

from skpaper.papers import motion_transfer as paper
from skpaper.papers._registry import get_claims, run_claim


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("motion")
    return {c.claim_id: run_claim(c, "smoke", 0, out) for c in get_claims(paper.SLUG)}, out


def test_motion_claims_are_registered():
    ids = {c.claim_id for c in get_claims(paper.SLUG)}
    assert ids == {"large-displacement-gain", "small-displacement-no-harm"}


@pytest.mark.parametrize("claim, bin_name", [("large-displacement-gain", "large"),
                                             ("small-displacement-no-harm", "small")])
def test_motion_claims_report_both_paths_per_bin(results, claim, bin_name):
    res = results[0][claim]
    assert res.error is None
    obs = res.observed
    n = obs[f"n_pairs_{bin_name}"]
    assert n > 0
    assert sum(obs[f"{bin_name}_selected_t"].values()) == n
    for name in ("direct", "anytime", "anytime_model_direct", "real_driving"):
        assert np.isfinite(obs[f"{bin_name}_akd_{name}"])
        assert 0 <= obs[f"{bin_name}_mkr_{name}"] <= 1
    assert obs[f"{bin_name}_l1_real_driving"] == 0.0
    # The paired difference is the difference of the means (no pair lacks a visible keypoint
    # at this scale) and its interval contains it.
    diff = obs[f"{bin_name}_akd_anytime_minus_direct"]
    low, high = obs[f"{bin_name}_akd_anytime_minus_direct_ci95"]
    assert low <= diff <= high
    for artifact in res.artifacts:
        assert (results[1] / paper.SLUG / artifact).exists()


def test_motion_claims_share_one_trained_pair_of_models():
    _, models, seconds = paper._trained("smoke", 0)
    assert set(models) == {"direct", "anytime"}
    assert models["direct"].interpolation is None and models["anytime"].bidirectional
    assert models["direct"].n_steps_ == models["anytime"].n_steps_
    assert all(s > 0 for s in seconds.values())
