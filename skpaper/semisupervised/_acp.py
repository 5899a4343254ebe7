"""Doubly robust, efficient estimation with automated computational phenotypes (ACPs)."""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.utils import check_random_state

from ..utils import derive_seed, parallel_map
from ..utils._sklearn import HasMethods, Interval, StrOptions
from ._base import (
    _BaseShiftEstimator,
    check_takes_weights,
    class_one_proba,
    fill_doc,
    fit_weighted,
    labeled_weight_ess,
)
from ._estimating import (
    influence_function,
    influence_se,
    multiplier_bootstrap,
    solve_estimating_equation,
    target_design,
)


def _predict_mean(model, X):
    return class_one_proba(model, X) if is_classifier(model) else model.predict(X)


def _fit_fold(fold, *, X, y, S, R, s_observed, propensity_model, outcome_model, use_acp,
              sample_weight=None):
    """Fit the nuisances on the training part of one fold; predict on its held-out part.

    Returns the held-out indices with p(X) = P(R=1 | X), m_b(X, S) = E[Y | X, S]
    and m(X) = E[Y | X] (``m_b`` equals ``m`` on rows without an ACP). Every fit
    takes the rows' ``sample_weight`` when given.
    """
    train, test = fold

    def weights(rows):
        return None if sample_weight is None else sample_weight[rows]

    p = None
    if propensity_model is not None:
        prop = fit_weighted(clone(propensity_model), X[train], R[train].astype(int),
                            weights(train))
        p = class_one_proba(prop, X[test])
    lab = train[R[train]]
    if not use_acp:
        m_model = fit_weighted(clone(outcome_model), X[lab], y[lab], weights(lab))
        m = _predict_mean(m_model, X[test])
        return test, p, m, m
    XS = np.hstack([X, np.nan_to_num(S)])
    mb_model = fit_weighted(clone(outcome_model), XS[lab], y[lab], weights(lab))
    if is_classifier(outcome_model):
        # A classifier cannot regress on probabilities: fit E[Y | X] on the labels directly.
        m_model = fit_weighted(clone(outcome_model), X[lab], y[lab], weights(lab))
    else:
        # m(X) = E[m_b(X, S) | X]: regressing m_b on X over every unit that observes S
        # uses the unlabeled ACPs too.
        pool = train[s_observed[train]]
        m_model = fit_weighted(clone(outcome_model), X[pool],
                               _predict_mean(mb_model, XS[pool]), weights(pool))
    m = _predict_mean(m_model, X[test])
    mb = m.copy()
    seen = s_observed[test]
    mb[seen] = _predict_mean(mb_model, XS[test][seen])
    return test, p, mb, m


@fill_doc
class ACPShiftEstimator(_BaseShiftEstimator):
    """Doubly robust, semiparametrically efficient estimator that uses an ACP.

    Labeled units (``R = 1``) observe covariates ``X``, an automated computational
    phenotype ``S`` (any machine-made surrogate of the outcome) and the gold
    standard ``Y``; unlabeled units (``R = 0``) observe ``X`` and ``S`` only. Under
    covariate shift (``R`` independent of ``(Y, S)`` given ``X``) the estimator
    targets a mean or a working-model coefficient in the unlabeled population
    (or in the combined one), solves the efficient-influence-function estimating
    equation with cross-fitted nuisances, and reports an influence-function or
    multiplier-bootstrap confidence interval [1]_.

    Parameters
    ----------
    target : {"mean", "ols", "logistic"}, default="mean"
        Parameter defined by ``E_q[U(Y, X; theta)] = 0``: the mean of ``Y``
        (``U = Y - theta``), the least-squares coefficients of ``Y`` on ``[1, X]``
        (``U = X~(Y - X~'theta)``), or the logistic-regression coefficients
        (``U = X~(Y - expit(X~'theta))``, ``Y`` in ``{0, 1}``). Intercept first.
    population : {"unlabeled", "combined"}, default="unlabeled"
        Population ``q`` in which the target is defined.
    propensity_model : classifier, default=None
        Model of ``p(X) = P(R = 1 | X)`` with ``predict_proba``, fitted on every
        row. ``None`` uses ``LogisticRegression(C=1e4, max_iter=1000)``.
    outcome_model : regressor or classifier, default=None
        Model of ``m_b(X, S) = E[Y | X, S]`` fitted on the labeled rows; its clone
        also fits ``m(X) = E[Y | X]``. A regressor fits ``m`` by regressing the
        cross-fitted ``m_b`` on ``X`` over every unit that observes ``S``; a
        classifier (binary ``Y``, through ``predict_proba``) fits ``m`` on the
        labels. ``None`` uses ``LogisticRegression(C=1e4, max_iter=1000)`` when
        the labels are all 0/1 with both present, else ``LinearRegression()``.
    n_folds : int, default=5
        Folds of cross-fitting: each unit's nuisances come from models fitted on
        the other folds (stratified by ``R``). ``1`` fits and predicts on all the
        data, as the official code does by default.
    clip : float in [0, 0.5), default=1e-3
        Estimated propensities are clipped to ``[clip, 1 - clip]``. With
        ``clip=0`` a labeled row with ``p(X) = 0`` raises a ``ValueError``.
    alpha : float in (0, 1), default=0.05
        Miscoverage of the two-sided interval ``ci_``.
    use_acp : bool, default=True
        If False, ignore ``acp`` and fit the doubly robust estimator without it
        (the paper's "without ACP" comparator).
    ci : {"influence", "bootstrap"}, default="influence"
        Wald interval from the efficient influence function, or percentile
        interval of a multiplier bootstrap with Exp(1) unit weights and fixed
        nuisances (the official code's choice).
    n_bootstrap : int, default=500
        Bootstrap draws when ``ci="bootstrap"``.
    random_state : int, RandomState instance or None, default=None
        Controls the cross-fitting folds and the bootstrap weights.
    n_jobs : int, default=None
        Jobs for the cross-fitting folds and the bootstrap draws, through
        :func:`skpaper.utils.parallel_map`. ``None`` means 1 unless inside a
        :func:`joblib.parallel_config` context.

    Attributes
    ----------
    {estimate_attributes}
    influence_ : ndarray of shape (n_samples,) or (n_samples, n_features + 1)
        Estimated influence value of each row, so that
        ``se_ = sqrt(sum(influence_**2)) / n_samples``.
    efficiency_gain_ : float or ndarray of shape (n_features + 1,)
        Estimated variance of the no-ACP estimator divided by that of this one,
        from the same nuisance fits (1 when no ACP is used).
    estimate_no_acp_ : float or ndarray of shape (n_features + 1,)
        The no-ACP doubly robust estimate from the same nuisance fits.
    propensity_ : ndarray of shape (n_samples,)
        Cross-fitted, clipped ``p(X_i) = P(R = 1 | X_i)``.
    effective_sample_size_ : float
        Kish effective size of the labeled rows' weights (``(1 - p) / p`` for the
        unlabeled population, ``1 / p`` for the combined one).
    n_clipped_ : int
        Rows whose propensity was clipped.
    propensity_model_ : estimator or None
        Propensity model refitted on every row (used by :meth:`score`); None
        when every row is labeled.
    {count_attributes}

    See Also
    --------
    WeightedPPIEstimator : Prediction-powered inference with density-ratio weights.
    LabeledOnlyEstimator : Fit on the labeled rows alone (biased under shift).

    Notes
    -----
    Write ``p(X) = P(R=1 | X)``, ``m_b(X, S) = E[Y | X, S]``,
    ``m(X) = E[m_b(X, S) | X] = E[Y | X]``, ``pi_0 = n_U / N`` and
    ``w = (1 - p) / p``. For the mean in the unlabeled population the efficient
    influence function is

    .. math::

        \\varphi = \\pi_0^{-1}\\{R\\,w\\,(Y - m_b) + (1-p)(m_b - m) + (1-R)(m - \\theta)\\},

    and the estimator solves its empirical mean for ``theta``:

    .. math::

        \\hat\\theta = n_U^{-1}\\Big[\\sum_{L} \\hat w\\,(Y - \\hat m_b)
        + \\sum_{L \\cup U} (1-\\hat p)(\\hat m_b - \\hat m) + \\sum_{U} \\hat m\\Big].

    A coefficient defined by ``E_q[X~(Y - g(X~'theta))] = 0`` substitutes
    ``U`` for ``Y``: the three sums carry the factor ``X~`` and the last one
    becomes ``sum_U X~ (m - g(X~'theta))``. OLS (``g`` the identity) is closed
    form, ``theta = (sum_U X~ X~')^{-1} sum_i X~_i z_i`` with the bracketed
    pseudo-outcome ``z_i``; the logistic branch is solved by Newton steps on a
    convex objective, with the augmentation entering with the same sign as in
    the linear branch (derived from the influence function; the official
    code's logistic solver flips that sign). For the combined population the
    influence function is ``m_b - theta + R / p (Y - m_b)``.

    The estimator is consistent if either ``p`` or ``(m_b, m)`` is consistent
    (double robustness), and efficient when both are. Without the ACP the
    middle term vanishes and ``m_b`` is replaced by ``m``; the variance saved
    is ``E[(1-p)^3 / p Var(m_b | X)] / pi_0^2`` for the unlabeled mean (and
    ``E[(1-p)/p Var(m_b | X)]`` for the combined one), so it grows with the
    ACP's signal and with the rarity of labels. When ``S`` is observed on the
    labeled rows only, the middle term can only be estimated from the labeled
    rows (weighted by ``R / p``), where it cancels the ACP out of the first
    term: the gain is exactly zero. It is the ACPs of the *unlabeled* units
    that drive the gain [1]_.

    Standard errors come from the influence function, ``V = J^{-1} E[psi
    psi'] J^{-T} / N`` with ``J = E_q[g'(X~'theta) X~ X~']``. The formulas
    above were derived from the influence function and checked against the
    official code (``PPIwcf``); the paper's own equation numbers could not be
    checked, so they are not quoted (reconstructed).

    With ``sample_weight`` (survey weights, or counts of repeated rows) every
    sum above is weighted, as are the fits of both nuisance models (which must
    then take ``sample_weight``); the bootstrap multiplier of a row of weight
    ``s`` is drawn from Gamma(``s``, 1), the law of the sum of ``s`` Exp(1)
    multipliers. With ``n_folds=1`` integer weights give exactly the estimate
    and the influence interval of the repeated rows (the bootstrap interval
    has the same law); with cross-fitting the folds are drawn over rows, so a
    row of weight ``s`` stays in one fold where its ``s`` copies would be
    spread over several, and the two agree only up to the fold split.

    References
    ----------
    {paper_reference}

    Examples
    --------
    >>> from skpaper.datasets import make_acp_covariate_shift
    >>> from skpaper.semisupervised import ACPShiftEstimator
    >>> data = make_acp_covariate_shift(300, 1200, signal=3.0, random_state=0)
    >>> est = ACPShiftEstimator(random_state=0).fit(data.X, data.y, acp=data.acp)
    >>> bool(est.ci_[0] < est.estimate_ < est.ci_[1])
    True
    >>> bool(est.efficiency_gain_ > 1)
    True
    """

    _parameter_constraints: dict = {
        **_BaseShiftEstimator._parameter_constraints,
        "population": [StrOptions({"unlabeled", "combined"})],
        "propensity_model": [HasMethods(["fit", "predict_proba"]), None],
        "outcome_model": [HasMethods(["fit", "predict"]), None],
        "n_folds": [Interval(Integral, 1, None, closed="left")],
        "clip": [Interval(Real, 0, 0.5, closed="left")],
        "use_acp": ["boolean"],
        "ci": [StrOptions({"influence", "bootstrap"})],
        "n_bootstrap": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        *,
        target="mean",
        population="unlabeled",
        propensity_model=None,
        outcome_model=None,
        n_folds=5,
        clip=1e-3,
        alpha=0.05,
        use_acp=True,
        ci="influence",
        n_bootstrap=500,
        random_state=None,
        n_jobs=None,
    ):
        self.target = target
        self.population = population
        self.propensity_model = propensity_model
        self.outcome_model = outcome_model
        self.n_folds = n_folds
        self.clip = clip
        self.alpha = alpha
        self.use_acp = use_acp
        self.ci = ci
        self.n_bootstrap = n_bootstrap
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _resolve_models(self, y_labeled):
        binary = bool(np.isin(y_labeled, (0.0, 1.0)).all() and np.unique(y_labeled).size == 2)
        if self.target == "logistic" and not np.isin(y_labeled, (0.0, 1.0)).all():
            raise ValueError(
                "target='logistic' needs labels in {0, 1}; got values "
                f"{np.unique(y_labeled)[:5]}."
            )
        propensity = self.propensity_model
        if propensity is None:
            propensity = LogisticRegression(C=1e4, max_iter=1000)
        outcome = self.outcome_model
        if outcome is None:
            outcome = LogisticRegression(C=1e4, max_iter=1000) if binary else LinearRegression()
        if is_classifier(outcome) and not np.isin(y_labeled, (0.0, 1.0)).all():
            raise ValueError(
                f"outcome_model {type(outcome).__name__} is a classifier, which needs labels "
                f"in {{0, 1}}; got values {np.unique(y_labeled)[:5]}."
            )
        return propensity, outcome

    def _cross_fit(self, X, y, S, R, s_observed, propensity, outcome, use_acp, rng,
                   sample_weight=None):
        n_labeled, n_unlabeled = int(R.sum()), int((~R).sum())
        if self.n_folds == 1:
            folds = [(np.arange(X.shape[0]), np.arange(X.shape[0]))]
        else:
            if min(n_labeled, n_unlabeled) < self.n_folds:
                raise ValueError(
                    f"n_folds={self.n_folds} needs at least {self.n_folds} labeled and "
                    f"{self.n_folds} unlabeled rows; got {n_labeled} labeled and "
                    f"{n_unlabeled} unlabeled. Lower n_folds (1 disables cross-fitting)."
                )
            splitter = StratifiedKFold(self.n_folds, shuffle=True, random_state=derive_seed(rng))
            folds = list(splitter.split(X, R))
        results = parallel_map(
            _fit_fold, folds, n_jobs=self.n_jobs, X=X, y=y, S=S, R=R,
            s_observed=s_observed, propensity_model=propensity, outcome_model=outcome,
            use_acp=use_acp, sample_weight=sample_weight,
        )
        p = np.empty(X.shape[0])
        mb = np.empty(X.shape[0])
        m = np.empty(X.shape[0])
        for test, p_k, mb_k, m_k in results:
            p[test], mb[test], m[test] = p_k, mb_k, m_k
        return p, mb, m

    def _clip_propensity(self, p, R):
        if self.clip == 0:
            if np.any(p[R] <= 0):
                raise ValueError(
                    f"The estimated propensity P(R=1 | X) is 0 on {int(np.sum(p[R] <= 0))} "
                    "labeled rows, so their weights are infinite (positivity fails); set "
                    "clip > 0 (got clip=0)."
                )
            n_one = int(np.sum(p[~R] >= 1))
            if n_one:
                warnings.warn(
                    f"The estimated propensity P(R=1 | X) is 1 on {n_one} unlabeled rows "
                    "(positivity fails there); their contribution rests on the outcome model "
                    "alone. Set clip > 0 to bound the weights.",
                    UserWarning,
                    stacklevel=5,  # the caller of fit
                )
        low, high = self.clip, 1.0 - self.clip
        self.n_clipped_ = int(np.sum((p < low) | (p > high)))
        return np.clip(p, low, high)

    def _pseudo_outcomes(self, y, R, p, mb, m, acp_on_unlabeled):
        """Pseudo-outcomes with and without the ACP, and the target indicator ``t``."""
        r = R.astype(float)
        # Rows that observe S contribute the ACP term m_b - m; when only labeled rows do, it
        # is inverse-probability weighted over them (and then cancels out of the first term).
        seen = np.ones_like(p) if acp_on_unlabeled else r / p
        if self.population == "unlabeled":
            w = (1.0 - p) / p
            z = r * w * (y - mb) + (1.0 - p) * seen * (mb - m) + (1.0 - r) * m
            z0 = r * w * (y - m) + (1.0 - r) * m
            t = 1.0 - r
        else:
            z = m + seen * (mb - m) + r / p * (y - mb)
            z0 = m + r / p * (y - m)
            t = np.ones_like(p)
        return z, z0, t

    def _fit_estimate(self, X, y, S, R, acp_on_unlabeled, sample_weight=None):
        rng = check_random_state(self.random_state)
        if self.population == "unlabeled" and R.all():
            raise ValueError(
                "population='unlabeled' needs unlabeled rows (NaN in y, or False in "
                "labeled); every row is labeled. Use population='combined'."
            )
        propensity, outcome = self._resolve_models(y[R])
        if not R.all():
            check_takes_weights(propensity, "propensity_model", sample_weight)
            check_takes_weights(outcome, "outcome_model", sample_weight)
        s = np.ones(X.shape[0]) if sample_weight is None else sample_weight
        use_acp = bool(self.use_acp) and S is not None
        s_observed = np.ones(X.shape[0], dtype=bool) if acp_on_unlabeled else R.copy()
        D = target_design(X, self.target)
        z_init = None
        if R.all():
            # Combined population with every row labeled: p = 1 and the nuisances cancel.
            p = np.ones(X.shape[0])
            z = z0 = y
            t = np.ones(X.shape[0])
            self.n_clipped_ = 0
            self.propensity_model_ = None
        else:
            p, mb, m = self._cross_fit(X, y, S, R, s_observed, propensity, outcome, use_acp,
                                       rng, sample_weight)
            p = self._clip_propensity(p, R)
            z, z0, t = self._pseudo_outcomes(y, R, p, mb, m, acp_on_unlabeled and use_acp)
            if self.target == "logistic":
                # Plug-in t * m(X) always has a logistic root: the one-step fallback's start.
                z_init = t * np.clip(m, 1e-6, 1.0 - 1e-6)
            self.propensity_model_ = fit_weighted(clone(propensity), X, R.astype(int),
                                                  sample_weight)
        self.propensity_ = p
        weights = (1.0 - p[R]) / p[R] if self.population == "unlabeled" else 1.0 / p[R]
        s_lab = None if sample_weight is None else s[R]
        self.effective_sample_size_ = (
            labeled_weight_ess(weights, s_lab) if np.any(weights * s[R] > 0) else 0.0
        )

        sz_init = None if z_init is None else s * z_init
        beta = solve_estimating_equation(D, s * z, s * t, self.target, z_init=sz_init)
        draws = None
        if self.ci == "bootstrap":
            draws = multiplier_bootstrap(D, z, t, self.target, n_bootstrap=self.n_bootstrap,
                                         random_state=rng, n_jobs=self.n_jobs, beta0=beta,
                                         z_init=z_init, sample_weight=sample_weight)
        phi = self._set_inference(D, z, t, beta, draws, sample_weight=sample_weight)

        beta0 = solve_estimating_equation(D, s * z0, s * t, self.target, beta0=beta,
                                          z_init=sz_init)
        phi0 = influence_function(D, z0, t, beta0, self.target, sample_weight)
        var = influence_se(phi, sample_weight) ** 2
        var0 = influence_se(phi0, sample_weight) ** 2
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = np.where(var > 0, var0 / var, 1.0)
        if not use_acp:
            gain = np.ones_like(gain)
        if self.target == "mean":
            self.efficiency_gain_ = float(gain[0])
            self.estimate_no_acp_ = float(beta0[0])
        else:
            self.efficiency_gain_ = gain
            self.estimate_no_acp_ = beta0
        return self

