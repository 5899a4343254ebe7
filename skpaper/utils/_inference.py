"""Inference helpers shared by the statistical families."""

import numpy as np
from scipy.stats import norm

__all__ = ["normal_ci"]


def normal_ci(estimate, se, alpha):
    """Two-sided ``1 - alpha`` Wald interval ``estimate -/+ z_{1-alpha/2} se``.

    Parameters
    ----------
    estimate : float or array-like
        Point estimates.
    se : float or array-like
        Standard errors, broadcastable against ``estimate``.
    alpha : float
        Miscoverage level in (0, 1).

    Returns
    -------
    ci : ndarray of shape ``estimate.shape + (2,)``
        Lower and upper bounds in the last axis.

    Examples
    --------
    >>> from skpaper.utils import normal_ci
    >>> normal_ci(1.0, 0.5, 0.05).round(3).tolist()
    [0.02, 1.98]
    """
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}.")
    half = norm.ppf(1.0 - alpha / 2.0) * np.asarray(se, dtype=float)
    estimate = np.asarray(estimate, dtype=float)
    return np.stack([estimate - half, estimate + half], axis=-1)
