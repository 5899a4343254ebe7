"""Keypoint and warping primitives of the motion-transfer model."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from skpaper.vision._motion_modules import DenseMotionNetwork, MotionTransferNetwork, tps_groups
from skpaper.vision._warp import (
    RandomDeformation,
    interpolate_keypoints,
    make_coordinate_grid,
    normalized_to_pixels,
    pixels_to_normalized,
    soft_argmax,
    tps_fit,
    tps_transform,
    warp_images,
)

keypoint_arrays = st.integers(0, 2**31 - 1).map(
    lambda s: torch.rand(2, 5, 2, generator=torch.Generator().manual_seed(s),
                         dtype=torch.float64) * 1.6 - 0.8)


def _module(backbone, seed=0):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return MotionTransferNetwork(3, 5, backbone, width=4).double().eval()


def test_warp_by_coordinate_grid_returns_the_image():
    images = torch.rand(2, 3, 8, 12, dtype=torch.float64)
    grid = make_coordinate_grid(8, 12, dtype=torch.float64).expand(2, 8, 12, 2)
    torch.testing.assert_close(warp_images(images, grid), images)


@pytest.mark.parametrize("backbone", ["tps", "gaussian"])
@settings(max_examples=10, deadline=None)
@given(keypoints=keypoint_arrays)
def test_dense_motion_with_identity_keypoints_is_the_identity_flow(backbone, keypoints):
    net = DenseMotionNetwork(3, 5, backbone, width=4).double()
    source = torch.rand(2, 3, 16, 16, dtype=torch.float64)
    flow = net(source, keypoints, keypoints)["flow"]
    grid = make_coordinate_grid(16, 16, dtype=torch.float64).expand_as(flow)
    torch.testing.assert_close(flow, grid, atol=1e-6, rtol=0)


@pytest.mark.parametrize("backbone", ["tps", "gaussian"])
def test_warping_with_identity_keypoints_returns_the_source(backbone):
    net = _module(backbone)
    source = torch.rand(3, 3, 32, 32, dtype=torch.float64)
    kp = torch.rand(3, 5, 2, dtype=torch.float64) - 0.5
    out = net.generate(source, kp, kp)
    torch.testing.assert_close(out["deformed"], source, atol=1e-6, rtol=0)


@settings(max_examples=20, deadline=None)
@given(control=keypoint_arrays, values=keypoint_arrays)
def test_tps_passes_through_its_control_points(control, values):
    params = tps_fit(control, values, regularization=0.0)
    torch.testing.assert_close(tps_transform(params, control), values, atol=1e-8, rtol=0)


def test_tps_reproduces_an_affine_map_everywhere():
    gen = torch.Generator().manual_seed(0)
    control = torch.rand(2, 6, 2, generator=gen, dtype=torch.float64) * 2 - 1
    a = torch.tensor([[1.1, 0.2], [-0.3, 0.9]], dtype=torch.float64)
    b = torch.tensor([0.1, -0.2], dtype=torch.float64)
    params = tps_fit(control, control @ a.T + b)
    points = torch.rand(2, 50, 2, generator=gen, dtype=torch.float64) * 2 - 1
    torch.testing.assert_close(tps_transform(params, points), points @ a.T + b, atol=1e-6,
                               rtol=0)


@settings(max_examples=20, deadline=None)
@given(kp_s=keypoint_arrays, kp_d=keypoint_arrays, t=st.floats(0, 1))
def test_keypoint_interpolation_endpoints_and_linearity(kp_s, kp_d, t):
    torch.testing.assert_close(interpolate_keypoints(kp_s, kp_d, 0.0), kp_s)
    torch.testing.assert_close(interpolate_keypoints(kp_s, kp_d, 1.0), kp_d)
    mid = interpolate_keypoints(kp_s, kp_d, t)
    torch.testing.assert_close(mid - kp_s, t * (kp_d - kp_s), atol=1e-12, rtol=0)
    per_pair = interpolate_keypoints(kp_s, kp_d, torch.tensor([0.0, 1.0]))
    torch.testing.assert_close(per_pair[0], kp_s[0])
    torch.testing.assert_close(per_pair[1], kp_d[1])


def test_soft_argmax_finds_a_sharp_peak_at_the_pixel_centre():
    logits = torch.full((1, 2, 8, 10), -50.0, dtype=torch.float64)
    logits[0, 0, 2, 7] = 50.0
    logits[0, 1, 5, 0] = 50.0
    kp, heat = soft_argmax(logits, temperature=0.1)
    pixels = normalized_to_pixels(kp, 8, 10)
    torch.testing.assert_close(pixels[0], torch.tensor([[7.0, 2.0], [0.0, 5.0]],
                                                       dtype=torch.float64))
    torch.testing.assert_close(heat.sum(dim=(2, 3)), torch.ones(1, 2, dtype=torch.float64))


def test_pixel_and_normalized_coordinates_round_trip():
    points = np.array([[0.0, 0.0], [31.0, 15.0], [-3.5, 40.0]])
    norm = pixels_to_normalized(points, 16, 32)
    np.testing.assert_allclose(norm[0], [-1 + 1 / 32, -1 + 1 / 16])
    np.testing.assert_allclose(normalized_to_pixels(norm, 16, 32), points)
    tensor = torch.as_tensor(points)
    torch.testing.assert_close(normalized_to_pixels(pixels_to_normalized(tensor, 16, 32), 16,
                                                    32), tensor)


def test_random_deformation_without_noise_is_the_identity():
    gen = torch.Generator().manual_seed(0)
    deformation = RandomDeformation(2, gen, sigma_affine=0.0, sigma_tps=0.0,
                                    dtype=torch.float64)
    images = torch.rand(2, 3, 8, 8, dtype=torch.float64)
    torch.testing.assert_close(deformation.warp(images), images)
    points = torch.rand(2, 4, 2, dtype=torch.float64)
    torch.testing.assert_close(deformation(points), points)


def test_random_deformation_is_seeded_by_its_generator():
    a = RandomDeformation(3, torch.Generator().manual_seed(5))
    b = RandomDeformation(3, torch.Generator().manual_seed(5))
    torch.testing.assert_close(a.affine, b.affine)
    torch.testing.assert_close(a.weights, b.weights)


@pytest.mark.parametrize("n_keypoints, expected", [
    (3, [[0, 1, 2]]), (5, [[0, 1, 2, 3, 4]]), (7, [[0, 1, 2, 3, 4, 5, 6]]),
    (10, [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]), (12, [[0, 1, 2, 3, 4], list(range(5, 12))]),
])
def test_tps_groups_cover_every_keypoint_once(n_keypoints, expected):
    assert tps_groups(n_keypoints) == expected
