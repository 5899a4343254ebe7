import pickle

import numpy as np
import pytest
import torch

from skpaper.graph import MessageOperator, scatter_sum, sparse_adjacency


def _random_edges(seed, n_receivers, n_senders, n_edges, dtype=torch.float64):
    rng = np.random.default_rng(seed)
    receivers = torch.as_tensor(rng.integers(0, n_receivers, n_edges))
    senders = torch.as_tensor(rng.integers(0, n_senders, n_edges))
    weights = torch.as_tensor(rng.normal(size=n_edges), dtype=dtype)
    return receivers, senders, weights


@pytest.mark.parametrize("shape", [(7, 7), (5, 9), (12, 3)])
def test_message_operator_matches_the_sparse_product_and_its_gradient(shape):
    # Duplicated edges (40 edges on few nodes) must be summed, as in sparse_adjacency.
    receivers, senders, weights = _random_edges(0, *shape, n_edges=40)
    op = MessageOperator(receivers, senders, weights, *shape)
    coo = sparse_adjacency(receivers, senders, weights, *shape)
    states = torch.randn(shape[1], 4, dtype=torch.float64, requires_grad=True)
    upstream = torch.randn(shape[0], 4, dtype=torch.float64)

    ours = op @ states
    (grad_ours,) = torch.autograd.grad(ours, states, upstream)
    reference = torch.sparse.mm(coo, states)
    (grad_ref,) = torch.autograd.grad(reference, states, upstream)
    torch.testing.assert_close(ours, reference, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(grad_ours, grad_ref, rtol=1e-12, atol=1e-12)
    # The gradient is M^T @ upstream, written out densely.
    dense = op.to_dense()
    torch.testing.assert_close(grad_ours, dense.T @ upstream, rtol=1e-12, atol=1e-12)
    assert op.shape == shape


def test_message_operator_is_the_weighted_scatter_sum():
    receivers, senders, weights = _random_edges(1, 20, 20, 60, dtype=torch.float32)
    states = torch.randn(20, 3)
    expected = scatter_sum(weights[:, None] * states[senders], receivers, 20)
    got = MessageOperator(receivers, senders, weights, 20, 20) @ states
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


def test_message_operator_passes_gradients_through_non_contiguous_upstream():
    op = MessageOperator(*_random_edges(2, 6, 6, 15, dtype=torch.float32), 6, 6)
    states = torch.randn(6, 8, requires_grad=True)
    # A transposed upstream gradient reaches the backward pass non-contiguous.
    out = (op @ states).T
    out.backward(torch.ones(8, 6))
    torch.testing.assert_close(states.grad, op.to_dense().T @ torch.ones(6, 8))


def test_message_operator_rejects_states_of_the_wrong_shape():
    op = MessageOperator(*_random_edges(3, 4, 5, 10, dtype=torch.float32), 4, 5)
    with pytest.raises(ValueError, match=r"states must have shape \(5, n_features\)"):
        op @ torch.randn(4, 2)
    with pytest.raises(ValueError, match="states must have shape"):
        op @ torch.randn(5)


def test_message_operator_pickles():
    op = MessageOperator(*_random_edges(4, 6, 6, 12, dtype=torch.float32), 6, 6)
    states = torch.randn(6, 2)
    again = pickle.loads(pickle.dumps(op))
    torch.testing.assert_close(again @ states, op @ states)
