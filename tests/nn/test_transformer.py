"""Tests of the shared transformer block: masking, shapes, LAuReL residuals, and equality
with the blocks it replaced (the tiny LM's, the microscopy ViT's, the 1D tokenizer's)."""

import math

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from skpaper.language import TinyCausalLM
from skpaper.nn import (
    LAUREL_VARIANTS,
    LaurelSequential,
    SelfAttention,
    TransformerBlock,
    laurel_param_count,
    with_laurel,
)
from skpaper.representation import VisionTransformer, ViTBlock
from skpaper.vision._tokenizer_modules import Tokenizer1DNetwork


@pytest.fixture(autouse=True)
def _private_torch_rng():
    """These tests seed torch's global RNG to build modules; keep that from other tests."""
    with torch.random.fork_rng():
        yield


def _perturb(module, seed=0, scale=0.1):
    """Move every parameter away from its initial value (as training would)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(scale * torch.randn(p.shape, generator=gen))
    return module


def _built(seed, factory):
    """``factory()`` built from the global RNG seeded with ``seed``, and a draw made after it."""
    torch.manual_seed(seed)
    module = factory()
    return module, torch.rand(4)


def _same_parameters(a, b):
    pa, pb = list(a.parameters()), list(b.parameters())
    assert [p.shape for p in pa] == [p.shape for p in pb]
    for x, y in zip(pa, pb):
        torch.testing.assert_close(x, y, rtol=0, atol=0)


def _run(stack, x):
    history = []
    for block in stack:
        x = block(x, history)
    return x


# ------------------------------------------------------- the blocks the shared one replaced
class _FormerCausalAttention(nn.Module):
    """The attention of TinyCausalLM before it used TransformerBlock."""

    def __init__(self, d_model, n_heads, dropout):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.dropout = dropout

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(
            q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0)
        return self.proj(out.transpose(1, 2).reshape(b, t, d))


def _former_lm_blocks(n_layers, d_model, n_heads, d_ff, dropout, residual, rank):
    blocks = []
    for _ in range(n_layers):
        attn = nn.Sequential(nn.LayerNorm(d_model),
                             _FormerCausalAttention(d_model, n_heads, dropout),
                             nn.Dropout(dropout))
        mlp = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, d_ff), nn.GELU(),
                            nn.Linear(d_ff, d_model), nn.Dropout(dropout))
        for branch in (attn, mlp):
            blocks.append(with_laurel(branch, d_model, residual, rank=min(rank, d_model)))
    return LaurelSequential(*blocks)


class _FormerViTAttention(nn.Module):
    def __init__(self, dim, n_heads, qk_norm):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, dim // n_heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.q_norm = nn.LayerNorm(self.head_dim) if qk_norm else nn.Identity()
        self.k_norm = nn.LayerNorm(self.head_dim) if qk_norm else nn.Identity()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        batch, n_tokens, dim = x.shape
        qkv = self.qkv(x).reshape(batch, n_tokens, 3, self.n_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        out = F.scaled_dot_product_attention(self.q_norm(q), self.k_norm(k), v)
        return self.proj(out.transpose(1, 2).reshape(batch, n_tokens, dim))


class _Scale(nn.Module):
    def __init__(self, dim, value):
        super().__init__()
        self.gamma = nn.Parameter(torch.full((dim,), float(value)))

    def forward(self, x):
        return x * self.gamma


class _FormerParallel(nn.Module):
    def __init__(self, dim, n_heads, hidden, layer_scale, qk_norm):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = _FormerViTAttention(dim, n_heads, qk_norm)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))
        self.scale = _Scale(dim, layer_scale)

    def forward(self, x):
        y = self.norm(x)
        return self.scale(self.attn(y) + self.mlp(y))


class _FormerViTBlock(nn.Module):
    """ViTBlock before it was a TransformerBlock (LayerScale on)."""

    def __init__(self, dim, n_heads, mlp_ratio, layer_scale, qk_norm, block_type, residual, rank):
        super().__init__()
        hidden = max(int(round(dim * mlp_ratio)), 1)
        if block_type == "parallel":
            branches = [_FormerParallel(dim, n_heads, hidden, layer_scale, qk_norm)]
        else:
            branches = [
                nn.Sequential(nn.LayerNorm(dim), _FormerViTAttention(dim, n_heads, qk_norm),
                              _Scale(dim, layer_scale)),
                nn.Sequential(nn.LayerNorm(dim), nn.Sequential(nn.Linear(dim, hidden), nn.GELU(),
                                                               nn.Linear(hidden, dim)),
                              _Scale(dim, layer_scale)),
            ]
        self.sublayers = nn.ModuleList(with_laurel(b, dim, residual, rank=min(rank, dim))
                                       for b in branches)

    def forward(self, x, history=None):
        for sublayer in self.sublayers:
            x = sublayer(x, history)
        return x


class _FormerTokenizerBlock(nn.Module):
    """The 1D tokenizer's block before it was a TransformerBlock."""

    def __init__(self, width, n_heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, n_heads, batch_first=True)
        self.ln_2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                 nn.Linear(4 * width, width))

    def forward(self, x):
        h = self.ln_1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln_2(x))


# ------------------------------------------------------------------------------- behaviour
def test_causal_block_ignores_later_tokens():
    torch.manual_seed(0)
    block = _perturb(TransformerBlock(16, 4, causal=True)).eval()
    x = torch.randn(2, 7, 16)
    changed = x.clone()
    changed[:, 4:] = torch.randn(2, 3, 16)
    with torch.no_grad():
        a, b = block(x), block(changed)
    torch.testing.assert_close(a[:, :4], b[:, :4])
    assert not torch.allclose(a[:, 4:], b[:, 4:])
    # Without the mask every position sees the change.
    block.sublayers[0].block[1].causal = False
    with torch.no_grad():
        assert not torch.allclose(block(x)[:, :4], block(changed)[:, :4])


@pytest.mark.parametrize("block_type", ["sequential", "parallel"])
@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("residual", ["standard", "rw+lr+pa"])
def test_block_keeps_the_shape_and_counts_its_sublayers(block_type, norm_first, residual):
    block = TransformerBlock(12, 3, mlp_ratio=2.0, block_type=block_type, norm_first=norm_first,
                             residual=residual, laurel_rank=2, layer_scale=0.5, dropout=0.1)
    x = torch.randn(3, 5, 12)
    assert block(x).shape == x.shape
    assert len(block.sublayers) == (1 if block_type == "parallel" else 2)
    assert (block.post_norms is None) == norm_first


def test_mlp_width_activation_and_biases():
    block = TransformerBlock(8, 2, d_ff=5, activation="relu", qkv_bias=False, bias=False)
    mlp = block.sublayers[1].block[1]
    assert mlp[0].out_features == 5 and isinstance(mlp[1], nn.ReLU)
    assert all(layer.bias is None for layer in (mlp[0], mlp[2], block.sublayers[0].block[1].qkv,
                                                 block.sublayers[0].block[1].proj))
    assert TransformerBlock(10, 2, mlp_ratio=1.5).sublayers[1].block[1][0].out_features == 15


@pytest.mark.parametrize("variant", LAUREL_VARIANTS)
@pytest.mark.parametrize("block_type", ["sequential", "parallel"])
def test_laurel_block_starts_as_the_standard_block(variant, block_type):
    torch.manual_seed(0)
    standard = _perturb(TransformerBlock(8, 2, block_type=block_type)).eval()
    laurel = TransformerBlock(8, 2, block_type=block_type, residual=variant, laurel_rank=2).eval()
    missing, unexpected = laurel.load_state_dict(standard.state_dict(), strict=False)
    assert not unexpected and all(".residual." in key for key in missing)
    extra = sum(p.numel() for p in laurel.parameters()) - sum(
        p.numel() for p in standard.parameters())
    assert extra == len(laurel.sublayers) * laurel_param_count(8, variant, rank=2)
    x = torch.randn(2, 5, 8)
    history_a, history_b = [], []
    with torch.no_grad():
        for _ in range(3):  # a stack of three copies, so that PA reads earlier activations
            a, b = standard(x, history_a), laurel(x, history_b)
            torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert len(history_b) == 2  # k_prev - 1 activations are kept


def test_pa_history_changes_the_output_once_trained():
    torch.manual_seed(0)
    block = _perturb(TransformerBlock(8, 2, residual="pa", laurel_rank=2), scale=0.5).eval()
    x = torch.randn(2, 4, 8)
    with torch.no_grad():
        alone = block(x)
        with_history = block(x, [torch.randn(2, 4, 8), torch.randn(2, 4, 8)])
    assert not torch.allclose(alone, with_history)


def test_block_rejects_bad_options():
    with pytest.raises(ValueError, match="block_type must be one of"):
        TransformerBlock(8, 2, block_type="serial")
    with pytest.raises(ValueError, match="residual must be one of"):
        TransformerBlock(8, 2, residual="dense")
    with pytest.raises(ValueError, match="activation must be one of"):
        TransformerBlock(8, 2, activation="swish")
    with pytest.raises(ValueError, match="n_heads=3 must divide"):
        TransformerBlock(8, 3)
    with pytest.raises(ValueError, match="dropout"):
        TransformerBlock(8, 2, dropout=1.5)
    with pytest.raises(ValueError, match="mlp_ratio"):
        TransformerBlock(8, 2, mlp_ratio=0)
    with pytest.raises(TypeError, match="d_ff"):
        TransformerBlock(8, 2, d_ff=2.5)
    with pytest.raises(TypeError, match="laurel_rank"):
        TransformerBlock(8, 2, laurel_rank=None)
    with pytest.raises(ValueError, match="init must be one of"):
        SelfAttention(8, 2, init="xavier")


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_block_matches_torch_transformer_encoder_layer(norm_first, activation):
    torch.manual_seed(0)
    ref = nn.TransformerEncoderLayer(12, 3, dim_feedforward=20, dropout=0.0,
                                     activation=activation, batch_first=True,
                                     norm_first=norm_first).eval()
    _perturb(ref)
    block = TransformerBlock(12, 3, d_ff=20, activation=activation, norm_first=norm_first).eval()
    attn, mlp = block.sublayers[0].block[1], block.sublayers[1].block[1]
    norms = ((block.sublayers[0].block[0], block.sublayers[1].block[0]) if norm_first
             else tuple(block.post_norms))
    with torch.no_grad():
        for dst, src in ((attn.qkv.weight, ref.self_attn.in_proj_weight),
                         (attn.qkv.bias, ref.self_attn.in_proj_bias),
                         (attn.proj.weight, ref.self_attn.out_proj.weight),
                         (attn.proj.bias, ref.self_attn.out_proj.bias),
                         (mlp[0].weight, ref.linear1.weight), (mlp[0].bias, ref.linear1.bias),
                         (mlp[2].weight, ref.linear2.weight), (mlp[2].bias, ref.linear2.bias),
                         (norms[0].weight, ref.norm1.weight), (norms[0].bias, ref.norm1.bias),
                         (norms[1].weight, ref.norm2.weight), (norms[1].bias, ref.norm2.bias)):
            dst.copy_(src)
        x = torch.randn(2, 6, 12)
        torch.testing.assert_close(block(x), ref(x), rtol=1e-5, atol=1e-6)
        mask = nn.Transformer.generate_square_subsequent_mask(6)
        block.sublayers[0].block[1].causal = True
        torch.testing.assert_close(block(x), ref(x, src_mask=mask, is_causal=True),
                                   rtol=1e-5, atol=1e-6)


# -------------------------------------------------------- equality with the former blocks
@pytest.mark.parametrize("residual", ["standard", "rw+lr+pa"])
def test_equals_the_former_language_model_blocks(residual):
    config = dict(n_layers=2, d_model=8, n_heads=2, d_ff=24, dropout=0.1, residual=residual,
                  rank=2)
    former, draw_a = _built(0, lambda: _former_lm_blocks(**config))
    new, draw_b = _built(0, lambda: nn.ModuleList(
        TransformerBlock(8, 2, d_ff=24, causal=True, dropout=0.1, residual=residual,
                         laurel_rank=2) for _ in range(2)))
    torch.testing.assert_close(draw_a, draw_b, rtol=0, atol=0)  # the same random draws
    _same_parameters(former, new)
    _perturb(former), _perturb(new)
    x = torch.randn(3, 6, 8)
    torch.manual_seed(1)
    out_a = former(x)
    torch.manual_seed(1)
    out_b = _run(new, x)  # training mode: the same dropout masks
    torch.testing.assert_close(out_a, out_b, rtol=0, atol=0)
    out_a.square().sum().backward()
    out_b.square().sum().backward()
    for p, q in zip(former.parameters(), new.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=0, atol=0)


@pytest.mark.parametrize("block_type", ["sequential", "parallel"])
@pytest.mark.parametrize("qk_norm", [True, False])
def test_equals_the_former_vit_block(block_type, qk_norm):
    args = dict(mlp_ratio=2.5, layer_scale=0.3, qk_norm=qk_norm, block_type=block_type,
                residual="rw+lr")
    former, draw_a = _built(0, lambda: _FormerViTBlock(16, 4, rank=3, **args))
    new, draw_b = _built(0, lambda: ViTBlock(16, 4, laurel_rank=3, **args))
    torch.testing.assert_close(draw_a, draw_b, rtol=0, atol=0)
    assert list(former.state_dict()) == list(new.state_dict())  # the keys did not change
    _same_parameters(former, new)
    _perturb(former), _perturb(new)
    x = torch.randn(2, 5, 16)
    torch.testing.assert_close(former(x, []), new(x, []), rtol=0, atol=0)


def test_equals_the_former_tokenizer_block():
    former, draw_a = _built(0, lambda: _FormerTokenizerBlock(16, 4))
    new, draw_b = _built(0, lambda: TransformerBlock(16, 4, attn_init="mha"))
    # torch.nn.MultiheadAttention's initialisation, in its order of random draws
    torch.testing.assert_close(draw_a, draw_b, rtol=0, atol=0)
    _same_parameters(former, new)
    _perturb(former), _perturb(new)
    x = torch.randn(3, 7, 16)
    torch.testing.assert_close(former(x), new(x), rtol=1e-6, atol=1e-6)
    with torch.no_grad():
        torch.testing.assert_close(former.eval()(x), new.eval()(x), rtol=1e-6, atol=1e-6)


# ------------------------------------------------------ state dicts with the former names
def _renamed(state, new_keys, old_keys):
    mapping = dict(zip(new_keys, old_keys))
    return {mapping.get(k, k): v for k, v in state.items()}


@pytest.mark.parametrize("residual", ["standard", "rw+lr+pa"])
def test_tiny_causal_lm_loads_state_dicts_with_the_former_names(residual):
    torch.manual_seed(0)
    lm = _perturb(TinyCausalLM(9, n_layers=2, d_model=8, n_heads=2, d_ff=12, max_len=8,
                               residual=residual, laurel_rank=2)).eval()
    former = _former_lm_blocks(2, 8, 2, 12, 0.0, residual, 2)
    new_keys = [k for k in lm.state_dict() if k.startswith("blocks.")]
    old_keys = ["blocks." + k for k in former.state_dict()]
    assert len(new_keys) == len(old_keys) and "blocks.layers.1.block.3.weight" in old_keys
    old_state = _renamed(lm.state_dict(), new_keys, old_keys)
    again = TinyCausalLM(9, n_layers=2, d_model=8, n_heads=2, d_ff=12, max_len=8,
                         residual=residual, laurel_rank=2).eval()
    again.load_state_dict(old_state)
    ids = torch.randint(0, 9, (2, 6))
    with torch.no_grad():
        torch.testing.assert_close(again(ids), lm(ids), rtol=0, atol=0)


def test_tokenizer_network_loads_state_dicts_with_the_former_names():
    args = ((8, 8, 1), 3, 4, 8, "vit", 4, 16, 2, 2, False, 0.25)
    torch.manual_seed(0)
    net = _perturb(Tokenizer1DNetwork(*args)).eval()
    state = net.state_dict()
    former = _FormerTokenizerBlock(16, 2)
    old_state = dict(state)
    for part in ("encoder", "decoder"):
        for i in range(2):
            head = f"{part}.blocks.{i}."
            new_keys = [k for k in state if k.startswith(head)]
            old_state = _renamed(old_state, new_keys, [head + k for k in former.state_dict()])
    assert "encoder.blocks.1.attn.in_proj_weight" in old_state
    again = Tokenizer1DNetwork(*args).eval()
    again.load_state_dict(old_state)
    x = torch.randn(2, 1, 8, 8)
    with torch.no_grad():
        torch.testing.assert_close(again(x)[0], net(x)[0], rtol=0, atol=0)


def test_vision_transformer_keys_are_unchanged():
    vit = VisionTransformer(3, 4, (2, 2), embed_dim=16, depth=1, n_heads=2, residual="rw")
    keys = set(vit.state_dict())
    assert {"blocks.0.sublayers.0.block.1.qkv.weight", "blocks.0.sublayers.0.block.2.gamma",
            "blocks.0.sublayers.1.block.1.2.weight", "blocks.0.sublayers.1.residual.rw_logits",
            } <= keys
    assert not any("qkv.bias" in k for k in keys)


def test_self_attention_scales_by_the_head_width():
    torch.manual_seed(0)
    attn = SelfAttention(8, 2).eval()
    x = torch.randn(1, 3, 8)
    q, k, v = attn.qkv(x).reshape(1, 3, 3, 2, 4).permute(2, 0, 3, 1, 4)
    weights = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(4), dim=-1)
    expected = attn.proj((weights @ v).transpose(1, 2).reshape(1, 3, 8))
    torch.testing.assert_close(attn(x), expected)
