"""Animation metrics (L1, AKD, MKR, AED), the landmark detector and the sprite generators."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.utils import Bunch

from skpaper.datasets import make_sprite_pairs, make_sprite_videos
from skpaper.vision import (
    average_euclidean_distance,
    average_keypoint_distance,
    color_histogram_embedding,
    l1_reconstruction,
    missing_keypoint_rate,
    train_landmark_detector,
)


@pytest.fixture(scope="module")
def sprites():
    return make_sprite_videos(n_videos=6, n_frames=8, size=32, random_state=0)


def test_metrics_are_zero_on_ground_truth(sprites):
    assert l1_reconstruction(sprites.videos, sprites.videos) == 0.0
    assert average_keypoint_distance(sprites.keypoints, sprites.keypoints,
                                     sprites.visibility) == 0.0
    assert missing_keypoint_rate(sprites.visibility, sprites.visibility) == 0.0
    emb = color_histogram_embedding(sprites.videos[:, 0])
    assert average_euclidean_distance(emb, emb) == 0.0


@settings(max_examples=25, deadline=None)
@given(dx=st.floats(-5, 5), dy=st.floats(-5, 5))
def test_average_keypoint_distance_of_a_rigid_shift_is_its_length(sprites, dx, dy):
    moved = sprites.keypoints + np.array([dx, dy])
    assert average_keypoint_distance(moved, sprites.keypoints) == pytest.approx(np.hypot(dx, dy))


def test_average_keypoint_distance_ignores_invisible_keypoints():
    true = np.zeros((1, 3, 2))
    pred = np.array([[[3.0, 4.0], [100.0, 0.0], [0.0, 0.0]]])
    assert average_keypoint_distance(pred, true, [[True, False, True]]) == 2.5
    assert np.isnan(average_keypoint_distance(pred, true, [[False, False, False]]))


def test_missing_keypoint_rate_counts_only_driving_visible_keypoints():
    true = np.array([[True, True, False, False]])
    assert missing_keypoint_rate(true, [[False, False, True, True]]) == 1.0
    assert missing_keypoint_rate(true, [[True, False, False, False]]) == 0.5
    assert np.isnan(missing_keypoint_rate([[False]], [[True]]))


def test_color_histogram_is_pose_invariant(sprites):
    frame = sprites.videos[0, 0]
    flipped = frame[:, ::-1]
    emb = color_histogram_embedding(np.stack([frame, flipped]))
    np.testing.assert_allclose(emb.sum(axis=1), 1.0)
    np.testing.assert_allclose(emb[0], emb[1])
    other = color_histogram_embedding(sprites.videos[1:2, 0])
    assert average_euclidean_distance(emb[:1], other) > 0


@pytest.mark.parametrize("call, error, match", [
    (lambda: l1_reconstruction(np.zeros((2, 3)), np.zeros((3, 2))), ValueError, "same shape"),
    (lambda: l1_reconstruction([np.nan], [0.0]), ValueError, "finite"),
    (lambda: l1_reconstruction(["a"], ["b"]), TypeError, "numeric"),
    (lambda: average_keypoint_distance(np.zeros((2, 3)), np.zeros((2, 3))), ValueError,
     "2 coordinates"),
    (lambda: average_keypoint_distance(np.zeros((1, 2, 2)), np.zeros((1, 2, 2)), [True]),
     ValueError, "visibility must have shape"),
    (lambda: missing_keypoint_rate([[True]], [[True, False]]), ValueError, "same shape"),
    (lambda: missing_keypoint_rate([[0.5]], [[1]]), ValueError, "booleans"),
    (lambda: average_euclidean_distance(np.zeros(3), np.zeros(3)), ValueError, "dimensions"),
    (lambda: color_histogram_embedding(np.zeros((2, 2, 3))), ValueError, "dimensions"),
    (lambda: color_histogram_embedding(np.zeros((1, 2, 2, 3)), bins=0), ValueError, "bins"),
])
def test_metrics_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_sprite_videos_shapes_ranges_and_seeding(sprites):
    assert sprites.videos.shape == (6, 8, 32, 32, 3) and sprites.videos.dtype == np.float32
    assert sprites.videos.min() >= 0 and sprites.videos.max() <= 1
    assert sprites.keypoints.shape == (6, 8, 5, 2)
    assert sprites.visibility.shape == (6, 8, 5) and sprites.visibility.dtype == bool
    assert sprites.labels.shape == (6, 8, 32, 32)
    again = make_sprite_videos(n_videos=6, n_frames=8, size=32, random_state=0)
    np.testing.assert_array_equal(again.videos, sprites.videos)
    other = make_sprite_videos(n_videos=6, n_frames=8, size=32, random_state=1)
    assert not np.allclose(other.videos, sprites.videos)


def test_sprite_visibility_matches_the_part_map(sprites):
    # A keypoint is visible exactly when it is inside the frame on a pixel of its own part.
    part_of = np.array([3, 2, 2, 4, 1])
    kp = np.rint(sprites.keypoints).astype(int)
    inside = ((kp >= 0) & (kp < 32)).all(axis=-1)
    for v, f, k in zip(*np.nonzero(sprites.visibility)):
        assert inside[v, f, k]
        assert sprites.labels[v, f, kp[v, f, k, 1], kp[v, f, k, 0]] == part_of[k]
    assert sprites.visibility.mean() > 0.5
    hidden = ~sprites.visibility & inside
    assert np.all(sprites.labels[hidden.nonzero()[0], hidden.nonzero()[1],
                                 kp[hidden][:, 1], kp[hidden][:, 0]]
                  != part_of[hidden.nonzero()[2]])


def test_sprite_background_is_static(sprites):
    # Pixels that no frame of a video covers with the sprite keep one value.
    from scipy.ndimage import binary_dilation

    for video, labels in zip(sprites.videos, sprites.labels):
        # Anti-aliased part borders lie within one pixel of the part map.
        free = ~binary_dilation((labels != 0).any(axis=0), iterations=1)
        assert free.any()
        np.testing.assert_allclose(video[:, free].std(axis=0), 0.0, atol=1e-6)


def test_sprite_pairs_are_binned_by_displacement(sprites):
    pairs = make_sprite_pairs(sprites, n_pairs=40, random_state=0)
    assert len(pairs.video) <= 40 and (pairs.source != pairs.driving).all()
    large = (pairs.translation > 0.4) | (pairs.rotation > 90)
    np.testing.assert_array_equal(pairs.large, large)
    small = ~pairs.large
    assert np.all(pairs.translation[small] <= 0.2) and np.all(pairs.rotation[small] <= 45)
    centre = sprites.center[pairs.video, pairs.driving] - sprites.center[pairs.video,
                                                                         pairs.source]
    np.testing.assert_allclose(pairs.translation, np.linalg.norm(centre, axis=1) / 32)
    assert pairs.large.any() and small.any()


def test_sprite_generators_bad_input(sprites):
    with pytest.raises(ValueError, match="n_frames"):
        make_sprite_videos(n_videos=2, n_frames=1)
    with pytest.raises(ValueError, match="texture"):
        make_sprite_videos(n_videos=2, texture="plaid")
    with pytest.raises(ValueError, match="make_sprite_videos"):
        make_sprite_pairs(Bunch(videos=sprites.videos), n_pairs=3)
    with pytest.raises(ValueError, match="data"):
        make_sprite_pairs(sprites.videos, n_pairs=3)


def test_landmark_detector_learns_and_validates():
    small = make_sprite_videos(n_videos=8, n_frames=4, size=16, random_state=0)
    frames = small.videos.reshape(-1, 16, 16, 3)
    kp = small.keypoints.reshape(-1, 5, 2)
    vis = small.visibility.reshape(-1, 5)
    det = train_landmark_detector(frames, kp, vis, n_steps=25, batch_size=16, random_state=0)
    assert np.mean(det.history[-5:]) < np.mean(det.history[:5])
    pred, proba = det.predict(small.videos[:2])
    assert pred.shape == (2, 4, 5, 2) and proba.shape == (2, 4, 5)
    assert np.all((proba >= 0) & (proba <= 1))
    again = train_landmark_detector(frames, kp, vis, n_steps=25, batch_size=16, random_state=0)
    np.testing.assert_allclose(again.predict(frames[:3])[0], det.predict(frames[:3])[0])
    with pytest.raises(ValueError, match="frames must end in"):
        det.predict(np.zeros((2, 32, 32, 3)))
    with pytest.raises(ValueError, match="keypoints must have shape"):
        train_landmark_detector(frames, kp[:3], vis, n_steps=1)
    with pytest.raises(ValueError, match="visibility must have shape"):
        train_landmark_detector(frames, kp, vis[:, :2], n_steps=1)
    with pytest.raises(ValueError, match="n_steps"):
        train_landmark_detector(frames, kp, vis, n_steps=0)
