"""Estimating equations shared by every estimator of the family.

Every estimator here solves one equation of the form

.. math::

    \\sum_{i=1}^N D_i \\{ z_i - t_i\\, g(D_i^\\top \\beta) \\} = 0,

where :math:`D_i` is the target's design row (``[1]`` for a mean, ``[1, X_i]``
for a regression coefficient), :math:`g` its inverse link (identity or the
logistic function), :math:`z_i` a pseudo-outcome built from the data and the
nuisance fits, and :math:`t_i` the indicator of the target population
(``1 - R_i`` for the unlabeled population, ``1`` for the combined one). The
doubly robust estimator, the no-ACP estimator, the labeled-only fit and the
weighted PPI baseline differ only in ``z`` and ``t``, so one solver, one
influence function and one bootstrap serve all of them.

Sample weights ``s_i`` (a unit standing for ``s_i`` units of the population)
enter as ``sum_i s_i D_i (z_i - t_i g(D_i' beta)) = 0``: the solver
takes the weighted ``s * z`` and ``s * t``; the influence function and standard
errors take ``s`` and give, for integer weights, what the data with each row
repeated ``s_i`` times give.
"""

import warnings

import numpy as np
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning

from ..utils import parallel_map, spawn_seeds

TARGETS = ("mean", "ols", "logistic")
# |X~'beta| beyond which expit saturates in double precision: the Newton path diverges.
_ETA_DIVERGED = 40.0


def target_design(X, target):
    """Design rows ``D(X)``: a column of ones, then ``X`` for regression targets."""
    ones = np.ones((X.shape[0], 1))
    if target == "mean":
        return ones
    return np.hstack([ones, X])


def inverse_link(eta, target):
    """``g(eta)`` and ``g'(eta)`` for the target's working model."""
    if target == "logistic":
        mu = expit(eta)
        return mu, mu * (1.0 - mu)
    return eta, np.ones_like(eta)


def _newton_logistic(D, z, t, beta0, max_iter, tol):
    """Newton steps with backtracking on the convex logistic objective; (beta, converged)."""
    b = D.T @ z
    beta = np.zeros(D.shape[1]) if beta0 is None else np.array(beta0, dtype=float)

    def objective(beta):
        return float(t @ np.logaddexp(0.0, D @ beta) - beta @ b)

    value = objective(beta)
    scale = max(1.0, float(np.abs(b).sum()))
    for _ in range(max_iter):
        eta = D @ beta
        if np.max(np.abs(eta)) > _ETA_DIVERGED:
            return beta, False
        mu, dmu = inverse_link(eta, "logistic")
        grad = D.T @ (t * mu) - b
        if np.max(np.abs(grad)) <= tol * scale:
            return beta, True
        hess = (D * (t * dmu)[:, None]).T @ D
        step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        # Backtracking keeps the objective decreasing when the Newton step overshoots.
        size = 1.0
        while size > 1e-10:
            candidate = beta - size * step
            new_value = objective(candidate)
            if new_value <= value:
                break
            size *= 0.5
        else:
            break
        beta, value = candidate, new_value
    mu, _ = inverse_link(D @ beta, "logistic")
    return beta, bool(np.max(np.abs(D.T @ (t * mu) - b)) <= 1e-6 * scale)


def solve_estimating_equation(D, z, t, target, *, beta0=None, z_init=None, max_iter=100,
                              tol=1e-10):
    """Solve ``sum_i D_i (z_i - t_i g(D_i' beta)) = 0`` for ``beta``.

    For the identity link the solution is closed form (a least-squares solve
    that returns the minimum-norm root when the target design is singular). For
    the logistic link it is the minimiser of the convex function
    ``sum_i t_i log(1 + exp(D_i' beta)) - beta' sum_i D_i z_i``, found by Newton
    steps with backtracking. That minimiser exists only when ``sum_i D_i z_i``
    is a moment a logistic model can reach; large importance weights can push
    it outside. Then, if ``z_init`` is given, the root ``beta_init`` of the
    equation with ``z_init`` (a plug-in that always has one) is corrected by one
    Newton step of the original equation, the one-step estimator, which has the
    same first-order expansion as the root.

    Parameters
    ----------
    D : ndarray of shape (n_samples, n_params)
    z : ndarray of shape (n_samples,)
    t : ndarray of shape (n_samples,)
        Non-negative target-population weights.
    target : {"mean", "ols", "logistic"}
    beta0 : ndarray of shape (n_params,), default=None
        Starting point of the Newton iterations.
    z_init : ndarray of shape (n_samples,), default=None
        Plug-in pseudo-outcomes for the one-step fallback (logistic only).
    max_iter : int, default=100
    tol : float, default=1e-10

    Returns
    -------
    beta : ndarray of shape (n_params,)
    """
    if target != "logistic":
        gram = (D * t[:, None]).T @ D
        return np.linalg.lstsq(gram, D.T @ z, rcond=None)[0]
    beta, converged = _newton_logistic(D, z, t, beta0, max_iter, tol)
    if converged:
        return beta
    if z_init is not None:
        beta_init, converged = _newton_logistic(D, z_init, t, None, max_iter, tol)
        if converged:
            warnings.warn(
                "The logistic estimating equation has no root (the weighted pseudo-outcomes "
                "lie outside what a logistic model can fit); using the one-step estimator "
                "from the plug-in fit instead.",
                ConvergenceWarning,
                stacklevel=5,  # the caller of the estimator's fit
            )
            _, dmu = inverse_link(D @ beta_init, target)
            jac = (D * (t * dmu)[:, None]).T @ D
            return beta_init + np.linalg.lstsq(jac, D.T @ (z - z_init), rcond=None)[0]
    warnings.warn(
        "The logistic estimating equation did not converge; the pseudo-outcomes may lie "
        "outside the range a logistic model can fit (check the propensity clipping).",
        ConvergenceWarning,
        stacklevel=5,  # the caller of the estimator's fit
    )
    return beta


def influence_function(D, z, t, beta, target, sample_weight=None):
    """Per-unit influence values ``phi_i = J^{-1} psi_i`` of the solution ``beta``.

    ``psi_i = (N / n_t) D_i (z_i - t_i g(D_i' beta))`` and
    ``J = n_t^{-1} sum_i s_i t_i g'(D_i' beta) D_i D_i'``, with ``N = sum_i s_i``
    and ``n_t = sum_i s_i t_i`` (``s`` the sample weights, ones by default);
    the estimator's covariance is ``sum_i s_i phi_i phi_i' / N^2``.

    Returns
    -------
    phi : ndarray of shape (n_samples, n_params)
    """
    s = np.ones(D.shape[0]) if sample_weight is None else sample_weight
    n = float(np.sum(s))
    n_t = float(np.sum(s * t))
    mu, dmu = inverse_link(D @ beta, target)
    psi = (n / n_t) * D * (z - t * mu)[:, None]
    jac = (D * (s * t * dmu)[:, None]).T @ D / n_t
    return psi @ np.linalg.pinv(jac).T


def influence_se(phi, sample_weight=None):
    """Standard errors from influence values (centred, so they hold off the root too)."""
    if sample_weight is None:
        n = phi.shape[0]
        centred = phi - phi.mean(axis=0)
        return np.sqrt(np.sum(centred**2, axis=0)) / n
    s = np.asarray(sample_weight, dtype=float)
    centred = phi - np.average(phi, axis=0, weights=s)
    return np.sqrt(np.sum(s[:, None] * centred**2, axis=0)) / np.sum(s)


def _bootstrap_chunk(job, *, D, z, t, target, beta0, z_init, sample_weight=None):
    seed, n_draws = job
    rng = np.random.default_rng(seed)
    draws = np.empty((n_draws, D.shape[1]))
    for b in range(n_draws):
        if sample_weight is None:
            xi = rng.exponential(size=D.shape[0])
        else:
            # A row of weight s stands for s units with Exp(1) multipliers each: their
            # sum is Gamma(s, 1) (0 for s = 0).
            xi = rng.gamma(sample_weight)
        draws[b] = solve_estimating_equation(
            D, xi * z, xi * t, target, beta0=beta0,
            z_init=None if z_init is None else xi * z_init,
        )
    return draws


def multiplier_bootstrap(D, z, t, target, *, n_bootstrap, random_state, n_jobs=None,
                         beta0=None, z_init=None, sample_weight=None):
    """Multiplier-bootstrap draws of the solution with Exp(1) unit weights.

    The nuisance fits stay fixed; each draw re-solves the weighted equation
    ``sum_i xi_i D_i (z_i - t_i g(D_i' beta)) = 0``. With sample weights ``s``
    (``z`` and ``t`` unweighted), ``xi_i`` is drawn from Gamma(``s_i``, 1), the
    law of the sum of the Exp(1) multipliers of ``s_i`` repeated rows.

    Returns
    -------
    draws : ndarray of shape (n_bootstrap, n_params)
    """
    n_chunks = int(min(n_bootstrap, 8))
    sizes = np.full(n_chunks, n_bootstrap // n_chunks)
    sizes[: n_bootstrap % n_chunks] += 1
    seeds = spawn_seeds(random_state, n_chunks)
    chunks = parallel_map(_bootstrap_chunk, list(zip(seeds, sizes.tolist())), n_jobs=n_jobs,
                          D=D, z=z, t=t, target=target, beta0=beta0, z_init=z_init,
                          sample_weight=sample_weight)
    return np.vstack(chunks)


def percentile_ci(draws, alpha):
    """Percentile interval of bootstrap draws, shape (n_params, 2)."""
    lo, hi = np.quantile(draws, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
    return np.stack([lo, hi], axis=-1)
