"""Token-copy editing in the latent space of a 1D tokenizer."""

from numbers import Integral

import numpy as np
from sklearn.metrics import adjusted_mutual_info_score
from sklearn.utils.multiclass import type_of_target

from ..utils._sklearn import Interval, validate_params

__all__ = ["find_attribute_positions", "swap_tokens"]


def _check_tokens(tokens, name):
    arr = np.asarray(tokens)
    if arr.ndim not in (1, 2, 3) or arr.dtype.kind not in "iuf":
        raise ValueError(
            f"{name} must be code ids of shape (n_tokens,) or (n_samples, n_tokens), or token "
            f"vectors of shape (n_samples, n_tokens, token_dim); got dtype {arr.dtype} and "
            f"shape {arr.shape}."
        )
    return arr


@validate_params(
    {"tokens_a": ["array-like"], "tokens_b": ["array-like"],
     "positions": ["array-like", Interval(Integral, 0, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
def swap_tokens(tokens_a, tokens_b, positions):
    """Copy the tokens of ``tokens_a`` at ``positions`` into ``tokens_b``.

    The token-copy edit of Lao Beyer et al. [1]_: ``z_B[k] <- z_A[k]`` for
    every ``k`` in ``positions``. Decoding the result transfers to image B the
    attributes that those positions carry in image A.

    Parameters
    ----------
    tokens_a : array-like of shape (n_tokens,), (n_samples, n_tokens) or \
            (n_samples, n_tokens, token_dim)
        Source tokens (code ids or vectors). A single sequence is copied into
        every row of ``tokens_b``.
    tokens_b : array-like of shape (n_samples, n_tokens) or \
            (n_samples, n_tokens, token_dim)
        Destination tokens; not modified.
    positions : int or array-like of int
        Token positions to copy, each in ``[0, n_tokens)``.

    Returns
    -------
    edited : ndarray of the shape and dtype of ``tokens_b``
        A copy of ``tokens_b`` whose ``positions`` hold the tokens of ``tokens_a``.

    Examples
    --------
    >>> from skpaper.vision import swap_tokens
    >>> swap_tokens([[1, 2, 3]], [[7, 8, 9]], positions=[0, 2])
    array([[1, 8, 3]])
    """
    a = _check_tokens(tokens_a, "tokens_a")
    b = _check_tokens(tokens_b, "tokens_b")
    if b.ndim == 1:
        raise ValueError(
            f"tokens_b must have a sample axis, shape (n_samples, n_tokens[, token_dim]); got "
            f"shape {b.shape}."
        )
    is_codes = b.ndim == 2
    if a.ndim == b.ndim - 1:
        a = np.broadcast_to(a, b.shape)
    if a.shape != b.shape:
        raise ValueError(
            f"tokens_a of shape {np.asarray(tokens_a).shape} cannot be copied into tokens_b of "
            f"shape {b.shape}."
        )
    if is_codes and a.dtype.kind == "f":
        raise TypeError("tokens_a holds float vectors but tokens_b holds integer code ids.")
    pos = np.atleast_1d(np.asarray(positions))
    if pos.ndim != 1 or pos.dtype.kind not in "iu":
        raise ValueError(f"positions must be an int or a 1-D array of ints, got {positions!r}.")
    n_tokens = b.shape[1]
    if pos.size and (pos.min() < 0 or pos.max() >= n_tokens):
        raise ValueError(
            f"positions must lie in [0, {n_tokens - 1}] for {n_tokens} tokens; got {pos.tolist()}."
        )
    edited = b.copy()
    edited[:, pos] = a[:, pos]
    return edited


def _eta_squared(groups, values):
    """Share of the variance of ``values`` explained by the group means."""
    total = np.sum((values - values.mean()) ** 2)
    if total == 0:
        return 0.0
    _, inverse = np.unique(groups, return_inverse=True)
    sums = np.bincount(inverse, weights=values)
    counts = np.bincount(inverse)
    between = np.sum(sums**2 / counts) - values.sum() ** 2 / len(values)
    return float(between / total)


def _adjusted_r2(features, target):
    """Adjusted multivariate R^2 of a least-squares fit of ``target`` on ``features``."""
    n, d = features.shape
    X = features - features.mean(0)
    Y = target - target.mean(0)
    total = np.sum(Y**2)
    if total == 0:
        return 0.0
    beta, *_ = np.linalg.lstsq(X, Y, rcond=None)
    r2 = 1.0 - np.sum((Y - X @ beta) ** 2) / total
    if n > d + 1:
        r2 = 1.0 - (1.0 - r2) * (n - 1) / (n - d - 1)
    return float(r2)


@validate_params(
    {"tokens": ["array-like"], "attribute_values": ["array-like"],
     "n_positions": [Interval(Integral, 1, None, closed="left"), None]},
    prefer_skip_nested_validation=True,
)
def find_attribute_positions(tokens, attribute_values, n_positions=None):
    """Rank token positions by how strongly they are associated with an attribute.

    Lao Beyer et al. [1]_ find the positions to copy by probing which
    positions of TiTok's 32 tokens vary with an attribute (blur, lighting,
    background...) over a labelled image set; this function scores every
    position and returns them strongest first.

    Parameters
    ----------
    tokens : array-like of shape (n_samples, n_tokens) or (n_samples, n_tokens, token_dim)
        Code ids (from ``VQTokenizer1D.transform``) or token vectors (from
        ``encode_continuous``).
    attribute_values : array-like of shape (n_samples,)
        Attribute of each image: labels (binary or multiclass) or real values.
    n_positions : int, default=None
        How many positions to return; ``None`` returns all.

    Returns
    -------
    positions : ndarray of int of shape (n_positions,)
        Token positions, most associated first.
    scores : ndarray of shape (n_tokens,)
        Association score of every position (higher is stronger).

    Notes
    -----
    For code ids and a categorical attribute the score is the adjusted mutual
    information between the code at the position and the attribute; for a
    real-valued attribute it is the correlation ratio ``eta^2`` (between-code
    variance over total variance). For token vectors it is the adjusted
    ``R^2`` of a least-squares fit of the attribute (one-hot when
    categorical) on the token. The paper does not state its probing
    statistic; these scores are reconstructed.

    References
    ----------
    .. [1] L. Lao Beyer, T. Li, X. Chen, S. Karaman and K. He, "Highly
       Compressed Tokenizer Can Generate Without Training", ICML 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.vision import find_attribute_positions
    >>> rng = np.random.default_rng(0)
    >>> attr = rng.integers(0, 2, 200)
    >>> codes = rng.integers(0, 8, (200, 4))
    >>> codes[:, 2] = attr * 3          # position 2 encodes the attribute
    >>> positions, scores = find_attribute_positions(codes, attr, n_positions=1)
    >>> positions.tolist()
    [2]
    """
    arr = np.asarray(tokens)
    if arr.ndim not in (2, 3) or arr.dtype.kind not in "iuf" or (
        arr.ndim == 2 and arr.dtype.kind == "f"
    ):
        raise ValueError(
            "tokens must be integer code ids of shape (n_samples, n_tokens) or float vectors "
            f"of shape (n_samples, n_tokens, token_dim); got dtype {arr.dtype} and shape "
            f"{arr.shape}."
        )
    attr = np.asarray(attribute_values)
    if attr.ndim != 1 or attr.shape[0] != arr.shape[0]:
        raise ValueError(
            f"attribute_values must have shape ({arr.shape[0]},) to match tokens; got "
            f"{attr.shape}."
        )
    if arr.shape[0] < 2:
        raise ValueError(f"find_attribute_positions needs at least 2 samples, got {arr.shape[0]}.")
    if attr.dtype.kind == "f" and not np.all(np.isfinite(attr)):
        raise ValueError("attribute_values contains NaN or infinity.")
    kind = type_of_target(attr)
    continuous = kind == "continuous"
    if kind not in ("binary", "multiclass", "continuous"):
        raise ValueError(
            f"attribute_values must be labels or real values, got a target of type {kind!r}."
        )
    n_tokens = arr.shape[1]
    scores = np.empty(n_tokens)
    if arr.ndim == 2:
        for k in range(n_tokens):
            if continuous:
                scores[k] = _eta_squared(arr[:, k], attr.astype(np.float64))
            else:
                scores[k] = adjusted_mutual_info_score(attr, arr[:, k])
    else:
        if continuous:
            target = attr.astype(np.float64)[:, None]
        else:
            _, inverse = np.unique(attr, return_inverse=True)
            target = np.eye(inverse.max() + 1)[inverse]
        for k in range(n_tokens):
            scores[k] = _adjusted_r2(arr[:, k].astype(np.float64), target)
    order = np.argsort(-scores, kind="stable")
    if n_positions is not None:
        if n_positions > n_tokens:
            raise ValueError(f"n_positions={n_positions} exceeds the {n_tokens} token positions.")
        order = order[: int(n_positions)]
    return order, scores
