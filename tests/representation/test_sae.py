"""Sparse autoencoders: TopK sparsity, training, JumpReLU estimator, dead latents, bad input."""

import numpy as np
import pytest
import torch

from skpaper.datasets import make_superposition_activations
from skpaper.representation import SparseAutoencoder
from skpaper.representation._sae import _JumpReLU, _Step
from skpaper.utils._sklearn import InvalidParameterError


@pytest.fixture(scope="module")
def activations():
    return make_superposition_activations(n_samples=1500, random_state=0)


def _sae(**params):
    base = dict(n_latents=64, k=4, max_epochs=4, batch_size=128, lr=3e-3, random_state=0,
                device="cpu")
    return SparseAutoencoder(**{**base, **params})


@pytest.mark.parametrize("k", [1, 3, 8])
def test_sparse_autoencoder_topk_keeps_exactly_k_active(activations, k):
    sae = _sae(k=k, max_epochs=2).fit(activations.X)
    Z = sae.transform(activations.X)
    n_positive = (sae._preactivations(activations.X) > 0).sum(axis=1)
    np.testing.assert_array_equal((Z != 0).sum(axis=1), np.minimum(k, n_positive))
    assert np.all(Z >= 0)
    # Almost every input has at least k positive pre-activations, so exactly k fire.
    assert np.mean((Z != 0).sum(axis=1) == k) > 0.95


def test_sparse_autoencoder_reconstruction_improves_with_training(activations):
    short = _sae(max_epochs=1).fit(activations.X)
    long = _sae(max_epochs=8).fit(activations.X)
    fvu = [record["fvu"] for record in long.history_]
    assert fvu[-1] < 0.9 * fvu[0]
    assert all(b < a for a, b in zip(fvu, fvu[1:]))
    assert long.score(activations.X) > short.score(activations.X) + 0.05
    assert -1.0 < long.score(activations.X) <= 0.0


@pytest.mark.parametrize("arch", ["relu", "topk", "jumprelu"])
def test_sparse_autoencoder_decoder_columns_have_unit_norm(activations, arch):
    sae = _sae(arch=arch, max_epochs=2).fit(activations.X)
    np.testing.assert_allclose(np.linalg.norm(sae.components_, axis=1), 1.0, atol=1e-5)
    assert sae.transform(activations.X).shape == (1500, 64)
    assert (sae.threshold_ is None) == (arch != "jumprelu")


def test_sparse_autoencoder_score_is_negative_fvu(activations):
    sae = _sae(max_epochs=3).fit(activations.X)
    X = activations.X
    X_hat = sae.inverse_transform(sae.transform(X))
    fvu = np.sum((X - X_hat) ** 2) / np.sum((X - X.mean(axis=0)) ** 2)
    assert sae.score(X) == pytest.approx(-fvu, rel=1e-6)
    assert sae.history_[-1]["fvu"] == pytest.approx(fvu, abs=0.1)


def test_jumprelu_straight_through_pseudo_derivatives():
    eps = 0.1
    z = torch.tensor([[0.30, 0.52, 0.70, 0.46]], requires_grad=True)
    theta = torch.tensor([0.5, 0.5, 0.5, 0.5], requires_grad=True)
    out = _JumpReLU.apply(z, theta, eps)
    np.testing.assert_allclose(out.detach().numpy(), [[0.0, 0.52, 0.70, 0.0]], atol=1e-7)
    out.sum().backward()
    # dz: the exact H(z - theta); dtheta: -(theta / eps) inside the kernel window |z-θ|<eps/2.
    np.testing.assert_allclose(z.grad.numpy(), [[0, 1, 1, 0]])
    np.testing.assert_allclose(theta.grad.numpy(), [0.0, -5.0, 0.0, -5.0], atol=1e-6)

    z2 = z.detach().clone().requires_grad_(True)
    theta2 = theta.detach().clone().requires_grad_(True)
    step = _Step.apply(z2, theta2, eps)
    np.testing.assert_allclose(step.detach().numpy(), [[0, 1, 1, 0]])
    step.sum().backward()
    assert z2.grad is None
    np.testing.assert_allclose(theta2.grad.numpy(), [0.0, -10.0, 0.0, -10.0], atol=1e-6)


@pytest.mark.parametrize("arch", ["relu", "jumprelu"])
def test_sparse_autoencoder_sparsity_coefficient_lowers_l0(activations, arch):
    l0 = [_sae(arch=arch, l1_coef=coef, max_epochs=4).fit(activations.X).history_[-1]["l0"]
          for coef in (1e-3, 0.1)]
    assert l0[1] < 0.5 * l0[0]


def test_sparse_autoencoder_resamples_dead_latents(activations):
    # A strong L1 penalty kills most ReLU latents; resampling revives them between epochs.
    params = dict(arch="relu", l1_coef=10.0, n_latents=64, max_epochs=6)
    on = _sae(resample_dead=True, **params).fit(activations.X)
    off = _sae(resample_dead=False, **params).fit(activations.X)
    assert sum(r["n_resampled"] for r in on.history_) > 0
    assert all(r["n_resampled"] == 0 for r in off.history_)
    assert on.history_[-1]["n_resampled"] == 0  # never on the last epoch
    assert on.n_dead_latents_ < off.n_dead_latents_


def test_sparse_autoencoder_is_seeded(activations):
    a = _sae(max_epochs=2).fit(activations.X).transform(activations.X[:50])
    b = _sae(max_epochs=2).fit(activations.X).transform(activations.X[:50])
    np.testing.assert_array_equal(a, b)


def test_sparse_autoencoder_bad_input(activations):
    with pytest.raises(ValueError, match="k must be at most n_latents=8"):
        _sae(n_latents=8, k=9).fit(activations.X)
    with pytest.raises(InvalidParameterError, match="arch"):
        _sae(arch="gated").fit(activations.X)
    sae = _sae(max_epochs=1).fit(activations.X)
    with pytest.raises(ValueError, match=r"X must have shape \(n_samples, 64\)"):
        sae.inverse_transform(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="features"):
        sae.transform(activations.X[:, :10])


@pytest.mark.gpu
def test_sparse_autoencoder_cuda_matches_cpu_quality(activations):
    cpu = _sae(max_epochs=4).fit(activations.X)
    gpu = _sae(max_epochs=4, device="cuda").fit(activations.X)
    assert gpu.device_ == "cuda"
    assert abs(gpu.score(activations.X) - cpu.score(activations.X)) < 0.05
