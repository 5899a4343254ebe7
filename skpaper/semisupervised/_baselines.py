"""Comparators of the ACP estimator: labeled-only fits and density-ratio-weighted PPI."""

from numbers import Real

import numpy as np
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

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
    inverse_link,
    solve_estimating_equation,
    target_design,
)


def _mean(values, sample_weight):
    """Column means, weighted when ``sample_weight`` is given."""
    if sample_weight is None:
        return np.mean(values, axis=0)
    return np.average(values, axis=0, weights=sample_weight)


@fill_doc
class LabeledOnlyEstimator(_BaseShiftEstimator):
    """Classical estimate from the labeled rows alone.

    Solves ``sum_L X~ (Y - g(X~'theta)) = 0`` on the labeled rows and ignores the
    unlabeled ones and the ACP. Under covariate shift it estimates the labeled
    population's parameter, so it is biased for the unlabeled one; it is the
    "labeled-only" comparator of [1]_.

    Parameters
    ----------
    target : {"mean", "ols", "logistic"}, default="mean"
        Mean of ``Y``, least-squares or logistic-regression coefficients on
        ``[1, X]`` (intercept first).
    alpha : float in (0, 1), default=0.05
        Miscoverage of the two-sided Wald interval ``ci_``.

    Attributes
    ----------
    {estimate_attributes}
    influence_ : ndarray of shape (n_samples,) or (n_samples, n_features + 1)
        Influence value of each row (zero on unlabeled rows).
    {count_attributes}

    See Also
    --------
    ACPShiftEstimator : Doubly robust estimator that corrects the shift and uses the ACP.

    Notes
    -----
    The sandwich variance is ``J^{-1} E_L[psi psi'] J^{-T} / n_L`` with
    ``psi = X~(Y - g(X~'theta))`` and ``J = E_L[g'(X~'theta) X~ X~']``.
    With ``sample_weight`` every mean is weighted (the weighted estimating
    equation ``sum_L s X~ (Y - g(X~'theta)) = 0``), so integer weights give
    exactly the estimate and interval of the repeated rows; the weights of
    unlabeled rows do not enter, as those rows do not.

    References
    ----------
    {paper_reference}

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.semisupervised import LabeledOnlyEstimator
    >>> X = np.arange(8.0).reshape(-1, 1)
    >>> y = np.array([1.0, 2.0, 3.0, np.nan, np.nan, np.nan, np.nan, np.nan])
    >>> LabeledOnlyEstimator().fit(X, y).estimate_
    2.0
    """

    def __init__(self, *, target="mean", alpha=0.05):
        self.target = target
        self.alpha = alpha

    def _fit_estimate(self, X, y, S, R, acp_on_unlabeled, sample_weight=None):
        if self.target == "logistic" and not np.isin(y[R], (0.0, 1.0)).all():
            raise ValueError(
                f"target='logistic' needs labels in {{0, 1}}; got values {np.unique(y[R])[:5]}."
            )
        D = target_design(X, self.target)
        t = R.astype(float)
        z = t * y
        s = np.ones(X.shape[0]) if sample_weight is None else sample_weight
        beta = solve_estimating_equation(D, s * z, s * t, self.target)
        self._set_inference(D, z, t, beta, sample_weight=sample_weight)
        return self


@fill_doc
class WeightedPPIEstimator(_BaseShiftEstimator):
    """Prediction-powered inference (PPI / PPI++) with density-ratio weights.

    Uses the ACP ``f`` as a prediction of ``Y`` and corrects its bias on the
    labeled rows, as in prediction-powered inference, but reweights the labeled
    rows by the estimated density ratio of the target population to the labeled
    one, so that it stays unbiased under covariate shift. With
    ``weighted=False`` it is the unweighted PPI that [1]_ compared against
    (biased under shift). With ``lam=None`` the power-tuning factor of PPI++ is
    chosen from the data.

    Parameters
    ----------
    target : {"mean", "ols", "logistic"}, default="mean"
        Mean of ``Y``, least-squares or logistic-regression coefficients on
        ``[1, X]`` (intercept first), in the target population.
    population : {"unlabeled", "combined"}, default="unlabeled"
        Target population.
    propensity_model : classifier, default=None
        Model of ``P(R = 1 | X)`` fitted on every row (no cross-fitting, as the
        weights are treated as known). ``None`` uses
        ``LogisticRegression(C=1e4, max_iter=1000)``.
    weighted : bool, default=True
        Reweight the labeled rows by the density ratio.
    lam : float in [0, 1] or None, default=None
        Power-tuning factor multiplying the predictions; 1 is plain PPI, 0 the
        (weighted) classical estimator, None the variance-minimising value
        (PPI++), clipped to [0, 1].
    clip : float in [0, 0.5), default=1e-3
        Estimated propensities are clipped to ``[clip, 1 - clip]``.
    alpha : float in (0, 1), default=0.05
        Miscoverage of the two-sided Wald interval ``ci_``.

    Attributes
    ----------
    {estimate_attributes}
    influence_ : ndarray of shape (n_samples,) or (n_samples, n_features + 1)
        Influence value of each row.
    lam_ : float
        Power-tuning factor used.
    propensity_ : ndarray of shape (n_samples,) or None
        Clipped ``P(R = 1 | X_i)``; None when unweighted.
    effective_sample_size_ : float
        Kish effective size of the labeled weights.
    propensity_model_ : estimator or None
        Fitted propensity model; None when unweighted or every row is labeled.
    {count_attributes}

    See Also
    --------
    ACPShiftEstimator : The efficient, doubly robust alternative.

    Notes
    -----
    With ``w~`` the density ratio normalised to mean one over the labeled rows,
    the moment ``E_q[X~ Y]`` is estimated by
    ``n_U^{-1} sum_U lam X~ f + n_L^{-1} sum_L w~ X~ (Y - lam f)``, the Gram
    term ``E_q[X~ g(X~'theta)]`` by its unlabeled sample mean, and ``theta``
    solves their difference. At ``lam = 1`` this is the root of the gradient of
    the PPI++ loss ``L_L(Y) - L_L(f) + L_U(f)`` [2]_; for regression targets
    ppi-python's ``ppi_ols_pointestimate`` instead adds two separate
    least-squares fits (the original PPI form), which agrees to first order.
    PPI++ picks ``lam`` minimising the trace of this estimator's sandwich
    variance, exactly (ppi-python uses a pooled-variance approximation of the
    same quantity). Without ``acp`` the predictions are zero and the estimator
    is the (weighted) classical one.

    With ``sample_weight`` the propensity model is fitted with the weights and
    every sum above (the row counts ``n_U`` and ``n_L``, the normalisation of
    ``w~``, the tuning of ``lam`` and the variance) is weighted, so integer
    weights give exactly the estimate and interval of the repeated rows.

    References
    ----------
    {paper_reference}
    .. [2] A. N. Angelopoulos, J. C. Duchi and T. Zrnic, "PPI++: Efficient
       Prediction-Powered Inference", arXiv:2311.01453, 2023.

    Examples
    --------
    >>> from skpaper.datasets import make_acp_covariate_shift
    >>> from skpaper.semisupervised import WeightedPPIEstimator
    >>> data = make_acp_covariate_shift(300, 1200, signal=1.0, random_state=0)
    >>> ppi = WeightedPPIEstimator().fit(data.X, data.y, acp=data.acp)
    >>> bool(0 <= ppi.lam_ <= 1)
    True
    """

    _parameter_constraints: dict = {
        **_BaseShiftEstimator._parameter_constraints,
        "population": [StrOptions({"unlabeled", "combined"})],
        "propensity_model": [HasMethods(["fit", "predict_proba"]), None],
        "weighted": ["boolean"],
        "lam": [Interval(Real, 0, 1, closed="both"), None],
        "clip": [Interval(Real, 0, 0.5, closed="left")],
    }

    def __init__(
        self,
        *,
        target="mean",
        population="unlabeled",
        propensity_model=None,
        weighted=True,
        lam=None,
        clip=1e-3,
        alpha=0.05,
    ):
        self.target = target
        self.population = population
        self.propensity_model = propensity_model
        self.weighted = weighted
        self.lam = lam
        self.clip = clip
        self.alpha = alpha

    def _fit_estimate(self, X, y, S, R, acp_on_unlabeled, sample_weight=None):
        if self.population == "unlabeled" and R.all():
            raise ValueError(
                "population='unlabeled' needs unlabeled rows (NaN in y, or False in "
                "labeled); every row is labeled. Use population='combined'."
            )
        if self.target == "logistic" and not np.isin(y[R], (0.0, 1.0)).all():
            raise ValueError(
                f"target='logistic' needs labels in {{0, 1}}; got values {np.unique(y[R])[:5]}."
            )
        if S is None:
            f = np.zeros(X.shape[0])
        elif S.shape[1] != 1:
            raise ValueError(
                f"WeightedPPIEstimator uses the ACP as a prediction of y, so acp must have one "
                f"column; got {S.shape[1]}."
            )
        elif not acp_on_unlabeled:
            raise ValueError("WeightedPPIEstimator needs the acp on the unlabeled rows too.")
        else:
            f = S[:, 0]

        n = X.shape[0]
        s = np.ones(n) if sample_weight is None else sample_weight
        r = R.astype(float)
        self.propensity_model_ = None
        self.propensity_ = None
        ratio = np.ones(n)
        if self.weighted and not R.all():
            model = self.propensity_model
            if model is None:
                model = LogisticRegression(C=1e4, max_iter=1000)
            check_takes_weights(model, "propensity_model", sample_weight)
            self.propensity_model_ = fit_weighted(clone(model), X, R.astype(int), sample_weight)
            p = np.clip(class_one_proba(self.propensity_model_, X), self.clip, 1 - self.clip)
            if np.any(p[R] <= 0):
                raise ValueError(
                    "The estimated propensity P(R=1 | X) is 0 on labeled rows (positivity "
                    "fails); set clip > 0 (got clip=0)."
                )
            self.propensity_ = p
            ratio = (1.0 - p) / p if self.population == "unlabeled" else 1.0 / p
            ratio = ratio / _mean(ratio[R], None if sample_weight is None else s[R])
        self.effective_sample_size_ = labeled_weight_ess(ratio[R], s[R])

        # z = a + lam * c: the PPI moment for E_q[X~ Y], scaled so that sum_i D_i z_i / n_t
        # is (1/n_t) sum_target lam D f + (1/n_L) sum_L w~ D (y - lam f).
        if self.population == "unlabeled":
            t = 1.0 - r
        else:
            t = np.ones(n)
        k = np.sum(s * t) / np.sum(s * r)
        a = r * k * ratio * y
        c = t * f - r * k * ratio * f
        D = target_design(X, self.target)

        if S is None:
            lam = 0.0
        elif self.lam is None:
            lam = self._tuned_lambda(D, a, c, t, s, sample_weight)
        else:
            lam = float(self.lam)
        self.lam_ = lam
        z = a + lam * c
        beta = solve_estimating_equation(D, s * z, s * t, self.target)
        self._set_inference(D, z, t, beta, sample_weight=sample_weight)
        return self

    def _tuned_lambda(self, D, a, c, t, s, sample_weight):
        """PPI++ factor minimising the trace of the sandwich variance over ``lam``.

        ``s`` holds the sample weights (ones when ``sample_weight`` is None).
        """
        beta = solve_estimating_equation(D, s * (a + c), s * t, self.target)
        n, n_t = s.sum(), np.sum(s * t)
        mu, dmu = inverse_link(D @ beta, self.target)
        jac_inv = np.linalg.pinv((D * (s * t * dmu)[:, None]).T @ D / n_t)
        A = (n / n_t) * D * (a - t * mu)[:, None] @ jac_inv.T
        C = (n / n_t) * D * c[:, None] @ jac_inv.T
        A -= _mean(A, sample_weight)
        C -= _mean(C, sample_weight)
        denom = float(np.sum(s[:, None] * C * C))
        if denom <= 0:
            return 0.0
        return float(np.clip(-np.sum(s[:, None] * A * C) / denom, 0.0, 1.0))

