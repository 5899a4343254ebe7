"""The tokenizer-1d claims at smoke scale: they run, report their figures and plots."""

import numpy as np
import pytest

from skpaper.papers import get_claims, run_claim

CLAIMS = {c.claim_id: c for c in get_claims("tokenizer-1d")}


def test_tokenizer_1d_registers_three_claims():
    assert sorted(CLAIMS) == ["inpainting-through-vq", "realism-vs-compression",
                              "token-copy-transfers-attribute"]


@pytest.mark.parametrize("claim_id", sorted(CLAIMS))
def test_tokenizer_1d_claim_runs_at_smoke_scale(claim_id, tmp_path):
    result = run_claim(CLAIMS[claim_id], "smoke", seed=0, out_dir=tmp_path)
    assert result.error is None, result.error
    for artifact in result.artifacts:
        assert (tmp_path / "tokenizer-1d" / artifact).stat().st_size > 0
    obs = result.observed
    values = [v for v in obs.values() if isinstance(v, float)]
    assert values and np.all(np.isfinite(values))
    if claim_id == "inpainting-through-vq":
        assert {"T4_encode_hidden_mse", "T4_tto_vq_hidden_mse",
                "T4_tto_continuous_judge_acc"} <= set(obs)
        # optimising on the known pixels must already beat plain encoding of the masked image
        assert obs["T4_tto_vq_hidden_mse"] < obs["T4_encode_hidden_mse"]
    elif claim_id == "realism-vs-compression":
        assert obs["pixels_nn_distance"] > 0 and -1 <= obs[
            "vq_spearman_tokens_vs_nn_distance"] <= 1
        assert 0 <= obs["T2_vq_guide_success"] <= 1
    else:
        assert obs["attribute_rate_without_edit"] <= obs["transfer_rate_attribute_position"]
        assert 0 <= obs["attribute_position"] < obs["n_tokens"]
