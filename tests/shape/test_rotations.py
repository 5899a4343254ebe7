"""Rotation math: octahedral group, quaternions, Procrustes, geodesic errors."""

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats
from scipy.spatial.transform import Rotation

from skpaper.shape import (
    angle_modulo_group,
    axis_angle_to_matrix,
    axis_errors,
    geodesic_distance,
    matrix_to_quaternion,
    nearest_group_element,
    octahedral_cayley_table,
    octahedral_group,
    quaternion_to_matrix,
    random_rotations,
    random_small_rotations,
    special_procrustes,
    up_axis_accuracy,
)
from skpaper.shape._torch_ops import (
    octahedral_abs_cos_loss,
    quotient_loss,
    special_procrustes_torch,
)

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=64)
quaternions = arrays(np.float64, 4, elements=finite).filter(lambda q: np.linalg.norm(q) > 1e-3)
matrices = arrays(np.float64, (3, 3), elements=finite)


def _is_rotation(R, atol=1e-10):
    R = np.asarray(R).reshape(-1, 3, 3)
    return (np.allclose(R @ R.transpose(0, 2, 1), np.eye(3), atol=atol)
            and np.allclose(np.linalg.det(R), 1.0, atol=atol))


def test_octahedral_group_is_the_24_signed_permutations_with_det_one():
    O = octahedral_group()
    assert O.shape == (24, 3, 3)
    assert np.array_equal(O[0], np.eye(3))
    assert _is_rotation(O, atol=0)
    assert np.all(np.isin(O, [-1.0, 0.0, 1.0]))
    assert np.all(np.abs(O).sum(axis=1) == 1) and np.all(np.abs(O).sum(axis=2) == 1)
    assert len({g.tobytes() for g in O}) == 24


def test_octahedral_group_is_scipys_group_in_the_fixed_label_order():
    # The indices are OctahedralFlipper's class labels: permutations in lexicographic
    # order, then sign patterns with + before -, keeping det +1.
    expected = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((1.0, -1.0), repeat=3):
            g = np.eye(3)[:, perm] * np.asarray(signs) + 0.0
            if np.linalg.det(g) > 0:
                expected.append(g)
    O = octahedral_group()
    np.testing.assert_array_equal(O, np.stack(expected))
    assert not np.any(np.signbit(O) & (O == 0))  # no negative zeros
    scipy_group = np.round(Rotation.create_group("O").as_matrix()).astype(int)
    assert {g.tobytes() for g in O.astype(int)} == {g.tobytes() for g in scipy_group}
    O[0] = 0.0  # callers get a copy
    np.testing.assert_array_equal(octahedral_group()[0], np.eye(3))


def test_random_draws_give_the_recorded_rotations():
    # Claim figures depend on these exact matrices (same RandomState calls, same formula).
    np.testing.assert_allclose(random_rotations(1, random_state=0)[0], [
        [-0.292656663118294, -0.769905347902509, 0.567095964368978],
        [0.939238969380122, -0.120187534214264, 0.321535557936072],
        [-0.179394079975431, 0.626738152572995, 0.758298788195759]], atol=1e-14)
    np.testing.assert_allclose(random_small_rotations(1, 10.0, random_state=0)[0], [
        [0.999277762237519, -0.034699507663323, 0.015488643113585],
        [0.035611496632714, 0.997370994617905, -0.063110382683589],
        [-0.013258024179914, 0.063616375744095, 0.997886357022698]], atol=1e-14)


def test_matrix_to_quaternion_matches_scipy_with_a_non_negative_scalar():
    R = random_rotations(50, random_state=0)
    q = matrix_to_quaternion(R)
    assert q.shape == (50, 4) and np.all(q[:, 0] >= 0)
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-12)
    expected = Rotation.from_matrix(R).as_quat(scalar_first=True)
    expected *= np.where(expected[:, :1] < 0, -1.0, 1.0)
    np.testing.assert_allclose(q, expected, atol=1e-12)
    assert matrix_to_quaternion(R.reshape(5, 10, 3, 3)).shape == (5, 10, 4)
    assert matrix_to_quaternion(np.empty((0, 3, 3))).shape == (0, 4)


def test_octahedral_group_is_closed_under_products_and_inverses():
    O = octahedral_group()
    keys = {(g + 0.0).tobytes() for g in O}
    for a in O:
        assert (a.T + 0.0).tobytes() in keys
        for b in O:
            assert (a @ b + 0.0).tobytes() in keys


def test_octahedral_cayley_table_is_a_latin_square_with_identity_and_inverses():
    O = octahedral_group()
    table, inverse = octahedral_cayley_table()
    assert np.array_equal(table[0], np.arange(24)) and np.array_equal(table[:, 0], np.arange(24))
    for row in (table, table.T):
        assert all(sorted(r) == list(range(24)) for r in row)
    assert np.all(table[np.arange(24), inverse] == 0)
    a, b = 5, 17
    np.testing.assert_array_equal(O[table[a, b]], O[a] @ O[b])


@settings(max_examples=60)
@given(quaternions)
def test_quaternion_to_matrix_matches_scipy_and_round_trips(q):
    R = quaternion_to_matrix(q)
    assert _is_rotation(R)
    expected = Rotation.from_quat(q / np.linalg.norm(q), scalar_first=True).as_matrix()
    np.testing.assert_allclose(R, expected, atol=1e-12)
    back = matrix_to_quaternion(R)
    qn = q / np.linalg.norm(q) * np.sign(q[0] if q[0] != 0 else 1.0)
    np.testing.assert_allclose(quaternion_to_matrix(back), R, atol=1e-12)
    if abs(q[0]) / np.linalg.norm(q) > 1e-6:
        np.testing.assert_allclose(back, qn, atol=1e-9)


def test_matrix_to_quaternion_handles_half_turns():
    for g in octahedral_group():
        np.testing.assert_allclose(quaternion_to_matrix(matrix_to_quaternion(g)), g, atol=1e-12)


def test_random_rotations_are_haar_distributed(global_random_seed):
    R = random_rotations(4000, random_state=global_random_seed)
    assert _is_rotation(R)
    # Under the Haar measure the rotation angle has CDF (theta - sin theta) / pi.
    theta = geodesic_distance(np.eye(3), R, degrees=False)
    pvalue = stats.kstest(theta, lambda t: (t - np.sin(t)) / np.pi).pvalue
    assert pvalue > 1e-4
    # and every column is uniform on the sphere: mean 0 within 5 standard errors.
    assert np.all(np.abs(R.mean(axis=0)) < 5 * np.sqrt(1 / 3 / len(R)))


def test_random_rotations_are_seeded():
    np.testing.assert_array_equal(random_rotations(3, 7), random_rotations(3, 7))
    assert not np.allclose(random_rotations(3, 7), random_rotations(3, 8))


@settings(max_examples=40)
@given(arrays(np.float64, 3, elements=finite).filter(lambda a: np.linalg.norm(a) > 1e-3),
       st.floats(0, np.pi, allow_nan=False))
def test_geodesic_distance_recovers_axis_angle(axis, angle):
    R = axis_angle_to_matrix(axis, angle)
    assert _is_rotation(R)
    assert geodesic_distance(np.eye(3), R, degrees=False) == pytest.approx(angle, abs=1e-7)
    assert geodesic_distance(R, np.eye(3)) == pytest.approx(np.rad2deg(angle), abs=1e-5)


def test_geodesic_distance_is_accurate_for_tiny_angles():
    R = axis_angle_to_matrix([0.0, 0.0, 1.0], 1e-9)
    assert geodesic_distance(np.eye(3), R, degrees=False) == pytest.approx(1e-9, rel=1e-6)


def test_geodesic_distance_is_a_bi_invariant_metric(global_random_seed):
    A, B, C, Q = random_rotations(4 * 50, global_random_seed).reshape(4, 50, 3, 3)
    dab, dbc, dac = geodesic_distance(A, B), geodesic_distance(B, C), geodesic_distance(A, C)
    assert np.all(dac <= dab + dbc + 1e-9)
    np.testing.assert_allclose(dab, geodesic_distance(B, A), atol=1e-9)
    np.testing.assert_allclose(dab, geodesic_distance(Q @ A, Q @ B), atol=1e-7)
    np.testing.assert_allclose(dab, geodesic_distance(A @ Q, B @ Q), atol=1e-7)


@settings(max_examples=60)
@given(matrices)
def test_special_procrustes_returns_the_nearest_rotation(M):
    R = special_procrustes(M)
    assert _is_rotation(R, atol=1e-9)
    candidates = random_rotations(200, 0)
    best = np.linalg.norm(M - R)
    assert np.all(np.linalg.norm(M - candidates, axis=(1, 2)) >= best - 1e-9)


def test_special_procrustes_is_idempotent_and_equivariant(global_random_seed):
    rng = np.random.RandomState(global_random_seed)
    R = random_rotations(20, rng)
    np.testing.assert_allclose(special_procrustes(R), R, atol=1e-12)
    M = rng.normal(size=(20, 3, 3))
    Q = random_rotations(20, rng)
    np.testing.assert_allclose(special_procrustes(Q @ M), Q @ special_procrustes(M), atol=1e-9)
    np.testing.assert_allclose(special_procrustes(M @ Q), special_procrustes(M) @ Q, atol=1e-9)
    np.testing.assert_allclose(special_procrustes(-np.eye(3)[None])[0] @ np.diag([1, 1, 1.0]),
                               special_procrustes(-np.eye(3)[None])[0], atol=1e-12)
    assert _is_rotation(special_procrustes(-np.eye(3)))


def test_special_procrustes_torch_matches_numpy_and_gradchecks():
    torch.manual_seed(0)
    M = torch.randn(5, 3, 3, dtype=torch.float64, requires_grad=True)
    np.testing.assert_allclose(special_procrustes(M).detach().numpy(),
                               special_procrustes(M.detach().numpy()), atol=1e-12)
    assert torch.autograd.gradcheck(special_procrustes_torch, (M,))


def test_special_procrustes_gradient_is_finite_at_repeated_singular_values():
    weights = torch.randn(2, 3, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    M = torch.stack([torch.eye(3), torch.diag(torch.tensor([2.0, 2.0, 1.0]))]).double()
    M.requires_grad_(True)
    (special_procrustes_torch(M) * weights).sum().backward()
    assert torch.isfinite(M.grad).all()
    # The autograd SVD backward divides by s_i^2 - s_j^2 and gives NaN here.
    M2 = M.detach().clone().requires_grad_(True)
    U, _, Vh = torch.linalg.svd(M2)
    ((U @ Vh) * weights).sum().backward()
    assert not torch.isfinite(M2.grad).all()
    # Central differences agree with the closed form at the identity.
    eps, num = 1e-6, torch.zeros(3, 3, dtype=torch.float64)
    for i in range(3):
        for j in range(3):
            E = torch.zeros(3, 3, dtype=torch.float64)
            E[i, j] = eps
            f = [(special_procrustes_torch((torch.eye(3, dtype=torch.float64) + s * E)[None])[0]
                  * weights[0]).sum() for s in (1, -1)]
            num[i, j] = (f[0] - f[1]) / (2 * eps)
    np.testing.assert_allclose(M.grad[0].numpy(), num.numpy(), atol=1e-7)


def test_angle_modulo_group_is_zero_on_the_orbit_and_invariant(global_random_seed):
    O = octahedral_group()
    R = random_rotations(24, global_random_seed)
    np.testing.assert_allclose(angle_modulo_group(R @ O, R), 0.0, atol=1e-5)
    P = random_rotations(24, global_random_seed + 1)
    base = angle_modulo_group(P, R)
    np.testing.assert_allclose(angle_modulo_group(P @ O[7], R), base, atol=1e-6)
    assert np.all(base <= geodesic_distance(P, R) + 1e-9)
    # Modulo O no error exceeds the covering radius of O (62.8 degrees).
    assert base.max() < 62.81


def test_axis_errors_and_up_accuracy_respect_symmetry_groups():
    R = np.eye(3)[None].repeat(2, axis=0)
    half_turn_up = axis_angle_to_matrix([0, 1.0, 0], np.pi)
    pred = np.stack([half_turn_up, axis_angle_to_matrix([1.0, 0, 0], np.deg2rad(20))])
    np.testing.assert_allclose(axis_errors(pred, R, "up"), [0.0, 20.0], atol=1e-9)
    np.testing.assert_allclose(axis_errors(pred, R, "front"), [180.0, 20.0], atol=1e-6)
    c2 = np.stack([np.eye(3), half_turn_up])
    np.testing.assert_allclose(axis_errors(pred, R, "front", group=[c2, c2]), [0.0, 20.0],
                               atol=1e-6)
    assert up_axis_accuracy(pred, R) == 0.5
    assert up_axis_accuracy(pred, R, threshold_deg=25) == 1.0


def test_nearest_group_element_and_small_rotations(global_random_seed):
    O = octahedral_group()
    noise = random_small_rotations(24, 10.0, global_random_seed)
    assert np.all(geodesic_distance(np.eye(3), noise) <= 10.0 + 1e-9)
    np.testing.assert_array_equal(nearest_group_element(O @ noise), np.arange(24))


def test_torch_losses_are_invariant_to_the_octahedral_group(global_random_seed):
    R = torch.as_tensor(random_rotations(8, global_random_seed))
    P = torch.as_tensor(random_rotations(8, global_random_seed + 1))
    O = torch.as_tensor(octahedral_group())
    for g in O[[0, 5, 13, 23]]:
        np.testing.assert_allclose(quotient_loss(P, R @ g, O).numpy(),
                                   quotient_loss(P, R, O).numpy(), atol=1e-12)
        np.testing.assert_allclose(octahedral_abs_cos_loss(P, R @ g).numpy(),
                                   octahedral_abs_cos_loss(P, R).numpy(), atol=1e-12)
    np.testing.assert_allclose(quotient_loss(R @ O[9], R, O).numpy(), 0.0, atol=1e-12)


@pytest.mark.parametrize("func, args, match", [
    (quaternion_to_matrix, ([0.0, 0.0, 0.0, 0.0],), "non-zero"),
    (quaternion_to_matrix, ([1.0, 0.0, 0.0],), r"\(\.\.\., 4\)"),
    (special_procrustes, (np.ones((3, 2)),), r"\(\.\.\., 3, 3\)"),
    (special_procrustes, (np.full((3, 3), np.nan),), "finite"),
    (geodesic_distance, (np.eye(3), np.ones(3)), "R2"),
    (random_rotations, (-1,), "n must be"),
    (random_small_rotations, (2, 200.0), "max_angle_deg"),
    (axis_errors, (np.eye(3)[None], np.eye(3)[None], "down"), "axis must be"),
    (up_axis_accuracy, (np.eye(3)[None], np.eye(3)[None], 0.0), "threshold_deg"),
    (angle_modulo_group, (np.eye(3)[None], np.eye(3)[None].repeat(2, 0)), "same length"),
    (angle_modulo_group, (np.eye(3)[None].repeat(2, 0), np.eye(3)[None].repeat(2, 0),
                          [np.eye(3)]), "one group per rotation"),
    (axis_angle_to_matrix, (np.zeros(3), 1.0), "non-zero"),
    (matrix_to_quaternion, (np.diag([1.0, 1.0, -1.0]),), r"det R > 0"),
])
def test_rotation_helpers_reject_bad_input(func, args, match):
    with pytest.raises(ValueError, match=match):
        func(*args)
