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


# ---------------------------------------------------------------- sequential decisions

#: The verdicts of :func:`decide`: the paper's effect shown (``"pass"``), its
#: effect of interest excluded (``"contradicted"``), or neither (``"undecided"``).
VERDICTS = ("pass", "contradicted", "undecided")


def _check_looks(looks):
    looks = tuple(int(n) for n in looks)
    if not looks or any(b <= a for a, b in zip(looks, looks[1:])) or looks[0] < 2:
        raise ValueError(f"looks must be increasing integers of at least 2, got {looks!r}.")
    return looks


def spending_schedule(looks, alpha=0.05):
    """One-sided error spent at each look of a group-sequential design.

    The linear spending function of Lan & DeMets (1983), ``alpha * n_k / n_K``,
    is applied with the union (Bonferroni) bound instead of the joint
    boundary computation: the level spent at look ``k`` is
    ``alpha * (n_k - n_{k-1}) / n_K``. The levels sum to ``alpha``, so the
    probability that *any* look makes a given false decision is at most
    ``alpha`` whatever the dependence between the looks and whatever the
    rule that chooses where to stop. That is the guarantee optional
    stopping needs; it is conservative (a joint boundary would be tighter).

    Parameters
    ----------
    looks : sequence of int
        Planned numbers of paired seeds at each look, increasing, the first >= 2.
    alpha : float, default=0.05
        Total one-sided error of each decision (reproduce, contradict).

    Returns
    -------
    levels : tuple of float
        One-sided level of each look.

    Examples
    --------
    >>> spending_schedule((4, 8, 16))
    (0.0125, 0.0125, 0.025)
    """
    looks = _check_looks(looks)
    if not 0.0 < float(alpha) < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha!r}.")
    previous, levels = 0, []
    for n in looks:
        levels.append(float(alpha) * (n - previous) / looks[-1])
        previous = n
    return tuple(levels)


def _t_bounds(values, level):
    """One-sided lower and upper t bounds at ``level`` (each), and mean and SD."""
    from scipy.stats import t

    n = values.size
    mean = float(values.mean())
    sd = float(values.std(ddof=1)) if n > 1 else float("nan")
    if n < 2:
        return mean, sd, float("nan"), float("nan")
    if sd == 0.0:
        return mean, 0.0, mean, mean
    half = float(t.ppf(1.0 - level, n - 1)) * sd / math.sqrt(n)
    return mean, sd, mean - half, mean + half


def seeds_needed(sd, gap, *, alpha=0.05, power=0.8, max_seeds=100_000):
    """Paired seeds a one-look t test needs to decide at the effect of interest.

    The smallest ``n`` with ``t_{1-alpha, n-1} + t_{power, n-1} <= gap * sqrt(n) / sd``:
    with ``n`` seeds, a true effect at one end (``margin`` or the effect of
    interest) is told from the other with probability ``power``.

    Parameters
    ----------
    sd : float
        Standard deviation of the paired differences.
    gap : float
        Distance between the reproduce margin and the effect of interest.
    alpha : float, default=0.05
    power : float, default=0.8
    max_seeds : int, default=100_000
        Returned (as a cap) when even that many seeds would not do.

    Returns
    -------
    n : int or None
        None when ``sd`` is NaN or ``gap`` is 0.

    Examples
    --------
    >>> seeds_needed(1.0, 1.0)
    8
    >>> seeds_needed(0.0, 0.5)
    2
    """
    from scipy.stats import t

    return _smallest_n(sd, gap, max_seeds, lambda n, sd, gap: (
        t.ppf(1.0 - alpha, n - 1) + t.ppf(power, n - 1) <= gap * math.sqrt(n) / sd))


def _smallest_n(sd, gap, max_seeds, enough):
    """The smallest ``n >= 2`` with ``enough(n, sd, gap)`` (steps of 5% past 1,000), capped
    at ``max_seeds``; None when ``sd`` is NaN or ``gap`` is 0, 2 when ``sd`` is 0."""
    sd, gap = float(sd), abs(float(gap))
    if math.isnan(sd) or gap == 0.0:
        return None
    if sd == 0.0:
        return 2
    n = 2
    while n < max_seeds:
        if enough(n, sd, gap):
            return n
        n = n + 1 if n < 1000 else int(n * 1.05)
    return int(max_seeds)


def seeds_to_decide(sd, gap, *, alpha=0.05, max_seeds=100_000):
    """Paired seeds after which a one-look check must end decided, whatever the mean.

    The smallest ``n`` with ``2 * t_{1-alpha, n-1} * sd / sqrt(n) < gap``: the
    interval between the lower and the upper bound is then narrower than the gap between
    the reproduce margin and the effect of interest, so at least one of "lower bound >
    margin" and "upper bound < effect of interest" holds. :func:`seeds_needed` plans for
    80% power at either end; this plans for a verdict when the true effect lies anywhere,
    including between the two ends, where a check sized by power stays undecided. It
    holds for the realised SD; plan with :func:`sd_upper_limit` of a calibration SD.

    Parameters
    ----------
    sd : float
        Standard deviation of the paired differences.
    gap : float
        Distance between the reproduce margin and the effect of interest.
    alpha : float, default=0.05
        One-sided level of each bound at the look (the last look's level of a schedule).
    max_seeds : int, default=100_000
        Returned (as a cap) when even that many seeds would not do.

    Returns
    -------
    n : int or None
        None when ``sd`` is NaN or ``gap`` is 0.

    Examples
    --------
    >>> seeds_to_decide(1.0, 1.0)
    13
    >>> seeds_to_decide(1.0, 1.0) > seeds_needed(1.0, 1.0)
    True
    """
    from scipy.stats import t

    return _smallest_n(sd, gap, max_seeds, lambda n, sd, gap: (
        2.0 * t.ppf(1.0 - alpha, n - 1) * sd / math.sqrt(n) < gap))


def sd_upper_limit(sd, n, *, confidence=0.9):
    """One-sided upper confidence limit of a standard deviation estimated from ``n`` values.

    ``sd * sqrt((n - 1) / chi2_{1 - confidence, n - 1})``, exact for normal differences.
    The seeds of a claim are planned on a calibration setting from a handful of seeds,
    whose SD is a loose estimate: planning with the point estimate under-sizes the looks
    whenever the calibration happened to be calm (one claim's calibration gave 0.029 on 8
    seeds, its evaluation 0.081 on 80). Feeding this limit to :func:`seeds_needed`
    plans for the spread the calibration cannot rule out.

    Parameters
    ----------
    sd : float
        Sample standard deviation (``ddof=1``), at least 0.
    n : int
        Number of values it was computed from, at least 2.
    confidence : float, default=0.9
        One-sided confidence level, in (0, 1).

    Returns
    -------
    limit : float

    Examples
    --------
    >>> round(sd_upper_limit(0.022, 16), 4)
    0.0291
    >>> sd_upper_limit(0.0, 5)
    0.0
    """
    from scipy.stats import chi2

    sd = float(sd)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n must be an int of at least 2, got {n!r}.")
    if math.isnan(sd) or sd < 0:
        raise ValueError(f"sd must be a non-negative float, got {sd!r}.")
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}.")
    return sd * math.sqrt((n - 1) / chi2.ppf(1.0 - float(confidence), n - 1))


@dataclass(frozen=True)
class Decision:
    """The verdict of a one-sided check on a mean, possibly after several looks.

    Attributes
    ----------
    verdict : {"pass", "contradicted", "undecided"}
        ``"pass"``: the bound on the paper's side beats ``margin``;
        ``"contradicted"``: the other bound excludes ``effect_of_interest``
        (the effect is absent, or smaller than the one of interest);
        ``"undecided"``: neither, at every look so far.
    alternative : {"greater", "less"}
        The paper's direction.
    margin, effect_of_interest : float
        Threshold to reproduce and effect to exclude to contradict.
    n : int
        Values used (paired seeds).
    mean, sd : float
        Mean and standard deviation (``ddof=1``) of all ``n`` values.
    lower, upper : float
        One-sided bounds at the look that decided (or at the last look),
        each at that look's level.
    look : int
        Number of values at the look that decided, or ``n``.
    levels : tuple of float
        One-sided level spent at each look (see :func:`spending_schedule`).
    looks : tuple of int
        The looks that were reached.
    seeds_needed : int or None
        Seeds the observed SD needs to decide at 80% power (:func:`seeds_needed`).
    values : tuple of float
    """

    verdict: str
    alternative: str
    margin: float
    effect_of_interest: float
    n: int
    mean: float
    sd: float
    lower: float
    upper: float
    look: int
    levels: tuple
    looks: tuple
    seeds_needed: object
    values: tuple
    also_excludes_effect: bool = False

    @property
    def passed(self):
        """True when the verdict is ``"pass"``."""
        return self.verdict == "pass"

    @property
    def zero_spread(self):
        """True when every value is the same (no evidence of variation at all)."""
        return self.n >= 2 and self.sd == 0.0

    def power(self):
        """``{"n_seeds", "sd", "seeds_needed"}`` for the JSON of a claim."""
        return {"n_seeds": self.n, "sd": self.sd, "seeds_needed": self.seeds_needed}

    def to_dict(self):
        """JSON-ready summary (values included)."""
        return {"verdict": self.verdict, "alternative": self.alternative,
                "margin": self.margin, "effect_of_interest": self.effect_of_interest,
                "n": self.n, "mean": self.mean, "sd": self.sd, "lower_bound": self.lower,
                "upper_bound": self.upper, "decided_at": self.look,
                "looks": list(self.looks), "levels": list(self.levels),
                "seeds_needed": self.seeds_needed,
                "also_excludes_effect": self.also_excludes_effect,
                "values": list(self.values)}


def decide(values, *, effect_of_interest, alternative="greater", margin=0.0, looks=None,
           alpha=0.05):
    """Decide a one-sided claim on a mean: reproduced, contradicted or undecided.

    The check passes at a look when the one-sided t bound on the paper's side
    beats ``margin`` (``lower > margin`` for ``"greater"``); it is
    contradicted when the bound on the other side excludes the effect of
    interest (``upper < effect_of_interest``). Each look spends the level of
    :func:`spending_schedule`, so each of the two errors (a null effect
    called a pass, an effect of the size of interest called contradicted) is
    at most ``alpha`` over the whole sequence of looks, whenever the caller
    stops. The first look that decides fixes the verdict; when both sides
    decide at once (an effect that is real but smaller than the one of
    interest), the verdict is ``"contradicted"`` and ``also_excludes_effect``
    says so.

    Equivalence claims ("no gain beyond ``m``") use ``alternative="less"``
    and ``margin=effect_of_interest=m``: reproduced when the upper bound is
    below ``m``, contradicted when the lower bound is above it.

    Parameters
    ----------
    values : array-like of float
        One figure per paired seed (e.g. ``method - baseline``), in the order
        the seeds were drawn.
    effect_of_interest : float
        The smallest effect that would confirm the paper, in the paper's
        direction: ``>= margin`` for ``"greater"``, ``<= margin`` for ``"less"``.
    alternative : {"greater", "less"}, default="greater"
    margin : float, default=0.0
    looks : sequence of int or None, default=None
        The planned schedule (e.g. ``(4, 8, 16)``); every look not beyond
        ``len(values)`` is evaluated on the prefix of that length. None
        means one look at ``len(values)``.
    alpha : float, default=0.05

    Returns
    -------
    decision : Decision

    Examples
    --------
    >>> decide([0.31, 0.28, 0.35, 0.30], effect_of_interest=0.1).verdict
    'pass'
    >>> decide([0.01, -0.02, 0.0, 0.015, -0.01, 0.005], effect_of_interest=0.1).verdict
    'contradicted'
    >>> decide([0.3, -0.2, 0.1], effect_of_interest=0.1).verdict
    'undecided'
    """
    if not 0.0 < float(alpha) < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha!r}.")
    _check_common(alternative, 1.0 - float(alpha), margin)
    arr = _as_values(values, "values")
    eoi = float(effect_of_interest)
    if not math.isfinite(eoi):
        raise ValueError(f"effect_of_interest must be finite, got {effect_of_interest!r}.")
    sign = 1.0 if alternative == "greater" else -1.0
    if sign * (eoi - float(margin)) < 0:
        raise ValueError(f"effect_of_interest must lie on the paper's side of margin "
                         f"({alternative}): got effect_of_interest={eoi}, margin={margin}.")
    if looks is None:
        planned, levels = (arr.size,), (float(alpha),)
    else:
        planned = _check_looks(looks)
        if arr.size > planned[-1]:
            raise ValueError(f"{arr.size} values exceed the last look ({planned[-1]}).")
        levels = spending_schedule(planned, alpha)
    reached = tuple(n for n in planned if n <= arr.size) or (arr.size,)
    verdict, look, lower, upper, both = "undecided", arr.size, float("nan"), float("nan"), False
    for n, level in zip(reached, levels):
        _, _, lower, upper = _t_bounds(arr[:n], level)
        if math.isnan(lower):
            continue
        near, far = (lower, upper) if sign > 0 else (upper, lower)
        passes = sign * (near - float(margin)) > 0
        excludes = sign * (far - eoi) < 0
        if passes or excludes:
            verdict = "contradicted" if excludes else "pass"
            both, look = passes and excludes, n
            break
    mean = float(arr.mean())
    sd = float(arr.std(ddof=1)) if arr.size > 1 else float("nan")
    return Decision(verdict=verdict, alternative=alternative, margin=float(margin),
                    effect_of_interest=eoi, n=int(arr.size), mean=mean, sd=sd,
                    lower=float(lower), upper=float(upper), look=int(look),
                    levels=tuple(levels[:len(reached)]), looks=reached,
                    seeds_needed=seeds_needed(sd, eoi - float(margin), alpha=float(alpha)),
                    values=tuple(float(v) for v in arr), also_excludes_effect=bool(both))
