"""Motion transfer: the TPS warp kernel against SciPy, and anytime against direct transfer.

No implementation of the paper, FOMM or TPSMM is installable from PyPI, so the
peers are the best available references:

1. *Thin-plate-spline warping*: fitting a TPS through keypoint pairs and
   warping a batch of frames with it, ours (batched torch solve and
   ``grid_sample``) against SciPy's ``RBFInterpolator(kernel="thin_plate_spline")``
   with ``ndimage.map_coordinates`` (order 1), frame by frame. The figures
   give the largest difference between the two warped batches.
2. *Anytime vs direct transfer*: inference throughput of one trained
   :class:`~skpaper.vision.KeypointMotionTransfer` on sprite frame pairs,
   through the selected interpolant (ours) against its own one-step path
   (the peer), with AKD and L1 of each on the large-displacement pairs
   (measured by the in-process landmark detector against ground truth).

Run: ``python benchmarks/bench_motion.py [--quick] [--repeat N] [--json out.json]``.
"""

import numpy as np
import torch
from _harness import Case, main_cli
from scipy import interpolate, ndimage

from skpaper.datasets import make_sprite_pairs, make_sprite_videos
from skpaper.vision import (
    KeypointMotionTransfer,
    average_keypoint_distance,
    l1_reconstruction,
    train_landmark_detector,
)
from skpaper.vision._warp import make_coordinate_grid, tps_fit, tps_transform, warp_images


def _tps_case(n_frames, size, n_points, dtype=torch.float64, seed=0):
    rng = np.random.default_rng(seed)
    frames = rng.uniform(size=(n_frames, 3, size, size))
    control = rng.uniform(-0.8, 0.8, size=(n_frames, n_points, 2))
    values = control + rng.normal(scale=0.1, size=control.shape)
    grid = make_coordinate_grid(size, size, dtype=dtype)
    frames_t = torch.as_tensor(frames, dtype=dtype)
    control_t = torch.as_tensor(control, dtype=dtype)
    values_t = torch.as_tensor(values, dtype=dtype)
    out = {}

    def ours():
        params = tps_fit(control_t, values_t, regularization=0.0)
        coords = tps_transform(params, grid.expand(n_frames, size, size, 2))
        out["ours"] = warp_images(frames_t, coords).numpy()
        return {}

    def scipy_tps():
        flat = grid.reshape(-1, 2).numpy()
        warped = np.empty_like(frames)
        for i in range(n_frames):
            tps = interpolate.RBFInterpolator(control[i], values[i], kernel="thin_plate_spline")
            xy = tps(flat)
            # normalised (x, y) -> (row, col) pixel coordinates, align_corners=False
            cols = (xy[:, 0] + 1) * size / 2 - 0.5
            rows = (xy[:, 1] + 1) * size / 2 - 0.5
            for c in range(3):
                warped[i, c] = ndimage.map_coordinates(frames[i, c], [rows, cols], order=1,
                                                       mode="nearest").reshape(size, size)
        out["peer"] = warped
        if "ours" in out:
            return {"max_abs_diff_vs_ours": float(np.abs(warped - out["ours"]).max())}
        return {}

    precision = str(dtype).replace("torch.", "")
    return Case(f"TPS warp {n_frames}x{size}px {n_points}kp {precision}", ours=ours,
                peer=scipy_tps, peer_name="scipy RBF+ndimage", items=n_frames,
                params={"n_frames": n_frames, "size": size, "n_points": n_points,
                        "dtype": precision})


def _transfer_case(quick):
    size, epochs = (16, 4) if quick else (32, 30)
    train = make_sprite_videos(16 if quick else 48, 8 if quick else 12, size, random_state=1)
    test = make_sprite_videos(4 if quick else 16, 8 if quick else 12, size, random_state=2)
    pairs = make_sprite_pairs(test, 40 if quick else 200, random_state=0)
    extra = make_sprite_videos(60 if quick else 300, 3, size, random_state=3)
    detector = train_landmark_detector(
        extra.videos.reshape(-1, size, size, 3), extra.keypoints.reshape(-1, 5, 2),
        extra.visibility.reshape(-1, 5), n_steps=40 if quick else 250, lr=5e-3, random_state=0)
    model = KeypointMotionTransfer(n_keypoints=5, width=4 if quick else 8, batch_size=8,
                                   lr=2e-3, max_epochs=epochs, feature_extractor=None,
                                   random_state=0, device="cpu").fit(train.videos)
    source = test.videos[pairs.video, pairs.source]
    driving = test.videos[pairs.video, pairs.driving]
    kp_true = test.keypoints[pairs.video, pairs.driving]
    visible = test.visibility[pairs.video, pairs.driving]
    large = pairs.large

    def figures(path):
        def run():
            out = model.transform(source, driving, path=path)
            kp = detector.predict(out[large])[0]
            return {"large_akd_px": average_keypoint_distance(kp, kp_true[large], visible[large]),
                    "large_l1": l1_reconstruction(out[large], driving[large])}
        return run

    return Case(f"transfer {len(source)} pairs {size}px", ours=figures("anytime"),
                peer=figures("direct"), peer_name="direct path", items=len(source),
                params={"size": size, "epochs": epochs, "pairs": len(source)})


def cases(quick):
    torch.set_num_threads(1)
    sizes = [(16, 32, 5)] if quick else [(16, 32, 5), (64, 64, 10), (256, 64, 10)]
    tps = [_tps_case(*s, dtype=dtype) for s in sizes for dtype in (torch.float64, torch.float32)]
    return [*tps, _transfer_case(quick)]


if __name__ == "__main__":
    main_cli(cases, description=__doc__.splitlines()[0])
