"""Statistics shared by every claim: paired seeds, t bounds, binomial bands.

A comparison claim runs every arm on the same list of seeds
(:func:`claim_seeds`) and asserts the paper's direction on the paired
differences with a one-sided confidence bound (:func:`paired_difference`),
so that a verdict needs more than one lucky seed. Everything here is a thin
layer over :mod:`scipy.stats` and :mod:`statsmodels`.
"""

import math
from dataclasses import dataclass

import numpy as np

_ALTERNATIVES = ("greater", "less")


def claim_seeds(seed, n, *key):
    """Return ``n`` seeds derived from ``seed`` (and an optional ``key``), for paired arms.

    Every arm of a comparison runs on the same list, so that differences
    are paired. Different keys give independent lists from one base seed.

    Parameters
    ----------
    seed : int
        The run's seed (``skpaper reproduce --seed``).
    n : int
        Number of seeds, at least 1.
    *key : int
        Extra integers that select an independent stream (e.g. a sample size).

    Returns
    -------
    seeds : list of int
        ``n`` integers in ``[0, 2**31 - 1)``.

    Examples
    --------
    >>> claim_seeds(0, 3) == claim_seeds(0, 3)
    True
    >>> len(set(claim_seeds(0, 5)))
    5
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}.")
    state = np.random.SeedSequence([int(seed), *map(int, key)]).generate_state(int(n), np.uint64)
    return [int(s % (2**31 - 1)) for s in state]


@dataclass(frozen=True)
class MeanBound:
    """One-sided t confidence bound on a mean (of paired differences or of values).

    Attributes
    ----------
    values : tuple of float
        The values (for a paired comparison, ``method - baseline`` per seed).
    mean, std : float
        Sample mean and standard deviation (``ddof=1``; 0 for one value).
    bound : float
        The one-sided bound: lower for ``alternative="greater"``, upper for
        ``"less"``; NaN with fewer than two values.
    alternative : {"greater", "less"}
        Direction asserted: ``mean > margin`` or ``mean < margin``.
    margin : float
        The value the bound must beat.
    confidence : float
        Confidence level of the bound.
    passed : bool
        ``bound > margin`` (greater) or ``bound < margin`` (less); False
        when the bound is NaN.
    """

    values: tuple
    mean: float
    std: float
    bound: float
    alternative: str
    margin: float
    confidence: float
    passed: bool
    method_mean: float | None = None
    baseline_mean: float | None = None

    @property
    def n(self):
        return len(self.values)

    def to_dict(self):
        """JSON-ready summary of the bound and the values it came from."""
        out = {"n": self.n, "mean": self.mean, "std": self.std,
               f"{'lower' if self.alternative == 'greater' else 'upper'}_bound": self.bound,
               "alternative": self.alternative, "margin": self.margin,
               "confidence": self.confidence, "passed": self.passed,
               "values": list(self.values)}
        if self.method_mean is not None:
            out["method_mean"] = self.method_mean
            out["baseline_mean"] = self.baseline_mean
        return out


def _check_common(alternative, confidence, margin):
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}.")
    if not 0.5 <= float(confidence) < 1.0:
        raise ValueError(f"confidence must be in [0.5, 1), got {confidence!r}.")
    if not math.isfinite(float(margin)):
        raise ValueError(f"margin must be finite, got {margin!r}.")


def _as_values(values, name):
    arr = np.asarray(values, dtype=float).ravel()
    if arr.size == 0:
        raise ValueError(f"{name} must hold at least one value.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {arr.tolist()}.")
    return arr


def mean_interval(values, *, alternative="greater", margin=0.0, confidence=0.95):
    """One-sided Student-t bound on the mean of ``values``, compared with ``margin``.

    Parameters
    ----------
    values : array-like of float
        One figure per seed (e.g. a gain measured on each of five seeds).
    alternative : {"greater", "less"}, default="greater"
        ``"greater"`` asserts ``mean > margin`` with the lower bound,
        ``"less"`` asserts ``mean < margin`` with the upper bound.
    margin : float, default=0.0
        The value the bound must beat.
    confidence : float, default=0.95
        Confidence level of the one-sided bound.

    Returns
    -------
    result : MeanBound

    Notes
    -----
    The bound is the one-sided interval of :func:`scipy.stats.ttest_1samp`.
    With a single value it is NaN and the check fails: one seed is no
    evidence. With identical values the bound equals their mean.

    Examples
    --------
    >>> mean_interval([0.02, 0.03, 0.025]).passed
    True
    >>> mean_interval([0.02, -0.03, 0.01]).passed
    False
    """
    _check_common(alternative, confidence, margin)
    arr = _as_values(values, "values")
    identical = bool(np.ptp(arr) == 0.0)
    mean = float(arr[0]) if identical else float(arr.mean())
    std = 0.0 if identical else float(arr.std(ddof=1))
    if arr.size < 2:
        bound = float("nan")
    elif identical:
        bound = mean
    else:
        from scipy.stats import ttest_1samp

        interval = ttest_1samp(arr, 0.0, alternative=alternative).confidence_interval(
            confidence_level=float(confidence))
        bound = float(interval.low if alternative == "greater" else interval.high)
    if math.isnan(bound):
        passed = False
    else:
        passed = bound > margin if alternative == "greater" else bound < margin
    return MeanBound(values=tuple(float(v) for v in arr), mean=mean, std=std, bound=bound,
                     alternative=alternative, margin=float(margin),
                     confidence=float(confidence), passed=bool(passed))


def paired_difference(method, baseline, *, alternative="greater", margin=0.0, confidence=0.95):
    """One-sided paired t bound on ``mean(method - baseline)``.

    ``method[i]`` and ``baseline[i]`` must come from the same seed (same data,
    same budget): the test is on the per-seed differences.

    Parameters
    ----------
    method, baseline : array-like of float, same length
        Per-seed figures of the two arms.
    alternative : {"greater", "less"}, default="greater"
        The paper's direction: ``"greater"`` asserts the method's figure is
        larger than the baseline's by more than ``margin``; ``"less"`` that
        it is smaller (``mean(method - baseline) < margin``; use a negative
        margin to demand a decrease of at least that much).
    margin : float, default=0.0
    confidence : float, default=0.95

    Returns
    -------
    result : MeanBound
        With ``method_mean`` and ``baseline_mean`` filled in.

    Examples
    --------
    >>> r = paired_difference([0.91, 0.93, 0.92], [0.90, 0.91, 0.905])
    >>> r.passed, round(r.mean, 3)
    (True, 0.015)
    """
    a = _as_values(method, "method")
    b = _as_values(baseline, "baseline")
    if a.shape != b.shape:
        raise ValueError(f"method and baseline must have the same length for a paired "
                         f"comparison, got {a.size} and {b.size}.")
    result = mean_interval(a - b, alternative=alternative, margin=margin, confidence=confidence)
    return MeanBound(**{**result.__dict__, "method_mean": float(a.mean()),
                        "baseline_mean": float(b.mean())})


def proportion_interval(count, nobs, confidence=0.95, method="beta"):
    """Two-sided confidence interval of a binomial proportion (Clopper–Pearson by default).

    Parameters
    ----------
    count : int
        Number of successes (e.g. rejections).
    nobs : int
        Number of trials, at least 1.
    confidence : float, default=0.95
    method : str, default="beta"
        Any method of :func:`statsmodels.stats.proportion.proportion_confint`;
        ``"beta"`` is Clopper–Pearson.

    Returns
    -------
    low, high : float

    Examples
    --------
    >>> low, high = proportion_interval(10, 200)
    >>> low < 0.05 < high
    True
    """
    from statsmodels.stats.proportion import proportion_confint

    if int(nobs) < 1 or not 0 <= int(count) <= int(nobs):
        raise ValueError(f"count must be in [0, nobs] and nobs >= 1, got count={count!r}, "
                         f"nobs={nobs!r}.")
    low, high = proportion_confint(int(count), int(nobs), alpha=1.0 - float(confidence),
                                   method=method)
    return float(low), float(high)


def binomial_band(nobs, p, confidence=0.99):
    """Central band of rejection rates a level-``p`` test shows over ``nobs`` trials.

    Returns the interval of :func:`scipy.stats.binom.interval`, as rates.

    Examples
    --------
    >>> low, high = binomial_band(200, 0.05)
    >>> low < 0.05 < high
    True
    """
    from scipy.stats import binom

    low, high = binom.interval(float(confidence), int(nobs), float(p))
    return float(low) / int(nobs), float(high) / int(nobs)


def seed_summary(values):
    """Mean, standard deviation, minimum, maximum and count of per-seed figures.

    Examples
    --------
    >>> seed_summary([1.0, 2.0, 3.0])["mean"]
    2.0
    """
    arr = _as_values(values, "values")
    return {"mean": float(arr.mean()), "std": float(arr.std(ddof=1)) if arr.size > 1 else 0.0,
            "min": float(arr.min()), "max": float(arr.max()), "n": int(arr.size),
            "values": arr.tolist()}
