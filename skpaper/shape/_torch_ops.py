"""Torch operations for training orienters: special Procrustes with a stable backward, losses."""

import itertools

import numpy as np
import torch

__all__ = [
    "octahedral_abs_cos_loss",
    "quotient_loss",
    "raw_l2_loss",
    "special_procrustes_torch",
]

# |sigma_i + sigma_j| below this is clamped in the backward pass (the projection
# is not differentiable where two signed singular values cancel).
_EPS = 1e-6


class _SpecialProcrustes(torch.autograd.Function):
    """R = U diag(1, 1, det(U V^T)) V^T with the closed-form polar-factor gradient.

    Writing M = R S with S = V diag(s~) V^T symmetric and s~ = (s1, s2, d s3),
    a perturbation dM moves R by R V W V^T where W is skew with
    W_ij = [V^T (R^T dM - dM^T R) V]_ij / (s~_i + s~_j). The adjoint is
    dL/dM = R V [(B - B^T) / (s~_i + s~_j)] V^T with B = V^T R^T (dL/dR) V.
    Only sums s~_i + s~_j appear, never the differences s_i - s_j of the
    generic SVD backward, so the gradient stays finite at repeated singular
    values (where autograd through ``torch.linalg.svd`` returns inf/NaN).
    """

    @staticmethod
    def forward(ctx, M):
        U, S, Vh = torch.linalg.svd(M)
        d = torch.sign(torch.linalg.det(U @ Vh))
        d = torch.where(d == 0, torch.ones_like(d), d)
        U = torch.cat([U[..., :2], U[..., 2:] * d[..., None, None]], dim=-1)
        R = U @ Vh
        signed = torch.cat([S[..., :2], S[..., 2:] * d[..., None]], dim=-1)
        ctx.save_for_backward(R, Vh, signed)
        return R

    @staticmethod
    def backward(ctx, grad):
        R, Vh, signed = ctx.saved_tensors
        V = Vh.transpose(-1, -2)
        B = Vh @ R.transpose(-1, -2) @ grad @ V
        C = signed[..., :, None] + signed[..., None, :]
        C = torch.where(C.abs() < _EPS,
                        torch.where(C < 0, torch.full_like(C, -_EPS), torch.full_like(C, _EPS)), C)
        K = (B - B.transpose(-1, -2)) / C
        K = K - torch.diag_embed(torch.diagonal(K, dim1=-2, dim2=-1))
        out = R @ V @ K @ Vh
        return torch.nan_to_num(out, nan=0.0, posinf=0.0, neginf=0.0)


def special_procrustes_torch(M):
    """Differentiable projection of (..., 3, 3) tensors onto SO(3).

    Parameters
    ----------
    M : torch.Tensor of shape (..., 3, 3)

    Returns
    -------
    R : torch.Tensor of shape (..., 3, 3)
    """
    if M.shape[-2:] != (3, 3):
        raise ValueError(f"M must have shape (..., 3, 3), got {tuple(M.shape)}.")
    return _SpecialProcrustes.apply(M)


def group_tensor(group, like):
    """A (k, 3, 3) group of rotation matrices as a tensor matching ``like``'s dtype and device."""
    return torch.as_tensor(np.asarray(group, dtype=np.float64), dtype=like.dtype,
                           device=like.device)


def quotient_loss(R_pred, R_true, group):
    """Per-sample min over g in ``group`` of ||R_pred - R_true g||_F^2 (the quotient loss).

    ``group`` is a (k, 3, 3) tensor; with the 24 cube rotations this is the
    loss the official ``quotient_regression_loss`` minimises.
    """
    targets = R_true[:, None] @ group[None]  # (B, k, 3, 3)
    return ((R_pred[:, None] - targets) ** 2).sum(dim=(-1, -2)).min(dim=1).values


def raw_l2_loss(M, R_true):
    """Per-sample ||M - R_true||_F^2 on the raw, unprojected network output."""
    return ((M - R_true) ** 2).sum(dim=(-1, -2))


_PERMUTATIONS = list(itertools.permutations(range(3)))


def octahedral_abs_cos_loss(R_pred, R_true):
    """Per-sample min over column permutations of (1 - |cos up|) + (1 - |cos front|).

    Absolute cosines make each term blind to column signs, so together with the
    permutations the loss is invariant to all 48 signed permutations (the
    official ``octahedral_invariant_loss``).
    """
    up, front = R_pred[..., :, 1], R_pred[..., :, 2]
    losses = []
    for perm in _PERMUTATIONS:
        target = R_true[..., :, list(perm)]
        cu = torch.nn.functional.cosine_similarity(up, target[..., :, 1], dim=-1).abs()
        cf = torch.nn.functional.cosine_similarity(front, target[..., :, 2], dim=-1).abs()
        losses.append((1 - cu) + (1 - cf))
    return torch.stack(losses, dim=-1).min(dim=-1).values
