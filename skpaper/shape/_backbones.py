"""Point-cloud backbones: a PointNet-lite and a small DGCNN (EdgeConv), in plain torch."""

import torch
from torch import nn

from ..nn import make_mlp

__all__ = ["DGCNN", "PointNetLite", "make_backbone"]


class PointNetLite(nn.Module):
    """Shared per-point MLP, max- and mean-pooling, then an MLP head.

    The shared MLP is ``in_channels -> 64 -> embed_dim`` (the CPU-sized
    backbone of the reproduction; the paper uses DGCNN).

    Parameters
    ----------
    in_channels : int
        3 (points) or 6 (points and normals).
    n_outputs : int
    embed_dim : int, default=128
    dropout : float, default=0.0
    """

    def __init__(self, in_channels, n_outputs, embed_dim=128, dropout=0.0):
        super().__init__()
        self.point_mlp = nn.Sequential(make_mlp(in_channels, [64], embed_dim), nn.ReLU())
        self.head = nn.Sequential(nn.Dropout(dropout),
                                  make_mlp(2 * embed_dim, [embed_dim], n_outputs))

    def forward(self, x):
        h = self.point_mlp(x)  # (B, P, embed_dim)
        pooled = torch.cat([h.max(dim=1).values, h.mean(dim=1)], dim=-1)
        return self.head(pooled)


def _edge_features(h, k):
    """DGCNN edge features [h_j - h_i, h_i] over the k nearest neighbours j of i (in h)."""
    B, P, C = h.shape
    k = min(k, P)
    dist = torch.cdist(h, h)
    idx = dist.topk(k, dim=-1, largest=False).indices  # (B, P, k), includes i itself
    neighbours = torch.gather(h[:, None].expand(B, P, P, C), 2,
                              idx[..., None].expand(B, P, k, C))
    centre = h[:, :, None].expand(B, P, k, C)
    return torch.cat([neighbours - centre, centre], dim=-1)


class DGCNN(nn.Module):
    """Dynamic graph CNN: EdgeConv layers on k-NN graphs recomputed per layer.

    Three EdgeConv layers (64, 64, 128 channels, LeakyReLU 0.2, max over
    neighbours), concatenated and lifted to ``embed_dim``, then max- and
    mean-pooled into an MLP head, as in Wang et al.'s DGCNN that the official
    orienter uses (k=20, embedding 1024, dropout 0.5, four EdgeConv layers
    with batch norm); this version is smaller and has no batch norm, so
    inference does not depend on the batch.

    Parameters
    ----------
    in_channels : int
    n_outputs : int
    embed_dim : int, default=128
    k : int, default=20
        Number of neighbours.
    dropout : float, default=0.0
    """

    def __init__(self, in_channels, n_outputs, embed_dim=128, k=20, dropout=0.0):
        super().__init__()
        self.k = int(k)
        widths = (64, 64, 128)
        self.edge_convs = nn.ModuleList()
        width = in_channels
        for out in widths:
            self.edge_convs.append(nn.Sequential(nn.Linear(2 * width, out), nn.LeakyReLU(0.2)))
            width = out
        self.lift = nn.Sequential(nn.Linear(sum(widths), embed_dim), nn.LeakyReLU(0.2))
        self.head = nn.Sequential(nn.Dropout(dropout),
                                  make_mlp(2 * embed_dim, [embed_dim], n_outputs))

    def forward(self, x):
        h, features = x, []
        for conv in self.edge_convs:
            h = conv(_edge_features(h, self.k)).max(dim=2).values
            features.append(h)
        h = self.lift(torch.cat(features, dim=-1))
        pooled = torch.cat([h.max(dim=1).values, h.mean(dim=1)], dim=-1)
        return self.head(pooled)


def make_backbone(name, in_channels, n_outputs, embed_dim=128, k=20, dropout=0.0):
    """Build ``"pointnet"`` (:class:`PointNetLite`) or ``"dgcnn"`` (:class:`DGCNN`)."""
    if name == "pointnet":
        return PointNetLite(in_channels, n_outputs, embed_dim, dropout)
    if name == "dgcnn":
        return DGCNN(in_channels, n_outputs, embed_dim, k, dropout)
    raise ValueError(f"backbone must be 'pointnet' or 'dgcnn', got {name!r}.")
