"""Tests of the reusable ViT pieces: patching, masking, positions, blocks, trimming."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from skpaper.representation import (
    VisionTransformer,
    ViTBlock,
    patchify,
    random_masking,
    sincos_pos_embed_2d,
    unpatchify,
)


@given(batch=st.integers(1, 3), channels=st.integers(1, 4), gh=st.integers(1, 4),
       gw=st.integers(1, 4), patch=st.integers(1, 4), agnostic=st.booleans())
def test_patchify_unpatchify_round_trip(batch, channels, gh, gw, patch, agnostic):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(batch, channels, gh * patch, gw * patch, generator=gen)
    tokens = patchify(x, patch, channel_agnostic=agnostic)
    n_tokens = gh * gw * (channels if agnostic else 1)
    assert tokens.shape == (batch, n_tokens, patch * patch * (1 if agnostic else channels))
    assert torch.equal(unpatchify(tokens, patch, channels, (gh, gw), channel_agnostic=agnostic), x)


def test_patchify_token_holds_its_patch():
    x = torch.arange(2 * 4 * 6, dtype=torch.float32).reshape(1, 2, 4, 6)
    tokens = patchify(x, 2)
    # token 4 is patch row 1, column 1: pixels rows 2-3, columns 2-3 of both channels
    assert torch.equal(tokens[0, 4], x[0, :, 2:4, 2:4].reshape(-1))


@given(n_tokens=st.integers(1, 200), ratio=st.floats(0.01, 0.99), batch=st.integers(1, 4))
def test_random_masking_ratio_is_exact(n_tokens, ratio, batch):
    keep, mask, restore = random_masking(batch, n_tokens, ratio,
                                         generator=torch.Generator().manual_seed(1))
    n_mask = min(max(round(ratio * n_tokens), 1), n_tokens)
    assert torch.all(mask.sum(dim=1) == n_mask)
    assert keep.shape == (batch, n_tokens - n_mask)
    assert torch.all(mask.gather(1, keep) == 0)
    # restore unshuffles [visible, masked] back to token order
    order = torch.cat([keep, torch.nonzero(mask, as_tuple=False)[:, 1].reshape(batch, -1)], 1)
    assert torch.equal(order.gather(1, restore), torch.arange(n_tokens).expand(batch, -1))


def test_random_masking_seeded_and_bad_ratio():
    a = random_masking(2, 16, 0.75, generator=torch.Generator().manual_seed(3))
    b = random_masking(2, 16, 0.75, generator=torch.Generator().manual_seed(3))
    assert all(torch.equal(u, v) for u, v in zip(a, b))
    with pytest.raises(ValueError, match="mask_ratio"):
        random_masking(2, 16, 1.0)


def test_sincos_pos_embed_shape_and_distinct_rows():
    embed = sincos_pos_embed_2d(16, 3, 4)
    assert embed.shape == (12, 16)
    assert torch.unique(embed, dim=0).shape[0] == 12
    with pytest.raises(ValueError, match="multiple of 4"):
        sincos_pos_embed_2d(10, 2, 2)


def _vit(**kwargs):
    torch.manual_seed(0)
    params = dict(embed_dim=16, depth=3, n_heads=2)
    params.update(kwargs)
    return VisionTransformer(3, 4, (2, 2), **params)


def test_block_features_match_trimmed_encoder():
    vit = _vit(layer_scale=None)
    x = torch.randn(4, 3, 8, 8)
    feats = vit.block_features(x)
    assert len(feats) == 3 and feats[0].shape == (4, 16)
    for b in (1, 2, 3):
        trimmed = vit.trim(b)
        assert trimmed.depth == b
        torch.testing.assert_close(trimmed.block_features(x)[-1], feats[b - 1])
        torch.testing.assert_close(trimmed.pool(trimmed.run_blocks(trimmed.embed(x))),
                                   feats[b - 1])
    assert vit.depth == 3
    assert not torch.allclose(feats[0], feats[2])


def test_laurel_residual_starts_as_standard():
    x = torch.randn(2, 3, 8, 8)
    for block_type in ("sequential", "parallel"):
        plain = _vit(block_type=block_type, layer_scale=0.5)
        laurel = _vit(block_type=block_type, layer_scale=0.5, residual="rw+lr+pa",
                      laurel_rank=2)
        missing, unexpected = laurel.load_state_dict(plain.state_dict(), strict=False)
        assert not unexpected and all("residual" in key for key in missing)
        torch.testing.assert_close(laurel(x), plain(x))
        extra = sum(p.numel() for p in laurel.parameters()) - sum(
            p.numel() for p in plain.parameters())
        per_res = 2 + 2 * 2 * 16 + 3  # RW + LR (rank 2, D=16) + PA (k=3)
        n_res = 3 * (1 if block_type == "parallel" else 2)
        assert extra == n_res * per_res


def test_channel_agnostic_is_invariant_to_channel_order_and_count():
    vit = _vit(channel_agnostic=True, layer_scale=None)
    x = torch.randn(2, 3, 8, 8)
    base = vit.block_features(x)[-1]
    permuted = vit.block_features(x[:, [2, 0, 1]])[-1]
    torch.testing.assert_close(base, permuted, atol=1e-5, rtol=1e-5)
    assert vit.block_features(x[:, :2])[-1].shape == (2, 16)
    with pytest.raises(ValueError, match="more than in_chans"):
        vit(torch.randn(1, 4, 8, 8))


def test_vit_bad_inputs():
    vit = _vit()
    with pytest.raises(ValueError, match="channels"):
        vit(torch.randn(1, 2, 8, 8))
    with pytest.raises(ValueError, match="patch grid"):
        vit(torch.randn(1, 3, 12, 8))
    with pytest.raises(ValueError, match="multiples of patch_size"):
        vit(torch.randn(1, 3, 9, 8))
    with pytest.raises(ValueError, match="n_blocks"):
        vit.trim(4)
    with pytest.raises(ValueError, match="block_type"):
        ViTBlock(8, 2, block_type="serial")
    with pytest.raises(ValueError, match="residual"):
        ViTBlock(8, 2, residual="dense")
    with pytest.raises(ValueError, match="must divide"):
        ViTBlock(10, 4)
    with pytest.raises(TypeError, match="patch_size"):
        patchify(torch.randn(1, 1, 4, 4), 2.0)
