"""The tokenizer-1d claims at smoke scale: they run, report their figures and plots."""

import numpy as np
import pytest

from skpaper.papers import get_claims, run_claim
from skpaper.papers._registry import STATUSES

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
    assert result.status in STATUSES and result.status != "error"
    assert CLAIMS[claim_id].effect_of_interest is not None
    assert result.control is not None and result.control.observed["check"]
    obs = result.observed
    n_seeds = obs["n_seeds"]
    assert n_seeds == 2 == result.power["n_seeds"]
    assert all(np.all(np.isfinite(v)) for v in obs["per_seed"].values())
    if claim_id == "inpainting-through-vq":
        for arm in ("encode", "tto_vq", "tto_continuous"):
            assert len(obs[f"T4_{arm}_hidden_mse_per_seed"]) == n_seeds
        # TTO fits the known pixels: its error there is far below plain encoding's
        assert max(obs["T4_tto_vq_known_mse_per_seed"]) < min(
            obs["T4_encode_known_mse_per_seed"])
        # the control's tokenizer is untrained: its TTO fills the hidden half far worse
        assert obs["per_seed"]["untrained_tokenizer"] != obs["per_seed"]["trained_tokenizer"]
        assert min(obs["T4_tto_vq_untrained_hidden_mse_per_seed"]) > max(
            obs["T4_tto_vq_hidden_mse_per_seed"])
        assert len(obs["random_codebook_figure_per_seed"]) == n_seeds
    elif claim_id == "realism-vs-compression":
        # the held-out images are at Fréchet distance 0 from themselves
        assert obs["reference_frechet_to_itself"] == pytest.approx(0.0, abs=1e-9)
        assert all(f > 0 for f in obs["T2_generated_frechet_per_seed"])
        assert all(0 <= v <= 1 for v in obs["T2_generated_guide_success_per_seed"])
        assert set(obs["reconstructions"]) == {"frechet_T2_minus_T8", "judge_acc_T2_minus_T8",
                                               "diversity_T2_minus_T8"}
        assert obs["judge_acc_T2_minus_T8"]["margin"] == -0.05
    else:
        from skpaper.papers.tokenizer_1d import _CONFIG

        assert obs["tokenizer"] == _CONFIG["smoke"]["copy_encoder"]
        assert _CONFIG["quick"]["copy_encoder"] == _CONFIG["full"]["copy_encoder"] == "vit"
        assert all(0 <= p < obs["n_tokens"] for p in obs["attribute_position_per_seed"])
        assert all(0 <= r <= 1 for r in obs["without_edit_per_seed"])
        # the random position is the mean over every position
        for value, per_position in zip(obs["per_seed"]["random_position"],
                                       obs["success_per_position_per_seed"]):
            assert value == pytest.approx(np.mean(per_position), abs=1e-3)
        # an edit that succeeds carries the attribute and keeps the digit: it is counted in both
        for arm in ("attribute_position", "random_position", "permuted_label_position"):
            assert all(0 <= v <= 1 for v in obs["per_seed"][arm])
        assert all(v <= min(a, b) + 1e-12 for v, a, b in zip(
            obs["per_seed"]["attribute_position"], obs["dim_rate_per_seed"],
            obs["digit_kept_per_seed"]))


def test_frechet_distance_matches_the_closed_form():
    from scipy import linalg

    from skpaper.papers.tokenizer_1d import _frechet_distance

    rng = np.random.RandomState(0)
    a, b = rng.normal(size=(300, 4)), rng.normal(size=(200, 4)) * 1.5 + 0.3
    ca, cb = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    expected = ((a.mean(0) - b.mean(0)) ** 2).sum() + np.trace(
        ca + cb - 2 * np.real(linalg.sqrtm(ca @ cb)))
    assert _frechet_distance(a, b) == pytest.approx(expected)
    assert _frechet_distance(a, a) == 0.0
    # a collapsed set (one repeated image) is far from the spread-out one
    assert _frechet_distance(np.repeat(a[:1], 50, axis=0), a) > _frechet_distance(a[:150], a)


def test_inpainting_control_tokenizer_is_redrawn_and_leaves_torch_rng_alone():
    import torch

    from skpaper.papers.tokenizer_1d import _random_codebook, _tokenizer, _untrained

    tok = _tokenizer("digits", 4, "smoke", 1)
    state = torch.random.get_rng_state()
    untrained, shuffled = _untrained(tok, 3), _random_codebook(tok, 3)
    assert torch.equal(state, torch.random.get_rng_state())
    trained = dict(tok.module_.named_parameters())
    redrawn = dict(untrained.module_.named_parameters())
    assert all(not torch.equal(trained[k], redrawn[k]) for k in trained if trained[k].numel() > 1)
    codebook = dict(shuffled.module_.named_parameters())
    assert not torch.equal(codebook["quantizer.embedding"], trained["quantizer.embedding"])
    assert all(torch.equal(codebook[k], trained[k]) for k in trained if "quantizer" not in k)
    # the fitted tokenizer itself is untouched
    assert torch.equal(dict(tok.module_.named_parameters())["quantizer.embedding"],
                       trained["quantizer.embedding"])


def test_token_copy_second_design_is_sized_from_the_first_on_fresh_seeds():
    from skpaper.papers import tokenizer_1d as paper
    from skpaper.papers._stats import claim_seeds, sd_upper_limit, seeds_to_decide

    quick, first = paper._CONFIG["quick"], paper._COPY_FIRST_DESIGN
    looks, key = quick["copy_looks"], quick["copy_key"]
    # the last look decides wherever the mean lies, at the first design's SD limit and the
    # level each of the two looks spends
    level = 0.05 / len(looks)
    assert looks[-1] == seeds_to_decide(sd_upper_limit(first["sd"], first["n"]),
                                        paper._COPY_EOI.value, alpha=level)
    fresh = set(claim_seeds(0, looks[-1], *key))
    assert not fresh & set(claim_seeds(0, first["n"], *first["key"]))
    assert not fresh & set(claim_seeds(0, 3, 43, 1))  # the calibration's stream
