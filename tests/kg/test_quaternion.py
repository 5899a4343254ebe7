import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from skpaper.kg import (
    hamilton_product,
    quaternion_conjugate,
    quaternion_from_angle,
    quaternion_norm,
    quaternion_normalize,
    quaternion_rotate,
)

_FLOATS = st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=64)
_QUATS = arrays(np.float64, (3, 4), elements=_FLOATS).map(torch.from_numpy)


def _basis():
    one, i, j, k = torch.eye(4, dtype=torch.float64)
    return one, i, j, k


def test_hamilton_product_basis_table():
    one, i, j, k = _basis()
    for a, b, c in ((i, j, k), (j, k, i), (k, i, j)):
        torch.testing.assert_close(hamilton_product(a, b), c)
        torch.testing.assert_close(hamilton_product(b, a), -c)
    for unit in (i, j, k):
        torch.testing.assert_close(hamilton_product(unit, unit), -one)
    torch.testing.assert_close(hamilton_product(hamilton_product(i, j), k), -one)


@given(_QUATS)
def test_hamilton_product_is_associative(q):
    a, b, c = q
    torch.testing.assert_close(hamilton_product(hamilton_product(a, b), c),
                               hamilton_product(a, hamilton_product(b, c)),
                               atol=1e-8, rtol=1e-10)


@given(_QUATS)
def test_hamilton_product_norm_is_multiplicative(q):
    a, b, _ = q
    torch.testing.assert_close(quaternion_norm(hamilton_product(a, b)),
                               quaternion_norm(a) * quaternion_norm(b), atol=1e-9, rtol=1e-10)


@given(_QUATS)
def test_conjugate_of_product_reverses_order(q):
    a, b, _ = q
    torch.testing.assert_close(quaternion_conjugate(hamilton_product(a, b)),
                               hamilton_product(quaternion_conjugate(b), quaternion_conjugate(a)))


@given(_QUATS)
def test_right_multiplication_adjoint_is_conjugate(q):
    # <a p, b> = <a, b p̄>: the identity behind head queries without reciprocal relations.
    a, p, b = q
    left = (hamilton_product(a, p) * b).sum()
    right = (a * hamilton_product(b, quaternion_conjugate(p))).sum()
    torch.testing.assert_close(left, right, atol=1e-8, rtol=1e-10)


@given(_QUATS, st.floats(-7, 7, allow_nan=False))
def test_unit_quaternion_multiplication_preserves_norm(q, theta):
    axis = q[0, 1:] + torch.tensor([1e-3, 0, 0], dtype=torch.float64)
    unit = quaternion_from_angle(torch.tensor(theta, dtype=torch.float64), axis)
    torch.testing.assert_close(quaternion_norm(unit), torch.tensor(1.0, dtype=torch.float64))
    for v in q:
        torch.testing.assert_close(quaternion_norm(hamilton_product(v, unit)),
                                   quaternion_norm(v), atol=1e-9, rtol=1e-10)
        torch.testing.assert_close(quaternion_norm(quaternion_rotate(v, unit)),
                                   quaternion_norm(v), atol=1e-9, rtol=1e-10)


def test_quaternion_rotate_turns_by_twice_the_angle():
    q = quaternion_from_angle(torch.tensor(math.pi / 4, dtype=torch.float64),
                              torch.tensor([0.0, 0.0, 2.0], dtype=torch.float64))
    out = quaternion_rotate(torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64), q)
    torch.testing.assert_close(out, torch.tensor([0.0, 1.0, 0.0], dtype=torch.float64))
    # The scalar part of a full quaternion is left alone.
    full = quaternion_rotate(torch.tensor([3.0, 1.0, 0.0, 0.0], dtype=torch.float64), q)
    torch.testing.assert_close(full, torch.tensor([3.0, 0.0, 1.0, 0.0], dtype=torch.float64))


def test_quaternion_normalize_and_broadcasting():
    q = torch.tensor([[3.0, 0.0, 4.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    out = quaternion_normalize(q)
    torch.testing.assert_close(out[0], torch.tensor([0.6, 0.0, 0.8, 0.0]))
    torch.testing.assert_close(out[1], torch.zeros(4))
    batch = hamilton_product(torch.randn(5, 1, 4), torch.randn(1, 3, 4))
    assert batch.shape == (5, 3, 4)


def test_quaternion_functions_are_differentiable():
    q = torch.randn(4, 4, dtype=torch.float64, requires_grad=True)
    p = torch.randn(4, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(hamilton_product, (q, p))


@pytest.mark.parametrize("func, args, match", [
    (hamilton_product, (torch.zeros(3), torch.zeros(4)), "last dimension of size 4"),
    (hamilton_product, (np.zeros(4), torch.zeros(4)), "torch.Tensor"),
    (quaternion_conjugate, (torch.zeros(2, 3),), "last dimension of size 4"),
    (quaternion_norm, (torch.tensor(1.0),), "last dimension of size 4"),
    (quaternion_from_angle, (torch.tensor(1.0), torch.zeros(4)), "size 3"),
    (quaternion_from_angle, (1.0, torch.zeros(3)), "torch.Tensor"),
    (quaternion_rotate, (torch.zeros(5), torch.zeros(4)), "size 3 or 4"),
])
def test_quaternion_functions_reject_bad_input(func, args, match):
    with pytest.raises((TypeError, ValueError), match=match):
        func(*args)
