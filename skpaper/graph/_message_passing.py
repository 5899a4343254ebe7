"""Plain-torch message passing on bipartite graphs (``index_add_``; no PyG needed).

These helpers are shared by the QP GNNs and Graph-of-Net: a node set receives the
weighted sum of messages sent along edges from another node set.
"""

import torch
from torch import nn

__all__ = ["sparse_adjacency", "scatter_sum", "scatter_mean", "two_layer_mlp"]


def sparse_adjacency(receivers, senders, weights, n_receivers, n_senders):
    """Sparse (n_receivers, n_senders) matrix with ``M[r, s] = w`` (duplicates summed).

    ``torch.sparse.mm(M, h)`` is the weighted message sum ``sum_s w_rs h_s``; with its
    backward pass it runs about 2.5x faster than a gather plus ``index_add_`` on CPU, so
    build it once per graph batch when messages are weight-times-state.
    """
    index = torch.stack([receivers, senders])
    return torch.sparse_coo_tensor(index, weights, (n_receivers, n_senders),
                                   check_invariants=False).coalesce()


def scatter_sum(messages, index, size):
    """Sum rows of ``messages`` into ``size`` buckets given by ``index`` (edges -> nodes)."""
    out = messages.new_zeros((size,) + tuple(messages.shape[1:]))
    return out.index_add_(0, index, messages)


def scatter_mean(values, index, size):
    """Mean of the rows of ``values`` per bucket; empty buckets get zeros."""
    total = scatter_sum(values, index, size)
    count = values.new_zeros(size).index_add_(0, index, values.new_ones(index.shape[0]))
    return total / count.clamp(min=1).unsqueeze(-1)


def two_layer_mlp(n_in, n_hidden, n_out):
    """Dense, ReLU, Dense: the f and g functions of the paper's layers."""
    return nn.Sequential(nn.Linear(n_in, n_hidden), nn.ReLU(), nn.Linear(n_hidden, n_out))
