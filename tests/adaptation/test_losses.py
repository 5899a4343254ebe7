"""Unsupervised test-time objectives."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from skpaper.adaptation import (
    eata_loss,
    entropy_loss,
    prior_correction,
    roid_loss,
    soft_likelihood_ratio,
    softmax_entropy,
    symmetric_cross_entropy,
)


def _identity(x):
    return x


def test_softmax_entropy_of_uniform_and_confident_predictions():
    logits = torch.zeros(2, 5)
    np.testing.assert_allclose(softmax_entropy(logits), [math.log(5)] * 2, rtol=1e-6)
    confident = torch.tensor([[50.0, 0.0, 0.0]])
    assert float(softmax_entropy(confident)) < 1e-12
    assert float(entropy_loss(logits, None, {}, None, None)) == pytest.approx(math.log(5))


def test_soft_likelihood_ratio_is_bounded_for_confident_predictions():
    confident = torch.tensor([[100.0, 0.0]])
    # the clip at 0.99 keeps the log-ratio finite: about -0.99 log(0.99 / 0.01)
    assert float(soft_likelihood_ratio(confident)) == pytest.approx(
        -0.99 * math.log(99 + 1e-5), rel=1e-5)
    assert float(soft_likelihood_ratio(torch.zeros(1, 2))) == pytest.approx(
        -math.log(1 + 1e-5), abs=1e-7)


def test_symmetric_cross_entropy_is_symmetric_at_alpha_half():
    a, b = torch.randn(4, 3, generator=torch.Generator().manual_seed(0)), torch.randn(4, 3)
    np.testing.assert_allclose(symmetric_cross_entropy(a, b), symmetric_cross_entropy(b, a),
                               rtol=1e-6)


@given(st.integers(1, 20), st.integers(2, 8), st.integers(0, 2**16))
def test_prior_correction_returns_distributions(n, k, seed):
    proba = torch.softmax(torch.randn(n, k, generator=torch.Generator().manual_seed(seed)), 1)
    out = prior_correction(proba.double())
    np.testing.assert_allclose(out.sum(1), 1.0, atol=1e-12)
    assert torch.all(out >= 0)


def test_prior_correction_keeps_a_uniform_batch_prior_neutral():
    proba = torch.tensor([[0.7, 0.3], [0.3, 0.7]], dtype=torch.float64)
    np.testing.assert_allclose(prior_correction(proba), proba, atol=1e-12)


def test_eata_loss_drops_uncertain_samples():
    state = {}
    uncertain = torch.zeros(4, 10, requires_grad=True)
    assert eata_loss(uncertain, None, state, None, None) is None
    assert "model_probs" not in state
    logits = torch.zeros(3, 10)
    logits[:, 0] = 20.0
    logits.requires_grad_(True)
    loss = eata_loss(logits, None, state, None, None)
    assert loss is not None and loss.requires_grad and "model_probs" in state
    # the same confident prediction again is redundant with the running mean: filtered out
    assert eata_loss(logits, None, state, None, None) is None


def test_roid_loss_weights_diverse_certain_samples_and_tracks_the_class_prior():
    torch.manual_seed(0)
    net = torch.nn.Linear(6, 4)
    x = torch.randn(16, 6, generator=torch.Generator().manual_seed(1))
    state = {}
    loss = roid_loss(net(x), x, state, net, _identity)
    assert loss.requires_grad and np.isfinite(float(loss.detach()))
    assert state["class_probs"].shape == (4,)
    np.testing.assert_allclose(float(state["class_probs"].sum()), 1.0, rtol=1e-6)
    loss.backward()
    assert net.weight.grad is not None and torch.any(net.weight.grad != 0)
