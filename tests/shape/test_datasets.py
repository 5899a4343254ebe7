"""Synthetic shapes with known symmetry groups."""

import numpy as np
import pytest
from scipy.spatial import cKDTree

from skpaper.datasets import make_synthetic_shapes, shape_symmetry_group
from skpaper.shape import axis_angle_to_matrix, octahedral_group


def _chamfer(a, b):
    return cKDTree(a).query(b)[0].mean() + cKDTree(b).query(a)[0].mean()


def test_make_synthetic_shapes_shapes_normals_and_normalisation():
    X, family = make_synthetic_shapes(3, 200, random_state=0)
    assert X.shape == (18, 200, 6) and family.shape == (18,)
    assert sorted(set(family)) == ["bench", "chair", "lamp", "mug", "rocket", "table"]
    np.testing.assert_allclose(np.linalg.norm(X[..., 3:], axis=-1), 1.0, atol=1e-12)
    radius = np.linalg.norm(X[..., :3], axis=-1).max(axis=1)
    np.testing.assert_allclose(radius, 0.95, atol=1e-12)
    centre = (X[..., :3].max(axis=1) + X[..., :3].min(axis=1)) / 2
    np.testing.assert_allclose(centre, 0.0, atol=1e-12)


def test_make_synthetic_shapes_is_seeded_and_filters_families():
    a, fa = make_synthetic_shapes(2, 50, families=["mug", "table"], random_state=3)
    b, fb = make_synthetic_shapes(2, 50, families=["mug", "table"], random_state=3)
    np.testing.assert_array_equal(a, b)
    assert list(fa) == ["mug", "mug", "table", "table"] and list(fa) == list(fb)
    c, _ = make_synthetic_shapes(2, 50, families=["mug", "table"], random_state=4)
    assert not np.allclose(a, c)


def test_synthetic_shapes_are_invariant_under_their_symmetry_groups():
    X, family, groups = make_synthetic_shapes(2, 3000, return_groups=True, random_state=1)
    off_group = axis_angle_to_matrix([1.0, 0.0, 0.0], np.pi)  # upside down: no family has it
    for x, fam, G in zip(X, family, groups):
        pts = x[:, :3]
        sampled = G[:: max(1, len(G) // 6)]
        symmetric = max(_chamfer(pts, pts @ g.T) for g in sampled)
        broken = _chamfer(pts, pts @ off_group.T)
        # Symmetric copies differ only by sampling noise, far below a real change.
        assert symmetric < 0.6 * broken, (fam, symmetric, broken)
        normals_rotated = x[:, 3:] @ G[-1].T
        np.testing.assert_allclose(np.linalg.norm(normals_rotated, axis=1), 1.0)


def test_shape_symmetry_group_orders_and_membership():
    assert shape_symmetry_group("table").shape == (4, 3, 3)
    assert shape_symmetry_group("bench").shape == (2, 3, 3)
    assert shape_symmetry_group("chair").shape == (1, 3, 3)
    assert shape_symmetry_group("lamp", resolution=12).shape == (12, 3, 3)
    O = {(g + 0.0).round(12).tobytes() for g in octahedral_group()}
    for fam in ("table", "bench"):
        G = shape_symmetry_group(fam)
        np.testing.assert_array_equal(G[0], np.eye(3))
        assert all((g.round(12) + 0.0).tobytes() in O for g in G)
        # The up axis (column 1) is fixed by every element.
        np.testing.assert_allclose(G[:, :, 1], np.tile([0.0, 1.0, 0.0], (len(G), 1)),
                                   atol=1e-12)
    rocket = shape_symmetry_group("rocket", resolution=8)
    np.testing.assert_allclose(rocket[:, :, 2], np.tile([0.0, 0.0, 1.0], (8, 1)), atol=1e-12)


def test_make_synthetic_shapes_noise_moves_points_only():
    a, _ = make_synthetic_shapes(1, 40, families=["chair"], random_state=0)
    b, _ = make_synthetic_shapes(1, 40, families=["chair"], noise=0.01, random_state=0)
    np.testing.assert_array_equal(a[..., 3:], b[..., 3:])
    assert 0 < np.abs(a[..., :3] - b[..., :3]).max() < 0.1


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(n_per_family=0), ValueError, "n_per_family"),
    (dict(n_points=2.5), ValueError, "n_points"),
    (dict(noise=-1.0), ValueError, "noise"),
    (dict(families=["sofa"]), ValueError, "families"),
    (dict(families=[]), ValueError, "families"),
    (dict(families="mug"), TypeError, "families"),
])
def test_make_synthetic_shapes_rejects_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        make_synthetic_shapes(**{"n_per_family": 1, "n_points": 8, **kwargs})


def test_shape_symmetry_group_rejects_bad_input():
    with pytest.raises(ValueError, match="family"):
        shape_symmetry_group("sofa")
    with pytest.raises(ValueError, match="resolution"):
        shape_symmetry_group("lamp", resolution=0)
