"""Conditional independence tests for discretized (and mixed) data."""

import numbers
import warnings
from itertools import combinations
from typing import NamedTuple

import numpy as np
from scipy.special import ndtr, ndtri
from scipy.stats import chi2
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..utils._sklearn import Interval, StrOptions, _fit_context, validate_data
from ._latent import (
    continuous_pair,
    encode_ordinal,
    normal_scores,
    ordinal_pair,
    ordinal_pair_jtest,
    ordinal_thresholds,
    polyserial_pair,
)

#: With ``discrete_columns="auto"``, an integer-valued column with at most this
#: many distinct values is treated as discretized.
AUTO_MAX_LEVELS = 20

#: Smallest eigenvalue a latent correlation matrix may have before it counts as not
#: positive definite (the latent Gaussian model does not fit).
_EIG_FLOOR = 1e-6

#: Pairs with a larger latent correlation estimate get no J test: near the boundary the
#: cell probabilities are too curved in sigma for its chi-square approximation.
_JTEST_MAX_CORR = 0.9

#: Largest stack of pairwise influence vectors (bytes) kept for vectorized Wald tests.
_STACK_BYTES = 256 * 2**20

#: Continuous columns are cut at these quantiles for the chi-square fallback test.
_FALLBACK_QUANTILES = (0.25, 0.5, 0.75)


class CITestResult(NamedTuple):
    """Outcome of one conditional independence test.

    Parameters
    ----------
    statistic : float
        Signed test statistic (a standard normal variate under the null).
    pvalue : float
        Two-sided p-value, ``2 (1 - Phi(|statistic|))``.

    Examples
    --------
    >>> from skpaper.independence import CITestResult
    >>> statistic, pvalue = CITestResult(statistic=0.0, pvalue=1.0)
    >>> pvalue
    1.0
    """

    statistic: float
    pvalue: float


def _two_sided(z):
    return float(2.0 * ndtr(-abs(z)))


class DiscretizedCITest(BaseEstimator):
    """Conditional independence test for latent Gaussian variables seen through discretization.

    Each observed ordinal column is taken to be a monotone step function of a
    latent standard normal variable with unknown thresholds. ``X_i`` and ``X_j``
    are tested for independence of their latent variables given those of
    ``cond``. With ``method="gmm"`` (DCT-GMM, Sun et al., 2025 [1]_) every pair's
    latent correlation comes from over-identified GMM on all contingency cells
    of the pair; ``method="binarize"`` is the DCT baseline [2]_ that first cuts
    every discretized column at the mean of its codes; ``method="fisherz"`` is
    the Fisher-z partial-correlation test on the raw codes, which is invalid for
    latent independence and is provided as the naive reference.

    Parameters
    ----------
    method : {"gmm", "binarize", "fisherz"}, default="gmm"
        Estimator of the pairwise latent correlations (see above).
    weighting : {"identity", "optimal"}, default="identity"
        GMM weight matrix for ``method="gmm"``: one-step (identity, the
        official default) or two-step (inverse of the estimated moment
        covariance). Two-step is anti-conservative at small ``n``.
    min_cell_prob : float, default=0.01
        Contingency cells whose empirical probability is below this are left
        out of the GMM moments (``method="gmm"``).
    discrete_columns : {"auto", "all", "none"} or array-like, default="auto"
        Which columns are discretized. ``"auto"``: integer-valued columns with
        at most 20 distinct values. An array-like is either a boolean mask of
        length ``n_features`` or a list of column indices. Discretized columns
        must hold integer codes; any increasing relabelling gives the same test.
    unconditional_test : {"fisherz", "wald"}, default="fisherz"
        Test used when ``cond`` is empty. ``"fisherz"`` (as in the official
        wrappers) tests the correlation of the raw columns, which is valid
        because independence survives coordinate-wise discretization;
        ``"wald"`` uses the Wald statistic on the latent correlation itself.
    fallback : {"chi2", "raise"}, default="chi2"
        What a Wald test does when the latent Gaussian model does not fit the
        tested variables (see Notes, "Model checks"): ``"chi2"`` warns and
        uses the chi-square test of conditional independence of the observed
        codes instead; ``"raise"`` refuses with a ValueError.
    max_abs_corr : float, default=0.99
        A pairwise latent correlation estimate with a larger magnitude counts
        as a model misfit (the delta method breaks down at the boundary).
    model_check : {"warn", "fallback", "off"}, default="warn"
        Goodness of fit of the latent Gaussian model over all columns
        (:meth:`check_model`, run once per :class:`PC` fit): ``"warn"`` only
        reports it (PC warns, naming the columns); ``"fallback"`` also makes
        every test whose tested set holds a pair rejected by the J test fall
        back as the per-test checks do; ``"off"`` skips it.
    model_check_level : float, default=0.01
        Family-wise level of the J tests over the pairs of discretized columns
        (Bonferroni: a pair is rejected when its p-value is below
        ``model_check_level`` over the number of pairs of discretized columns).

    Attributes
    ----------
    n_features_in_ : int
        Number of columns seen in :meth:`fit`.
    n_samples_fit_ : int
        Number of rows seen in :meth:`fit`.
    discrete_mask_ : ndarray of shape (n_features_in_,) of bool
        Which columns were treated as discretized.
    n_levels_ : ndarray of shape (n_features_in_,) of int
        Number of levels of each discretized column (after binarization for
        ``method="binarize"``); 0 for continuous columns.
    thresholds_ : list of ndarray
        Estimated latent thresholds ``h_j = Phi^{-1}(F_hat_j(l))``,
        ``l = 1..K_j-1``, per column; empty for continuous columns.
    latent_corr_ : ndarray of shape (n_features_in_, n_features_in_)
        Estimated latent correlation matrix (Pearson correlation of the raw
        columns for ``method="fisherz"``). Pairs are otherwise estimated
        lazily, when a test first needs them; reading this attribute
        estimates all of them.
    fallbacks_ : dict
        ``{(i, j, cond): reason}`` for every test, run so far, that fell back
        to the chi-square test (``i < j``, ``cond`` a sorted tuple).
    model_check_ : dict
        Only after :meth:`check_model`: its report.

    See Also
    --------
    PC : Structure learning with any of these tests.
    polychoric_corr : Maximum-likelihood polychoric correlation of two ordinal columns.

    Notes
    -----
    Latent model: ``Z ~ N(0, Sigma)`` with unit diagonal and
    ``X_j = l`` iff ``h_{j,l} < Z_j <= h_{j,l+1}``. The null
    ``Z_a indep Z_b | Z_S`` is ``beta_b = 0`` in the population regression of
    ``Z_a`` on ``Z_R``, ``R = {b} u S``, ``beta = Sigma_RR^{-1} Sigma_Ra``
    (nodewise regression). With ``Theta = Sigma_hat_RR^{-1}`` and ``beta^0`` the
    estimate with its ``b`` entry set to 0, the delta method gives the
    per-sample influence
    ``infl_i = sum_v Theta_bv (xi_i^{va} - sum_q beta^0_q xi_i^{vq})``
    and the statistic ``T = sqrt(n) beta_hat_b / sqrt(mean(infl_i**2))``,
    compared with ``N(0, 1)``: a Wald z test, not a J-test [1]_.

    For two discretized columns the pairwise estimate solves
    ``min_sigma ||p_hat - P(sigma; h_a, h_b)||_A`` over the cells with
    ``p_hat_lk >= min_cell_prob``, with ``P_lk`` the bivariate normal mass of
    the threshold rectangle (computed once per grid node with Owen's T
    function), and its influence is
    ``xi_i = e_1^T (G^T A G)^{-1} G^T A g_i``, ``G = dP/d(sigma, h_a, h_b)``
    computed analytically. For ``method="binarize"`` the same equations on the
    2 x 2 table are exactly identified and reduce to the DCT bridge equation
    ``P(X_a = 1, X_b = 1) = P(Z_a > h_a, Z_b > h_b; sigma)`` [2]_.

    Model checks (ours, not in [1]_). The Wald test is only valid when the
    latent Gaussian model fits. Data from discrete networks with
    near-deterministic relations break it: the pairwise estimates go to
    ``+-1``, the matrix they form is not positive definite, and clipping its
    eigenvalues returns large p-values for strongly dependent pairs, so PC
    silently drops true edges. Before a Wald test the tested set is checked
    for (i) a pairwise estimate with ``|sigma| > max_abs_corr``, (ii) a pair of
    discretized columns whose table has no more non-empty cells than the
    pairwise model has parameters (``K_a + K_b - 1``), and (iii) a correlation matrix
    of the tested set that is not positive definite. On any of these the
    test warns (a ``UserWarning`` naming the columns and the reason) and,
    with ``fallback="chi2"``, returns the Pearson chi-square test of
    ``X_i indep X_j | X_cond`` on the observed codes, stratified by the
    configurations of ``cond`` with ``sum_s (r_s - 1)(c_s - 1)`` degrees of
    freedom over the non-empty rows and columns of each stratum (continuous
    columns cut at their quartiles). That test is valid for the observed
    variables, which is the right null for data that are discrete in
    nature; it is not a test of the latent null. Every fallback is recorded
    in ``fallbacks_`` (and in :attr:`PC.fallback_tests_`).

    These checks see only the tested set, and discrete data can pass them all
    while the model is wrong (dependent pairs with moderate latent estimates
    and large Wald p-values). :meth:`check_model` tests the model as a whole:
    Hansen's J test of the over-identifying GMM moments of every pair of
    discretized columns (the cell frequencies against the bivariate normal
    rectangle probabilities at the estimated ``sigma`` and thresholds; see
    ``ordinal_pair_jtest`` for its first-order variance, which accounts for
    the estimated parameters), the positive definiteness of the full latent
    correlation matrix and the pairs near ``+-1``. The J test needs at least
    one over-identifying moment (three levels in one of the two columns) and
    is skipped for pairs with ``|sigma| > 0.9``, where its chi-square
    approximation fails.

    Continuous columns (an extension, not in [1]_): they are rank-Gaussianised;
    continuous pairs use the normal-scores Pearson correlation (influence
    ``z_a z_b - sigma (z_a^2 + z_b^2) / 2``), and continuous-discretized pairs
    the polyserial moments ``E[Z_c 1{X_d <= l}] = -sigma phi(h_l)`` with an
    influence that includes the estimated thresholds and ranks. All
    combinations of discretized and continuous columns are covered.

    Deviations from the official code: the diagonal of the latent correlation
    matrix is fixed at 1 (zero influence), the tested pair is ordered as
    ``a = min(i, j)`` (which the official wrappers also do), two-step GMM
    drops one cell explicitly when all cells are kept instead of the
    eigenvalue heuristic, and when fewer cells pass ``min_cell_prob`` than
    there are parameters every observed cell is used. ``method="binarize"``
    binarizes every discretized column (the official DCT code treats columns
    with more than 5 levels as continuous) and handles continuous columns as
    ``method="gmm"`` does (the official code uses ``P(X_c >= 0, X_b = 1)`` on
    the raw values, which assumes them centred at 0).

    References
    ----------
    .. [1] B. Sun, Y. Yao, X. Dong, Z. Liu, T. Liu, Y. Qiu and K. Zhang,
       "A Sample Efficient Conditional Independence Test in the Presence of
       Discretization", ICML 2025, PMLR 267:57828-57853.
    .. [2] B. Sun, Y. Yao, G. Hao, Y. Qiu and K. Zhang, "A Conditional
       Independence Test in the Presence of Discretization", ICLR 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.datasets import make_discretized_chain
    >>> from skpaper.independence import DiscretizedCITest
    >>> X = make_discretized_chain(500, n_levels=4, random_state=0)
    >>> ci = DiscretizedCITest().fit(X)
    >>> bool(ci.pvalue(0, 2, [1]) > 0.05)  # Z_1 indep Z_3 | Z_2 on a chain
    True
    >>> bool(ci.pvalue(0, 1) < 0.05)
    True
    """

    _parameter_constraints: dict = {
        "method": [StrOptions({"gmm", "binarize", "fisherz"})],
        "weighting": [StrOptions({"identity", "optimal"})],
        "min_cell_prob": [Interval(numbers.Real, 0, 1, closed="left")],
        "discrete_columns": [StrOptions({"auto", "all", "none"}), "array-like"],
        "unconditional_test": [StrOptions({"fisherz", "wald"})],
        "fallback": [StrOptions({"chi2", "raise"})],
        "max_abs_corr": [Interval(numbers.Real, 0, 1, closed="right")],
        "model_check": [StrOptions({"warn", "fallback", "off"})],
        "model_check_level": [Interval(numbers.Real, 0, 1, closed="neither")],
    }

    def __init__(
        self,
        *,
        method="gmm",
        weighting="identity",
        min_cell_prob=0.01,
        discrete_columns="auto",
        unconditional_test="fisherz",
        fallback="chi2",
        max_abs_corr=0.99,
        model_check="warn",
        model_check_level=0.01,
    ):
        self.method = method
        self.weighting = weighting
        self.min_cell_prob = min_cell_prob
        self.discrete_columns = discrete_columns
        self.unconditional_test = unconditional_test
        self.fallback = fallback
        self.max_abs_corr = max_abs_corr
        self.model_check = model_check
        self.model_check_level = model_check_level

    # ------------------------------------------------------------------ fit
    def _resolve_discrete(self, X):
        n_features = X.shape[1]
        spec = self.discrete_columns
        if isinstance(spec, str):
            if spec == "all":
                return np.ones(n_features, dtype=bool)
            if spec == "none":
                return np.zeros(n_features, dtype=bool)
            integer = np.all(X == np.round(X), axis=0)
            few = np.array([len(np.unique(X[:, j])) <= AUTO_MAX_LEVELS for j in range(n_features)])
            return integer & few
        spec = np.asarray(spec)
        if spec.dtype == bool:
            if spec.shape != (n_features,):
                raise ValueError(
                    f"discrete_columns as a boolean mask must have shape ({n_features},), "
                    f"got {spec.shape}."
                )
            return spec.copy()
        if spec.ndim != 1 or (spec.size and not np.issubdtype(spec.dtype, np.integer)):
            raise ValueError(
                "discrete_columns must be 'auto', 'all', 'none', a boolean mask or a list of "
                f"column indices; got {self.discrete_columns!r}."
            )
        if spec.size and (spec.min() < 0 or spec.max() >= n_features):
            raise ValueError(
                f"discrete_columns indices must lie in [0, {n_features - 1}], got "
                f"{spec.tolist()}."
            )
        mask = np.zeros(n_features, dtype=bool)
        mask[spec.astype(int)] = True
        return mask

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn codes, thresholds and normal scores of every column.

        Pairwise latent correlations and their influence vectors are computed
        lazily by the tests and cached.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Integer codes for discretized columns, real values for continuous ones.
        y : None
            Ignored.

        Returns
        -------
        self : DiscretizedCITest
            The fitted test.
        """
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=4)
        n, p = X.shape
        mask = self._resolve_discrete(X)
        codes, scores, thresholds = [], [], []
        n_levels = np.zeros(p, dtype=int)
        for j in range(p):
            if mask[j]:
                c, k = encode_ordinal(X[:, j], name=f"column {j}")
                if self.method == "binarize":
                    c = (c >= c.mean()).astype(np.intp)
                    k = 2
                codes.append(c)
                scores.append(None)
                n_levels[j] = k
                thresholds.append(ordinal_thresholds(c, k))
            else:
                if np.all(X[:, j] == X[0, j]):
                    raise ValueError(
                        f"column {j} is constant (value {X[0, j]!r}); it carries no information."
                    )
                codes.append(None)
                scores.append(normal_scores(X[:, j]))
                thresholds.append(np.empty(0))
        self.n_samples_fit_ = n
        self.discrete_mask_ = mask
        self.n_levels_ = n_levels
        self.thresholds_ = thresholds
        self._codes = codes
        self._scores = scores
        top = np.abs(X).max(axis=0)
        if top.max(initial=0.0) > 1e150:
            # Correlations do not depend on scale: shrink huge columns so that their
            # products stay finite.
            X = X / np.where(top > 0, top, 1.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            self._raw_corr = np.corrcoef(X, rowvar=False).reshape(p, p)
        self._pairs = {}
        self._results = {}
        self._pair_misfit = {}
        self._jtests = {}
        self._corr = self._xi_stack = None
        self.fallbacks_ = {}
        if hasattr(self, "model_check_"):
            del self.model_check_
        return self

    # ----------------------------------------------------------- pairwise
    def _pair(self, u, v):
        """``(sigma_hat, xi)`` of the pair ``u < v``, estimated once and cached."""
        key = (u, v)
        hit = self._pairs.get(key)
        if hit is not None:
            return hit
        cu, cv = self._codes[u], self._codes[v]
        if cu is not None and cv is not None:
            min_cell = self.min_cell_prob if self.method == "gmm" else 0.0
            weighting = self.weighting if self.method == "gmm" else "identity"
            out = ordinal_pair(cu, cv, self.thresholds_[u], self.thresholds_[v],
                               min_cell_prob=min_cell, weighting=weighting)
        elif cu is None and cv is None:
            out = continuous_pair(self._scores[u], self._scores[v])
        elif cu is None:
            out = polyserial_pair(self._scores[u], cv, self.thresholds_[v])
        else:
            out = polyserial_pair(self._scores[v], cu, self.thresholds_[u])
        self._pairs[key] = out
        return out

    def _sigma(self, u, v):
        if u == v:
            return 1.0
        return self._pair(min(u, v), max(u, v))[0]

    def _xi(self, u, v):
        return self._pair(min(u, v), max(u, v))[1]

    @property
    def latent_corr_(self):
        """Estimated latent correlation matrix (see the class docstring)."""
        check_is_fitted(self, "n_samples_fit_")
        p = self.n_features_in_
        if self.method == "fisherz":
            return self._raw_corr.copy()
        corr = np.eye(p)
        for u, v in combinations(range(p), 2):
            corr[u, v] = corr[v, u] = self._pair(u, v)[0]
        return corr

    # -------------------------------------------------------------- tests
    def _check_indices(self, i, j, cond):
        p = self.n_features_in_
        if (type(i) is int and type(j) is int and type(cond) is tuple  # noqa: E721
                and all(type(c) is int for c in cond)):  # noqa: E721
            # PC's calls: plain ints in a sorted tuple, checked without the general path.
            members = (i, j, *cond)
            if (min(members) >= 0 and max(members) < p and i != j
                    and len(set(members)) == len(members)
                    and all(x < y for x, y in zip(cond, cond[1:]))):
                return min(i, j), max(i, j), cond

        def as_index(value, name):
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
                raise TypeError(f"{name} must be an integer column index, got {value!r}.")
            value = int(value)
            if not 0 <= value < p:
                raise ValueError(f"{name} must lie in [0, {p - 1}], got {value}.")
            return value

        i, j = as_index(i, "i"), as_index(j, "j")
        if i == j:
            raise ValueError(f"i and j must be different columns, got i == j == {i}.")
        if cond is None:
            cond = ()
        if isinstance(cond, numbers.Integral) and not isinstance(cond, (bool, np.bool_)):
            cond = (cond,)
        try:
            cond = [as_index(c, "cond entries") for c in cond]
        except TypeError as exc:
            if "cond entries" in str(exc):
                raise
            raise TypeError(
                f"cond must be an iterable of column indices, got {cond!r}."
            ) from None
        cond = tuple(sorted(set(cond)))
        if i in cond or j in cond:
            raise ValueError(
                f"cond must not contain the tested columns i={i} or j={j}, got {list(cond)}."
            )
        return min(i, j), max(i, j), cond

    def _fisherz(self, a, b, cond):
        idx = [a, b, *cond]
        sub = self._raw_corr[np.ix_(idx, idx)]
        dof = self.n_samples_fit_ - len(cond) - 3
        if dof <= 0:
            raise ValueError(
                f"the Fisher-z test needs n_samples > |cond| + 3, got n_samples="
                f"{self.n_samples_fit_} and |cond|={len(cond)}."
            )
        if not np.all(np.isfinite(sub)):
            raise ValueError(f"the correlation of columns {idx} is undefined.")
        prec = np.linalg.pinv(sub)
        r = -prec[0, 1] / np.sqrt(abs(prec[0, 0] * prec[1, 1]))
        r = float(np.clip(r, -1.0 + 1e-12, 1.0 - 1e-12))
        return float(np.sqrt(dof) * np.arctanh(r))

    def _stack_pairs(self):
        """Every pairwise estimate at once: the latent correlation matrix and, when it fits
        in ``_STACK_BYTES``, the influence vectors as a ``(p, p, n)`` array, which the
        Wald tests then combine without Python loops. Called by :meth:`check_model`."""
        p, n = self.n_features_in_, self.n_samples_fit_
        corr = np.eye(p)
        stack = np.zeros((p, p, n)) if p * p * n * 8 <= _STACK_BYTES else None
        for u, v in combinations(range(p), 2):
            sigma, xi = self._pair(u, v)
            corr[u, v] = corr[v, u] = sigma
            if stack is not None:
                stack[u, v] = stack[v, u] = xi
        self._corr = corr
        self._xi_stack = stack
        return corr

    def _latent_submatrix(self, nodes):
        corr = getattr(self, "_corr", None)
        if corr is not None:
            return corr[nodes][:, nodes]
        m = len(nodes)
        sigma = np.eye(m)
        for s, t in combinations(range(m), 2):
            sigma[s, t] = sigma[t, s] = self._sigma(nodes[s], nodes[t])
        return sigma

    def _pair_check(self, u, v):
        """Why the latent model does not fit the pair ``u < v`` (None when it does)."""
        key = (u, v)
        if key in self._pair_misfit:
            return self._pair_misfit[key]
        reasons = []
        sigma = self._sigma(u, v)
        if abs(sigma) > self.max_abs_corr:
            reasons.append(f"|sigma({u}, {v})| = {abs(sigma):.4f} > {self.max_abs_corr}")
        cu, cv = self._codes[u], self._codes[v]
        if cu is not None and cv is not None:
            k_u, k_v = self.n_levels_[u], self.n_levels_[v]
            # Even with every non-empty cell as a moment, the cells do not over-identify
            # (sigma, h_u, h_v): the table sits on a few cells, as for a deterministic map.
            n_cells = int(np.count_nonzero(np.bincount(cu * k_v + cv, minlength=k_u * k_v)))
            n_params = k_u + k_v - 1
            if n_cells <= n_params:
                reasons.append(f"only {n_cells} informative (non-empty) cells for {n_params} "
                               f"parameters in the table of columns {u} and {v}")
        out = "; ".join(reasons) or None
        self._pair_misfit[key] = out
        return out

    def _jtest(self, u, v):
        """``(statistic, dof, pvalue)`` of the J test of the pair ``u < v``, or None when
        the pair has no over-identified discretized table (or ``|sigma| > 0.9``)."""
        if (u, v) in self._jtests:
            return self._jtests[(u, v)]
        out = None
        cu, cv = self._codes[u], self._codes[v]
        if (self.method == "gmm" and cu is not None and cv is not None
                and abs(self._sigma(u, v)) <= _JTEST_MAX_CORR):
            # The J test is of the identity-weighted fit; with two-step weighting refit it.
            sigma = (self._sigma(u, v) if self.weighting == "identity" else
                     ordinal_pair(cu, cv, self.thresholds_[u], self.thresholds_[v],
                                  min_cell_prob=self.min_cell_prob)[0])
            res = ordinal_pair_jtest(cu, cv, self.thresholds_[u], self.thresholds_[v], sigma,
                                     min_cell_prob=self.min_cell_prob)
            out = res if res[1] > 0 else None
        self._jtests[(u, v)] = out
        return out

    def _jtest_threshold(self):
        n_disc = int(np.sum(self.discrete_mask_))
        return self.model_check_level / max(n_disc * (n_disc - 1) // 2, 1)

    def check_model(self):
        """Goodness of fit of the latent Gaussian model over all columns.

        Runs Hansen's J test on every pair of discretized columns, with a
        Bonferroni correction over the pairs tested, and checks the full latent
        correlation matrix for positive definiteness and for pairs with
        ``|sigma| > max_abs_corr``. Estimates every pairwise correlation (which
        later tests then reuse). :class:`PC` calls it once per fit and warns.

        Returns
        -------
        report : dict
            ``"fits"`` (bool), ``"jtest"`` (``{(u, v): (statistic, dof, pvalue)}``
            for the pairs tested), ``"rejected_pairs"`` (J p-value below
            ``model_check_level`` over the number of pairs of discretized
            columns), ``"min_eigenvalue"`` of the
            latent correlation matrix, ``"indefinite_columns"`` (the columns
            carrying the eigenvectors of its eigenvalues below 1e-6),
            ``"boundary_pairs"`` (``|sigma| > max_abs_corr``), ``"columns"``
            (every column named by a failed check) and ``"message"`` (a
            sentence, empty when the model fits). Also stored as
            ``model_check_``.

        Examples
        --------
        >>> from skpaper.datasets import make_discretized_chain
        >>> from skpaper.independence import DiscretizedCITest
        >>> X = make_discretized_chain(500, n_levels=4, random_state=0)
        >>> DiscretizedCITest().fit(X).check_model()["fits"]
        True
        """
        check_is_fitted(self, "n_samples_fit_")
        p = self.n_features_in_
        if self.method == "fisherz":
            report = {"fits": True, "jtest": {}, "rejected_pairs": [], "min_eigenvalue": np.nan,
                      "indefinite_columns": [], "boundary_pairs": [], "columns": [],
                      "message": ""}
            self.model_check_ = report
            return report
        corr = self._stack_pairs()
        jtest = {pair: res for pair in combinations(range(p), 2)
                 if (res := self._jtest(*pair)) is not None}
        threshold = self._jtest_threshold()
        rejected = sorted(pair for pair, res in jtest.items() if res[2] < threshold)
        w, V = np.linalg.eigh(corr)
        bad = w < _EIG_FLOOR
        indefinite = sorted(np.flatnonzero(np.any(np.abs(V[:, bad]) > 0.3, axis=1)).tolist())
        boundary = [(u, v) for u, v in combinations(range(p), 2)
                    if abs(corr[u, v]) > self.max_abs_corr]
        parts = []
        if rejected:
            shown = ", ".join(f"{pair} (J = {jtest[pair][0]:.1f}, dof {jtest[pair][1]}, "
                              f"p = {jtest[pair][2]:.2g})" for pair in rejected[:6])
            parts.append(f"the J test rejects {len(rejected)} of {len(jtest)} pairs at family "
                         f"level {self.model_check_level}: {shown}"
                         + (" and more" if len(rejected) > 6 else ""))
        if bad.any():
            parts.append(f"the latent correlation matrix is not positive definite (smallest "
                         f"eigenvalue {w[0]:.3g}; columns {indefinite})")
        if boundary:
            parts.append(f"{len(boundary)} pairs have |sigma| > {self.max_abs_corr}: "
                         + ", ".join(map(str, boundary[:6])) + (" and more" if len(boundary) > 6
                                                                else ""))
        columns = sorted({c for pair in rejected + boundary for c in pair} | set(indefinite))
        report = {"fits": not parts, "jtest": jtest, "rejected_pairs": rejected,
                  "min_eigenvalue": float(w[0]), "indefinite_columns": indefinite,
                  "boundary_pairs": boundary, "columns": columns,
                  "message": "; ".join(parts)}
        self.model_check_ = report
        return report

    def _model_misfit(self, a, b, cond):
        """Reasons the latent Gaussian model does not fit the test, or an empty list."""
        nodes = [a, b, *cond]
        reasons = [r for s, t in combinations(sorted(nodes), 2)
                   if (r := self._pair_check(s, t)) is not None]
        if self.model_check == "fallback":
            threshold = self._jtest_threshold()
            for s, t in combinations(sorted(nodes), 2):
                res = self._jtest(s, t)
                if res is not None and res[2] < threshold:
                    reasons.append(f"the J test rejects the latent model of columns {s} and "
                                   f"{t} (J = {res[0]:.1f}, dof {res[1]}, p = {res[2]:.2g})")
        smallest = float(np.linalg.eigvalsh(self._latent_submatrix(nodes))[0])
        if smallest < _EIG_FLOOR:
            reasons.append(f"the latent correlation estimate of columns {nodes} is not "
                           f"positive definite (smallest eigenvalue {smallest:.3g})")
        return reasons

    def _fallback_codes(self, j):
        if self._codes[j] is not None:
            return self._codes[j]
        z = self._scores[j]
        return np.searchsorted(np.quantile(z, _FALLBACK_QUANTILES), z, side="right")

    def _chi2_test(self, a, b, cond):
        """Pearson chi-square test of ``X_a indep X_b | X_cond`` on the observed codes."""
        ca, cb = self._fallback_codes(a), self._fallback_codes(b)
        k_a, k_b = int(ca.max()) + 1, int(cb.max()) + 1
        if cond:
            cs = [self._fallback_codes(c) for c in cond]
            _, stratum = np.unique(np.column_stack(cs), axis=0, return_inverse=True)
            stratum = stratum.reshape(-1)
        else:
            stratum = np.zeros(len(ca), dtype=np.intp)
        n_strata = int(stratum.max()) + 1
        table = np.bincount((stratum * k_a + ca) * k_b + cb,
                            minlength=n_strata * k_a * k_b).reshape(n_strata, k_a, k_b)
        table = table.astype(float)
        rows, cols = table.sum(axis=2), table.sum(axis=1)
        total = table.sum(axis=(1, 2))
        expected = rows[:, :, None] * cols[:, None, :] / np.maximum(total, 1)[:, None, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            terms = np.where(expected > 0, (table - expected) ** 2 / expected, 0.0)
        stat = float(terms.sum())
        dof = int(np.sum(np.maximum((rows > 0).sum(axis=1) - 1, 0)
                         * np.maximum((cols > 0).sum(axis=1) - 1, 0)))
        pvalue = 1.0 if dof == 0 else float(chi2.sf(stat, dof))
        # The normal deviate with the same two-sided p-value, signed by the dependence.
        sign = 1.0 if self._raw_corr[a, b] >= 0 or not np.isfinite(self._raw_corr[a, b]) else -1.0
        z = float(-ndtri(pvalue / 2.0)) if pvalue > 0 else np.inf
        return CITestResult(sign * z, pvalue)

    def _nodewise_wald(self, a, b, cond):
        nodes = [a, b, *cond]
        sigma = self._latent_submatrix(nodes)
        theta = np.linalg.inv(sigma[1:, 1:])
        beta = theta @ sigma[1:, 0]
        beta0 = beta.copy()
        beta0[0] = 0.0
        rest = nodes[1:]
        stack = getattr(self, "_xi_stack", None)
        if stack is not None:
            weights = np.outer(theta[0], beta0)
            np.fill_diagonal(weights, 0.0)
            infl = theta[0] @ stack[rest, a] - np.einsum(
                "vq,vqn->n", weights, stack[rest][:, rest])
            return self._wald_statistic(beta[0], infl)
        infl = np.zeros(self.n_samples_fit_)
        for vi, v in enumerate(rest):
            term = self._xi(v, a).copy()
            for qi, q in enumerate(rest):
                if q != v and beta0[qi] != 0.0:
                    term -= beta0[qi] * self._xi(v, q)
            infl += theta[0, vi] * term
        return self._wald_statistic(beta[0], infl)

    def _wald_statistic(self, beta_b, infl):
        sd = np.sqrt(np.mean(infl * infl))
        if sd == 0.0:
            return 0.0 if beta_b == 0.0 else float(np.copysign(np.inf, beta_b))
        return float(np.sqrt(self.n_samples_fit_) * beta_b / sd)

    def test(self, i, j, cond=()):
        """Test ``Z_i indep Z_j | Z_cond`` for the latent variables.

        Parameters
        ----------
        i, j : int
            Distinct column indices. The test is symmetric in ``(i, j)``.
        cond : iterable of int, default=()
            Conditioning columns, excluding ``i`` and ``j``.

        Returns
        -------
        result : CITestResult
            ``(statistic, pvalue)``. After a fallback to the chi-square test (see
            Notes), ``statistic`` is the signed normal deviate with the same
            p-value.

        Raises
        ------
        ValueError
            With ``fallback="raise"``, when the latent model does not fit.
        """
        check_is_fitted(self, "n_samples_fit_")
        a, b, cond = self._check_indices(i, j, cond)
        key = (a, b, cond)
        hit = self._results.get(key)
        if hit is not None:
            return hit
        if self.method == "fisherz" or (not cond and self.unconditional_test == "fisherz"):
            stat = self._fisherz(a, b, cond)
            result = CITestResult(stat, _two_sided(stat))
        else:
            reasons = self._model_misfit(a, b, cond)
            if reasons:
                result = self._fall_back(a, b, cond, "; ".join(reasons))
            else:
                stat = self._nodewise_wald(a, b, cond)
                result = CITestResult(stat, _two_sided(stat))
        self._results[key] = result
        return result

    def _fall_back(self, a, b, cond, reason):
        where = f"columns {a} and {b}" + (f" given {list(cond)}" if cond else "")
        if self.fallback == "raise":
            raise ValueError(f"the latent Gaussian model does not fit the test of {where}: "
                             f"{reason}. Use fallback='chi2' to test the observed codes "
                             "instead.")
        result = self._chi2_test(a, b, cond)
        self.fallbacks_[(a, b, cond)] = reason
        if getattr(self, "_warn_on_fallback", True):
            warnings.warn(f"DiscretizedCITest: the latent Gaussian model does not fit the test "
                          f"of {where} ({reason}); used the chi-square test on the observed "
                          f"codes instead (p = {result.pvalue:.3g}).", UserWarning,
                          stacklevel=4)
        return result

    def pvalue(self, i, j, cond=()):
        """Two-sided p-value of :meth:`test`.

        Parameters
        ----------
        i, j : int
            Distinct column indices.
        cond : iterable of int, default=()
            Conditioning columns.

        Returns
        -------
        pvalue : float
            The p-value of the test of ``X_i`` independent of ``X_j`` given ``cond``.
        """
        return self.test(i, j, cond).pvalue

    def __call__(self, i, j, cond=()):
        """Same as :meth:`pvalue`, for use as a plain callable in PC loops."""
        return self.pvalue(i, j, cond)

    def to_causallearn(self, name=None):
        """Register this test with causal-learn and return its method name.

        The returned name can be passed as ``indep_test`` to
        ``causallearn.search.ConstraintBased.PC.pc``; causal-learn then fits a
        clone of this (unfitted) configuration on the data it is given.

        Parameters
        ----------
        name : str, default=None
            Registration name; ``"skpaper_<method>"`` when None.

        Returns
        -------
        name : str
            The method name to pass to causal-learn's ``pc`` or ``fci``.
        """
        from ._causallearn import register_with_causallearn

        if name is None:
            name = f"skpaper_{self.method}"
        if not isinstance(name, str) or not name:
            raise TypeError(f"name must be a non-empty str or None, got {name!r}.")
        return register_with_causallearn(self, name)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        return tags
