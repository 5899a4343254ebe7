"""A supervised landmark detector: the external keypoint detector behind AKD and MKR.

Image-animation papers score motion with a detector trained elsewhere (face
landmarks, OpenPose) applied to generated and driving frames. With synthetic
sprites the ground-truth keypoints are known, so a small supervised network
is trained in-process instead; it is independent of the animation model.
"""

import numpy as np
import torch
from torch.nn import functional as F

from ..nn._base import optimizer_step, resolve_device
from ..utils import check_torch_generator
from ._motion_modules import UNet
from ._warp import gaussian_heatmaps, normalized_to_pixels, pixels_to_normalized, soft_argmax

__all__ = ["LandmarkDetector", "train_landmark_detector"]


class _LandmarkNetwork(torch.nn.Module):
    def __init__(self, n_channels, n_keypoints, width):
        super().__init__()
        self.heatmaps = UNet(n_channels, n_keypoints, width, depth=2)
        self.visibility = torch.nn.Sequential(
            torch.nn.Conv2d(n_channels + n_keypoints, width, 3, stride=2, padding=1),
            torch.nn.SiLU(),
            torch.nn.Conv2d(width, 2 * width, 3, stride=2, padding=1),
            torch.nn.SiLU(),
        )
        self.visibility_head = torch.nn.Linear(2 * width * 2, n_keypoints)

    def forward(self, x):
        logits = self.heatmaps(x)
        keypoints, heat = soft_argmax(logits, temperature=0.05)
        feats = self.visibility(torch.cat([x, heat * heat.shape[-1] * heat.shape[-2]], dim=1))
        pooled = torch.cat([feats.mean(dim=(2, 3)), feats.amax(dim=(2, 3))], dim=1)
        return keypoints, self.visibility_head(pooled), logits


def _blur(x, sigma):
    """Gaussian blur of ``(B, C, H, W)`` with one ``sigma`` (pixels) per image."""
    radius = 2
    offsets = torch.arange(-radius, radius + 1, dtype=x.dtype, device=x.device)
    kernel = torch.exp(-0.5 * (offsets[None] / sigma.clamp_min(1e-3)[:, None]) ** 2)
    kernel = kernel / kernel.sum(dim=1, keepdim=True)
    b, c, h, w = x.shape
    out = x.reshape(1, b * c, h, w)
    k = kernel.repeat_interleave(c, dim=0)
    out = F.conv2d(F.pad(out, (radius, radius, 0, 0), mode="replicate"),
                   k[:, None, None, :], groups=b * c)
    out = F.conv2d(F.pad(out, (0, 0, radius, radius), mode="replicate"),
                   k[:, None, :, None], groups=b * c)
    return out.reshape(b, c, h, w)


class LandmarkDetector:
    """A trained supervised landmark detector (see :func:`train_landmark_detector`).

    Parameters
    ----------
    network : torch.nn.Module
        Network mapping ``(batch, C, H, W)`` images to normalised keypoints,
        visibility logits and heatmap logits.
    image_shape : tuple of int
        ``(H, W, C)`` of the frames it reads.
    history : list of float
        Training loss per step.

    Attributes
    ----------
    network : torch.nn.Module
        The network, as given.
    image_shape : tuple of int
        ``(H, W, C)``.
    history : list of float
        Training loss per step.

    See Also
    --------
    train_landmark_detector : Train a detector on frames with known keypoints.

    Examples
    --------
    >>> from skpaper.datasets import make_sprite_videos
    >>> from skpaper.vision import LandmarkDetector, train_landmark_detector
    >>> d = make_sprite_videos(n_videos=2, n_frames=2, size=16, random_state=0)
    >>> det = train_landmark_detector(d.videos.reshape(-1, 16, 16, 3),
    ...                               d.keypoints.reshape(-1, 5, 2),
    ...                               d.visibility.reshape(-1, 5), n_steps=2, random_state=0)
    >>> isinstance(det, LandmarkDetector), det.image_shape, len(det.history)
    (True, (16, 16, 3), 2)
    >>> keypoints, visible_proba = det.predict(d.videos[0])
    >>> keypoints.shape, visible_proba.shape
    ((2, 5, 2), (2, 5))
    """

    def __init__(self, network, image_shape, history):
        self.network = network
        self.image_shape = tuple(image_shape)
        self.history = history

    @property
    def device(self):
        """Device of the network's parameters."""
        return next(self.network.parameters()).device

    @torch.no_grad()
    def predict(self, frames, batch_size=256):
        """Detect the keypoints of frames and the probability that each is visible.

        Parameters
        ----------
        frames : array-like of shape (..., H, W, C)
            Frames of shape ``image_shape``, with any leading dimensions.
        batch_size : int, default=256
            Frames per forward pass.

        Returns
        -------
        keypoints : ndarray of shape (..., n_keypoints, 2)
            Pixel coordinates ``(x, y)``.
        visible_proba : ndarray of shape (..., n_keypoints)
            Predicted probability that each keypoint is visible.
        """
        frames = np.asarray(frames, dtype=np.float32)
        if frames.ndim < 3 or tuple(frames.shape[-3:]) != self.image_shape:
            raise ValueError(f"frames must end in {self.image_shape}, got shape "
                             f"{frames.shape}.")
        lead = frames.shape[:-3]
        flat = frames.reshape(-1, *self.image_shape).transpose(0, 3, 1, 2)
        h, w = self.image_shape[:2]
        self.network.eval()
        kps, probs = [], []
        for start in range(0, len(flat), batch_size):
            x = torch.as_tensor(np.ascontiguousarray(flat[start : start + batch_size]),
                                device=self.device)
            kp, logit, _ = self.network(x)
            kps.append(normalized_to_pixels(kp, h, w).cpu().numpy())
            probs.append(torch.sigmoid(logit).cpu().numpy())
        k = kps[0].shape[1]
        return (np.concatenate(kps).reshape(*lead, k, 2),
                np.concatenate(probs).reshape(*lead, k))


def train_landmark_detector(frames, keypoints, visibility, *, n_steps=400, width=8,
                            batch_size=32, lr=2e-3, blur=1.0, random_state=None, device="cpu"):
    """Train a small supervised landmark detector on frames with known keypoints.

    A U-Net predicts one heatmap per keypoint (soft-argmax location, trained
    with an L1 loss on keypoints inside the frame) and a small head predicts
    visibility (binary cross-entropy). Training images are blurred with a
    random Gaussian of standard deviation up to ``blur`` pixels so that the
    detector also reads the smoother frames that generators produce.

    Parameters
    ----------
    frames : array-like of shape (n, height, width, channels)
        Training frames.
    keypoints : array-like of shape (n, n_keypoints, 2)
        Pixel coordinates ``(x, y)``.
    visibility : array-like of bool of shape (n, n_keypoints)
        Whether each keypoint is visible in its frame.
    n_steps : int, default=400
        Number of Adam steps; the learning rate drops tenfold after 80% of them.
    width : int, default=8
        Base number of channels of the U-Net.
    batch_size : int, default=32
        Frames per step (drawn with replacement).
    lr : float, default=2e-3
        Adam learning rate.
    blur : float, default=1.0
        Largest standard deviation, in pixels, of the random Gaussian blur of the
        training frames.
    random_state : int, RandomState instance or None, default=None
        Seeds the weights, the batches and the blur.
    device : str, default="cpu"
        ``"auto"`` uses CUDA when available.

    Returns
    -------
    detector : LandmarkDetector
        The trained detector, in evaluation mode.

    Examples
    --------
    >>> from skpaper.datasets import make_sprite_videos
    >>> from skpaper.vision import train_landmark_detector
    >>> d = make_sprite_videos(n_videos=4, n_frames=4, size=16, random_state=0)
    >>> det = train_landmark_detector(d.videos.reshape(-1, 16, 16, 3),
    ...                               d.keypoints.reshape(-1, 5, 2),
    ...                               d.visibility.reshape(-1, 5), n_steps=5, random_state=0)
    >>> det.predict(d.videos[0, :2])[0].shape
    (2, 5, 2)
    """
    frames = np.asarray(frames, dtype=np.float32)
    keypoints = np.asarray(keypoints, dtype=np.float64)
    visibility = np.asarray(visibility).astype(bool)
    if frames.ndim != 4:
        raise ValueError(f"frames must have shape (n, height, width, channels), got "
                         f"{frames.shape}.")
    n, h, w, c = frames.shape
    if keypoints.ndim != 3 or keypoints.shape[0] != n or keypoints.shape[2] != 2:
        raise ValueError(f"keypoints must have shape ({n}, n_keypoints, 2), got "
                         f"{keypoints.shape}.")
    if visibility.shape != keypoints.shape[:2]:
        raise ValueError(f"visibility must have shape {keypoints.shape[:2]}, got "
                         f"{visibility.shape}.")
    for name, value in (("n_steps", n_steps), ("width", width), ("batch_size", batch_size)):
        if int(value) != value or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}.")
    device = resolve_device(device)
    generator = check_torch_generator(random_state)
    k = keypoints.shape[1]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(2**31 - 1, (1,), generator=generator)))
        network = _LandmarkNetwork(c, k, int(width)).to(device)
    x_all = torch.as_tensor(np.ascontiguousarray(frames.transpose(0, 3, 1, 2)), device=device)
    kp_all = pixels_to_normalized(torch.as_tensor(keypoints, dtype=torch.float32,
                                                  device=device), h, w)
    inside = (kp_all.abs() <= 1).all(dim=-1)
    vis_all = torch.as_tensor(visibility, dtype=torch.float32, device=device)
    optimizer = torch.optim.Adam(network.parameters(), lr=lr)
    history = []
    network.train()
    for step in range(int(n_steps)):
        if step == int(0.8 * n_steps):
            for group in optimizer.param_groups:
                group["lr"] = lr * 0.1
        idx = torch.randint(n, (min(int(batch_size), n),), generator=generator).to(device)
        x = x_all[idx]
        sigma = (torch.rand(len(idx), generator=generator) * blur).to(device)
        x = torch.where((sigma > 0.3)[:, None, None, None], _blur(x, sigma), x)
        kp, logit, heat_logits = network(x)
        mask = inside[idx].to(kp.dtype)[..., None]
        loc = ((kp - kp_all[idx]).abs() * mask).sum() / mask.sum().clamp_min(1)
        # Cross-entropy of the heatmap softmax against a one-pixel-wide Gaussian target
        # converges much faster than the soft-argmax L1 alone.
        target = gaussian_heatmaps(kp_all[idx], h, w, variance=(2.0 / w) ** 2)
        target = target / target.sum(dim=(2, 3), keepdim=True).clamp_min(1e-12)
        logp = F.log_softmax(heat_logits.flatten(2) / 0.05, dim=-1).reshape(target.shape)
        heat = -((target * logp).sum(dim=(2, 3)) * mask[..., 0]).sum() / mask.sum().clamp_min(1)
        vis = F.binary_cross_entropy_with_logits(logit, vis_all[idx])
        loss = loc + 0.01 * heat + 0.1 * vis
        optimizer_step(optimizer, loss)
        history.append(float(loss.detach()))
    network.eval()
    return LandmarkDetector(network, (h, w, c), history)
