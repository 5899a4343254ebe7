"""Keypoint and warping primitives for keypoint-driven motion transfer (torch).

Coordinates follow :func:`torch.nn.functional.grid_sample` with
``align_corners=False``: a point is ``(x, y)`` in ``[-1, 1]``, ``x`` along the
width, and pixel ``(row i, column j)`` of an ``H x W`` image has its centre at
``x = (2j + 1) / W - 1``, ``y = (2i + 1) / H - 1``. A *backward* warp maps each
output (driving-frame) coordinate ``z`` to the source coordinate ``T(z)`` that
is sampled there, which is the convention of FOMM and TPSMM.
"""

import torch
from torch.nn import functional as F

__all__ = [
    "RandomDeformation",
    "gaussian_heatmaps",
    "interpolate_keypoints",
    "keypoint_translations",
    "make_coordinate_grid",
    "normalized_to_pixels",
    "pixels_to_normalized",
    "soft_argmax",
    "tps_fit",
    "tps_transform",
    "warp_images",
]


def make_coordinate_grid(height, width, *, dtype=torch.float32, device="cpu"):
    """Pixel-centre coordinates ``(height, width, 2)`` in ``[-1, 1]``, last axis ``(x, y)``."""
    xs = (2 * torch.arange(width, dtype=dtype, device=device) + 1) / width - 1
    ys = (2 * torch.arange(height, dtype=dtype, device=device) + 1) / height - 1
    grid_y, grid_x = torch.meshgrid(ys, xs, indexing="ij")
    return torch.stack([grid_x, grid_y], dim=-1)


def pixels_to_normalized(keypoints, height, width):
    """Map pixel ``(x, y)`` (centres at integers) to ``[-1, 1]`` coordinates.

    Works on numpy arrays and tensors alike.
    """
    scale_x, scale_y = 2.0 / width, 2.0 / height
    x = (keypoints[..., 0] + 0.5) * scale_x - 1
    y = (keypoints[..., 1] + 0.5) * scale_y - 1
    stack = torch.stack if isinstance(keypoints, torch.Tensor) else _np_stack
    return stack([x, y], -1)


def normalized_to_pixels(keypoints, height, width):
    """Inverse of :func:`pixels_to_normalized`."""
    x = (keypoints[..., 0] + 1) * width / 2 - 0.5
    y = (keypoints[..., 1] + 1) * height / 2 - 0.5
    stack = torch.stack if isinstance(keypoints, torch.Tensor) else _np_stack
    return stack([x, y], -1)


def _np_stack(arrays, axis):
    import numpy as np

    return np.stack(arrays, axis=axis)


def soft_argmax(logits, temperature=0.1):
    """Expected coordinates under ``softmax(logits / temperature)`` per channel.

    Parameters
    ----------
    logits : Tensor of shape (B, K, H, W)
    temperature : float

    Returns
    -------
    keypoints : Tensor of shape (B, K, 2)
        ``(x, y)`` in ``[-1, 1]``.
    heatmaps : Tensor of shape (B, K, H, W)
        The normalised heatmaps (each sums to one).
    """
    b, k, h, w = logits.shape
    heat = F.softmax(logits.reshape(b, k, h * w) / temperature, dim=-1).reshape(b, k, h, w)
    grid = make_coordinate_grid(h, w, dtype=logits.dtype, device=logits.device)
    keypoints = torch.einsum("bkhw,hwc->bkc", heat, grid)
    return keypoints, heat


def gaussian_heatmaps(keypoints, height, width, variance=0.01):
    """Unnormalised Gaussians ``exp(-|z - kp|^2 / (2 variance))``, shape ``(B, K, H, W)``."""
    grid = make_coordinate_grid(height, width, dtype=keypoints.dtype, device=keypoints.device)
    diff = grid[None, None] - keypoints[:, :, None, None, :]
    return torch.exp(-0.5 * (diff**2).sum(-1) / variance)


def interpolate_keypoints(kp_source, kp_driving, t):
    """Linear keypoint interpolation ``kp(t) = (1 - t) kp_S + t kp_D``.

    ``t`` is a float, or a tensor broadcast against the batch: shape ``(B,)``
    gives one ``t`` per pair.
    """
    if isinstance(t, torch.Tensor) and t.ndim:
        t = t.to(kp_source.dtype).reshape(-1, *([1] * (kp_source.ndim - 1)))
    return (1 - t) * kp_source + t * kp_driving


def keypoint_translations(kp_source, kp_driving, grid):
    """Zeroth-order local motions ``T_k(z) = z - kp_D,k + kp_S,k``.

    Parameters
    ----------
    kp_source, kp_driving : Tensor of shape (B, K, 2)
    grid : Tensor of shape (H, W, 2)

    Returns
    -------
    Tensor of shape (B, K, H, W, 2)
    """
    shift = (kp_source - kp_driving)[:, :, None, None, :]
    return grid[None, None] + shift


def _tps_kernel(sq_dist):
    # U(r) = r^2 log r^2, with U(0) = 0; the clamp keeps the gradient finite at 0.
    return sq_dist * torch.log(sq_dist.clamp_min(1e-12))


def _squared_distances(points, centres):
    """``|p_i - c_j|^2`` of ``(B, P, 2)`` and ``(B or 1, N, 2)``: shape ``(B, P, N)``.

    Expanding the square keeps memory at ``P x N`` (no ``P x N x 2`` difference
    tensor); rounding can make tiny values negative, hence the clamp.
    """
    cross = points @ centres.transpose(-1, -2)
    sq = (points**2).sum(-1)[..., None] + (centres**2).sum(-1)[..., None, :] - 2 * cross
    return sq.clamp_min(0.0)


def tps_fit(control, values, regularization=1e-4):
    """Thin-plate spline through ``values`` at ``control`` points (batched).

    Solves for ``f(z) = a_0 + a_1 x + a_2 y + sum_i w_i U(|z - p_i|)`` with
    ``f(p_i) = q_i`` and the side conditions ``sum_i w_i = 0``,
    ``sum_i w_i p_i = 0``; ``regularization`` is added to the kernel diagonal
    so that coincident control points stay solvable.

    Parameters
    ----------
    control : Tensor of shape (B, N, 2)
        Control points ``p_i`` (in the driving frame for a backward warp).
    values : Tensor of shape (B, N, 2)
        Target positions ``q_i`` (in the source frame).

    Returns
    -------
    params : tuple of Tensor
        ``(control, weights (B, N, 2), affine (B, 3, 2))`` for :func:`tps_transform`.
    """
    b, n, _ = control.shape
    sq = ((control[:, :, None] - control[:, None]) ** 2).sum(-1)
    kernel = _tps_kernel(sq) + regularization * torch.eye(n, dtype=control.dtype,
                                                          device=control.device)
    ones = torch.ones(b, n, 1, dtype=control.dtype, device=control.device)
    poly = torch.cat([ones, control], dim=-1)
    top = torch.cat([kernel, poly], dim=-1)
    bottom = torch.cat([poly.transpose(1, 2), torch.zeros(b, 3, 3, dtype=control.dtype,
                                                          device=control.device)], dim=-1)
    system = torch.cat([top, bottom], dim=1)
    rhs = torch.cat([values, torch.zeros(b, 3, 2, dtype=control.dtype, device=control.device)],
                    dim=1)
    solution = torch.linalg.solve(system, rhs)
    return control, solution[:, :n], solution[:, n:]


def tps_transform(params, points):
    """Evaluate a fitted thin-plate spline at ``points`` of shape ``(B, ..., 2)``."""
    control, weights, affine = params
    b = points.shape[0]
    flat = points.reshape(b, -1, 2)
    sq = _squared_distances(flat, control)
    out = affine[:, :1] + flat @ affine[:, 1:] + _tps_kernel(sq) @ weights
    return out.reshape(points.shape)


def warp_images(images, coordinates, padding_mode="border"):
    """Backward warp: ``out[z] = images[coordinates[z]]`` (bilinear).

    Parameters
    ----------
    images : Tensor of shape (B, C, H, W)
    coordinates : Tensor of shape (B, H', W', 2)
        Source coordinates in ``[-1, 1]``; ``(H', W')`` sets the output size.
    """
    return F.grid_sample(images, coordinates, mode="bilinear", padding_mode=padding_mode,
                         align_corners=False)


class RandomDeformation:
    """A random smooth deformation for the equivariance loss (affine plus TPS).

    ``T(z) = A z + b + sum_j w_j U(|z - c_j|)`` with ``A = I + N(0, sigma_affine)``,
    ``b ~ N(0, sigma_affine)``, control points ``c_j`` on a regular
    ``n_points x n_points`` grid and ``w_j ~ N(0, sigma_tps)`` (one weight per
    coordinate). The scales are the FOMM/TPSMM defaults (0.05, 0.005, 5).

    Parameters
    ----------
    batch : int
    generator : torch.Generator
    sigma_affine, sigma_tps : float
    n_points : int
    dtype, device :
        Of the returned tensors.
    """

    def __init__(self, batch, generator, *, sigma_affine=0.05, sigma_tps=0.005, n_points=5,
                 dtype=torch.float32, device="cpu"):
        def normal(*shape, sigma):
            draw = torch.randn(*shape, generator=generator, dtype=torch.float64)
            return (sigma * draw).to(dtype=dtype, device=device)

        self.affine = torch.eye(2, dtype=dtype, device=device) + normal(batch, 2, 2,
                                                                         sigma=sigma_affine)
        self.shift = normal(batch, 1, 2, sigma=sigma_affine)
        ticks = torch.linspace(-1, 1, n_points, dtype=dtype, device=device)
        cy, cx = torch.meshgrid(ticks, ticks, indexing="ij")
        self.control = torch.stack([cx.ravel(), cy.ravel()], dim=-1)
        self.weights = normal(batch, n_points * n_points, 2, sigma=sigma_tps)

    def __call__(self, points):
        """Apply ``T`` to ``points`` of shape ``(B, ..., 2)``."""
        b = points.shape[0]
        flat = points.reshape(b, -1, 2)
        out = flat @ self.affine.transpose(1, 2) + self.shift
        out = out + _tps_kernel(_squared_distances(flat, self.control[None])) @ self.weights
        return out.reshape(points.shape)

    def warp(self, images):
        """``images`` resampled at ``T(z)``: a deformed frame, with keypoints ``T^-1(kp)``."""
        b, _, h, w = images.shape
        grid = make_coordinate_grid(h, w, dtype=images.dtype, device=images.device)
        return warp_images(images, self(grid.expand(b, h, w, 2)))
