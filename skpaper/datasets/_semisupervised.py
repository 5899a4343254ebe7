"""Data generators for `skpaper.semisupervised` (numpy only; no torch import)."""

from functools import lru_cache
from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.utils import Bunch, check_random_state

from ..utils._sklearn import Interval, StrOptions, validate_params

__all__ = ["make_acp_covariate_shift"]

_N_COVARIATES = 5
# Y = 1 + X_1 + 0.5 (X_2 + ... + X_5) + signal * Z (+ noise); intercept first.
_BETA_X = np.array([1.0, 1.0, 0.5, 0.5, 0.5, 0.5])


def _hermite_normal(n_nodes):
    """Nodes and weights integrating against the standard normal density."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(n_nodes)
    return nodes, weights / weights.sum()


@lru_cache(maxsize=64)
def _population_truth(signal, rho, outcome):
    """Mean of Y and working-model coefficients in the unlabeled population.

    The unlabeled population tilts N(0, I_5) by expit(sum_j X_j), and
    Z | X ~ N(rho X_1, 1 - rho^2). For the Gaussian outcome both truths are
    closed form up to a one-dimensional Gauss-Hermite integral; for the binary
    one they are an importance-sampling integral over a fixed-seed sample of
    200,000 draws (Monte Carlo error about 2e-3).
    """
    if outcome == "gaussian":
        # s = sum_j X_j ~ N(0, 5); Stein's lemma gives E[s expit(s)] = 5 E[expit'(s)],
        # and E[expit(s)] = 1/2, so E_q[s] = 10 E[expit(s)(1 - expit(s))].
        nodes, weights = _hermite_normal(80)
        e = expit(np.sqrt(5.0) * nodes)
        mean_s = 10.0 * float(weights @ (e * (1.0 - e)))
        # E_q[X_j] = E_q[s] / 5 for each j, and E_q[Z] = rho E_q[X_1].
        mean = 1.0 + (3.0 + signal * rho) * mean_s / 5.0
        coef = _BETA_X.copy()
        coef[1] += signal * rho
        return mean, coef

    rng = np.random.default_rng(20250)
    X = rng.standard_normal((200_000, _N_COVARIATES))
    w = expit(X.sum(axis=1))
    w /= w.sum()
    nodes, weights = _hermite_normal(24)
    eta = _BETA_X[0] + X @ _BETA_X[1:] + signal * rho * X[:, 0]
    spread = signal * np.sqrt(1.0 - rho**2)
    prob = expit(eta[:, None] + spread * nodes[None, :]) @ weights
    mean = float(w @ prob)
    D = np.hstack([np.ones((X.shape[0], 1)), X])
    beta = np.zeros(D.shape[1])
    target = D.T @ (w * prob)
    for _ in range(50):
        mu = expit(D @ beta)
        grad = D.T @ (w * mu) - target
        if np.max(np.abs(grad)) < 1e-13:
            break
        hess = (D * (w * mu * (1 - mu))[:, None]).T @ D
        beta -= np.linalg.solve(hess, grad)
    return mean, beta


@validate_params(
    {
        "n_labeled": [Interval(Integral, 1, None, closed="left")],
        "n_unlabeled": [Interval(Integral, 0, None, closed="left")],
        "signal": [Interval(Real, None, None, closed="neither")],
        "rho": [Interval(Real, -1, 1, closed="both")],
        "outcome": [StrOptions({"gaussian", "binary"})],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_acp_covariate_shift(n_labeled=300, n_unlabeled=1200, *, signal=3.0, rho=0.0,
                             outcome="gaussian", random_state=None):
    """Labeled and unlabeled samples with an ACP, under covariate shift.

    The simulation design of Ying et al. (ICML 2025) [1]_. Covariates
    ``X_1..X_5`` and a latent ``Z`` are standard normal with
    ``corr(X_1, Z) = rho``; the outcome is
    ``Y = 1 + X_1 + 0.5 (X_2 + ... + X_5) + signal * Z + eps`` (Gaussian noise)
    or ``Y ~ Bernoulli(expit(same linear predictor))``. The ACP is ``S = Z``
    (Gaussian) or ``S = expit(signal * Z)`` (binary). A unit is unlabeled with
    probability ``expit(X_1 + ... + X_5)``, and the first ``n_labeled`` labeled
    and ``n_unlabeled`` unlabeled draws are kept, as in the official script.

    Parameters
    ----------
    n_labeled : int, default=300
        Rows with an observed outcome.
    n_unlabeled : int, default=1200
        Rows whose outcome is hidden (NaN in ``y``).
    signal : float, default=3.0
        Coefficient ``alpha`` of ``Z`` in the outcome model: how informative
        the ACP is beyond ``X``.
    rho : float in [-1, 1], default=0.0
        Correlation of ``X_1`` and ``Z``.
    outcome : {"gaussian", "binary"}, default="gaussian"
        Outcome family.
    random_state : int, RandomState instance or None, default=None
        Seed of the draws.

    Returns
    -------
    data : Bunch
        ``X`` (n, 5), ``y`` (n,) with NaN on the unlabeled rows, ``acp`` (n,),
        ``labeled`` (n,) boolean mask (labeled rows first), ``y_full`` (n,)
        with the hidden outcomes too, ``true_mean`` (the mean of ``Y`` in the
        unlabeled population) and ``true_coef`` (6,) (the OLS coefficients of
        ``Y`` on ``[1, X]`` for Gaussian outcomes, the logistic ones for binary
        outcomes, in the unlabeled population).

    References
    ----------
    .. [1] C. Ying, J. Jin, Y. Guo, X. Li, M. Liang and J. Zhao, "Towards the
       Efficient Inference by Incorporating Automated Computational Phenotypes
       under Covariate Shift", ICML 2025.

    Examples
    --------
    >>> from skpaper.datasets import make_acp_covariate_shift
    >>> data = make_acp_covariate_shift(300, 1200, signal=3.0, random_state=0)
    >>> data.X.shape, int(data.labeled.sum())
    ((1500, 5), 300)
    >>> round(data.true_mean, 2)
    1.85
    """
    rng = check_random_state(random_state)
    parts = {True: [], False: []}
    counts = {True: 0, False: 0}
    wanted = {True: int(n_labeled), False: int(n_unlabeled)}
    batch = 2 * (wanted[True] + wanted[False]) + 64
    while counts[True] < wanted[True] or counts[False] < wanted[False]:
        X = rng.standard_normal((batch, _N_COVARIATES))
        noise = rng.standard_normal(batch)
        Z = rho * X[:, 0] + np.sqrt(1.0 - rho**2) * noise
        eta = _BETA_X[0] + X @ _BETA_X[1:] + signal * Z
        if outcome == "gaussian":
            Y = eta + rng.standard_normal(batch)
            S = Z
        else:
            Y = (rng.uniform(size=batch) < expit(eta)).astype(float)
            S = expit(signal * Z)
        is_labeled = rng.uniform(size=batch) >= expit(X.sum(axis=1))
        for flag in (True, False):
            keep = np.flatnonzero(is_labeled == flag)[: wanted[flag] - counts[flag]]
            parts[flag].append((X[keep], Y[keep], S[keep]))
            counts[flag] += keep.size
    blocks = parts[True] + parts[False]
    X = np.vstack([b[0] for b in blocks])
    y_full = np.concatenate([b[1] for b in blocks])
    acp = np.concatenate([b[2] for b in blocks])
    labeled = np.zeros(X.shape[0], dtype=bool)
    labeled[: wanted[True]] = True
    true_mean, true_coef = _population_truth(float(signal), float(rho), outcome)
    return Bunch(X=X, y=np.where(labeled, y_full, np.nan), acp=acp, labeled=labeled,
                 y_full=y_full, true_mean=true_mean, true_coef=true_coef.copy())
