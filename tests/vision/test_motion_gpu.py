"""GPU paths of the motion-transfer model (skipped without CUDA)."""

import pickle

import numpy as np
import pytest

from skpaper.datasets import make_sprite_videos
from skpaper.vision import KeypointMotionTransfer, train_landmark_detector

pytestmark = pytest.mark.gpu


def test_motion_transfer_trains_on_gpu_and_unpickles_on_cpu():
    d = make_sprite_videos(n_videos=8, n_frames=4, size=16, random_state=0)
    est = KeypointMotionTransfer(n_keypoints=5, width=4, max_epochs=2, batch_size=4,
                                 selector="learned", feature_extractor="autoencoder",
                                 random_state=0, device="auto").fit(d.videos)
    assert est.device_.startswith("cuda")
    out = est.anytime_transfer(d.videos[:2, 0], d.videos[:2, -1])
    assert np.isfinite(out.output).all()
    back = pickle.loads(pickle.dumps(est))
    back.module_.cpu()
    back.features_.cpu()
    back.device_ = "cpu"
    np.testing.assert_allclose(back.predict(d.videos[:2]), est.predict(d.videos[:2]), atol=1e-4)


def test_landmark_detector_trains_on_gpu():
    d = make_sprite_videos(n_videos=8, n_frames=4, size=16, random_state=0)
    det = train_landmark_detector(d.videos.reshape(-1, 16, 16, 3), d.keypoints.reshape(-1, 5, 2),
                                  d.visibility.reshape(-1, 5), n_steps=5, random_state=0,
                                  device="auto")
    assert det.device.type == "cuda"
    kp, proba = det.predict(d.videos[0])
    assert kp.shape == (4, 5, 2) and np.isfinite(kp).all()
