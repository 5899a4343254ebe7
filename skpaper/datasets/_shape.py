"""Synthetic 3D shapes with known symmetries for :mod:`skpaper.shape` (numpy only).

Every shape is built from primitives (boxes, cylinders, discs, cones, a torus
handle) in its canonical frame: side = +x, up = +y, front = +z. Points are
sampled uniformly by area on the surface with outward unit normals, then the
cloud is centred on its bounding box and scaled to radius 0.95, as the
official pipeline of Scarvelis et al. normalises meshes.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["make_synthetic_shapes", "shape_symmetry_group"]

#: Rotational symmetry of each family in its canonical frame:
#: ``(kind, axis, order)`` with axis 0 = side (x), 1 = up (y), 2 = front (z).
#: Mirror symmetries are not rotations, so a chair's group is trivial in SO(3).
SHAPE_SYMMETRIES = {
    "table": ("cyclic", 1, 4),
    "bench": ("cyclic", 1, 2),
    "lamp": ("continuous", 1, None),
    "chair": ("trivial", None, 1),
    "mug": ("trivial", None, 1),
    "rocket": ("continuous", 2, None),
}
FAMILIES = tuple(SHAPE_SYMMETRIES)

_AXES = np.eye(3)


def _frame(axis):
    """Orthonormal (u, v, a) with a = the coordinate axis ``axis`` and u x v = a."""
    a = _AXES[axis]
    u = _AXES[(axis + 1) % 3]
    v = _AXES[(axis + 2) % 3]
    return u, v, a


def _coordinate_rotation(axis, angles):
    """Rotations by ``angles`` (radians) about coordinate axis ``axis``; (k, 3, 3)."""
    angles = np.asarray(angles, dtype=np.float64).reshape(-1)
    c, s = np.cos(angles), np.sin(angles)
    i, j = (axis + 1) % 3, (axis + 2) % 3
    out = np.zeros((len(angles), 3, 3))
    out[:, axis, axis] = 1.0
    out[:, i, i] = c
    out[:, j, j] = c
    out[:, j, i] = s
    out[:, i, j] = -s
    return out


def shape_symmetry_group(family, *, resolution=360):
    """Rotation group G_S of a synthetic family, in its canonical frame.

    Parameters
    ----------
    family : {"table", "bench", "lamp", "chair", "mug", "rocket"}
        Family name as returned by :func:`make_synthetic_shapes`.
    resolution : int, default=360
        Number of rotations used to discretise a continuous symmetry
        (C-infinity about an axis); errors measured modulo the discretised
        group are within ``180 / resolution`` degrees of the exact value.

    Returns
    -------
    group : ndarray of shape (k, 3, 3)
        Rotation matrices g with S g^T = S (the identity first).

    Examples
    --------
    >>> from skpaper.datasets import shape_symmetry_group
    >>> shape_symmetry_group("table").shape
    (4, 3, 3)
    """
    if family not in SHAPE_SYMMETRIES:
        raise ValueError(f"family must be one of {sorted(SHAPE_SYMMETRIES)}, got {family!r}.")
    if not isinstance(resolution, Integral) or isinstance(resolution, bool) or resolution < 1:
        raise ValueError(f"resolution must be a positive int, got {resolution!r}.")
    kind, axis, order = SHAPE_SYMMETRIES[family]
    if kind == "trivial":
        return np.eye(3)[None].copy()
    k = int(order) if kind == "cyclic" else int(resolution)
    return _coordinate_rotation(axis, 2.0 * np.pi * np.arange(k) / k)


# ---------------------------------------------------------------- primitives
# Each sampler returns (points, normals, area) for m points; parts are mixed in
# proportion to their areas so the whole cloud is uniform on the surface.


def _box_area(half):
    hx, hy, hz = half
    return 8.0 * (hx * hy + hy * hz + hx * hz)


def _sample_box(center, half, m, rng):
    half = np.asarray(half, dtype=np.float64)
    face_areas = np.array([half[1] * half[2], half[0] * half[2], half[0] * half[1]])
    probs = np.repeat(face_areas, 2) / (2 * face_areas.sum())
    faces = rng.choice(6, size=m, p=probs)
    axis, sign = faces // 2, np.where(faces % 2 == 0, 1.0, -1.0)
    pts = rng.uniform(-1.0, 1.0, size=(m, 3)) * half
    pts[np.arange(m), axis] = sign * half[axis]
    normals = np.zeros((m, 3))
    normals[np.arange(m), axis] = sign
    return pts + np.asarray(center), normals


def _cylinder_area(radius, half_len, caps):
    return 2 * np.pi * radius * 2 * half_len + np.pi * radius**2 * sum(caps)


def _sample_cylinder(center, axis, radius, half_len, m, rng, caps=(True, True)):
    u, v, a = _frame(axis)
    parts = np.array([2 * np.pi * radius * 2 * half_len,
                      np.pi * radius**2 * caps[0], np.pi * radius**2 * caps[1]])
    which = rng.choice(3, size=m, p=parts / parts.sum())
    phi = rng.uniform(0, 2 * np.pi, size=m)
    radial = np.cos(phi)[:, None] * u + np.sin(phi)[:, None] * v
    t = rng.uniform(-half_len, half_len, size=m)
    rho = radius * np.sqrt(rng.uniform(0, 1, size=m))  # uniform on a disc
    side = which == 0
    top = which == 1
    offset = np.where(side, t, np.where(top, half_len, -half_len))
    r = np.where(side, radius, rho)
    pts = r[:, None] * radial + offset[:, None] * a
    normals = np.where(side[:, None], radial, np.where(top[:, None], a, -a))
    return pts + np.asarray(center), normals


def _cone_area(radius, height):
    return np.pi * radius * np.hypot(radius, height)


def _sample_cone(base_center, axis, radius, height, m, rng, sign=1.0):
    """Lateral surface of a cone: base circle at ``base_center``, apex ``sign * height`` away."""
    u, v, a = _frame(axis)
    a = sign * a
    phi = rng.uniform(0, 2 * np.pi, size=m)
    radial = np.cos(phi)[:, None] * u + np.sin(phi)[:, None] * v
    s = np.sqrt(rng.uniform(0, 1, size=m))  # area density grows linearly away from the apex
    pts = (1 - s)[:, None] * height * a + (s * radius)[:, None] * radial
    normals = height * radial + radius * a
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    return pts + np.asarray(base_center), normals


def _torus_area(big_r, small_r, arc):
    return arc * big_r * 2 * np.pi * small_r


def _sample_torus_arc(center, axis, big_r, small_r, phi_range, m, rng):
    u, v, a = _frame(axis)
    phi = rng.uniform(phi_range[0], phi_range[1], size=m)
    # The area element is proportional to (R + r cos theta): rejection-sample theta.
    theta = np.empty(0)
    while theta.size < m:
        cand = rng.uniform(0, 2 * np.pi, size=2 * m)
        keep = rng.uniform(0, big_r + small_r, size=2 * m) < big_r + small_r * np.cos(cand)
        theta = np.concatenate([theta, cand[keep]])
    theta = theta[:m]
    radial = np.cos(phi)[:, None] * u + np.sin(phi)[:, None] * v
    normals = np.cos(theta)[:, None] * radial + np.sin(theta)[:, None] * a
    pts = big_r * radial + small_r * normals
    return pts + np.asarray(center), normals


def _mix(parts, n_points, rng):
    """Draw ``n_points`` from parts ``(area, sampler)`` in proportion to area."""
    areas = np.array([area for area, _ in parts], dtype=np.float64)
    counts = rng.multinomial(n_points, areas / areas.sum())
    pts, nrm = [], []
    for (_, sampler), k in zip(parts, counts):
        if k:
            p, n = sampler(int(k))
            pts.append(p)
            nrm.append(n)
    pts, nrm = np.concatenate(pts), np.concatenate(nrm)
    order = rng.permutation(n_points)
    return pts[order], nrm[order]


def _legs(rng, x, z, height, half_w, y0=0.0):
    parts = []
    for sx in (-1, 1):
        for sz in (-1, 1):
            center = (sx * x, y0 + height / 2, sz * z)
            half = (half_w, height / 2, half_w)
            parts.append((_box_area(half),
                          lambda k, c=center, h=half: _sample_box(c, h, k, rng)))
    return parts


def _table(rng, n):
    a = rng.uniform(0.6, 1.0)
    t = rng.uniform(0.03, 0.06)
    height = rng.uniform(0.6, 1.0)
    leg = rng.uniform(0.03, 0.06)
    inset = a - leg - rng.uniform(0.0, 0.1)
    top = ((a, t, a), (0.0, height + t, 0.0))
    parts = [(_box_area(top[0]), lambda k: _sample_box(top[1], top[0], k, rng))]
    parts += _legs(rng, inset, inset, height, leg)
    return _mix(parts, n, rng)


def _bench(rng, n):
    a = rng.uniform(0.9, 1.3)
    b = rng.uniform(0.2, 0.4)
    t = rng.uniform(0.03, 0.06)
    height = rng.uniform(0.35, 0.55)
    leg = rng.uniform(0.03, 0.05)
    top = ((a, t, b), (0.0, height + t, 0.0))
    parts = [(_box_area(top[0]), lambda k: _sample_box(top[1], top[0], k, rng))]
    parts += _legs(rng, a - leg - 0.05, b - leg, height, leg)
    return _mix(parts, n, rng)


def _lamp(rng, n):
    base_r = rng.uniform(0.3, 0.5)
    base_h = rng.uniform(0.02, 0.05)
    stem_r = rng.uniform(0.03, 0.06)
    stem_h = rng.uniform(0.8, 1.3)
    shade_r = rng.uniform(0.35, 0.6)
    shade_h = rng.uniform(0.3, 0.5)
    shade_y = base_h + stem_h
    parts = [
        (_cylinder_area(base_r, base_h / 2, (True, True)),
         lambda k: _sample_cylinder((0, base_h / 2, 0), 1, base_r, base_h / 2, k, rng)),
        (_cylinder_area(stem_r, stem_h / 2, (False, False)),
         lambda k: _sample_cylinder((0, base_h + stem_h / 2, 0), 1, stem_r, stem_h / 2, k,
                                    rng, caps=(False, False))),
        (_cone_area(shade_r, shade_h),
         lambda k: _sample_cone((0, shade_y - 0.5 * shade_h, 0), 1, shade_r, shade_h, k, rng)),
    ]
    return _mix(parts, n, rng)


def _chair(rng, n):
    a = rng.uniform(0.4, 0.55)   # seat half-width (x)
    d = rng.uniform(0.4, 0.55)   # seat half-depth (z)
    t = rng.uniform(0.03, 0.06)
    height = rng.uniform(0.4, 0.6)
    back_h = rng.uniform(0.5, 0.9)
    back_t = rng.uniform(0.03, 0.06)
    leg = rng.uniform(0.03, 0.05)
    seat = ((a, t, d), (0.0, height + t, 0.0))
    back = ((a, back_h / 2, back_t), (0.0, height + 2 * t + back_h / 2, -d + back_t))
    parts = [(_box_area(seat[0]), lambda k: _sample_box(seat[1], seat[0], k, rng)),
             (_box_area(back[0]), lambda k: _sample_box(back[1], back[0], k, rng))]
    parts += _legs(rng, a - leg, d - leg, height, leg)
    return _mix(parts, n, rng)


def _mug(rng, n):
    r = rng.uniform(0.35, 0.5)
    h = rng.uniform(0.4, 0.6)
    big_r = rng.uniform(0.18, 0.25) * h / 0.5
    small_r = rng.uniform(0.03, 0.05)
    parts = [
        (_cylinder_area(r, h, (False, True)),
         lambda k: _sample_cylinder((0, 0, 0), 1, r, h, k, rng, caps=(False, True))),
        (_torus_area(big_r, small_r, np.pi),
         lambda k: _sample_torus_arc((r, 0.0, 0.0), 2, big_r, small_r,
                                     (-np.pi / 2, np.pi / 2), k, rng)),
    ]
    return _mix(parts, n, rng)


def _rocket(rng, n):
    r = rng.uniform(0.12, 0.2)
    half_len = rng.uniform(0.6, 0.9)
    nose = rng.uniform(0.3, 0.5)
    parts = [
        (_cylinder_area(r, half_len, (False, True)),
         lambda k: _sample_cylinder((0, 0, 0), 2, r, half_len, k, rng, caps=(False, True))),
        (_cone_area(r, nose), lambda k: _sample_cone((0, 0, half_len), 2, r, nose, k, rng)),
    ]
    return _mix(parts, n, rng)


_BUILDERS = {"table": _table, "bench": _bench, "lamp": _lamp, "chair": _chair, "mug": _mug,
             "rocket": _rocket}


def _normalise(points):
    """Centre on the bounding box and scale to radius 0.95 (the official preprocessing)."""
    center = (points.min(axis=0) + points.max(axis=0)) / 2
    points = points - center
    return 0.95 * points / np.sqrt((points**2).sum(axis=1)).max()


def make_synthetic_shapes(n_per_family=20, n_points=256, *, families=None, noise=0.0,
                          return_groups=False, random_state=None):
    """Point clouds with normals of procedural shapes in canonical orientation.

    Six families with known rotational symmetry groups G_S: square tables
    (C4 about up), benches (C2 about up), lamps (continuous about up, so the
    front axis is undefined), chairs and mugs (no rotational symmetry, fully
    identifiable) and rockets (continuous about front, so the up axis is
    undefined). Part sizes are drawn at random for every shape.

    Parameters
    ----------
    n_per_family : int, default=20
        Number of shapes of each family.
    n_points : int, default=256
        Points sampled on each surface.
    families : sequence of str or None, default=None
        Families to draw, in order (default: all six, see
        :func:`shape_symmetry_group`).
    noise : float, default=0.0
        Standard deviation of Gaussian jitter added to the points (after
        normalisation); normals are left unchanged.
    return_groups : bool, default=False
        Also return the symmetry group of every shape.
    random_state : int, RandomState instance or None, default=None
        Seed of the random draws; an int makes the output reproducible.

    Returns
    -------
    X : ndarray of shape (n_families * n_per_family, n_points, 6)
        Points (columns 0-2) and outward unit normals (columns 3-5), in the
        canonical frame (side = +x, up = +y, front = +z).
    family : ndarray of shape (n_samples,), dtype=object
        Family name of each shape.
    groups : list of ndarray of shape (k, 3, 3)
        Only when ``return_groups=True``: G_S of each shape, from
        :func:`shape_symmetry_group`.

    Examples
    --------
    >>> from skpaper.datasets import make_synthetic_shapes
    >>> X, family = make_synthetic_shapes(2, 64, random_state=0)
    >>> X.shape, sorted(set(family))[:2]
    ((12, 64, 6), ['bench', 'chair'])
    """
    for name, value, low in (("n_per_family", n_per_family, 1), ("n_points", n_points, 1)):
        if not isinstance(value, Integral) or isinstance(value, bool) or value < low:
            raise ValueError(f"{name} must be an int >= {low}, got {value!r}.")
    if not isinstance(noise, Real) or isinstance(noise, bool) or not noise >= 0:
        raise ValueError(f"noise must be a non-negative float, got {noise!r}.")
    families = FAMILIES if families is None else families
    if isinstance(families, str):
        raise TypeError(f"families must be a sequence of family names, got the string "
                        f"{families!r}.")
    families = list(families)
    unknown = [f for f in families if f not in SHAPE_SYMMETRIES]
    if not families or unknown:
        raise ValueError(f"families must be a non-empty subset of {list(FAMILIES)}, got "
                         f"{families!r}.")
    rng = check_random_state(random_state)
    X = np.empty((len(families) * n_per_family, n_points, 6))
    labels = np.empty(len(X), dtype=object)
    row = 0
    for fam in families:
        for _ in range(n_per_family):
            pts, nrm = _BUILDERS[fam](rng, n_points)
            pts = _normalise(pts)
            if noise:
                pts = pts + rng.normal(scale=noise, size=pts.shape)
            X[row, :, :3] = pts
            X[row, :, 3:] = nrm
            labels[row] = fam
            row += 1
    if return_groups:
        cache = {fam: shape_symmetry_group(fam) for fam in set(families)}
        return X, labels, [cache[f] for f in labels]
    return X, labels
