"""Data generators for `skpaper.multilabel` (numpy only; no torch import)."""

import numbers

import numpy as np
from scipy.stats import beta as beta_dist
from sklearn.utils import check_random_state

__all__ = ["make_linear_multilabel"]


def make_linear_multilabel(
    n_samples=500,
    n_features=50,
    n_labels=16,
    *,
    positive_rate=0.5,
    noise=0.0,
    random_state=None,
    return_coef=False,
):
    """Generate multi-label data whose labels are thresholded linear functions of unit inputs.

    Inputs are uniform on the unit sphere (so ``||x|| = 1 = R``), each label
    ``j`` is ``y_j = [<u_j, x> > t_j]`` for a random unit direction ``u_j``,
    and every label entry is then flipped with probability ``noise``. The
    threshold ``t_j`` is the population quantile that makes label ``j``
    positive with probability ``positive_rate`` before the flips.

    Parameters
    ----------
    n_samples : int, default=500
        Number of samples.
    n_features : int, default=50
        Input dimension ``d`` (at least 2).
    n_labels : int, default=16
        Number of labels ``c`` (at least 2).
    positive_rate : float or array-like of shape (n_labels,), default=0.5
        Probability in (0, 1) that a label is relevant before the flips; an
        array gives one rate per label (to create class imbalance).
    noise : float in [0, 0.5], default=0.0
        Probability of flipping each label entry.
    random_state : int, RandomState instance or None, default=None
        Seed of every draw.
    return_coef : bool, default=False
        Also return the directions ``U`` and thresholds ``t``.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Unit-norm inputs.
    Y : ndarray of shape (n_samples, n_labels)
        0/1 label indicator (``int64``).
    U : ndarray of shape (n_features, n_labels)
        Unit label directions; only when ``return_coef=True``.
    thresholds : ndarray of shape (n_labels,)
        Only when ``return_coef=True``.

    Notes
    -----
    For ``x`` uniform on the sphere of ``R^d`` and a unit ``u``,
    ``(1 + <u, x>) / 2`` follows ``Beta((d - 1) / 2, (d - 1) / 2)``, which
    gives the thresholds exactly. This is the synthetic setting used to check
    the label-count dependence of the bounds of Zhang & Zhang (ICML 2025).

    Examples
    --------
    >>> from skpaper.datasets import make_linear_multilabel
    >>> X, Y = make_linear_multilabel(n_samples=4, n_features=3, n_labels=2, random_state=0)
    >>> X.shape, Y.shape
    ((4, 3), (4, 2))
    """
    for name, value, low in (("n_samples", n_samples, 1), ("n_features", n_features, 2),
                             ("n_labels", n_labels, 2)):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}.")
    rates = np.asarray(positive_rate, dtype=float)
    if rates.ndim == 0:
        rates = np.full(n_labels, float(rates))
    if rates.shape != (n_labels,) or not np.all((rates > 0) & (rates < 1)):
        raise ValueError(
            "positive_rate must be a float or an array of n_labels floats in (0, 1), "
            f"got {positive_rate!r}."
        )
    if not isinstance(noise, numbers.Real) or not 0.0 <= noise <= 0.5:
        raise ValueError(f"noise must be a float in [0, 0.5], got {noise!r}.")
    rng = check_random_state(random_state)
    X = rng.standard_normal((n_samples, n_features))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    U = rng.standard_normal((n_features, n_labels))
    U /= np.linalg.norm(U, axis=0, keepdims=True)
    a = (n_features - 1) / 2.0
    thresholds = 2.0 * beta_dist.ppf(1.0 - rates, a, a) - 1.0
    Y = (X @ U > thresholds).astype(np.int64)
    if noise > 0:
        flips = rng.random_sample(Y.shape) < noise
        Y = np.where(flips, 1 - Y, Y)
    if return_coef:
        return X, Y, U, thresholds
    return X, Y
