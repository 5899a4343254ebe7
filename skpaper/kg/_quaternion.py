"""Quaternion algebra on torch tensors whose last dimension holds (w, x, y, z).

Every function broadcasts over leading dimensions and is differentiable, so the
same code serves the unit tests, the TeDS scoring function and user code.
"""

import torch

__all__ = [
    "hamilton_product",
    "quaternion_conjugate",
    "quaternion_from_angle",
    "quaternion_norm",
    "quaternion_normalize",
    "quaternion_rotate",
]


def _check_quaternion(q, name):
    if not isinstance(q, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(q).__name__}.")
    if q.ndim == 0 or q.shape[-1] != 4:
        raise ValueError(f"{name} must have a last dimension of size 4 (w, x, y, z), got shape "
                         f"{tuple(q.shape)}.")


def hamilton_product(q, p):
    """Hamilton product q ⊗ p of quaternion tensors.

    Parameters
    ----------
    q, p : torch.Tensor of shape (..., 4)
        Quaternions as (w, x, y, z) along the last dimension; leading dimensions
        broadcast.

    Returns
    -------
    torch.Tensor of shape (..., 4)
        (w₁w₂ − x₁x₂ − y₁y₂ − z₁z₂, w₁x₂ + x₁w₂ + y₁z₂ − z₁y₂,
        w₁y₂ − x₁z₂ + y₁w₂ + z₁x₂, w₁z₂ + x₁y₂ − y₁x₂ + z₁w₂).

    Notes
    -----
    The product is associative but not commutative, and multiplicative in the
    norm: ‖q ⊗ p‖ = ‖q‖‖p‖. Right multiplication by p is ‖p‖ times an orthogonal
    map of R⁴ whose adjoint is right multiplication by the conjugate, so
    ⟨a ⊗ p, b⟩ = ⟨a, b ⊗ p̄⟩; link predictors use this to score head queries.

    Examples
    --------
    >>> import torch
    >>> from skpaper.kg import hamilton_product
    >>> i, j = torch.tensor([0.0, 1, 0, 0]), torch.tensor([0.0, 0, 1, 0])
    >>> hamilton_product(i, j).tolist()  # i j = k
    [0.0, 0.0, 0.0, 1.0]
    """
    _check_quaternion(q, "q")
    _check_quaternion(p, "p")
    return torch.stack(hamilton_parts(q.unbind(-1), p.unbind(-1)), dim=-1)


def hamilton_parts(q, p):
    """Hamilton product of quaternions given as 4-tuples of same-shape tensors (w, x, y, z).

    The models keep each component in its own contiguous block; this avoids the
    strided views of a trailing size-4 axis.
    """
    w1, x1, y1, z1 = q
    w2, x2, y2, z2 = p
    return (
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
    )


def quaternion_conjugate(q):
    """Return the conjugate q̄ = (w, −x, −y, −z) of a quaternion tensor.

    Parameters
    ----------
    q : torch.Tensor of shape (..., 4)
        Quaternions ``(w, x, y, z)``.

    Returns
    -------
    conjugate : torch.Tensor of shape (..., 4)
        The conjugates.

    Examples
    --------
    >>> import torch
    >>> from skpaper.kg import quaternion_conjugate
    >>> quaternion_conjugate(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor([ 1., -2., -3., -4.])
    """
    _check_quaternion(q, "q")
    return q * q.new_tensor([1.0, -1.0, -1.0, -1.0])


def quaternion_norm(q, eps=0.0):
    """Return the modulus ‖q‖ = sqrt(w² + x² + y² + z²) of quaternions.

    Parameters
    ----------
    q : torch.Tensor of shape (..., 4)
        Quaternions ``(w, x, y, z)``.
    eps : float, default=0.0
        Added under the square root; a positive value keeps the gradient finite
        at q = 0 (used by the N3 regulariser).

    Returns
    -------
    norm : torch.Tensor of shape (...,)
        The moduli.

    Examples
    --------
    >>> import torch
    >>> from skpaper.kg import quaternion_norm
    >>> quaternion_norm(torch.tensor([1.0, 2.0, 2.0, 4.0]))
    tensor(5.)
    """
    _check_quaternion(q, "q")
    return torch.sqrt((q * q).sum(-1) + eps)


def quaternion_normalize(q, eps=1e-12):
    """Return the unit quaternion q / ‖q‖ (zero quaternions stay zero).

    Parameters
    ----------
    q : torch.Tensor of shape (..., 4)
        Quaternions ``(w, x, y, z)``.
    eps : float, default=1e-12
        Lower bound of the modulus divided by.

    Returns
    -------
    unit : torch.Tensor of shape (..., 4)
        The normalised quaternions.

    Examples
    --------
    >>> import torch
    >>> from skpaper.kg import quaternion_normalize
    >>> quaternion_normalize(torch.tensor([0.0, 3.0, 0.0, 4.0]))
    tensor([0.0000, 0.6000, 0.0000, 0.8000])
    """
    _check_quaternion(q, "q")
    return q / quaternion_norm(q).clamp_min(eps).unsqueeze(-1)


def quaternion_from_angle(theta, axis):
    """Unit quaternion (cos θ, sin θ · û) from an angle and a rotation axis.

    Parameters
    ----------
    theta : torch.Tensor of shape (...,)
        Angles in radians.
    axis : torch.Tensor of shape (..., 3)
        Axis directions; normalised here, so any non-zero vector works.

    Returns
    -------
    torch.Tensor of shape (..., 4)
        A unit quaternion. Left or right multiplication by it is a rotation of
        R⁴ (norm preserving); the sandwich q v q̄ rotates the pure quaternion v
        by 2θ about û.

    Examples
    --------
    >>> import torch
    >>> from skpaper.kg import quaternion_from_angle
    >>> quaternion_from_angle(torch.tensor(0.0), torch.tensor([0.0, 0.0, 2.0]))
    tensor([1., 0., 0., 0.])
    """
    if not isinstance(theta, torch.Tensor) or not isinstance(axis, torch.Tensor):
        raise TypeError("theta and axis must be torch.Tensor objects, got "
                        f"{type(theta).__name__} and {type(axis).__name__}.")
    if axis.ndim == 0 or axis.shape[-1] != 3:
        raise ValueError(f"axis must have a last dimension of size 3, got shape "
                         f"{tuple(axis.shape)}.")
    unit = axis / torch.linalg.vector_norm(axis, dim=-1, keepdim=True).clamp_min(1e-12)
    return torch.cat((torch.cos(theta).unsqueeze(-1), torch.sin(theta).unsqueeze(-1) * unit),
                     dim=-1)


def quaternion_rotate(v, q):
    """Rotate ``v`` by the unit quaternion ``q``: q ⊗ v ⊗ q̄.

    Parameters
    ----------
    v : torch.Tensor of shape (..., 3) or (..., 4)
        Vectors (taken as pure quaternions) or quaternions.
    q : torch.Tensor of shape (..., 4)
        Rotation; normalised here so that the result has the norm of ``v``.

    Returns
    -------
    torch.Tensor with the shape of ``v``
        For a 3-vector, the rotated 3-vector; for a quaternion, the rotated
        quaternion (its scalar part is unchanged).

    Examples
    --------
    >>> import math, torch
    >>> from skpaper.kg import quaternion_from_angle, quaternion_rotate
    >>> q = quaternion_from_angle(torch.tensor(math.pi / 4), torch.tensor([0.0, 0, 1]))
    >>> [round(c, 6) + 0.0 for c in quaternion_rotate(torch.tensor([1.0, 0, 0]), q).tolist()]
    [0.0, 1.0, 0.0]
    """
    if not isinstance(v, torch.Tensor):
        raise TypeError(f"v must be a torch.Tensor, got {type(v).__name__}.")
    if v.ndim == 0 or v.shape[-1] not in (3, 4):
        raise ValueError(f"v must have a last dimension of size 3 or 4, got shape "
                         f"{tuple(v.shape)}.")
    q = quaternion_normalize(q)
    pure = v.shape[-1] == 3
    if pure:
        v = torch.cat((torch.zeros_like(v[..., :1]), v), dim=-1)
    out = hamilton_product(hamilton_product(q, v), quaternion_conjugate(q))
    return out[..., 1:] if pure else out

