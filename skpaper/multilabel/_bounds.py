"""Generalization-bound calculator for linear multi-label models (Zhang & Zhang, ICML 2025)."""

import numbers

import numpy as np
from scipy import sparse
from scipy.optimize import minimize
from sklearn.pipeline import Pipeline
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted

from ..utils._sklearn import HasMethods, Interval, StrOptions, validate_params
from ._losses import BASE_LOSSES, get_base_loss
from ._objectives import OBJECTIVES, surrogate_losses, surrogate_value_and_grad
from ._validation import check_indicator

__all__ = ["auc_surrogate_risks", "generalization_bounds"]

BOUND_NAMES = ("B1", "B1_decomposed", "B2", "B3", "B4", "B5_lipschitz", "B5_smooth")

_DESCRIPTIONS = {
    "B1": "Lipschitz, l2 vector contraction (Maurer 2016)",
    "B1_decomposed": "Lipschitz, Hamming loss decomposed over labels",
    "B2": "Lipschitz, l_inf vector contraction (Lei et al. 2019 style)",
    "B3": "smooth base loss, optimistic rate (this paper's type)",
    "B4": "smooth base loss, local Rademacher fast rate",
    "B5_lipschitz": "Macro-AUC, Lipschitz base loss",
    "B5_smooth": "Macro-AUC, smooth base loss",
}

# Reconstructed absolute constants used by constants="theorem" (see the Notes
# of generalization_bounds): Srebro et al. (2010) Theorem 1 numeric constant,
# Lei et al. (2019) l_inf contraction constant, Bartlett et al. (2005) Thm 3.3.
_K_SMOOTH = 1e5
_K_LINF = 16.0
_K_LOCAL, _K_LOCAL_B, _K_LOCAL_BK = 704.0, 11.0, 26.0

#: Geometric grid of the free parameter beta of B4 (a union bound over it is paid).
_BETA_GRID = np.geomspace(1e-2, 1e2, 21)

#: Above this many (positive, negative) pairs a label's AUC surrogate is estimated
#: from that many pairs drawn with a fixed seed.
_MAX_AUC_PAIRS = 1 << 16


def auc_surrogate_risks(scores, T, base, max_pairs=_MAX_AUC_PAIRS):
    """Per-label pairwise AUC surrogate ``mean_{a+, b-} l(f_j(x_a) - f_j(x_b))``.

    Returns an array of shape ``(n_labels,)`` with ``nan`` for labels lacking
    positive or negative examples. Labels with more than ``max_pairs`` pairs
    use an unbiased estimate from ``max_pairs`` pairs drawn with seed 0.
    """
    from ._kernels import LOSS_CODES, auc_pair_loss

    rng = np.random.default_rng(0)
    risks = np.full(T.shape[1], np.nan)
    for j in range(T.shape[1]):
        positive = T[:, j].astype(bool)
        n_pos = int(positive.sum())
        n_neg = positive.size - n_pos
        if n_pos == 0 or n_neg == 0:
            continue
        s = np.ascontiguousarray(scores[:, j], dtype=np.float64)
        if n_pos * n_neg <= max_pairs:
            risks[j] = auc_pair_loss(s, positive, LOSS_CODES[base.name], base.huber_width)
        else:
            a = rng.choice(s[positive], size=max_pairs)
            b = rng.choice(s[~positive], size=max_pairs)
            risks[j] = float(base.value(a - b).mean())
    return risks


def _constant_risk(T, base, objective):
    """Training surrogate risk of the best constant score vector ``f(x) = b``.

    The reference a bound must beat to say anything: ``b = 0`` gives
    ``l(0)`` for every objective, and the minimum over ``b`` in ``R^c``
    (L-BFGS from 0; for the subset max, on its log-sum-exp smoothing at
    temperature 1e-3) can only be lower, e.g. with imbalanced labels.
    """
    n, c = T.shape
    at_zero = float(surrogate_losses(np.zeros((n, c)), T, base, objective).mean())
    temperature = 1e-3 if objective == "subset" else None

    def fun(b):
        F = np.broadcast_to(b, (n, c))
        value, grad = surrogate_value_and_grad(np.array(F), T, base, objective, temperature)
        return value, grad.sum(axis=0)

    b = minimize(fun, np.zeros(c), jac=True, method="L-BFGS-B",
                 options={"maxiter": 200}).x
    best = float(surrogate_losses(np.array(np.broadcast_to(b, (n, c))), T, base,
                                  objective).mean())
    return min(at_zero, best)


def _augmented(X, coef, intercept, with_intercept):
    """Row norms of ``[x, 1]`` and per-label norms of ``[w_j, b_j]``."""
    if sparse.issparse(X):
        x_sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    else:
        x_sq = np.einsum("ij,ij->i", X, X)
    w_sq = np.einsum("ij,ij->i", coef, coef)
    if with_intercept:
        x_sq = x_sq + 1.0
        w_sq = w_sq + intercept**2
    return np.sqrt(x_sq.max()), np.sqrt(w_sq)


def _srebro(risk, gamma, radius, M, log_conf, n, K, log1, log2):
    """Optimistic-rate bound of the Srebro-Sridharan-Tewari form.

    ``risk + K [sqrt(risk) (sqrt(gamma) radius log1 + sqrt(M log_conf / n))
    + gamma radius^2 log2 + M log_conf / n]``; returns (complexity, confidence).
    """
    root = np.sqrt(risk)
    complexity = K * (root * np.sqrt(gamma) * radius * log1 + gamma * radius**2 * log2)
    confidence = K * (root * np.sqrt(M * log_conf / n) + M * log_conf / n)
    return complexity, confidence


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like", "sparse matrix"],
        "Y": ["array-like", "sparse matrix"],
        "loss": [StrOptions(set(BASE_LOSSES)), None],
        "objective": [StrOptions(set(OBJECTIVES)), None],
        "delta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "constants": [StrOptions({"rate", "theorem"})],
        "constraint": [StrOptions({"per_label", "frobenius"}), None],
        "X_test": ["array-like", "sparse matrix", None],
        "Y_test": ["array-like", "sparse matrix", None],
        "norm_bound": [Interval(numbers.Real, 0, None, closed="neither"), None],
    },
    prefer_skip_nested_validation=True,
)
def generalization_bounds(
    estimator,
    X,
    Y,
    *,
    loss=None,
    objective=None,
    delta=0.05,
    constants="rate",
    constraint=None,
    X_test=None,
    Y_test=None,
    norm_bound=None,
):
    """Evaluate the Lipschitz and smooth multi-label generalization bounds on a fitted model.

    Reads the norm ``Lambda`` of the fitted weights, the radius ``R`` of the
    inputs, the empirical surrogate risk, ``n`` and ``c`` from a fitted linear
    model and the training data, and returns the bounds B1-B5 of [1]_ (and
    their Lipschitz predecessors) with their terms, plus the held-out risk
    when test data are given.

    Parameters
    ----------
    estimator : fitted estimator or Pipeline
        A linear multi-label model with ``coef_`` of shape
        ``(n_labels, n_features)`` and optionally ``intercept_``, such as
        :class:`SmoothMultiLabelClassifier`, or a fitted
        :class:`~sklearn.pipeline.Pipeline` whose last step is one. With a
        pipeline, ``X`` and ``X_test`` are passed through the preceding steps'
        ``transform`` first, so ``R`` and ``Lambda`` are those of the
        features the linear model sees.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The training inputs (before the pipeline's transformers, if any).
    Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The training 0/1 label indicator (at least two labels).
    loss : {"logistic", "squared_hinge", "squared", "huberized_hinge", "hinge"}, \
            default=None
        Base loss of the bounded surrogate; ``None`` takes the estimator's
        ``loss``.
    objective : {"hamming", "subset", "ranking"}, default=None
        Multi-label surrogate that B1-B4 bound; ``None`` takes the
        estimator's ``objective`` (``"hamming"`` when it has none).
    delta : float in (0, 1), default=0.05
        Each bound holds with probability at least ``1 - delta``.
    constants : {"rate", "theorem"}, default="rate"
        ``"rate"`` sets every absolute constant to 1 and drops the
        logarithmic factors, to compare shapes in ``n`` and ``c``;
        ``"theorem"`` uses the (reconstructed) constants and logarithms and
        pays a union bound over dyadic shells of ``Lambda``. Expect vacuous
        values (far above the loss range) at small ``n``.
    constraint : {"per_label", "frobenius"}, default=None
        Hypothesis class: ``||w_j|| <= Lambda`` for every label, or
        ``||W||_F <= Lambda``; ``None`` takes the estimator's ``constraint``.
    X_test, Y_test : array-like, default=None
        Held-out data; when given, the table also holds the test surrogate
        risk and the observed gap.
    norm_bound : float, default=None
        Radius ``Lambda`` of a hypothesis class fixed in advance (it must
        contain the fitted weights). ``None`` reads ``Lambda`` from the fitted
        weights, which makes the bounds data-dependent (with
        ``constants="theorem"`` a union bound over dyadic shells of
        ``Lambda`` is then paid).

    Returns
    -------
    table : dict of ndarray
        Equal-length columns, one row per bound (``pandas.DataFrame(table)``
        turns it into a data frame): ``bound``, ``description``, ``risk``
        (which surrogate is bounded), ``empirical_risk``, ``complexity_term``,
        ``confidence_term``, ``value`` (the bound on the expected surrogate
        risk), ``excess`` (``value - empirical_risk``), ``test_risk`` and
        ``observed_gap`` (``nan`` without test data), ``trivial_risk`` (the
        training surrogate risk of the best constant predictor ``f(x) = b``,
        ``l(0)`` for the Macro-AUC rows), ``vacuous`` (``value >=
        trivial_risk``: the bound guarantees nothing a constant predictor
        does not; False where the bound is ``nan``), and the inputs ``n``,
        ``c``, ``Lambda``, ``R``, ``rho``, ``gamma``, ``M``, ``delta``,
        ``constraint``, ``constants``.

    Raises
    ------
    ValueError
        If ``Y`` is not a 0/1 indicator with at least two columns, if the
        shapes disagree with the model, or if no base loss is known.

    Notes
    -----
    Write ``f(x) = W^T x + b``; with an intercept, ``x`` is augmented by a
    constant 1 and ``w_j`` by ``b_j``. ``Lambda = max_j ||w_j||``
    (per-label) or ``||W||_F`` (Frobenius), ``R = max_i ||x_i||``,
    ``B = Lambda R`` bounds every score, the base-loss argument lies in
    ``[-B_t, B_t]`` with ``B_t = B`` (Hamming, subset) or ``2B`` (ranking,
    AUC), ``rho = rho(B_t)``, ``M = sup l`` on that range and ``gamma`` is
    the smoothness constant. With the "rate" constants:

    * B1 (Maurer's l2 contraction): ``R_hat + kappa_2 rho G / n + M
      sqrt(ln(1/delta)/n)``, with ``G = c Lambda R sqrt(n)`` (per-label) or
      ``Lambda R sqrt(c n)`` (Frobenius) and ``kappa_2 = 1/sqrt(c)``
      (Hamming), 1 (subset), 2 (ranking): ``sqrt(c)`` or ``c`` growth.
    * B1_decomposed (Hamming only): ``R_hat + rho Lambda R / sqrt(n) + ...``,
      the c-free Lipschitz bound that decomposing the Hamming loss over labels
      already gives (``nan`` for the other objectives).
    * B2 (l_inf contraction): ``R_hat + kappa_inf rho sqrt(c) R_nc + ...``
      with ``R_nc = Lambda R / sqrt(n)`` (per-label) or
      ``Lambda R / sqrt(n c)`` (Frobenius), ``kappa_inf = 1, 1, 2``.
    * B3 (smooth, optimistic rate): ``R_hat + sqrt(R_hat) (sqrt(gamma_L)
      Lambda R / sqrt(n) + sqrt(M ln(1/delta) / n)) + gamma_L Lambda^2 R^2 / n
      + M ln(1/delta) / n`` with ``gamma_L = kappa_inf^2 gamma``: ``c``
      enters only through the logarithms that "rate" drops.
    * B4 (local Rademacher): ``(1 + beta) R_hat + (1 + 1/beta) (gamma_L
      Lambda^2 R^2 / n + M ln(k/delta) / n)``, minimised over a grid of
      ``k = 21`` values of ``beta`` (union bound).
    * B5 (Macro-AUC): with ``tau = min_j min(n_j+, n_j-) / n`` over the labels
      that have both classes, the Lipschitz form ``R_hat_AUC + rho Lambda R /
      sqrt(tau n) + M sqrt(ln(1/delta) / (tau n))`` and the smooth form of B3
      with ``n`` replaced by ``tau n`` and ``gamma_L = 4 gamma``.

    B3, B4 and B5_smooth are infinite for the hinge loss (not smooth).

    Reconstructed: the paper's theorem statements could not be obtained, so
    the forms above follow the abstract of [1]_ and the tools it names. The
    "theorem" constants are reconstructed from those tools, not read from
    [1]_: B1 uses ``2 sqrt(2)`` (Maurer 2016) and the ``3 M sqrt(ln(2/delta)
    / 2n)`` confidence term of the standard Rademacher bound; B2 uses
    ``2 * 16 (1 + ln^{3/2}(e n c))`` (Lei et al. 2019); B3 and B5_smooth use
    ``K = 1e5`` and the logarithms ``ln^{3/2}(n) sqrt(ln(n c))`` and
    ``ln^3(n) ln(n c)`` (Srebro et al. 2010 with an l_inf cover over ``n c``
    points); B4 uses 704, 11 and 26 of Bartlett et al. (2005), Theorem 3.3.
    ``R`` is the largest training norm, taken as the known bound on the
    inputs.

    *When is a bound informative?* A bound is useful only below the risk
    of the best constant predictor (``trivial_risk``, about ``ln 2`` for the
    logistic loss with balanced labels); the ``vacuous`` column marks the
    rows that are not. On the synthetic data of
    :func:`skpaper.datasets.make_linear_multilabel` (``d = 50``, ``c = 16``,
    label noise 0.1, ranking surrogate, logistic loss, ``alpha = 1e-3``) B3
    with the "rate" constants is 1.72, 0.76, 0.51 and 0.39 at ``n`` = 250,
    1000, 4000 and 16000 against a trivial risk of 0.69: it becomes
    informative between ``n = 1000`` and ``n = 4000``. With the "theorem"
    constants it is still about ``2e7`` at ``n = 16000``: those constants
    are vacuous at any sample size one can fit. The figure is the claim
    ``informative-sample-size`` of ``skpaper reproduce
    multilabel-smooth-bounds``.

    References
    ----------
    .. [1] Y.-F. Zhang and M.-L. Zhang, "Tight and Fast Bounds for Multi-Label
       Learning", Proceedings of the 42nd International Conference on
       Machine Learning (ICML), PMLR 267:76909-76938, 2025.

    Examples
    --------
    >>> from skpaper.datasets import make_linear_multilabel
    >>> from skpaper.multilabel import SmoothMultiLabelClassifier, generalization_bounds
    >>> X, Y = make_linear_multilabel(n_samples=300, n_labels=8, random_state=0)
    >>> clf = SmoothMultiLabelClassifier(objective="subset", random_state=0).fit(X, Y)
    >>> table = generalization_bounds(clf, X, Y)
    >>> [str(b) for b in table["bound"][:3]]
    ['B1', 'B1_decomposed', 'B2']
    >>> bool(table["value"][3] > table["empirical_risk"][3])
    True
    """
    check_is_fitted(estimator)
    if isinstance(estimator, Pipeline):
        if len(estimator.steps) > 1:
            X = estimator[:-1].transform(X)
            if X_test is not None:
                X_test = estimator[:-1].transform(X_test)
        estimator = estimator[-1]
        check_is_fitted(estimator)
    coef = getattr(estimator, "coef_", None)
    if coef is None or np.ndim(coef) != 2:
        raise ValueError(
            "estimator must be a fitted linear model with a 2-D coef_ of shape "
            f"(n_labels, n_features); got coef_={None if coef is None else np.shape(coef)}."
        )
    coef = np.asarray(coef, dtype=np.float64)
    intercept = np.broadcast_to(
        np.asarray(getattr(estimator, "intercept_", 0.0), dtype=np.float64), coef.shape[:1]
    )
    loss = loss if loss is not None else getattr(estimator, "loss", None)
    if loss not in BASE_LOSSES:
        raise ValueError(
            f"loss must be one of {list(BASE_LOSSES)} (or None to read the estimator's); "
            f"got {loss!r}."
        )
    base = get_base_loss(loss, getattr(estimator, "huber_width", 1.0))
    objective = objective or getattr(estimator, "objective", "hamming")
    constraint = constraint or getattr(estimator, "constraint", "per_label")
    if objective not in OBJECTIVES or constraint not in ("per_label", "frobenius"):
        raise ValueError(
            f"objective must be one of {list(OBJECTIVES)} and constraint one of "
            f"['per_label', 'frobenius']; got {objective!r} and {constraint!r}."
        )

    X, T = _check_data(X, Y, coef, "X", "Y")
    with_intercept = bool(getattr(estimator, "fit_intercept", False)) or bool(np.any(intercept))
    F = np.asarray(X @ coef.T) + intercept
    R, w_norms = _augmented(X, coef, intercept, with_intercept)
    n, c = T.shape
    Lambda = float(w_norms.max() if constraint == "per_label" else np.sqrt((w_norms**2).sum()))
    if norm_bound is not None:
        if norm_bound < Lambda * (1 - 1e-9):
            raise ValueError(
                f"norm_bound must contain the fitted weights: it is {norm_bound!r}, but the "
                f"fitted {constraint} norm is {Lambda:.6g}."
            )
        Lambda = float(norm_bound)
    theorem = constants == "theorem"
    if theorem and norm_bound is None:
        # dyadic shells Lambda_k = 2^k with delta_k = delta / ((k + 1)(k + 2))
        k = max(0, int(np.ceil(np.log2(max(Lambda, 1e-12)))))
        Lambda = float(2.0**k)
        log_conf = np.log(1.0 / delta) + np.log((k + 1.0) * (k + 2.0))
    else:
        log_conf = np.log(1.0 / delta)

    kappa_2 = {"hamming": 1.0 / np.sqrt(c), "subset": 1.0, "ranking": 2.0}[objective]
    kappa_inf = 2.0 if objective == "ranking" else 1.0
    B = Lambda * R
    B_t = 2.0 * B if objective == "ranking" else B
    rho, M, gamma = base.rho(B_t), base.sup(B_t), base.gamma
    gamma_L = kappa_inf**2 * gamma
    risk = float(surrogate_losses(F, T, base, objective).mean())
    radius = Lambda * R / np.sqrt(n)

    rows = {}
    # G / n of B1: c Lambda R / sqrt(n) (per-label) or Lambda R sqrt(c / n) (Frobenius)
    G_over_n = radius * (c if constraint == "per_label" else np.sqrt(c))
    r_nc = radius if constraint == "per_label" else radius / np.sqrt(c)
    if theorem:
        hoeffding = 3.0 * M * np.sqrt((log_conf + np.log(2.0)) / (2.0 * n))
        rows["B1"] = (2.0 * np.sqrt(2.0) * kappa_2 * rho * G_over_n, hoeffding)
        rows["B1_decomposed"] = (2.0 * rho * radius, hoeffding)
        linf_log = 1.0 + np.log(np.e * n * c) ** 1.5
        rows["B2"] = (2.0 * _K_LINF * kappa_inf * rho * np.sqrt(c) * r_nc * linf_log, hoeffding)
        log1 = np.log(n) ** 1.5 * np.sqrt(np.log(n * c))
        log2 = np.log(n) ** 3 * np.log(n * c)
        rows["B3"] = _srebro(risk, gamma_L, radius, M, log_conf, n, _K_SMOOTH, log1, log2)
    else:
        plain = M * np.sqrt(log_conf / n)
        rows["B1"] = (kappa_2 * rho * G_over_n, plain)
        rows["B1_decomposed"] = (rho * radius, plain)
        rows["B2"] = (kappa_inf * rho * np.sqrt(c) * r_nc, plain)
        rows["B3"] = _srebro(risk, gamma_L, radius, M, log_conf, n, 1.0, 1.0, 1.0)
    if objective != "hamming":
        rows["B1_decomposed"] = (np.nan, np.nan)
    if not np.isfinite(gamma_L):
        rows["B3"] = (np.inf, np.inf)
    rows["B4"] = _local_bound(risk, gamma_L, radius, M, log_conf, n, c, theorem)

    auc_rows, auc_meta = _auc_bounds(F, T, base, Lambda, R, log_conf, theorem)
    rows.update(auc_rows)

    risks = {name: (auc_meta["risk"] if name.startswith("B5") else risk) for name in BOUND_NAMES}
    table = _assemble(rows, risks, objective)
    table["rho"] = np.array([auc_meta["rho"] if b.startswith("B5") else rho for b in BOUND_NAMES])
    table["M"] = np.array([auc_meta["M"] if b.startswith("B5") else M for b in BOUND_NAMES])
    table["gamma"] = np.full(len(BOUND_NAMES), gamma)
    table["test_risk"] = np.full(len(BOUND_NAMES), np.nan)
    if (X_test is None) != (Y_test is None):
        raise ValueError("X_test and Y_test must be given together; got only one of them.")
    if X_test is not None:
        X_test, T_test = _check_data(X_test, Y_test, coef, "X_test", "Y_test")
        F_test = np.asarray(X_test @ coef.T) + intercept
        test_risk = float(surrogate_losses(F_test, T_test, base, objective).mean())
        test_auc = auc_surrogate_risks(F_test, T_test, base)
        test_auc_risk = float(np.nanmean(test_auc)) if np.isfinite(test_auc).any() else np.nan
        table["test_risk"] = np.array(
            [test_auc_risk if b.startswith("B5") else test_risk for b in BOUND_NAMES]
        )
    table["observed_gap"] = table["test_risk"] - table["empirical_risk"]
    trivial = _constant_risk(T, base, objective)
    table["trivial_risk"] = np.array(
        [float(base.value(np.zeros(1))[0]) if b.startswith("B5") else trivial
         for b in BOUND_NAMES])
    with np.errstate(invalid="ignore"):
        table["vacuous"] = table["value"] >= table["trivial_risk"]
    for key, value in (
        ("n", n), ("c", c), ("Lambda", Lambda), ("R", R), ("delta", float(delta)),
        ("tau", auc_meta["tau"]), ("n_auc_skipped", auc_meta["n_skipped"]),
        ("constraint", constraint), ("constants", constants),
    ):
        table[key] = np.full(len(BOUND_NAMES), value)
    return table


def _check_data(X, Y, coef, x_name, y_name):
    X = check_array(X, accept_sparse=("csr", "csc"), dtype=np.float64, input_name=x_name)
    T = check_indicator(Y, name=y_name)
    if X.shape[0] != T.shape[0]:
        raise ValueError(
            f"{x_name} and {y_name} must have the same number of samples; got "
            f"{X.shape[0]} and {T.shape[0]}."
        )
    if X.shape[1] != coef.shape[1] or T.shape[1] != coef.shape[0]:
        raise ValueError(
            f"the model has {coef.shape[1]} features and {coef.shape[0]} labels, but "
            f"{x_name} has {X.shape[1]} features and {y_name} has {T.shape[1]} labels."
        )
    return X, T


def _local_bound(risk, gamma_L, radius, M, log_conf, n, c, theorem):
    if not np.isfinite(gamma_L):
        return (np.inf, np.inf)
    log_conf = log_conf + np.log(len(_BETA_GRID))
    if theorem:
        fixed_point = _K_LOCAL * gamma_L * radius**2 * np.log(n) ** 3 * np.log(n * c)
        conf_factor = lambda k: (_K_LOCAL_B * M + _K_LOCAL_BK * M * k) * log_conf / n  # noqa: E731
    else:
        fixed_point = gamma_L * radius**2
        conf_factor = lambda k: k * M * log_conf / n  # noqa: E731
    best = None
    for beta in _BETA_GRID:
        k = 1.0 + 1.0 / beta
        complexity = beta * risk + k * fixed_point
        confidence = conf_factor(k)
        if best is None or complexity + confidence < sum(best):
            best = (complexity, confidence)
    return best


def _auc_bounds(F, T, base, Lambda, R, log_conf, theorem):
    n = T.shape[0]
    n_pos = T.sum(axis=0)
    m = np.minimum(n_pos, n - n_pos).astype(float)
    valid = m > 0
    meta = {"n_skipped": int((~valid).sum()), "risk": np.nan, "tau": np.nan,
            "rho": np.nan, "M": np.nan}
    if not valid.any():
        return {"B5_lipschitz": (np.nan, np.nan), "B5_smooth": (np.nan, np.nan)}, meta
    per_label = auc_surrogate_risks(F, T, base)[valid]
    m = m[valid]
    B_t = 2.0 * Lambda * R
    rho, M, gamma = base.rho(B_t), base.sup(B_t), 4.0 * base.gamma
    risk = float(per_label.mean())
    tau = float(m.min() / n)
    meta.update(risk=risk, tau=tau, rho=rho, M=M)
    if theorem:
        conf = log_conf + np.log(valid.sum())
        lip = (
            float(np.mean(4.0 * rho * Lambda * R / np.sqrt(m))),
            float(np.mean(3.0 * M * np.sqrt((conf + np.log(2.0)) / (2.0 * m)))),
        )
        if np.isfinite(gamma):
            terms = [
                _srebro(r, gamma, Lambda * R / np.sqrt(mj), M, conf, mj, _K_SMOOTH,
                        np.log(mj) ** 1.5, np.log(mj) ** 3)
                for r, mj in zip(per_label, m)
            ]
            smooth = tuple(float(np.mean(col)) for col in zip(*terms))
        else:
            smooth = (np.inf, np.inf)
    else:
        m_tau = tau * n
        lip = (rho * Lambda * R / np.sqrt(m_tau), M * np.sqrt(log_conf / m_tau))
        if np.isfinite(gamma):
            smooth = _srebro(risk, gamma, Lambda * R / np.sqrt(m_tau), M, log_conf, m_tau,
                             1.0, 1.0, 1.0)
        else:
            smooth = (np.inf, np.inf)
    return {"B5_lipschitz": lip, "B5_smooth": smooth}, meta


def _assemble(rows, risks, objective):
    names = list(BOUND_NAMES)
    complexity = np.array([float(rows[b][0]) for b in names])
    confidence = np.array([float(rows[b][1]) for b in names])
    empirical = np.array([float(risks[b]) for b in names])
    value = empirical + complexity + confidence
    return {
        "bound": np.array(names),
        "description": np.array([_DESCRIPTIONS[b] for b in names]),
        "risk": np.array(["macro_auc" if b.startswith("B5") else objective for b in names]),
        "empirical_risk": empirical,
        "complexity_term": complexity,
        "confidence_term": confidence,
        "value": value,
        "excess": value - empirical,
    }
