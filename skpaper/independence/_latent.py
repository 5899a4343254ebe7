"""Pairwise latent correlations and their per-sample influence functions.

Each estimator here returns ``(sigma, xi)``: the estimated correlation of the
latent Gaussian pair and a vector ``xi`` of length ``n`` with
``sigma_hat - sigma ~= mean(xi)`` to first order, so that ``mean(xi**2)`` is its
asymptotic variance and linear combinations of several ``xi`` give the
variance of any smooth function of several correlations (delta method).
"""

import numbers

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import ndtr, ndtri

from ..utils._sklearn import Interval, StrOptions, validate_params
from ._bvn import RHO_MAX, GridCDF, cell_probs_jacobian

_BOUNDS = (-RHO_MAX, RHO_MAX)


def encode_ordinal(x, name="x"):
    """Map an integer-valued column to consecutive codes ``0..K-1`` (rank of each level).

    Monotone relabelling of the levels gives the same codes. Raises when the
    column holds non-integer values or a single level.
    """
    x = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(x)) or np.any(x != np.round(x)):
        bad = x[~(np.isfinite(x) & (x == np.round(x)))][:3]
        raise ValueError(
            f"{name} is marked discrete, so its values must be integer codes; "
            f"got non-integer values such as {bad.tolist()}."
        )
    levels, codes = np.unique(x, return_inverse=True)
    if len(levels) < 2:
        raise ValueError(
            f"{name} is constant (a single level {levels.tolist()}); a discretized "
            "column needs at least 2 levels."
        )
    return codes.astype(np.intp), len(levels)


def ordinal_thresholds(codes, n_levels):
    """Thresholds ``h_l = Phi^{-1}(F_hat(l))``, ``l = 1..K-1``, from the marginal frequencies."""
    cum = np.cumsum(np.bincount(codes, minlength=n_levels))[:-1] / len(codes)
    return ndtri(cum)


def normal_scores(x):
    """Rank-Gaussianise a continuous column: ``Phi^{-1}(rank / (n + 1))``, standardised."""
    from scipy.stats import rankdata

    z = ndtri(rankdata(x) / (len(x) + 1.0))
    z -= z.mean()
    sd = np.sqrt(np.mean(z * z))
    if sd == 0.0:
        raise ValueError("a continuous column is constant; it carries no information.")
    return z / sd


def _cell_index(ca, cb, n_b):
    return ca * n_b + cb


def _bounded_min(objective):
    res = minimize_scalar(objective, bounds=_BOUNDS, method="bounded",
                          options={"xatol": 1e-9})
    return float(res.x)


def _gmm_influence_row(G, A):
    """First row of ``(G^T A G)^+ G^T A``: the sigma part of the GMM influence map."""
    if A is None:
        GtA = G.T
    else:
        GtA = G.T @ A
    return (np.linalg.pinv(GtA @ G) @ GtA)[0]


def ordinal_pair(ca, cb, h_a, h_b, *, min_cell_prob=0.01, weighting="identity"):
    """Over-identified GMM latent correlation of two discretized columns.

    Moments ``g_i^{lk} = 1{X_a = l, X_b = k} - P_lk(sigma; h_a, h_b)`` over the
    cells with empirical probability at least ``min_cell_prob``; one-step GMM
    (identity weight) or two-step GMM (weight ``Omega_hat^{-1}``).

    Returns
    -------
    sigma : float
    xi : ndarray of shape (n,)
        ``e_1^T (G^T A G)^{-1} G^T A g_i`` with ``G = dP/d(sigma, h_a, h_b)``.
    """
    n = len(ca)
    n_a, n_b = len(h_a) + 1, len(h_b) + 1
    cell = _cell_index(ca, cb, n_b)
    p_hat = np.bincount(cell, minlength=n_a * n_b) / n
    keep = p_hat >= min_cell_prob
    n_params = n_a + n_b - 1
    if keep.sum() <= n_params:
        # Too few frequent cells to identify (sigma, h_a, h_b): use every observed cell.
        keep = p_hat > 0
    target = p_hat[keep]
    grid = GridCDF(h_a, h_b)

    def objective(rho):
        resid = target - grid.cell_probs(rho).ravel()[keep]
        return resid @ resid

    sigma = _bounded_min(objective)
    A = None
    center = target
    if weighting == "optimal":
        moments = keep.copy()
        if moments.sum() == n_a * n_b:
            # The indicators of all cells sum to 1: drop one so Omega is invertible.
            moments[np.flatnonzero(moments)[-1]] = False
        p_m = p_hat[moments]
        omega = np.diag(p_m) - np.outer(p_m, p_m)
        A1 = np.linalg.pinv(omega)

        def objective_two(rho):
            resid = p_m - grid.cell_probs(rho).ravel()[moments]
            return resid @ A1 @ resid

        sigma = _bounded_min(objective_two)
        model = grid.cell_probs(sigma).ravel()[moments]
        # Omega at the second-step estimate: E[(1{cell} - P)(1{cell} - P)^T].
        omega2 = (np.diag(p_m) - np.outer(p_m, model) - np.outer(model, p_m)
                  + np.outer(model, model))
        A = np.linalg.pinv(omega2)
        keep, center = moments, model
    _, d_rho, d_ha, d_hb = cell_probs_jacobian(h_a, h_b, sigma)
    G = np.column_stack([
        d_rho.ravel()[keep],
        d_ha.reshape(n_a * n_b, -1)[keep],
        d_hb.reshape(n_a * n_b, -1)[keep],
    ])
    w = _gmm_influence_row(G, A)
    table = np.zeros(n_a * n_b)
    table[keep] = w
    xi = table[cell] - w @ center
    return sigma, xi


def _normal_pdf(x):
    return np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi)


def _rank_correction(z, sigma, h):
    """Influence of rank-Gaussianising the continuous column on ``E[Z_c 1{X_d <= l}]``.

    With ``W_l(t) = P(X_d <= l | Z_c = t) = Phi((h_l - sigma t) / s)`` the
    empirical-CDF term of the influence function is ``-int_0^z W_l(t) dt`` up to
    a constant; with ``psi(x) = x Phi(x) + phi(x)`` (an antiderivative of
    ``Phi``) it is ``-(psi(a + b z) - psi(a)) / b``, ``a = h_l / s``,
    ``b = -sigma / s``.
    """
    s = np.sqrt(1.0 - sigma * sigma)
    a = h[None, :] / s
    b = -sigma / s
    if abs(b) < 1e-6:
        out = -ndtr(a) * z[:, None]
    else:
        x = a + b * z[:, None]
        out = -((x * ndtr(x) + _normal_pdf(x)) - (a * ndtr(a) + _normal_pdf(a))) / b
    return out - out.mean(axis=0)


def polyserial_pair(z, cd, h_d):
    """Latent correlation of a rank-Gaussianised continuous column and a discretized one.

    Moments ``m_l = E[Z_c 1{X_d <= l}] = -sigma phi(h_l)`` (``l = 1..K-1``) with
    the thresholds plugged in and identity weight, so
    ``sigma_hat = -sum_l m_l phi_l / sum_l phi_l**2``. The influence function
    accounts for the estimated thresholds and for the ranks behind ``Z_c``.
    """
    n_levels = len(h_d) + 1
    below = (cd[:, None] <= np.arange(n_levels - 1)[None, :]).astype(float)
    phi = _normal_pdf(h_d)
    m = (z[:, None] * below).mean(axis=0)
    sigma = float(np.clip(-(m @ phi) / (phi @ phi), *_BOUNDS))
    centred = below - below.mean(axis=0)
    dm = z[:, None] * below - m + _rank_correction(z, sigma, h_d)
    # dh_l = (1{X_d <= l} - F_l) / phi_l enters through d phi(h_l) / dh_l = -h_l phi_l.
    xi = -((dm - sigma * h_d * centred) @ phi) / (phi @ phi)
    return sigma, xi


def continuous_pair(z_a, z_b):
    """Correlation of two rank-Gaussianised columns (normal-scores Pearson).

    Influence ``z_a z_b - sigma (z_a**2 + z_b**2) / 2``, the Pearson influence
    function of standardised variables.
    """
    sigma = float(np.clip(np.mean(z_a * z_b), *_BOUNDS))
    return sigma, z_a * z_b - 0.5 * sigma * (z_a * z_a + z_b * z_b)


@validate_params(
    {
        "x": ["array-like"],
        "y": ["array-like"],
        "method": [StrOptions({"ml", "gmm"})],
        "min_cell_prob": [Interval(numbers.Real, 0, 1, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def polychoric_corr(x, y, *, method="ml", min_cell_prob=0.01):
    """Polychoric correlation of two ordinal variables.

    The latent pair ``(Z_x, Z_y)`` is standard bivariate normal with
    correlation ``rho``; ``x = l`` iff ``h_{x,l} < Z_x <= h_{x,l+1}``. Thresholds
    come from the marginal frequencies, ``h_l = Phi^{-1}(F_hat(l))``, and
    ``rho`` maximises the multinomial likelihood ``sum_lk n_lk log P_lk(rho)``
    (two-step maximum likelihood, Olsson 1979), or, with ``method="gmm"``,
    minimises ``||p_hat - P(rho)||^2`` over the cells with
    ``p_hat_lk >= min_cell_prob`` (the one-step GMM of DCT-GMM [1]_).

    Parameters
    ----------
    x, y : array-like of shape (n_samples,)
        Integer codes; any increasing relabelling gives the same estimate.
    method : {"ml", "gmm"}, default="ml"
    min_cell_prob : float, default=0.01
        Only used by ``method="gmm"``.

    Returns
    -------
    rho : float
        In ``(-1, 1)``.

    See Also
    --------
    DiscretizedCITest : Conditional independence tests built on these correlations.

    References
    ----------
    .. [1] B. Sun et al., "A Sample Efficient Conditional Independence Test in
       the Presence of Discretization", ICML 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.independence import polychoric_corr
    >>> rng = np.random.default_rng(0)
    >>> z = rng.multivariate_normal([0, 0], [[1, 0.5], [0.5, 1]], size=2000)
    >>> x, y = np.digitize(z[:, 0], [-0.5, 0.5]), np.digitize(z[:, 1], [0.0, 1.0])
    >>> round(polychoric_corr(x, y), 1)
    0.5
    """
    x = np.asarray(x)
    y = np.asarray(y)
    if x.ndim != 1 or y.ndim != 1 or x.shape != y.shape:
        raise ValueError(
            f"x and y must be 1-d arrays of the same length, got shapes {x.shape} and {y.shape}."
        )
    cx, kx = encode_ordinal(x, name="x")
    cy, ky = encode_ordinal(y, name="y")
    hx, hy = ordinal_thresholds(cx, kx), ordinal_thresholds(cy, ky)
    if method == "gmm":
        return ordinal_pair(cx, cy, hx, hy, min_cell_prob=min_cell_prob)[0]
    counts = np.bincount(_cell_index(cx, cy, ky), minlength=kx * ky)
    grid = GridCDF(hx, hy)
    tiny = np.finfo(float).tiny

    def neg_loglik(rho):
        return -(counts @ np.log(np.maximum(grid.cell_probs(rho).ravel(), tiny)))

    return _bounded_min(neg_loglik)


def ordinal_pair_jtest(ca, cb, h_a, h_b, sigma, *, min_cell_prob=0.01):
    """Hansen-type J test of the bivariate latent normal model of two discretized columns.

    ``sigma`` is the identity-weighted GMM estimate of :func:`ordinal_pair` (fitted on
    the cells it keeps) and the thresholds come from the marginals. The moments tested
    are ``g = p_hat_T - P_T(sigma; h_a, h_b)`` on the cells ``T`` whose *model*
    probability is at least ``max(min_cell_prob, 5 / n)`` (chosen on the fitted model,
    not on the empirical frequencies, which would favour cells that happen to be
    over-represented). To first order ``g`` is linear in the cell indicators,
    ``L (e_i - p)`` with ``L = S_T - G_h,T H - G_s,T (G_s,F^T G_s,F)^{-1} G_s,F^T
    (S_F - G_h,F H)`` (``S`` selects cells, ``F`` are the fitted cells, ``G`` the
    derivatives of the cell probabilities, ``H`` maps the cell indicators to the
    threshold influence ``1{X <= l} / phi(h_l)``); so under the model
    ``n g^T (L Omega L^T)^+ g``, ``Omega = diag(P) - P P^T``, is chi-square with
    ``rank(L Omega L^T)`` degrees of freedom (``(K_a - 1)(K_b - 1) - 1`` when every
    cell is used): the J statistic of the over-identifying restrictions for an
    estimator that is not the efficient GMM one.

    Returns
    -------
    statistic : float
    dof : int
        0 when the moments do not over-identify the model (a 2 x 2 table).
    pvalue : float
        1.0 when ``dof == 0``.
    """
    from scipy.stats import chi2

    n = len(ca)
    n_a, n_b = len(h_a) + 1, len(h_b) + 1
    n_cells = n_a * n_b
    p_hat = np.bincount(_cell_index(ca, cb, n_b), minlength=n_cells) / n
    fit = p_hat >= min_cell_prob
    if fit.sum() <= n_a + n_b - 1:
        fit = p_hat > 0
    probs, d_rho, d_ha, d_hb = cell_probs_jacobian(h_a, h_b, sigma)
    probs, d_rho = probs.ravel(), d_rho.ravel()
    tested = probs >= max(min_cell_prob, 10.0 / n)
    if tested.sum() < 2:
        return 0.0, 0, 1.0
    # Threshold influence per cell: h_l moves by 1{code <= l} / phi(h_l).
    level_a, level_b = np.divmod(np.arange(n_cells), n_b)
    H = np.vstack([
        (level_a[None, :] <= np.arange(n_a - 1)[:, None]) / _normal_pdf(h_a)[:, None],
        (level_b[None, :] <= np.arange(n_b - 1)[:, None]) / _normal_pdf(h_b)[:, None],
    ])
    G_h = np.hstack([d_ha.reshape(n_cells, -1), d_hb.reshape(n_cells, -1)])
    R = np.eye(n_cells) - G_h @ H  # residual map with sigma held fixed, every cell
    g_fit = d_rho[fit]
    gram = float(g_fit @ g_fit)
    L = R[tested]
    if gram > 0:
        L = L - np.outer(d_rho[tested], g_fit @ R[fit]) / gram
    omega = np.diag(probs) - np.outer(probs, probs)
    S = L @ omega @ L.T
    w, V = np.linalg.eigh(S)
    # Relative cut-off for the rank, with an absolute floor for an all-null S.
    positive = w > max(1e-6 * w.max(initial=0.0), 1e-10)
    dof = int(positive.sum())
    if dof == 0:
        return 0.0, 0, 1.0
    proj = V[:, positive].T @ (p_hat[tested] - probs[tested])
    stat = float(n * np.sum(proj * proj / w[positive]))
    return stat, dof, float(chi2.sf(stat, dof))
