"""Evaluation metrics of image animation: L1, AKD, MKR and AED (numpy).

The four metrics are those of FOMM, TPSMM and the anytime-interpolation
paper. In those papers AKD and MKR compare keypoints that an *external*,
supervised detector finds on generated and driving frames (face landmarks,
OpenPose); AED compares identity embeddings. The functions here take the
keypoints, visibilities and embeddings; :func:`train_landmark_detector` and
:func:`color_histogram_embedding` provide offline stand-ins for the detectors.
"""

from numbers import Integral

import numpy as np

from ..utils._sklearn import Interval, validate_params

__all__ = [
    "average_euclidean_distance",
    "average_keypoint_distance",
    "color_histogram_embedding",
    "l1_reconstruction",
    "missing_keypoint_rate",
]


def _as_float(name, value, min_ndim=1):
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric array, got {type(value).__name__}.") from exc
    if arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape "
                         f"{arr.shape}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite; it contains NaN or infinity.")
    return arr


def _same_shape(names, arrays):
    if arrays[0].shape != arrays[1].shape:
        raise ValueError(f"{names[0]} and {names[1]} must have the same shape, got "
                         f"{arrays[0].shape} and {arrays[1].shape}.")


@validate_params({"generated": ["array-like"], "target": ["array-like"]},
                 prefer_skip_nested_validation=True)
def l1_reconstruction(generated, target):
    """Mean absolute pixel error between generated and target frames.

    Parameters
    ----------
    generated, target : array-like of the same shape
        Frames or videos with pixel values in [0, 1].

    Returns
    -------
    l1 : float
        Mean of ``|generated - target|`` over every pixel and channel.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.vision import l1_reconstruction
    >>> l1_reconstruction(np.zeros((2, 4, 4, 3)), np.full((2, 4, 4, 3), 0.5))
    0.5
    """
    generated = _as_float("generated", generated)
    target = _as_float("target", target)
    _same_shape(("generated", "target"), (generated, target))
    return float(np.mean(np.abs(generated - target)))


def _visibility(name, value, shape):
    if value is None:
        return np.ones(shape, dtype=bool)
    vis = np.asarray(value)
    if vis.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {vis.shape}.")
    return vis.astype(bool)


@validate_params(
    {"keypoints_pred": ["array-like"], "keypoints_true": ["array-like"],
     "visibility": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def average_keypoint_distance(keypoints_pred, keypoints_true, visibility=None):
    """AKD: mean Euclidean distance between matching keypoints.

    Parameters
    ----------
    keypoints_pred : array-like of shape (..., n_keypoints, 2)
        Keypoints found on generated frames.
    keypoints_true : array-like of shape (..., n_keypoints, 2)
        Keypoints of the driving frames (ground truth or detections).
    visibility : array-like of bool of shape (..., n_keypoints), default=None
        Keypoints that count (those visible in the driving frame); all when None.

    Returns
    -------
    akd : float
        In the units of the keypoints; NaN when no keypoint counts.

    Examples
    --------
    >>> from skpaper.vision import average_keypoint_distance
    >>> average_keypoint_distance([[[0.0, 0.0], [3.0, 4.0]]], [[[0.0, 0.0], [0.0, 0.0]]])
    2.5
    """
    pred = _as_float("keypoints_pred", keypoints_pred, 2)
    true = _as_float("keypoints_true", keypoints_true, 2)
    _same_shape(("keypoints_pred", "keypoints_true"), (pred, true))
    if pred.shape[-1] != 2:
        raise ValueError(f"keypoints must end in 2 coordinates, got shape {pred.shape}.")
    vis = _visibility("visibility", visibility, pred.shape[:-1])
    dist = np.linalg.norm(pred - true, axis=-1)
    return float(dist[vis].mean()) if vis.any() else float("nan")


@validate_params(
    {"visible_true": ["array-like"], "visible_pred": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def missing_keypoint_rate(visible_true, visible_pred):
    """MKR: share of keypoints visible in the driving frame but missed in the generated one.

    Parameters
    ----------
    visible_true : array-like of bool of shape (..., n_keypoints)
        Visibility in the driving frames.
    visible_pred : array-like of bool of shape (..., n_keypoints)
        Visibility detected in the generated frames.

    Returns
    -------
    mkr : float
        NaN when no keypoint is visible in the driving frames.

    Examples
    --------
    >>> from skpaper.vision import missing_keypoint_rate
    >>> missing_keypoint_rate([[True, True, False, True]], [[True, False, False, True]])
    0.3333333333333333
    """
    true = np.asarray(visible_true)
    pred = np.asarray(visible_pred)
    for name, arr in (("visible_true", true), ("visible_pred", pred)):
        if arr.dtype != bool and not np.isin(arr, (0, 1)).all():
            raise ValueError(f"{name} must hold booleans (or 0/1), got values of dtype "
                             f"{arr.dtype}.")
    _same_shape(("visible_true", "visible_pred"), (true, pred))
    true, pred = true.astype(bool), pred.astype(bool)
    n_visible = true.sum()
    return float((true & ~pred).sum() / n_visible) if n_visible else float("nan")


@validate_params({"embedding_a": ["array-like"], "embedding_b": ["array-like"]},
                 prefer_skip_nested_validation=True)
def average_euclidean_distance(embedding_a, embedding_b):
    """AED: mean L2 distance between paired identity embeddings (rows).

    Parameters
    ----------
    embedding_a, embedding_b : array-like of shape (n_samples, n_dims)
        Identity embeddings of paired frames, one row per pair.

    Returns
    -------
    aed : float
        Mean over pairs of ``||embedding_a[i] - embedding_b[i]||_2``.

    Examples
    --------
    >>> from skpaper.vision import average_euclidean_distance
    >>> average_euclidean_distance([[0.0, 0.0], [1.0, 1.0]], [[3.0, 4.0], [1.0, 1.0]])
    2.5
    """
    a = _as_float("embedding_a", embedding_a, 2)
    b = _as_float("embedding_b", embedding_b, 2)
    _same_shape(("embedding_a", "embedding_b"), (a, b))
    return float(np.linalg.norm(a - b, axis=-1).mean())


@validate_params({"images": ["array-like"], "bins": [Interval(Integral, 1, None, closed="left")]},
                 prefer_skip_nested_validation=True)
def color_histogram_embedding(images, bins=4):
    """Pose-invariant identity embedding: the normalised joint colour histogram.

    The offline stand-in for the re-identification networks behind AED:
    moving a sprite changes where its colours are, not which colours there
    are, so the histogram mostly tracks identity (textures and tints).

    Parameters
    ----------
    images : array-like of shape (n, height, width, channels)
        Pixel values in [0, 1].
    bins : int, default=4
        Bins per channel (``bins ** channels`` dimensions).

    Returns
    -------
    embedding : ndarray of shape (n, bins ** channels)
        Rows sum to one.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.vision import color_histogram_embedding
    >>> color_histogram_embedding(np.zeros((1, 2, 2, 3)), bins=2).tolist()
    [[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]
    """
    images = _as_float("images", images, 4)
    bins = int(bins)
    n, c = images.shape[0], images.shape[-1]
    idx = np.clip((images * bins).astype(np.int64), 0, bins - 1).reshape(n, -1, c)
    flat = (idx * bins ** np.arange(c)[::-1]).sum(axis=-1)
    hist = np.stack([np.bincount(row, minlength=bins**c) for row in flat]).astype(np.float64)
    return hist / hist.sum(axis=1, keepdims=True)
