"""Rotation utilities: quaternions, the octahedral group, Procrustes, angular errors.

Conventions (those of Scarvelis et al.): a rotation R in SO(3) has the
orientation axes of a shape as its columns, R = [side | up | front]. A
canonical cloud X (one point per row) is shown rotated as X R^T, and X R^T R = X
undoes it. Quaternions are scalar-first, q = (w, x, y, z).

Everything here is numpy and exact up to floating point; the octahedral group
and the matrix-to-quaternion conversion come from
:class:`scipy.spatial.transform.Rotation`. The torch versions used in training
live in :mod:`skpaper.shape._torch_ops`.
"""

import functools
from numbers import Integral, Real

import numpy as np
from scipy.spatial.transform import Rotation
from sklearn.utils import check_random_state

from ..utils._docstring import Substitution

__all__ = [
    "angle_modulo_group",
    "axis_angle_to_matrix",
    "axis_errors",
    "geodesic_distance",
    "matrix_to_quaternion",
    "nearest_group_element",
    "octahedral_group",
    "quaternion_to_matrix",
    "random_rotations",
    "random_small_rotations",
    "special_procrustes",
    "up_axis_accuracy",
]

#: Column index of each orientation axis in R = [side | up | front].
AXES = {"side": 0, "up": 1, "front": 2}

#: Docstring pieces of the orientation metrics (filled by ``Substitution``).
_DOCS = {
    "R_pred": """
        R_pred : array-like of shape (n, 3, 3)
            Predicted rotations.""",
    "R_true": """
        R_true : array-like of shape (n, 3, 3)
            True rotations, R = [side | up | front] (X = X_canonical R^T).""",
    "n": """
        n : int
            Number of rotations.""",
    "R_drawn": """
        R : ndarray of shape (n, 3, 3)
            The drawn rotation matrices.""",
}


def _check_matrices(R, name):
    R = np.asarray(R, dtype=np.float64)
    if R.ndim < 2 or R.shape[-2:] != (3, 3):
        raise ValueError(f"{name} must have shape (..., 3, 3), got {R.shape}.")
    if not np.all(np.isfinite(R)):
        raise ValueError(f"{name} must be finite (it contains NaN or infinity).")
    return R


def _check_count(name, value, low=0):
    if not isinstance(value, Integral) or isinstance(value, bool) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}.")
    return int(value)


@functools.lru_cache(maxsize=1)
def _octahedral_matrices():
    G = np.round(Rotation.create_group("O").as_matrix()) + 0.0  # + 0.0 turns -0.0 into 0.0
    # Column j of g is sign_j e_{perm_j}: sort by the permutation, then the sign pattern.
    perm = np.abs(G).argmax(axis=1)
    negative = np.take_along_axis(G, perm[:, None, :], axis=1)[:, 0] < 0
    keys = np.column_stack([perm, negative])
    G = G[np.lexsort(keys.T[::-1])]
    G.setflags(write=False)
    return G


def octahedral_group():
    """The 24 rotations of the cube (the chiral octahedral group O).

    They are the signed permutation matrices with determinant +1: each maps
    the coordinate axes onto the coordinate axes (scipy's
    ``Rotation.create_group("O")``). Index 0 is the identity; the order is
    fixed (permutations in lexicographic order, then sign patterns, + before
    -), so an index is a stable class label for :class:`OctahedralFlipper`.

    Returns
    -------
    group : ndarray of shape (24, 3, 3)
        The rotation matrices, a fresh copy at each call.

    Examples
    --------
    >>> from skpaper.shape import octahedral_group
    >>> O = octahedral_group()
    >>> O.shape, bool((O[0] == np.eye(3)).all())
    ((24, 3, 3), True)
    """
    return _octahedral_matrices().copy()


def quaternion_to_matrix(q):
    """Return the rotation matrices of (not necessarily unit) quaternions q = (w, x, y, z).

    Parameters
    ----------
    q : array-like of shape (..., 4)
        Non-zero quaternions; they are normalised first.

    Returns
    -------
    R : ndarray of shape (..., 3, 3)
        The rotation of each quaternion.

    Examples
    --------
    >>> from skpaper.shape import quaternion_to_matrix
    >>> quaternion_to_matrix([2.0, 0.0, 0.0, 0.0]).tolist()  # the identity
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    q = np.asarray(q, dtype=np.float64)
    if q.shape[-1:] != (4,):
        raise ValueError(f"q must have shape (..., 4), got {q.shape}.")
    norm = np.linalg.norm(q, axis=-1, keepdims=True)
    if not np.all(np.isfinite(q)) or np.any(norm == 0):
        raise ValueError("q must be finite and non-zero.")
    # The closed form, not scipy's: random_rotations must give the very same matrices
    # (prediction votes can tie exactly, and rounding would break the ties otherwise).
    w, x, y, z = np.moveaxis(q / norm, -1, 0)
    R = np.stack([
        1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
        2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
        2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y),
    ], axis=-1)
    return R.reshape(q.shape[:-1] + (3, 3))


def matrix_to_quaternion(R):
    """Return the unit quaternions (w, x, y, z) with w >= 0 of rotation matrices.

    scipy's conversion takes the largest of the four squared components
    (Shepperd's method), so it is accurate for every angle, including 180
    degrees.

    Parameters
    ----------
    R : array-like of shape (..., 3, 3)
        Rotation matrices (scipy orthogonalises a matrix that is not exactly
        orthogonal; a non-positive determinant raises a ValueError).

    Returns
    -------
    q : ndarray of shape (..., 4)
        The quaternion of each rotation, with a non-negative real part.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.shape import matrix_to_quaternion, random_rotations
    >>> R = random_rotations(3, random_state=0)
    >>> q = matrix_to_quaternion(R)
    >>> q.shape, np.allclose(np.linalg.norm(q, axis=1), 1.0)
    ((3, 4), True)
    """
    R = _check_matrices(R, "R")
    m = R.reshape(-1, 3, 3)
    if len(m) == 0:
        return np.empty(R.shape[:-2] + (4,))
    det = np.linalg.det(m)
    if np.any(det <= 0):
        raise ValueError(f"R must hold rotation matrices (det R > 0), got determinant "
                         f"{det[det <= 0][0]:.3g}.")
    q = Rotation.from_matrix(m).as_quat()[:, [3, 0, 1, 2]]
    q *= np.where(q[:, :1] < 0, -1.0, 1.0)
    return q.reshape(R.shape[:-2] + (4,))


@Substitution(**_DOCS)
def random_rotations(n, random_state=None):
    """Draw rotations uniformly (Haar measure) on SO(3).

    A standard Gaussian vector in R^4, normalised, is uniform on the unit
    sphere of quaternions, whose image in SO(3) is Haar-distributed (the
    official code draws its targets the same way).

    Parameters
    ----------
    {n}
    random_state : int, RandomState instance or None, default=None
        Seeds the draws.

    Returns
    -------
    {R_drawn}

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.shape import random_rotations
    >>> R = random_rotations(5, random_state=0)
    >>> np.allclose(R @ R.transpose(0, 2, 1), np.eye(3))
    True
    """
    n = _check_count("n", n)
    rng = check_random_state(random_state)
    return quaternion_to_matrix(rng.standard_normal((n, 4)))


def axis_angle_to_matrix(axis, angle):
    """Rodrigues' formula: rotation by ``angle`` (radians) about unit ``axis``.

    Parameters
    ----------
    axis : array-like of shape (..., 3)
        Non-zero axes (normalised first).
    angle : array-like of shape (...)
        Rotation angles in radians, broadcast against the axes.

    Returns
    -------
    R : ndarray of shape (..., 3, 3)
        The rotation matrices.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.shape import axis_angle_to_matrix
    >>> axis_angle_to_matrix([0.0, 0.0, 1.0], np.pi / 2).round(6) + 0.0
    array([[ 0., -1.,  0.],
           [ 1.,  0.,  0.],
           [ 0.,  0.,  1.]])
    """
    axis = np.asarray(axis, dtype=np.float64)
    angle = np.asarray(angle, dtype=np.float64)
    norm = np.linalg.norm(axis, axis=-1, keepdims=True)
    if axis.shape[-1:] != (3,) or np.any(norm == 0):
        raise ValueError(f"axis must be non-zero vectors of shape (..., 3), got {axis.shape}.")
    half = angle[..., None] / 2
    q = np.concatenate([np.cos(half), np.sin(half) * axis / norm], axis=-1)
    return quaternion_to_matrix(q)


@Substitution(**_DOCS)
def random_small_rotations(n, max_angle_deg=10.0, random_state=None):
    """Draw rotations about a uniform random axis by an angle uniform in [0, max_angle_deg].

    This is the perturbation the flipper is trained with, to mimic the residual
    error of the first stage.

    Parameters
    ----------
    {n}
    max_angle_deg : float, default=10.0
        Largest rotation angle, in degrees, in [0, 180].
    random_state : int, RandomState instance or None, default=None
        Seeds the draws of the axes and the angles.

    Returns
    -------
    {R_drawn}

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.shape import geodesic_distance, random_small_rotations
    >>> R = random_small_rotations(4, max_angle_deg=5.0, random_state=0)
    >>> bool((geodesic_distance(np.eye(3), R) <= 5.0).all())
    True
    """
    n = _check_count("n", n)
    if not isinstance(max_angle_deg, Real) or not 0 <= max_angle_deg <= 180:
        raise ValueError(f"max_angle_deg must be in [0, 180], got {max_angle_deg!r}.")
    rng = check_random_state(random_state)
    axis = rng.standard_normal((n, 3))
    angle = np.deg2rad(max_angle_deg) * rng.uniform(size=n)
    return axis_angle_to_matrix(axis, angle)


def special_procrustes(M):
    """Nearest rotation to each 3x3 matrix in Frobenius norm (special Procrustes).

    With the SVD M = U diag(s) V^T, the projection is
    U diag(1, 1, det(U V^T)) V^T. Accepts numpy arrays and torch tensors; for
    tensors the backward pass is the closed form of
    :func:`skpaper.shape._torch_ops.special_procrustes_torch`, which stays
    finite at repeated singular values.

    Parameters
    ----------
    M : array-like or torch.Tensor of shape (..., 3, 3)
        Matrices to project.

    Returns
    -------
    R : ndarray or torch.Tensor of shape (..., 3, 3)
        The nearest rotation of each matrix, of the input's kind.

    Examples
    --------
    >>> from skpaper.shape import special_procrustes
    >>> R = special_procrustes(np.diag([2.0, 1.0, -0.5]))
    >>> np.allclose(R, np.diag([1.0, 1.0, 1.0]))
    True
    """
    if type(M).__module__.startswith("torch"):
        from ._torch_ops import special_procrustes_torch

        return special_procrustes_torch(M)
    M = _check_matrices(M, "M")
    U, _, Vt = np.linalg.svd(M)
    d = np.sign(np.linalg.det(U @ Vt))
    d = np.where(d == 0, 1.0, d)
    U = U.copy()
    U[..., :, 2] *= d[..., None]
    return U @ Vt


def geodesic_distance(R1, R2, degrees=True):
    """Return the rotation angle of R1^T R2 (the geodesic distance on SO(3)).

    Computed as atan2(||vee(skew(Q))||, (tr Q - 1) / 2), accurate for small
    and for near-180-degree angles alike (arccos of the trace is not).

    Parameters
    ----------
    R1, R2 : array-like of shape (..., 3, 3)
        Broadcast against each other.
    degrees : bool, default=True
        Return degrees; False returns radians.

    Returns
    -------
    angle : ndarray of shape (...)
        The angles, in [0, 180] degrees (or [0, pi]).

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.shape import axis_angle_to_matrix, geodesic_distance
    >>> R = axis_angle_to_matrix([1.0, 0.0, 0.0], np.deg2rad(30.0))
    >>> round(float(geodesic_distance(np.eye(3), R)), 6)
    30.0
    """
    R1 = _check_matrices(R1, "R1")
    R2 = _check_matrices(R2, "R2")
    Q = np.swapaxes(R1, -1, -2) @ R2
    sin = 0.5 * np.sqrt((Q[..., 2, 1] - Q[..., 1, 2]) ** 2 + (Q[..., 0, 2] - Q[..., 2, 0]) ** 2
                        + (Q[..., 1, 0] - Q[..., 0, 1]) ** 2)
    cos = 0.5 * (np.trace(Q, axis1=-2, axis2=-1) - 1)
    angle = np.arctan2(sin, cos)
    return np.rad2deg(angle) if degrees else angle


def _check_group(group):
    group = np.asarray(octahedral_group() if group is None else group, dtype=np.float64)
    if group.ndim == 2:
        group = group[None]
    return _check_matrices(group, "group")


def _per_sample_groups(groups, n):
    """Return a list of n groups from None, one (k, 3, 3) array or a list."""
    if groups is None or (not isinstance(groups, (list, tuple)) and np.ndim(groups) in (2, 3)):
        g = _check_group(groups)
        return [g] * n
    if len(groups) != n:
        raise ValueError(f"groups must hold one group per rotation ({n}), got {len(groups)}.")
    return [_check_group(g) for g in groups]


@Substitution(**_DOCS)
def angle_modulo_group(R_pred, R_true, group=None, degrees=True):
    """Return the geodesic error modulo a symmetry group: min over g of angle(R_pred, R_true g).

    For a shape with rotational symmetries G_S every R_true g (g in G_S) is an
    equally correct orientation; with the octahedral group (the default) this
    is the error of the paper's quotient orienter, which is only defined up to
    the 24 cube rotations.

    Parameters
    ----------
    {R_pred}
    {R_true}
    group : array-like of shape (k, 3, 3), list of such arrays, or None
        One group for all rotations, or one per rotation; None means O.
    degrees : bool, default=True
        Return degrees; False returns radians.

    Returns
    -------
    angle : ndarray of shape (n,)
        The smallest angle between R_pred and the R_true g of each pair.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.shape import angle_modulo_group, octahedral_group
    >>> angle_modulo_group(octahedral_group()[[3]], np.eye(3)[None]).round(6).tolist()
    [0.0]
    """
    R_pred = _check_matrices(R_pred, "R_pred").reshape(-1, 3, 3)
    R_true = _check_matrices(R_true, "R_true").reshape(-1, 3, 3)
    if len(R_pred) != len(R_true):
        raise ValueError(f"R_pred and R_true must have the same length, got {len(R_pred)} "
                         f"and {len(R_true)}.")
    groups = _per_sample_groups(group, len(R_pred))
    out = np.empty(len(R_pred))
    for i, (p, t, g) in enumerate(zip(R_pred, R_true, groups)):
        out[i] = geodesic_distance(p[None], t[None] @ g, degrees=degrees).min()
    return out


@Substitution(**_DOCS)
def axis_errors(R_pred, R_true, axis="up", group=None):
    """Return the angle in degrees between a predicted and a true orientation axis.

    Parameters
    ----------
    {R_pred}
    {R_true}
    axis : {"side", "up", "front"}, default="up"
        Which column of R = [side | up | front] to compare.
    group : array-like of shape (k, 3, 3), list of such arrays, or None
        Symmetry group(s) G_S; the error is the minimum over the axes of
        R_true g, g in G_S. None compares with R_true itself (unlike
        :func:`angle_modulo_group`, no group by default).

    Returns
    -------
    angle : ndarray of shape (n,)
        The angle between the ``axis`` columns, in [0, 180].

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.shape import axis_angle_to_matrix, axis_errors
    >>> R = axis_angle_to_matrix([0.0, 0.0, 1.0], np.deg2rad(20.0))[None]
    >>> axis_errors(R, np.eye(3)[None]).round(6).tolist()  # the up axis tilts by 20
    [20.0]
    >>> axis_errors(R, np.eye(3)[None], axis="front").round(6).tolist()
    [0.0]
    """
    if axis not in AXES:
        raise ValueError(f"axis must be one of {sorted(AXES)}, got {axis!r}.")
    R_pred = _check_matrices(R_pred, "R_pred").reshape(-1, 3, 3)
    R_true = _check_matrices(R_true, "R_true").reshape(-1, 3, 3)
    if len(R_pred) != len(R_true):
        raise ValueError(f"R_pred and R_true must have the same length, got {len(R_pred)} "
                         f"and {len(R_true)}.")
    col = AXES[axis]
    groups = _per_sample_groups(np.eye(3) if group is None else group, len(R_pred))
    out = np.empty(len(R_pred))
    for i, (p, t, g) in enumerate(zip(R_pred, R_true, groups)):
        cos = np.clip((t[None] @ g)[:, :, col] @ p[:, col], -1.0, 1.0)
        out[i] = np.rad2deg(np.arccos(cos.max()))
    return out


@Substitution(**_DOCS)
def top_k_axis_errors(R_candidates, R_true, axis="up", group=None):
    """Return the axis error of the best of ``k`` candidate orientations per shape.

    The official benchmark's top-4 evaluation: the pipeline proposes the
    orientations completed by the flipper's four most probable flips, and a
    shape counts as correct when any of them is.

    Parameters
    ----------
    R_candidates : array-like of shape (n, k, 3, 3)
        The ``k`` candidate rotations of each shape.
    {R_true}
    axis : {"side", "up", "front"}, default="up"
        Which column of R = [side | up | front] to compare.
    group : array-like of shape (m, 3, 3), list of such arrays, or None
        As in :func:`axis_errors`.

    Returns
    -------
    angle : ndarray of shape (n,)
        ``min`` over the ``k`` candidates of :func:`axis_errors`.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.shape import octahedral_group, top_k_axis_errors
    >>> G = octahedral_group()
    >>> top_k_axis_errors(G[None, [5, 0]], np.eye(3)[None]).tolist()
    [0.0]
    """
    R_candidates = np.asarray(R_candidates, dtype=np.float64)
    if R_candidates.ndim != 4 or R_candidates.shape[2:] != (3, 3):
        raise ValueError(f"R_candidates must have shape (n, k, 3, 3), got "
                         f"{R_candidates.shape}.")
    n, k = R_candidates.shape[:2]
    R_true = _check_matrices(R_true, "R_true").reshape(-1, 3, 3)
    if len(R_true) != n:
        raise ValueError(f"R_candidates and R_true must hold as many shapes, got {n} and "
                         f"{len(R_true)}.")
    groups = _per_sample_groups(np.eye(3) if group is None else group, n)
    errors = axis_errors(R_candidates.reshape(n * k, 3, 3), np.repeat(R_true, k, axis=0), axis,
                         [g for g in groups for _ in range(k)])
    return errors.reshape(n, k).min(axis=1)


@Substitution(**_DOCS)
def up_axis_accuracy(R_pred, R_true, threshold_deg=10.0, group=None):
    """Return the fraction of shapes whose predicted up axis is within ``threshold_deg``.

    The paper's main metric (angle < 10 degrees, i.e. cosine > 0.9848).

    Parameters
    ----------
    {R_pred}
    {R_true}
    threshold_deg : float, default=10.0
        Largest up-axis error counted as correct, in (0, 180] degrees.
    group : array-like of shape (k, 3, 3), list of such arrays, or None
        Symmetry group(s) the metric is taken modulo (see :func:`axis_errors`).

    Returns
    -------
    accuracy : float
        The share of shapes whose up-axis error is below ``threshold_deg``.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.shape import axis_angle_to_matrix, up_axis_accuracy
    >>> R_pred = axis_angle_to_matrix([0.0, 0.0, 1.0], np.deg2rad([5.0, 20.0]))
    >>> up_axis_accuracy(R_pred, np.stack([np.eye(3)] * 2))
    0.5
    """
    if not isinstance(threshold_deg, Real) or not 0 < threshold_deg <= 180:
        raise ValueError(f"threshold_deg must be in (0, 180], got {threshold_deg!r}.")
    return float(np.mean(axis_errors(R_pred, R_true, "up", group) < threshold_deg))


def nearest_group_element(M, group=None):
    """Return the index of the group element closest to each matrix (largest trace of g^T M).

    Parameters
    ----------
    M : array-like of shape (n, 3, 3)
        Matrices, e.g. products of group elements.
    group : array-like of shape (k, 3, 3) or None
        Group to search; None means the octahedral group.

    Returns
    -------
    index : ndarray of shape (n,), dtype=int
        Index into ``group`` of the element nearest to each matrix.

    Examples
    --------
    >>> from skpaper.shape import nearest_group_element, octahedral_group
    >>> G = octahedral_group()
    >>> nearest_group_element(G[[7, 2]] + 0.01).tolist()
    [7, 2]
    """
    M = _check_matrices(M, "M").reshape(-1, 3, 3)
    group = _check_group(group)
    return np.argmax(np.einsum("kij,nij->nk", group, M), axis=1)
