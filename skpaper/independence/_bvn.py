"""Standard bivariate normal probabilities on threshold grids, with analytic derivatives.

Every latent-correlation estimator of the family evaluates the probabilities of
the ``K_a x K_b`` rectangles cut by two threshold vectors. The joint CDF is
evaluated once per grid node with Owen's T function, and the rectangle
probabilities are second differences of that grid, so one evaluation costs
``(K_a + 1) (K_b + 1)`` calls of a vectorised special function.
"""

import numpy as np
from scipy.special import ndtr, owens_t

_INV_2PI = 1.0 / (2.0 * np.pi)

#: Correlations are kept inside this bound so that ``sqrt(1 - rho**2)`` never vanishes.
RHO_MAX = 1.0 - 1e-9


def _clip_rho(rho):
    return float(np.clip(rho, -RHO_MAX, RHO_MAX))


class GridCDF:
    """``Phi2`` on the fixed node grid of two threshold vectors, as a function of ``rho``.

    Owen (1956): ``Phi2(h, k; rho) = (Phi(h) + Phi(k)) / 2 - T(h, a_h) - T(k, a_k) - beta``
    with ``a_h = (k - rho h) / (h s)``, ``a_k = (h - rho k) / (k s)``,
    ``s = sqrt(1 - rho**2)`` and ``beta = 1/2`` when ``h`` and ``k`` have opposite
    signs (or one is zero and ``h + k < 0``), else 0; ``T(0, +-inf) = +-1/4``
    and Sheppard's ``1/4 + arcsin(rho) / (2 pi)`` at ``h = k = 0``. Accurate to
    about 1e-15. Everything that does not depend on ``rho`` (marginals, the signs behind
    Owen's ``beta`` term, the borders at infinity) is computed once, so a call
    costs two vectorised ``owens_t`` evaluations on the interior nodes.

    Parameters
    ----------
    h_a, h_b : ndarray of shape (K_a - 1,) and (K_b - 1,)
        Finite thresholds.
    """

    def __init__(self, h_a, h_b):
        h_a = np.asarray(h_a, dtype=float)
        h_b = np.asarray(h_b, dtype=float)
        self.shape = (len(h_a) + 2, len(h_b) + 2)
        H, K = np.meshgrid(h_a, h_b, indexing="ij")
        self._h, self._k = H.ravel(), K.ravel()
        self._h_zero = self._h == 0.0
        self._k_zero = self._k == 0.0
        self._both_zero = self._h_zero & self._k_zero
        hk = self._h * self._k
        self._base = 0.5 * (ndtr(self._h) + ndtr(self._k)) - np.where(
            (hk > 0) | ((hk == 0) & (self._h + self._k >= 0)), 0.0, 0.5)
        grid = np.zeros(self.shape)
        grid[-1, 1:-1] = ndtr(h_b)
        grid[1:-1, -1] = ndtr(h_a)
        grid[-1, -1] = 1.0
        self._grid = grid
        self._safe_h = np.where(self._h_zero, 1.0, self._h)
        self._safe_k = np.where(self._k_zero, 1.0, self._k)

    def __call__(self, rho):
        rho = _clip_rho(rho)
        s = np.sqrt(1.0 - rho * rho)
        num_h = self._k - rho * self._h
        num_k = self._h - rho * self._k
        a_h = np.where(self._h_zero, np.copysign(np.inf, num_h), num_h / (self._safe_h * s))
        a_k = np.where(self._k_zero, np.copysign(np.inf, num_k), num_k / (self._safe_k * s))
        val = self._base - owens_t(self._h, a_h) - owens_t(self._k, a_k)
        if self._both_zero.any():
            val[self._both_zero] = 0.25 + np.arcsin(rho) * _INV_2PI
        grid = self._grid.copy()
        grid[1:-1, 1:-1] = val.reshape(self.shape[0] - 2, self.shape[1] - 2)
        return grid

    def cell_probs(self, rho):
        """Rectangle probabilities, shape ``(K_a, K_b)``."""
        return np.clip(_box(self(rho)), 0.0, 1.0)


def bvn_pdf(h, k, rho):
    """Standard bivariate normal density; 0 where an argument is infinite."""
    rho = _clip_rho(rho)
    h, k = np.broadcast_arrays(np.asarray(h, dtype=float), np.asarray(k, dtype=float))
    s2 = 1.0 - rho * rho
    with np.errstate(invalid="ignore"):
        q = (h * h - 2.0 * rho * h * k + k * k) / s2
        dens = np.exp(-0.5 * q) * _INV_2PI / np.sqrt(s2)
    return np.where(np.isfinite(h) & np.isfinite(k), dens, 0.0)


def _normal_pdf(x):
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(x), np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi), 0.0)


def _extend(thresholds):
    return np.concatenate(([-np.inf], np.asarray(thresholds, dtype=float), [np.inf]))


def _box(grid):
    """Second differences of a node grid: the mass of each rectangle."""
    return grid[1:, 1:] - grid[:-1, 1:] - grid[1:, :-1] + grid[:-1, :-1]


def cell_probs(h_a, h_b, rho):
    """Probabilities ``P_lk(rho; h_a, h_b)`` of the ``K_a x K_b`` threshold rectangles.

    Parameters
    ----------
    h_a, h_b : ndarray of shape (K_a - 1,) and (K_b - 1,)
        Increasing finite thresholds.
    rho : float

    Returns
    -------
    probs : ndarray of shape (K_a, K_b)
    """
    return GridCDF(h_a, h_b).cell_probs(rho)


def cell_probs_jacobian(h_a, h_b, rho):
    """Rectangle probabilities and their exact derivatives.

    Uses ``dPhi2/drho = phi2(h, k; rho)`` and
    ``dPhi2/dh = phi(h) Phi((k - rho h) / sqrt(1 - rho**2))``, so no finite
    differences are needed.

    Returns
    -------
    probs : ndarray of shape (K_a, K_b)
    d_rho : ndarray of shape (K_a, K_b)
        ``dP_lk / drho``.
    d_ha : ndarray of shape (K_a, K_b, K_a - 1)
        ``dP_lk / dh_{a,m}``.
    d_hb : ndarray of shape (K_a, K_b, K_b - 1)
        ``dP_lk / dh_{b,m}``.
    """
    rho = _clip_rho(rho)
    ea, eb = _extend(h_a), _extend(h_b)
    H, Kk = ea[:, None], eb[None, :]
    probs = GridCDF(h_a, h_b).cell_probs(rho)
    d_rho = _box(bvn_pdf(H, Kk, rho))
    s = np.sqrt(1.0 - rho * rho)
    with np.errstate(invalid="ignore"):
        # dPhi2/dh at every node; the conditional CDF is 1 (0) on the +inf (-inf) column.
        cond_a = ndtr(np.where(np.isfinite(H) & np.isfinite(Kk), (Kk - rho * H) / s,
                               np.where(Kk == np.inf, np.inf, -np.inf)))
        cond_b = ndtr(np.where(np.isfinite(H) & np.isfinite(Kk), (H - rho * Kk) / s,
                               np.where(H == np.inf, np.inf, -np.inf)))
    dnode_a = _normal_pdf(H) * cond_a  # (K_a + 1, K_b + 1)
    dnode_b = _normal_pdf(Kk) * cond_b
    # Moving node row m changes the cells above (l = m - 1) and below (l = m) it.
    col_diff_a = dnode_a[:, 1:] - dnode_a[:, :-1]  # (K_a + 1, K_b)
    row_diff_b = dnode_b[1:, :] - dnode_b[:-1, :]  # (K_a, K_b + 1)
    n_a, n_b = len(ea) - 1, len(eb) - 1
    d_ha = np.zeros((n_a, n_b, n_a - 1))
    for m in range(1, n_a):
        d_ha[m - 1, :, m - 1] += col_diff_a[m]
        d_ha[m, :, m - 1] -= col_diff_a[m]
    d_hb = np.zeros((n_a, n_b, n_b - 1))
    for m in range(1, n_b):
        d_hb[:, m - 1, m - 1] += row_diff_b[:, m]
        d_hb[:, m, m - 1] -= row_diff_b[:, m]
    return probs, d_rho, d_ha, d_hb
