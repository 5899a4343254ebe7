"""Common-check settings for :mod:`skpaper.shape`."""

import numpy as np

_NET = {"n_points": 32, "embed_dim": 8, "max_epochs": 2, "batch_size": 8, "device": "cpu",
        "random_state": 0}


def _shape_params():
    from skpaper.shape import OctahedralFlipper, PCAOrienter

    return {
        "OctahedralFlipper": dict(_NET),
        "PCAOrienter": {},
        "QuotientOrienter": {**_NET, "n_votes": 2},
        "TwoStageOrienter": {"orienter": PCAOrienter(),
                             "flipper": OctahedralFlipper(**_NET)},
    }


INIT_PARAMS = _shape_params()
EXTRA_INSTANCES = {
    "QuotientOrienter": [{"loss": "l2", "backbone": "dgcnn", "k_neighbors": 4, "n_votes": 1}],
    "OctahedralFlipper": [{"n_votes": 3, "use_normals": False}],
}
EXPECTED_FAILED_CHECKS = {}


def _canonical_clouds():
    from skpaper.datasets import make_synthetic_shapes

    X, _ = make_synthetic_shapes(2, 40, random_state=0)
    return X, None


def _rotated_clouds():
    from skpaper.datasets import make_synthetic_shapes
    from skpaper.shape import apply_rotation, random_rotations

    X, _ = make_synthetic_shapes(2, 40, random_state=0)
    R = random_rotations(len(X), random_state=1)
    return apply_rotation(X, R), R


def _flipped_clouds():
    from skpaper.datasets import make_synthetic_shapes
    from skpaper.shape import apply_rotation, octahedral_group

    X, _ = make_synthetic_shapes(2, 40, random_state=0)
    y = (3 * np.arange(len(X))) % 24
    return apply_rotation(X, octahedral_group()[y]), y


FIT_DATA = {
    "OctahedralFlipper": _flipped_clouds,
    "PCAOrienter": _rotated_clouds,
    "QuotientOrienter": _rotated_clouds,
    "TwoStageOrienter": _rotated_clouds,
}
