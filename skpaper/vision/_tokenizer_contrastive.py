"""A toy image-text encoder pair trained contrastively, a CLIP stand-in for small images."""

from numbers import Integral, Real

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ..nn._base import optimizer_step
from ..nn._mlp import make_mlp
from ..utils._seeding import derive_seed
from ..utils._sklearn import Interval, validate_params
from ._tokenizer_modules import flat_to_images, images_to_flat
from ._tokenizer_objectives import random_crops

__all__ = ["train_contrastive_encoders"]


class _Normalized(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return F.normalize(self.net(x), dim=-1)


@validate_params(
    {
        "X": ["array-like"],
        "text_features": ["array-like"],
        "image_shape": [tuple, list],
        "embed_dim": [Interval(Integral, 1, None, closed="left")],
        "hidden": [Interval(Integral, 1, None, closed="left")],
        "n_steps": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 2, None, closed="left")],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "temperature": [Interval(Real, 0, None, closed="neither")],
        "n_augmentations": [Interval(Integral, 0, None, closed="left")],
        "crop_fraction": [Interval(Real, 0, 1, closed="right")],
        "flip": ["boolean"],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def train_contrastive_encoders(X, text_features, image_shape, *, embed_dim=32, hidden=128,
                               n_steps=600, batch_size=256, lr=3e-3, temperature=0.1,
                               n_augmentations=1, crop_fraction=0.875, flip=False,
                               random_state=None):
    """Train an image encoder and a text projection with a CLIP-style contrastive loss.

    A stand-in for the frozen CLIP model of the paper's text-guided objective
    when no pretrained weights are available: both sides are small MLPs
    trained in-process on image-caption pairs. Text is given as fixed
    features (sentence embeddings of the captions, or one-hot class names).

    Parameters
    ----------
    X : array-like of shape (n_samples, H * W * C)
        Images as rows of ``(H, W, C)``-ordered pixels.
    text_features : array-like of shape (n_samples, n_text_features)
        Features of each image's caption.
    image_shape : tuple of int
        ``(H, W, C)``, used for the crop augmentations.
    embed_dim : int, default=32
        Dimension of the shared embedding.
    hidden : int, default=128
        Width of the image MLP's two hidden layers.
    n_steps : int, default=600
        Adam steps.
    batch_size : int, default=256
        Image-caption pairs per step (clipped to the number of samples).
    lr : float, default=3e-3
        Adam learning rate.
    temperature : float, default=0.1
        Softmax temperature of the contrastive logits.
    n_augmentations : int, default=1
        Random crops of each batch per step (the augmentations of
        :class:`EmbeddingGuidance`); 0 trains on the images as they are.
    crop_fraction : float, default=0.875
        Side of the random crops as a fraction of the image side.
    flip : bool, default=False
        Also flip the crops horizontally at random.
    random_state : int, RandomState instance or None, default=None
        Seeds the weights, the batches and the augmentations.

    Returns
    -------
    image_encoder : torch.nn.Module
        Maps rows of pixels to unit-norm embeddings; frozen, in eval mode.
    text_encoder : torch.nn.Module
        Maps text features to unit-norm embeddings; frozen, in eval mode.

    Notes
    -----
    The loss is the symmetric InfoNCE of CLIP with logits
    ``<f(x_i), g(t_j)> / temperature``. Pairs with identical captions count as
    positives for each other (the target is uniform over them), so captions
    shared by many images, such as class names, are not treated as
    negatives.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from skpaper.vision import train_contrastive_encoders
    >>> X, y = load_digits(return_X_y=True)
    >>> img_enc, txt_enc = train_contrastive_encoders(
    ...     X[:300] / 16.0, np.eye(10)[y[:300]], (8, 8, 1), n_steps=20, random_state=0)
    >>> img_enc(torch.zeros(2, 64)).shape
    torch.Size([2, 32])
    """
    X = np.asarray(X, dtype=np.float32)
    T = np.asarray(text_features, dtype=np.float32)
    if X.ndim != 2 or T.ndim != 2 or X.shape[0] != T.shape[0]:
        raise ValueError(
            f"X and text_features must be 2-D with the same number of rows; got shapes "
            f"{X.shape} and {T.shape}."
        )
    shape = tuple(int(s) for s in image_shape)
    if len(shape) != 3 or np.prod(shape) != X.shape[1]:
        raise ValueError(
            f"image_shape={image_shape!r} does not describe rows of {X.shape[1]} pixels."
        )
    seed = derive_seed(random_state)
    generator = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        image_encoder = _Normalized(make_mlp(X.shape[1], (hidden, hidden), embed_dim, "gelu"))
        text_encoder = _Normalized(nn.Linear(T.shape[1], embed_dim))
    params = list(image_encoder.parameters()) + list(text_encoder.parameters())
    optimizer = torch.optim.Adam(params, lr=lr)
    X_t, T_t = torch.from_numpy(X), torch.from_numpy(T)
    n = X.shape[0]
    batch = min(int(batch_size), n)
    for _ in range(int(n_steps)):
        idx = torch.randperm(n, generator=generator)[:batch]
        crops = random_crops(flat_to_images(X_t[idx], shape), int(n_augmentations),
                             float(crop_fraction), bool(flip), generator)
        images = crops.reshape(-1, *crops.shape[2:])
        texts = T_t[idx].repeat(crops.shape[0], 1)
        same = (torch.cdist(texts, texts) < 1e-6).float()
        target = same / same.sum(1, keepdim=True)
        logits = image_encoder(images_to_flat(images)) @ text_encoder(texts).T / temperature
        loss = 0.5 * (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target))
        optimizer_step(optimizer, loss)
    for module in (image_encoder, text_encoder):
        module.eval().requires_grad_(False)
    return image_encoder, text_encoder
