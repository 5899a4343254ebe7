"""Closed-form risks and transferability of deep linear networks (Tahir et al., ICML 2025).

Setting of [1]_: inputs ``x ~ N(0, I_d)``, labels ``y = beta^T x + eps`` with
``eps ~ N(0, sigma^2)``, unit source and target vectors with ``beta_s^T beta_t = cos(theta)``,
``n = gamma * d`` target samples, and the risk ``R = ||beta_hat - beta_t||^2``. The
transferability of a method is ``T = R_scratch - R_method``: positive when starting from
the pretrained network wins.

Every function broadcasts its array arguments against each other and returns a float
when all of them are scalars.

Equation and theorem numbers refer to arXiv:2410.08194v2 (the ICML version). The
proportional limits are the paper's; the finite-``d`` forms (``d=...``) are exact
expectations derived for this library from Gaussian and inverse-Wishart moments, and
the balancedness correction of fine-tuning is not in the paper (both are checked against
simulations in the test suite).

References
----------
.. [1] J. Tahir, S. Ganguli and G. M. Rotskoff, "Features are fate: a theory of transfer
   learning in high-dimensional regression", ICML 2025 (PMLR 267), arXiv:2410.08194.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch

from ..utils._sklearn import Interval, StrOptions, validate_params
from ._docs import Substitution

__all__ = [
    "finetune_risk",
    "finetune_transferability",
    "linear_transfer_risk",
    "linear_transferability",
    "negative_transfer_region",
    "phase_diagram",
    "scratch_risk",
]

_ARRAY_OR_REAL = ["array-like", Real]
_D = [Interval(Integral, 1, None, closed="left"), None]


#: Parameters shared by the fine-tuning closed forms.
_FINETUNE_DOCS = {"finetune_parameters": """
    gamma : float or array-like
        Sample ratio ``n / d``.
    theta : float or array-like
        Source-target angle in radians.
    sigma : float or array-like, default=0.0
        Label-noise standard deviation; used only when ``balanced_scale=True``.
    d : int or None, default=None
        Input dimension; ``None`` for the proportional limit. The paper's formula depends
        on ``gamma = n / d`` only and is exact in expectation at any ``d``.
    balanced_scale : bool, default=False
        Multiply the null-space part by the scale ``c`` that the conserved balancedness of
        a two-layer network imposes (``c^4 - a c^2 - b = 0``; ``c = 1`` when ``sigma = 0``).
        This correction is not in [1]_ (reconstructed, see the Notes of
        :func:`finetune_transferability`).
"""}


def _as_array(name, value, low=None):
    arr = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {value!r}.")
    if low is not None and np.any(arr < low):
        raise ValueError(f"{name} must be >= {low}, got {value!r}.")
    return arr


def _out(value, *inputs):
    value = np.asarray(value, dtype=np.float64)
    if all(np.ndim(v) == 0 for v in inputs):
        return float(value)
    return value


def _n_samples(gamma, d):
    return gamma * d


@validate_params(
    {"gamma": _ARRAY_OR_REAL, "sigma": _ARRAY_OR_REAL, "d": _D},
    prefer_skip_nested_validation=True,
)
def scratch_risk(gamma, sigma=0.0, *, d=None):
    """Risk of training from scratch: the minimum-norm interpolator (Theorem 3.6).

    Gradient flow from a vanishing initialisation converges to ``X^+ y`` (Theorem 3.5 of
    [1]_), whose risk is the double-descent curve of eq. (8).

    Parameters
    ----------
    gamma : float or array-like
        Sample ratio ``n / d`` (non-negative).
    sigma : float or array-like, default=0.0
        Label-noise standard deviation.
    d : int or None, default=None
        Input dimension. ``None`` gives the proportional limit ``n, d -> inf``;
        an integer gives the exact expectation at ``n = gamma * d`` samples.

    Returns
    -------
    risk : float or ndarray
        ``inf`` at the interpolation threshold (``gamma = 1``, or ``|n - d| <= 1``
        for finite ``d``).

    Notes
    -----
    Asymptotically (eq. 8 of [1]_)

    .. math:: R_{sc} = (1 - \\gamma) + \\frac{\\sigma^2 \\gamma}{1 - \\gamma}\\ (\\gamma < 1),
              \\qquad R_{sc} = \\frac{\\sigma^2}{\\gamma - 1}\\ (\\gamma > 1).

    For finite ``d`` the bias is ``1 - n/d`` (a random ``n``-dimensional row space keeps
    a fraction ``n/d`` of ``||beta_t||^2``) and the variance is ``sigma^2`` times the trace
    of the mean inverse Wishart matrix: ``n / (d - n - 1)`` for ``n < d - 1`` and
    ``d / (n - d - 1)`` for ``n > d + 1``.

    References
    ----------
    .. [1] J. Tahir, S. Ganguli and G. M. Rotskoff, "Features are fate: a theory of
       transfer learning in high-dimensional regression", ICML 2025.

    Examples
    --------
    >>> from skpaper.representation import scratch_risk
    >>> round(scratch_risk(0.5, sigma=0.2), 4)
    0.54
    >>> round(scratch_risk(2.0, sigma=0.2), 4)
    0.04
    """
    g = _as_array("gamma", gamma, low=0.0)
    s2 = _as_array("sigma", sigma, low=0.0) ** 2
    g, s2 = np.broadcast_arrays(g, s2)
    with np.errstate(divide="ignore", invalid="ignore"):
        if d is None:
            under = (1.0 - g) + s2 * g / (1.0 - g)
            over = s2 / (g - 1.0)
            risk = np.where(g < 1.0, under, np.where(g > 1.0, over, np.inf))
        else:
            n = _n_samples(g, d)
            under = 1.0 - n / d + s2 * n / (d - n - 1.0)
            over = s2 * d / (n - d - 1.0)
            risk = np.where(n < d - 1.0, under, np.where(n > d + 1.0, over, np.inf))
    return _out(risk, gamma, sigma)


@validate_params(
    {"gamma": _ARRAY_OR_REAL, "theta": _ARRAY_OR_REAL, "sigma": _ARRAY_OR_REAL, "d": _D,
     "ridge": [Interval(Real, 0, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
def linear_transfer_risk(gamma, theta, sigma=0.0, *, d=None, ridge=0.0):
    """Risk of linear transfer: retraining only the last layer (Theorems 3.7 and 3.8).

    Pretraining from a small initialisation leaves a rank-one hidden layer along
    ``beta_s``, so linear transfer fits one coefficient on the feature ``beta_s^T x``.

    Parameters
    ----------
    gamma : float or array-like
        Sample ratio ``n / d``.
    theta : float or array-like
        Angle between source and target vectors, in radians.
    sigma : float or array-like, default=0.0
        Label-noise standard deviation.
    d : int or None, default=None
        Input dimension; ``None`` for the limit ``n -> inf`` (only ``sin^2 theta`` is left).
    ridge : float, default=0.0
        Ridge penalty ``lambda`` on the last layer, applied as ``n * lambda`` as in [1]_.
        Only its large-``n`` limit has a closed form, so ``ridge > 0`` needs ``d=None``.

    Returns
    -------
    risk : float or ndarray
        Expected test error of linear transfer.

    Notes
    -----
    Eq. (10) of [1]_ (exact for every ``n > 2``):

    .. math:: R_{lt} = \\sin^2\\theta + \\frac{\\sigma^2 + \\sin^2\\theta}{n - 2},

    and with ridge, in the limit (eq. 13),
    :math:`R_{lt} = 1 - \\frac{1 + 2\\lambda}{(1 + \\lambda)^2} \\cos^2\\theta`.

    References
    ----------
    .. [1] J. Tahir, S. Ganguli and G. M. Rotskoff, "Features are fate: a theory of
       transfer learning in high-dimensional regression", ICML 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.representation import linear_transfer_risk
    >>> round(linear_transfer_risk(0.5, np.pi / 4), 4)
    0.5
    >>> round(linear_transfer_risk(0.5, np.pi / 4, ridge=1.0), 4)
    0.625
    """
    g = _as_array("gamma", gamma, low=0.0)
    t = _as_array("theta", theta)
    s2 = _as_array("sigma", sigma, low=0.0) ** 2
    g, t, s2 = np.broadcast_arrays(g, t, s2)
    sin2, cos2 = np.sin(t) ** 2, np.cos(t) ** 2
    if ridge > 0:
        if d is not None:
            raise ValueError(
                f"ridge > 0 has a closed form only in the large-n limit; pass d=None, got d={d}."
            )
        lam = float(ridge)
        risk = 1.0 - (1.0 + 2.0 * lam) / (1.0 + lam) ** 2 * cos2 + 0.0 * g
    elif d is None:
        risk = sin2 + 0.0 * g + 0.0 * s2
    else:
        n = _n_samples(g, d)
        with np.errstate(divide="ignore", invalid="ignore"):
            risk = np.where(n > 2.0, sin2 + (s2 + sin2) / (n - 2.0), np.inf)
    return _out(risk, gamma, theta, sigma)


@validate_params(
    {"gamma": _ARRAY_OR_REAL, "theta": _ARRAY_OR_REAL, "sigma": _ARRAY_OR_REAL, "d": _D},
    prefer_skip_nested_validation=True,
)
def linear_transferability(gamma, theta, sigma=0.0, *, d=None):
    """Transferability of linear transfer, ``T_lt = R_sc - R_lt`` (eq. 11).

    Parameters
    ----------
    gamma : float or array-like
        Sample ratio ``n / d``.
    theta : float or array-like
        Source-target angle in radians.
    sigma : float or array-like, default=0.0
        Label-noise standard deviation.
    d : int or None, default=None
        Input dimension; ``None`` for the proportional limit.

    Returns
    -------
    transferability : float or ndarray
        Positive where linear transfer beats training from scratch.

    See Also
    --------
    negative_transfer_region : The zero contours of this function.

    Notes
    -----
    In the limit, :math:`\\mathcal{T}_{lt} = R_{sc}(\\gamma, \\sigma) - \\sin^2\\theta`.

    References
    ----------
    .. [1] J. Tahir, S. Ganguli and G. M. Rotskoff, "Features are fate: a theory of
       transfer learning in high-dimensional regression", ICML 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.representation import linear_transferability
    >>> round(linear_transferability(0.25, np.pi / 4, sigma=0.2), 3)
    0.263
    """
    return _out(
        np.asarray(scratch_risk(gamma, sigma, d=d))
        - np.asarray(linear_transfer_risk(gamma, theta, sigma, d=d)),
        gamma, theta, sigma,
    )


def _balanced_scale(g, s2, d):
    # Scale c of the null-space part kept by fine-tuning, fixed by the conserved
    # balancedness of a two-layer net: c^4 - a c^2 - b = 0 with a = ||(I - P) beta_s||^2
    # and b = ||beta_sc||^2 replaced by their expectations.
    with np.errstate(divide="ignore", invalid="ignore"):
        if d is None:
            a = 1.0 - g
            b = g + s2 * g / (1.0 - g)
        else:
            n = _n_samples(g, d)
            a = 1.0 - n / d
            b = n / d + s2 * n / (d - n - 1.0)
        return np.sqrt((a + np.sqrt(a * a + 4.0 * b)) / 2.0)


@validate_params(
    {"gamma": _ARRAY_OR_REAL, "theta": _ARRAY_OR_REAL, "sigma": _ARRAY_OR_REAL, "d": _D,
     "balanced_scale": ["boolean"]},
    prefer_skip_nested_validation=True,
)
@Substitution(**_FINETUNE_DOCS)
def finetune_transferability(gamma, theta, sigma=0.0, *, d=None, balanced_scale=False):
    """Transferability of fine-tuning every layer, ``T_ft = R_sc - R_ft`` (eq. 15).

    Fine-tuning converges to ``beta_sc + (I - P) beta_s``: the scratch solution in the row
    space ``P`` of the data plus the pretrained vector in its null space (Theorem 3.9).

    Parameters
    ----------
    {finetune_parameters}

    Returns
    -------
    transferability : float or ndarray
        Positive where fine-tuning beats training from scratch.

    Notes
    -----
    Eq. (15) of [1]_:

    .. math:: \\mathcal{T}_{ft} = (1 - \\gamma)(2\\cos\\theta - 1)\\ (\\gamma \\le 1),
              \\qquad 0\\ (\\gamma > 1),

    so fine-tuning helps iff :math:`\\theta < 60^\\circ`. With ``balanced_scale=True`` the
    result is :math:`(1 - \\gamma)(2c\\cos\\theta - c^2)` with ``a = 1 - gamma`` and
    ``b = gamma + sigma^2 gamma / (1 - gamma)``, the expected squared norms of the
    null-space part of ``beta_s`` and of the scratch solution. This follows from
    ``W_1 = u v^T``, ``w_2 = c v`` staying rank one with ``||u|| = c`` during fine-tuning;
    it was derived for this library and by an independent re-derivation of the paper, not
    in [1]_ itself (reconstructed).

    References
    ----------
    .. [1] J. Tahir, S. Ganguli and G. M. Rotskoff, "Features are fate: a theory of
       transfer learning in high-dimensional regression", ICML 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.representation import finetune_transferability
    >>> round(finetune_transferability(0.5, np.pi / 2), 3)
    -0.5
    >>> finetune_transferability(1.5, np.pi / 4)
    0.0
    """
    g = _as_array("gamma", gamma, low=0.0)
    t = _as_array("theta", theta)
    s2 = _as_array("sigma", sigma, low=0.0) ** 2
    g, t, s2 = np.broadcast_arrays(g, t, s2)
    frac = np.clip(1.0 - g, 0.0, None)  # expected null-space fraction (d - n) / d
    if balanced_scale:
        c = _balanced_scale(g, s2, d)
        value = frac * (2.0 * c * np.cos(t) - c * c)
        value = np.where(g < 1.0, value, 0.0)
    else:
        value = frac * (2.0 * np.cos(t) - 1.0)
    return _out(value, gamma, theta, sigma)


@validate_params(
    {"gamma": _ARRAY_OR_REAL, "theta": _ARRAY_OR_REAL, "sigma": _ARRAY_OR_REAL, "d": _D,
     "balanced_scale": ["boolean"]},
    prefer_skip_nested_validation=True,
)
@Substitution(**_FINETUNE_DOCS)
def finetune_risk(gamma, theta, sigma=0.0, *, d=None, balanced_scale=False):
    """Risk of fine-tuning, ``R_ft = R_sc - T_ft`` (eqs. 8 and 15).

    Parameters
    ----------
    {finetune_parameters}

    Returns
    -------
    risk : float or ndarray
        Expected test error of the fine-tuned network, ``scratch_risk - T_ft``.

    References
    ----------
    .. [1] J. Tahir, S. Ganguli and G. M. Rotskoff, "Features are fate: a theory of
       transfer learning in high-dimensional regression", ICML 2025.

    Examples
    --------
    >>> from skpaper.representation import finetune_risk
    >>> round(finetune_risk(0.5, 0.0), 3)
    0.0
    """
    return _out(
        np.asarray(scratch_risk(gamma, sigma, d=d))
        - np.asarray(finetune_transferability(gamma, theta, sigma, d=d,
                                              balanced_scale=balanced_scale)),
        gamma, theta, sigma,
    )


@validate_params(
    {"theta": [Real], "sigma": [Interval(Real, 0, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
def negative_transfer_region(theta, sigma=0.0):
    """Where linear transfer hurts, in the proportional limit (zero contours of eq. 11).

    Parameters
    ----------
    theta : float
        Source-target angle in radians.
    sigma : float, default=0.0
        Label-noise standard deviation.

    Returns
    -------
    region : Bunch
        ``gamma_minus, gamma_plus``: ``T_lt < 0`` for ``gamma_minus < gamma < gamma_plus``
        (both ``nan`` when that band below ``gamma = 1`` is empty, i.e. when
        ``theta <= arccos(1 - sigma)``); ``gamma_over``: ``T_lt < 0`` for
        ``gamma > gamma_over`` (``inf`` when ``sin theta = 0``).

    Notes
    -----
    For :math:`\\gamma < 1`, :math:`\\mathcal{T}_{lt} < 0` iff
    :math:`\\gamma^2 - (1 + \\cos^2\\theta - \\sigma^2)\\gamma + \\cos^2\\theta < 0`; for
    :math:`\\gamma > 1` iff :math:`\\gamma > 1 + \\sigma^2 / \\sin^2\\theta`. Between the two
    regions lies the anomalous positive transfer around the double-descent peak.
    Without noise the band is :math:`(\\cos^2\\theta, 1)`.

    References
    ----------
    .. [1] J. Tahir, S. Ganguli and G. M. Rotskoff, "Features are fate: a theory of
       transfer learning in high-dimensional regression", ICML 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.representation import negative_transfer_region
    >>> r = negative_transfer_region(np.pi / 4, sigma=0.2)
    >>> round(r.gamma_minus, 3), round(r.gamma_plus, 3), round(r.gamma_over, 3)
    (0.549, 0.911, 1.08)
    """
    theta = float(_as_array("theta", theta))
    sigma = float(sigma)
    cos2, sin2 = np.cos(theta) ** 2, np.sin(theta) ** 2
    b = 1.0 + cos2 - sigma**2
    disc = b * b - 4.0 * cos2
    if disc > 0 and b > 0:
        root = np.sqrt(disc)
        lo, hi = (b - root) / 2.0, (b + root) / 2.0
        lo, hi = max(lo, 0.0), min(hi, 1.0)
        if lo >= hi:
            lo = hi = np.nan
    else:
        lo = hi = np.nan
    over = 1.0 + sigma**2 / sin2 if sin2 > 0 else np.inf
    return Bunch(gamma_minus=float(lo), gamma_plus=float(hi), gamma_over=float(over))


@validate_params(
    {"gammas": ["array-like"], "thetas": ["array-like"],
     "sigma": [Interval(Real, 0, None, closed="left")],
     "mode": [StrOptions({"linear", "finetune"})], "d": _D},
    prefer_skip_nested_validation=True,
)
def phase_diagram(gammas, thetas, sigma=0.0, mode="linear", *, d=None):
    """Transferability over a grid of sample ratios and angles (Figures 1 and 2 of [1]_).

    Parameters
    ----------
    gammas : array-like of shape (n_gammas,)
        Sample ratios ``n / d``.
    thetas : array-like of shape (n_thetas,)
        Source-target angles in radians.
    sigma : float, default=0.0
        Label-noise standard deviation.
    mode : {"linear", "finetune"}, default="linear"
        Which transfer method: eq. (11) or eq. (15).
    d : int or None, default=None
        Input dimension; ``None`` for the proportional limit.

    Returns
    -------
    transferability : ndarray of shape (n_gammas, n_thetas)
        ``T[i, j]`` at ``gammas[i]`` and ``thetas[j]``; positive where transfer helps.

    References
    ----------
    .. [1] J. Tahir, S. Ganguli and G. M. Rotskoff, "Features are fate: a theory of
       transfer learning in high-dimensional regression", ICML 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.representation import phase_diagram
    >>> T = phase_diagram([0.25, 2.0], [np.pi / 8, np.pi / 2], sigma=0.2)
    >>> T.shape
    (2, 2)
    >>> bool(T[0, 0] > 0), bool(T[1, 1] < 0)
    (True, True)
    """
    g = _as_array("gammas", gammas, low=0.0).ravel()[:, None]
    t = _as_array("thetas", thetas).ravel()[None, :]
    if mode == "linear":
        value = linear_transferability(g, t, sigma, d=d)
    else:
        value = finetune_transferability(g, t, sigma, d=d)
    return np.asarray(value, dtype=np.float64).reshape(g.shape[0], t.shape[1])
