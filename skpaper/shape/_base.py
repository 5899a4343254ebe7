"""Shared input checks and the torch base of the point-cloud estimators."""

import textwrap
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array

from ..nn._base import BaseTorchEstimator, _derive_seed
from ..utils._docstring import torch_parameter_docs
from ..utils._sklearn import Interval, StrOptions
from ._backbones import make_backbone

__all__ = ["apply_rotation", "check_point_clouds"]


def check_point_clouds(X, *, name="X"):
    """Validate a batch of point clouds.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_points, 3 or 6)
        Points, optionally followed by their unit normals.
    name : str, default="X"
        Name used in error messages.

    Returns
    -------
    X : ndarray of float64, same shape
        The clouds as a float64 array, once checked to be finite, 3-D, with
        3 or 6 channels and at least one point.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.shape import check_point_clouds
    >>> check_point_clouds(np.zeros((2, 5, 3))).dtype
    dtype('float64')
    """
    if isinstance(X, (str, bytes, dict)) or X is None:
        raise TypeError(f"{name} must be an array of point clouds of shape (n_samples, "
                        f"n_points, 3 or 6), got {type(X).__name__}.")
    X = check_array(X, ensure_2d=False, allow_nd=True, dtype=np.float64,
                    ensure_all_finite=True, input_name=name)
    if X.ndim != 3 or X.shape[-1] not in (3, 6):
        raise ValueError(f"{name} must have shape (n_samples, n_points, 3 or 6), got "
                         f"{X.shape}.")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"{name} must hold at least one cloud of at least one point, got "
                         f"shape {X.shape}.")
    return X


def check_rotations(R, n_samples, *, name="y"):
    """Validate (n_samples, 3, 3) rotation matrices (orthonormal, det +1 within 1e-4)."""
    R = np.asarray(R, dtype=np.float64)
    if R.shape != (n_samples, 3, 3):
        raise ValueError(f"{name} must have shape ({n_samples}, 3, 3) (one rotation per "
                         f"cloud), got {R.shape}.")
    if not np.all(np.isfinite(R)):
        raise ValueError(f"{name} must be finite (it contains NaN or infinity).")
    err = np.abs(R @ R.transpose(0, 2, 1) - np.eye(3)).max() if len(R) else 0.0
    if err > 1e-4 or np.any(np.linalg.det(R) < 0):
        raise ValueError(f"{name} must hold rotation matrices (R R^T = I, det R = +1); the "
                         f"largest deviation from orthonormality is {err:.3g}.")
    return R


def apply_rotation(X, R):
    """Rotate clouds: X R^T for the points and the normals of each cloud.

    Parameters
    ----------
    X : ndarray of shape (n, n_points, 3 or 6)
        Point clouds, optionally followed by their unit normals.
    R : ndarray of shape (n, 3, 3) or (3, 3)
        One rotation per cloud, or one for all.

    Returns
    -------
    X_rotated : ndarray, same shape as X
        Each cloud rotated by its R (points and normals alike), in float64.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.shape import apply_rotation
    >>> quarter_turn = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    >>> apply_rotation(np.array([[[1.0, 0.0, 0.0]]]), quarter_turn).round(6).tolist()
    [[[0.0, 1.0, 0.0]]]
    """
    R = np.broadcast_to(np.asarray(R, dtype=np.float64), (X.shape[0], 3, 3))
    Rt = np.swapaxes(R, 1, 2)
    out = np.empty_like(X, dtype=np.float64)
    out[..., :3] = X[..., :3] @ Rt
    if X.shape[-1] == 6:
        out[..., 3:] = X[..., 3:] @ Rt
    return out


def _rotate_tensor(X, R):
    """Torch version of :func:`apply_rotation` for a batch (B, P, C) and (B, 3, 3)."""
    Rt = R.transpose(1, 2)
    parts = [X[..., :3] @ Rt]
    if X.shape[-1] == 6:
        parts.append(X[..., 3:] @ Rt)
    return torch.cat(parts, dim=-1)


def _check_channels(estimator, X, reset):
    """Clouds ``X`` (already checked) with the fit's channels per point; ``reset`` sets them."""
    channels = X.shape[-1]
    if reset:
        estimator.n_features_in_ = channels
    elif channels != estimator.n_features_in_:
        raise ValueError(f"X has {channels} channels per point, but "
                         f"{type(estimator).__name__} was fitted with "
                         f"{estimator.n_features_in_}.")
    return X


def _cloud_tags(tags):
    """Tags of estimators taking (n, n_points, 3 or 6) clouds and an optional target."""
    tags.input_tags.two_d_array = False
    tags.input_tags.three_d_array = True
    tags.target_tags.required = False
    return tags


def _training_docs():
    """The docstring pieces of the torch training parameters of the cloud networks."""
    pieces = torch_parameter_docs(batch_size=32)
    pieces["max_epochs"] = """
        max_epochs : int, default=100
            Passes over the training shapes; each pass draws fresh rotations."""
    pieces["lr"] = """
        lr : float, default=1e-3
            Adam learning rate (the official code uses 1e-4 with batch 48 on a GPU)."""
    pieces["random_state"] = """
        random_state : int, RandomState instance or None, default=None
            Seeds the weights, the training rotations and the voting rotations."""
    names = ("max_epochs", "batch_size", "lr", "device", "random_state", "verbose",
             "callbacks", "inference_dtype")
    pieces["torch_parameters"] = "\n".join(textwrap.dedent(pieces[name]).strip("\n")
                                           for name in names)
    return pieces


#: Docstring pieces shared by the point-cloud estimators (filled by ``Substitution``).
_SHARED_DOCS = {
    "cloud_parameters": """
        backbone : {"pointnet", "dgcnn"}, default="pointnet"
            Point-cloud network: PointNet-lite (fast, CPU-sized) or a small DGCNN
            (the paper's architecture family; slow on CPU).
        n_points : int, default=1024
            Points per cloud fed to the network. Training draws a random subset
            per batch; prediction takes an evenly spaced, fixed subset (so a
            rotated copy of a cloud is seen through the same points).
        use_normals : bool, default=True
            Feed the normals (columns 3-5 of X) too; then X must have 6 channels.""",
    "network_parameters": """
        embed_dim : int, default=128
            Width of the per-point embedding and of the head.
        k_neighbors : int, default=20
            Neighbours of the DGCNN k-NN graph (unused by PointNet-lite).
        dropout : float, default=0.0
            Dropout before the head.""",
    "X_clouds": """
        X : array-like of shape (n_samples, n_points, 3 or 6)
            Point clouds, optionally followed by their unit normals (as many
            channels as in ``fit``).""",
    "y_rotations": """
        y : array-like of shape (n_samples, 3, 3)
            True rotations of the clouds (X = X_canonical y^T).""",
    **_training_docs(),
}


class _BaseCloudNet(BaseTorchEstimator):
    """Point-cloud network estimators: shared parameters, input checks, training batches.

    Training batches take random point subsets and, for self-supervised fits,
    random augmentations (:meth:`_augment`); NaN gradients are zeroed before
    each optimizer step; inference runs in batches.
    """

    _parameter_constraints = {
        **BaseTorchEstimator._parameter_constraints,
        "backbone": [StrOptions({"pointnet", "dgcnn"})],
        "n_points": [Interval(Integral, 1, 16384, closed="both")],
        "use_normals": ["boolean"],
        "embed_dim": [Interval(Integral, 1, 4096, closed="both")],
        "k_neighbors": [Interval(Integral, 1, 4096, closed="both")],
        "dropout": [Interval(Real, 0, 1, closed="left")],
        "n_votes": [Interval(Integral, 1, 1024, closed="both")],
    }

    _n_outputs = 9

    def __init__(self, *, backbone, n_points, use_normals, n_votes, embed_dim, k_neighbors,
                 dropout, max_epochs, batch_size, lr, device, random_state, verbose, callbacks,
                 inference_dtype):
        super().__init__(max_epochs=max_epochs, batch_size=batch_size, lr=lr, device=device,
                         random_state=random_state, verbose=verbose, callbacks=callbacks,
                         inference_dtype=inference_dtype)
        self.backbone = backbone
        self.n_points = n_points
        self.use_normals = use_normals
        self.n_votes = n_votes
        self.embed_dim = embed_dim
        self.k_neighbors = k_neighbors
        self.dropout = dropout

    def _validate_clouds(self, X, reset):
        X = check_point_clouds(X)
        if reset and self.use_normals and X.shape[-1] != 6:
            raise ValueError(f"use_normals=True needs X with 6 channels (points and "
                             f"normals), got {X.shape[-1]}.")
        return _check_channels(self, X, reset)

    @property
    def _in_channels(self):
        return 6 if self.use_normals else 3

    def _build_module(self):
        return make_backbone(self.backbone, self._in_channels, self._n_outputs,
                             self.embed_dim, self.k_neighbors, self.dropout)

    def _start_fit(self):
        """Derive the fit's seeds; training augmentations draw from ``_train_rng``."""
        rng = self._init_torch_state()
        self._vote_seed = int(rng.randint(2**31 - 1))
        self._train_rng = np.random.RandomState(rng.randint(2**31 - 1))

    def _fit_clouds(self, X, y):
        """Run the training loop on checked clouds ``X`` and target tensor ``y`` (or None)."""
        X = self._to_tensor(X)
        return self._fit_loop((X, y, torch.arange(len(X), device=X.device)))

    def _train_points(self, Xb):
        """Random subset of ``n_points`` points for a training batch."""
        P = Xb.shape[1]
        if P > self.n_points:
            idx = torch.randperm(P, generator=self._generator)[: self.n_points]
            Xb = Xb[:, idx.to(Xb.device)]
        return Xb[..., : self._in_channels]

    def _eval_points(self, X):
        P = X.shape[1]
        if P > self.n_points:
            X = X[:, np.unique(np.linspace(0, P - 1, self.n_points).round().astype(int))]
        return X[..., : self._in_channels]

    def _augment(self, Xb, rng):
        """Randomly transformed batch and its training target (self-supervised fits)."""
        raise NotImplementedError(f"{type(self).__name__} must implement _augment.")

    def _train_batches(self, tensors, shuffle=True):
        """Yield ``(clouds, targets, rows)`` batches: ``rows`` index the fit's clouds.

        A training batch takes a random subset of points (from the torch
        generator) and then, without targets, draws its augmentation from
        ``_train_rng`` (:meth:`_augment`). The validation pass (``shuffle=False``)
        takes the prediction subset of points and augmentations from a seed of
        its own, so it sees the same clouds every epoch and leaves the training
        draws unchanged.
        """
        X, y, rows = tensors
        rng = (self._train_rng if shuffle
               else np.random.RandomState(_derive_seed(self._vote_seed, 1)))
        for idx in self._iter_batches(X.shape[0], shuffle=shuffle):
            idx = idx.to(X.device)
            Xb = self._train_points(X[idx]) if shuffle else self._eval_points(X[idx])
            if y is None:
                Xb, target = self._augment(Xb, rng)
            else:
                target = y[idx]
            yield Xb, target, rows[idx]

    def _split_tensors(self, tensors, rows):
        X, y, row_ids = tensors
        index = torch.as_tensor(rows, device=X.device)
        return X[index], None if y is None else y[index], row_ids[index]

    def _process_gradients(self):
        for p in self.module_.parameters():
            if p.grad is not None:
                # The official trainer zeroes NaN gradients (Procrustes near singular M).
                torch.nan_to_num_(p.grad, nan=0.0, posinf=0.0, neginf=0.0)

    def _forward_numpy(self, X):
        """Network outputs on already selected points, as float64 numpy."""
        # DGCNN's k-NN step is quadratic in points per cloud: keep its batches small.
        batch_size = int(self.batch_size) if self.backbone == "dgcnn" else None
        return self._predict_module(X, batch_size=batch_size).astype(np.float64)

    def _vote_rng(self):
        return check_random_state(self._vote_seed)

    def _finalize_modules(self):
        self._train_rng = None
        super()._finalize_modules()

    def __sklearn_tags__(self):
        return _cloud_tags(super().__sklearn_tags__())
