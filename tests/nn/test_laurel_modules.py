"""Tests of the LAuReL torch modules: LaurelResidual, with_laurel, LaurelSequential."""

import pickle

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch import nn

from skpaper.nn import (
    LAUREL_VARIANTS,
    LaurelBlock,
    LaurelResidual,
    LaurelSequential,
    laurel_param_count,
    with_laurel,
)

ALL_OPTIONS = [
    (variant, weight_norm, lr_init, pa_map)
    for variant in LAUREL_VARIANTS
    for weight_norm in ("softmax", "sigmoid", "none")
    for lr_init in ("xavier", "orthogonal")
    for pa_map in ("lowrank", "identity")
]


def _perturb(module, seed=0):
    """Move every parameter away from its initial value (as training would)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
    return module


@pytest.mark.parametrize("variant, weight_norm, lr_init, pa_map", ALL_OPTIONS)
@pytest.mark.parametrize("shape", [(5, 12), (3, 4, 12)])
def test_laurel_residual_is_standard_residual_at_init(variant, weight_norm, lr_init, pa_map,
                                                     shape):
    torch.manual_seed(0)
    res = LaurelResidual(12, variant, rank=3, k_prev=3, weight_norm=weight_norm,
                         lr_init=lr_init, pa_map=pa_map)
    x, fx = torch.randn(shape), torch.randn(shape)
    history = [torch.randn(shape) for _ in range(4)]
    for hist in (None, history[:1], history):
        out = res(x, fx, hist)
        torch.testing.assert_close(out, x + fx, rtol=0, atol=1e-6)
        assert torch.equal(out, x + fx)


@given(dim=st.integers(1, 24), rank=st.integers(1, 8), k_prev=st.integers(1, 4),
       batch=st.integers(1, 4), tokens=st.integers(0, 3),
       variant=st.sampled_from(LAUREL_VARIANTS), seed=st.integers(0, 2**16))
def test_laurel_residual_init_equivalence_property(dim, rank, k_prev, batch, tokens, variant,
                                                   seed):
    gen = torch.Generator().manual_seed(seed)
    shape = (batch, tokens, dim) if tokens else (batch, dim)
    x, fx = torch.randn(shape, generator=gen), torch.randn(shape, generator=gen)
    history = [torch.randn(shape, generator=gen) for _ in range(k_prev)]
    res = LaurelResidual(dim, variant, rank=rank, k_prev=k_prev)
    assert torch.equal(res(x, fx, history), x + fx)


@pytest.mark.parametrize("dim, rank, k_prev", [(64, 16, 3), (10, 4, 1), (7, 9, 5)])
def test_laurel_parameter_counts_are_2_2rD_2rDk(dim, rank, k_prev):
    expected = {"standard": 0, "rw": 2, "lr": 2 * rank * dim, "pa": 2 * rank * dim + k_prev,
                "rw+lr": 2 + 2 * rank * dim, "rw+lr+pa": 2 + 2 * rank * dim + k_prev}
    for variant, count in expected.items():
        res = LaurelResidual(dim, variant, rank=rank, k_prev=k_prev)
        assert sum(p.numel() for p in res.parameters()) == count
        assert laurel_param_count(dim, variant, rank, k_prev) == count
    identity_pa = LaurelResidual(dim, "pa", rank=rank, k_prev=k_prev, pa_map="identity")
    assert sum(p.numel() for p in identity_pa.parameters()) == k_prev
    assert laurel_param_count(dim, "pa", rank, k_prev, pa_map="identity") == k_prev


def test_gradients_reach_alpha_beta_a_b_gamma():
    torch.manual_seed(0)
    stack = LaurelSequential(*[
        with_laurel(nn.Sequential(nn.Linear(8, 8), nn.Tanh()), 8, "rw+lr+pa", rank=2)
        for _ in range(3)
    ])
    x, target = torch.randn(16, 8), torch.randn(16, 8)
    optimizer = torch.optim.SGD(stack.parameters(), lr=0.1)
    res = stack[2].residual
    # B = 0 at init, so B receives a gradient first; A and gamma follow one step later.
    nn.functional.mse_loss(stack(x), target).backward()
    assert res.up.grad.abs().sum() > 0 and res.rw_logits.grad.abs().sum() > 0
    optimizer.step()
    optimizer.zero_grad()
    nn.functional.mse_loss(stack(x), target).backward()
    for name in ("rw_logits", "down", "up", "gamma"):
        grad = getattr(res, name).grad
        assert grad is not None and torch.all(grad.abs().sum() > 0), name
    # the history reaches gamma_{i,1} and gamma_{i,2} of the third block
    assert torch.all(res.gamma.grad != 0)


def test_identity_pa_gamma_gets_gradient_at_init():
    res = LaurelResidual(6, "pa", k_prev=2, pa_map="identity")
    x, fx, prev = torch.randn(4, 6), torch.randn(4, 6), torch.randn(4, 6)
    res(x, fx, [prev]).pow(2).sum().backward()
    assert torch.all(res.gamma.grad != 0)


def test_forward_matches_the_paper_formulas():
    torch.manual_seed(1)
    x, fx = torch.randn(5, 6, dtype=torch.float64), torch.randn(5, 6, dtype=torch.float64)
    h = [torch.randn(5, 6, dtype=torch.float64) for _ in range(3)]
    res = _perturb(LaurelResidual(6, "rw+lr+pa", rank=2, k_prev=3).double())
    alpha, beta = res.residual_weights()
    A, B, g = res.down, res.up, res.gamma
    mixed = g[0] * x + g[1] * h[-1] + g[2] * h[-2]
    expected = alpha * fx + beta * (x + mixed @ A.T @ B.T)
    torch.testing.assert_close(res(x, fx, h), expected)
    # only the k_prev - 1 most recent activations are read
    torch.testing.assert_close(res(x, fx, h[-2:]), expected)

    lr = _perturb(LaurelResidual(6, "lr", rank=2).double())
    torch.testing.assert_close(lr(x, fx), fx + x + x @ lr.down.T @ lr.up.T)
    rw = _perturb(LaurelResidual(6, "rw").double())
    a, b = rw.residual_weights()
    torch.testing.assert_close(rw(x, fx), a * fx + b * x)
    pa = _perturb(LaurelResidual(6, "pa", k_prev=2, pa_map="identity").double())
    torch.testing.assert_close(pa(x, fx, h), fx + x + pa.gamma[0] * x + pa.gamma[1] * h[-1])


@pytest.mark.parametrize("weight_norm", ["softmax", "sigmoid", "none"])
def test_residual_weight_normalisations(weight_norm):
    res = LaurelResidual(4, "rw", weight_norm=weight_norm)
    with torch.no_grad():
        res.rw_logits.copy_(torch.tensor([0.7, -1.2]))
    alpha, beta = (float(w.detach()) for w in res.residual_weights())
    logits = torch.tensor([0.7, -1.2])
    if weight_norm == "softmax":
        assert alpha + beta == pytest.approx(2.0)
        assert alpha == pytest.approx(float(2 * torch.softmax(logits, 0)[0]))
    elif weight_norm == "sigmoid":
        assert (alpha, beta) == pytest.approx(tuple((2 * torch.sigmoid(logits)).tolist()))
    else:
        assert (alpha, beta) == pytest.approx((0.7, -1.2))
    assert res.learned_weights() == {"alpha": pytest.approx(alpha), "beta": pytest.approx(beta),
                                     "gamma": None}


def test_orthogonal_init_is_the_sparse_pattern():
    rank, dim = 4, 10
    res = LaurelResidual(dim, "lr", rank=rank, lr_init="orthogonal")
    A = res.down.detach()
    for j in range(rank):
        for d in range(dim):
            expected = 1 / (rank * dim) ** 0.5 if d % rank == j else 0.0
            assert float(A[j, d]) == pytest.approx(expected)
    gram = A @ A.T
    assert torch.count_nonzero(gram - torch.diag(torch.diag(gram))) == 0
    assert torch.count_nonzero(res.up) == 0


def test_reset_parameters_restores_the_standard_residual():
    res = _perturb(LaurelResidual(5, "rw+lr+pa", rank=2))
    x, fx = torch.randn(3, 5), torch.randn(3, 5)
    assert not torch.equal(res(x, fx), x + fx)
    res.reset_parameters()
    assert torch.equal(res(x, fx), x + fx)


def test_feature_dim_acts_on_channels_of_feature_maps():
    torch.manual_seed(0)
    conv = _perturb(LaurelResidual(3, "rw+lr+pa", rank=2, feature_dim=1))
    last = LaurelResidual(3, "rw+lr+pa", rank=2)
    last.load_state_dict(conv.state_dict())
    x, fx, h = torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5), [torch.randn(2, 3, 4, 5)]
    channels_last = last(x.movedim(1, -1), fx.movedim(1, -1), [h[0].movedim(1, -1)])
    torch.testing.assert_close(conv(x, fx, h), channels_last.movedim(-1, 1))


def test_laurel_block_keeps_and_trims_history():
    torch.manual_seed(0)
    blocks = [with_laurel(nn.Linear(4, 4), 4, "rw+lr+pa", rank=2, k_prev=3) for _ in range(4)]
    x, history, inputs = torch.randn(2, 4), [], []
    for blk in blocks:
        inputs.append(x)
        x = blk(x, history)
        assert len(history) <= 2
        assert history[-1] is inputs[-1]
    assert [h is i for h, i in zip(history, inputs[-2:])] == [True, True]
    stack = LaurelSequential(*blocks)
    torch.testing.assert_close(stack(inputs[0]), x)


def test_block_with_shortcut_applies_laurel_to_the_projection_and_restarts_history():
    torch.manual_seed(0)
    proj = nn.Linear(4, 6)
    blk = with_laurel(nn.Linear(4, 6), 6, "rw+lr+pa", rank=2, shortcut=proj)
    x = torch.randn(3, 4)
    history = [torch.randn(3, 4), torch.randn(3, 4)]
    out = blk(x, history)
    torch.testing.assert_close(out, blk.block(x) + proj(x))
    assert len(history) == 1 and torch.equal(history[0], proj(x))


def test_laurel_sequential_plain_modules_reset_the_history():
    torch.manual_seed(0)
    first = _perturb(with_laurel(nn.Linear(4, 4), 4, "pa", rank=2, k_prev=2))
    second = _perturb(with_laurel(nn.Linear(4, 4), 4, "pa", rank=2, k_prev=2), seed=1)
    stack = LaurelSequential(first, nn.Tanh(), second)
    x = torch.randn(3, 4)
    expected = second(torch.tanh(first(x)))  # no history crosses the Tanh
    torch.testing.assert_close(stack(x), expected)
    assert len(stack) == 3 and list(stack)[1] is stack[1]


def test_modules_pickle_cast_and_rebuild_from_state_dict():
    res = _perturb(LaurelResidual(6, "rw+lr+pa", rank=2))
    x, fx = torch.randn(2, 6), torch.randn(2, 6)
    restored = pickle.loads(pickle.dumps(res))
    torch.testing.assert_close(restored(x, fx), res(x, fx))
    fresh = LaurelResidual(6, "rw+lr+pa", rank=2)
    fresh.load_state_dict(res.state_dict())
    torch.testing.assert_close(fresh(x, fx), res(x, fx))
    double = res.double()
    assert double(x.double(), fx.double()).dtype == torch.float64
    assert "variant='rw+lr+pa'" in repr(res)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"variant": "rw+pa"}, ValueError, "variant must be one of"),
    ({"rank": 0}, ValueError, "rank must be an int >= 1, got 0"),
    ({"rank": 2.5}, TypeError, "rank must be an int"),
    ({"k_prev": True}, TypeError, "k_prev must be an int"),
    ({"weight_norm": "tanh"}, ValueError, "weight_norm must be one of"),
    ({"lr_init": "zeros"}, ValueError, "lr_init must be one of"),
    ({"pa_map": "mlp"}, ValueError, "pa_map must be one of"),
    ({"feature_dim": "last"}, TypeError, "feature_dim must be an int"),
    ({"dim": 0}, ValueError, "dim must be an int >= 1"),
])
def test_laurel_residual_rejects_bad_parameters(kwargs, error, match):
    with pytest.raises(error, match=match):
        LaurelResidual(**{"dim": 4, **kwargs})


@pytest.mark.parametrize("kwargs, error, match", [
    ({"variant": "dense"}, ValueError, "variant must be one of"),
    ({"rank": -1}, ValueError, "rank must be an int >= 1, got -1"),
    ({"k_prev": 1.5}, TypeError, "k_prev must be an int"),
    ({"pa_map": "mlp"}, ValueError, "pa_map must be one of"),
    ({"dim": 0}, ValueError, "dim must be an int >= 1"),
])
def test_laurel_param_count_rejects_bad_parameters(kwargs, error, match):
    with pytest.raises(error, match=match):
        laurel_param_count(**{"dim": 4, **kwargs})


def test_laurel_residual_rejects_bad_inputs():
    res = LaurelResidual(4, "rw+lr+pa", rank=2)
    x = torch.randn(3, 4)
    with pytest.raises(ValueError, match="x and fx must have the same shape"):
        res(x, torch.randn(3, 5))
    with pytest.raises(ValueError, match="expecting dim=4"):
        res(torch.randn(3, 5), torch.randn(3, 5))
    with pytest.raises(ValueError, match="history activations must have the shape of x"):
        res(x, x, [torch.randn(2, 4)])


def test_wrappers_reject_bad_arguments():
    res = LaurelResidual(4)
    with pytest.raises(TypeError, match="block must be a torch.nn.Module"):
        LaurelBlock(lambda x: x, res)
    with pytest.raises(TypeError, match="residual must be a LaurelResidual"):
        LaurelBlock(nn.Identity(), nn.Identity())
    with pytest.raises(TypeError, match="shortcut must be a torch.nn.Module or None"):
        LaurelBlock(nn.Identity(), res, shortcut="proj")
    with pytest.raises(TypeError, match="got int at position 1"):
        LaurelSequential(nn.Identity(), 3)
    with pytest.raises(ValueError, match="variant must be one of"):
        with_laurel(nn.Identity(), 4, "dense")
