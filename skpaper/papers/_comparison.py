"""One vocabulary for claims: arms on the same sequential seeds, a check, a control, a verdict.

A comparison claim states *what* is compared; :func:`run_comparison` does
the rest the same way for every paper:

1. every arm runs on the same seeds (:func:`~skpaper.papers._stats.claim_seeds`),
   added in rounds at the planned looks (for example 4, 8, 16 seeds);
2. after each round the check (``method - baseline``) and the negative
   control (``control_method - control_baseline``, the mechanism removed)
   are decided with :func:`~skpaper.papers._stats.decide`, whose
   group-sequential levels keep each error at most ``alpha`` under this
   optional stopping;
3. it stops as soon as the verdict is settled (the check is decided either
   way and so is the control), else at the last look: a check decided at an
   early look keeps that verdict (the first crossing fixes it), while its
   control goes on to the looks it needs to fail or pass decisively;
4. it records each arm's parameters, training steps and examples from what
   the arms return (:class:`ArmRun`), and the power figures.

:meth:`Comparison.claim_result` then builds the :class:`ClaimResult`,
verdict, control, arms and power filled in.
"""

import contextlib
import math
from dataclasses import dataclass, field

import numpy as np

from ._stats import claim_seeds, decide

_SOURCES = ("paper", "ours")
_PROGRESS = []


@dataclass(frozen=True)
class EffectOfInterest:
    """The smallest effect that would confirm the paper in a claim's setting.

    Declared with the claim (:func:`~skpaper.papers.register_claim`), before
    it runs. A check is contradicted when its interval excludes this effect;
    an equivalence claim ("no gain") uses it as its margin.

    Parameters
    ----------
    value : float
        The effect, in the units of the claim's statistic and in the paper's
        direction (negative for a claim that a figure decreases).
    source : {"paper", "ours"}
        ``"paper"`` when it comes from a figure or table of the paper,
        ``"ours"`` when this project chose it.
    reason : str
        Where the figure comes from, or why this value.

    Examples
    --------
    >>> from skpaper.papers import EffectOfInterest
    >>> EffectOfInterest(0.02, "ours", "two points of accuracy").to_dict()["source"]
    'ours'
    """

    value: float
    source: str
    reason: str

    def __post_init__(self):
        if isinstance(self.value, bool) or not isinstance(self.value, (int, float, np.number)) \
                or not math.isfinite(float(self.value)):
            raise ValueError(f"effect_of_interest value must be a finite number, got "
                             f"{self.value!r}.")
        if self.source not in _SOURCES:
            raise ValueError(f"effect_of_interest source must be one of {_SOURCES}, got "
                             f"{self.source!r}.")
        if not isinstance(self.reason, str) or not self.reason.strip():
            raise ValueError("effect_of_interest reason must be a non-empty string.")

    def to_dict(self):
        """The effect as written into the claim's JSON.

        Returns
        -------
        effect : dict
            ``{"value", "source", "reason"}``.
        """
        return {"value": float(self.value), "source": self.source, "reason": self.reason}


@dataclass
class ArmRun:
    """What one arm returns for one seed: its figure and what it cost.

    Parameters
    ----------
    value : float
        The arm's figure on this seed (accuracy, loss, rejection, ...).
    parameters : int or None, default=None
        Trainable parameters of the arm's model.
    train_steps : int or None, default=None
        Optimiser steps (or epochs, named in ``extra``) the arm trained for.
    train_examples : int or None, default=None
        Training examples the arm saw.
    extra : dict, default={}
        Anything else worth recording about the arm (constant across seeds).

    Examples
    --------
    >>> from skpaper.papers import ArmRun
    >>> ArmRun(0.91, parameters=1200, train_steps=300, train_examples=800).value
    0.91
    """

    value: float
    parameters: int | None = None
    train_steps: int | None = None
    train_examples: int | None = None
    extra: dict = field(default_factory=dict)

    def cost(self):
        """The recorded cost fields, without the figure.

        Returns
        -------
        cost : dict
            ``parameters``, ``train_steps``, ``train_examples`` and ``extra``.
        """
        out = {"parameters": self.parameters, "train_steps": self.train_steps,
               "train_examples": self.train_examples}
        out.update(self.extra)
        return out


@contextlib.contextmanager
def progress_hook(callback):
    """Call ``callback(message)`` after every round of every comparison in the body."""
    _PROGRESS.append(callback)
    try:
        yield callback
    finally:
        _PROGRESS.remove(callback)


def _report(message):
    for callback in _PROGRESS:
        callback(message)


def _as_run(output, arm):
    if isinstance(output, ArmRun):
        run = output
    else:
        run = ArmRun(output)
    value = float(run.value)
    if not math.isfinite(value):
        raise ValueError(f"arm {arm!r} returned a non-finite figure {run.value!r}.")
    run.value = value
    return run


def _control_verdict(decision):
    """``"fail"`` only when the control's own bound excludes the effect of interest
    and it does not pass; ``"pass"`` when it passes the check; else ``"undecided"``."""
    if decision is None:
        return None
    if decision.verdict == "pass" or decision.also_excludes_effect:
        return "pass"
    if decision.verdict == "contradicted":
        return "fail"
    return "undecided"


@dataclass
class Comparison:
    """The outcome of :func:`run_comparison` or :func:`decide_claim`.

    Parameters
    ----------
    method, baseline : str or None
        Arms of the check (``baseline`` None: the method's figures alone).
    control_method, control_baseline : str or None
        Arms of the negative control, None without one.
    control_name : str or None
        Name of the control (filled in from the claim when None).
    effect_of_interest : EffectOfInterest
        Declared with the claim.
    seeds : list of int
        The paired seeds that were run.
    values : dict of str to list of float
        Per-seed figures of every arm.
    arms : dict
        What each arm cost (parameters, training steps and examples).
    decision, control_decision : Decision or None
        Verdicts of the check and of the control (see :func:`~skpaper.papers._stats.decide`).
    looks : tuple of int
        The planned looks.
    metric : str
        Name of the figure.
    alpha : float, default=0.05
        Each side's error over the whole sequence.

    See Also
    --------
    run_comparison : Run arms on sequential seeds and build one.

    Examples
    --------
    >>> from skpaper.papers import EffectOfInterest, decide_claim
    >>> comparison = decide_claim([0.9, 0.92, 0.91], [0.8, 0.81, 0.8],
    ...                           effect_of_interest=EffectOfInterest(0.05, "ours", "example"))
    >>> comparison.verdict, comparison.power()["n_seeds"]
    ('pass', 3)
    """

    method: str
    baseline: str | None
    control_method: str | None
    control_baseline: str | None
    control_name: str | None
    effect_of_interest: EffectOfInterest
    seeds: list
    values: dict
    arms: dict
    decision: object
    control_decision: object
    looks: tuple
    metric: str
    alpha: float = 0.05

    @property
    def verdict(self):
        """The check's verdict: ``"pass"``, ``"contradicted"`` or ``"undecided"``."""
        return self.decision.verdict

    @property
    def control_verdict(self):
        """The control's verdict: ``"fail"`` (decisively), ``"pass"`` or ``"undecided"``."""
        return _control_verdict(self.control_decision)

    def power(self):
        """Power figures of the check.

        Returns
        -------
        power : dict
            ``{"n_seeds", "sd", "seeds_needed"}``: seeds used, standard deviation
            of the paired differences, seeds that deviation needs to decide.
        """
        return self.decision.power()

    def observed(self):
        """The figures of the comparison, as written into ``observed``.

        Returns
        -------
        observed : dict
            The metric, seeds, the check's decision, and each arm's mean and
            per-seed figures.
        """
        means = {arm: float(np.mean(v)) for arm, v in self.values.items()}
        out = {"metric": self.metric, "n_seeds": len(self.seeds),
               "difference": f"{self.method} - {self.baseline}" if self.baseline
               else self.method,
               "check": self.decision.to_dict(), "arm_means": means,
               "per_seed": {arm: list(v) for arm, v in self.values.items()},
               "seeds": list(self.seeds)}
        return out

    def control_result(self):
        """The negative control's outcome.

        Returns
        -------
        control : ControlResult or None
            With ``verdict`` and ``zero_spread`` set; None without a control.
        """
        from ._registry import ControlResult

        if self.control_decision is None:
            return None
        verdict = self.control_verdict
        return ControlResult(
            observed={"difference": f"{self.control_method} - {self.control_baseline}"
                      if self.control_baseline else self.control_method,
                      "check": self.control_decision.to_dict()},
            passed=verdict == "pass", name=self.control_name, verdict=verdict,
            zero_spread=bool(self.control_decision.zero_spread))

    def claim_result(self, *, observed=None, expected=None, artifacts=(), notes=""):
        """A :class:`ClaimResult` with verdict, control, arms and power filled in.

        Parameters
        ----------
        observed : dict or None, default=None
            Extra figures, merged into :meth:`observed`.
        expected : dict or None, default=None
            The criterion in words; by default the margins of the check.
        artifacts : sequence of str, default=()
            Plots and tables, relative to the claim's output folder.
        notes : str, default=""
            Caveats.

        Returns
        -------
        result : ClaimResult
            Verdict, control, arms and power filled in.
        """
        from ._registry import ClaimResult

        side = ">" if self.decision.alternative == "greater" else "<"
        bound = "lower" if side == ">" else "upper"
        other = "upper" if side == ">" else "lower"
        other_side = "<" if side == ">" else ">"
        default_expected = {
            "reproduced": f"{bound} bound of mean({self.observed()['difference']}) {side} "
                          f"{self.decision.margin:g}",
            "contradicted": f"{other} bound {other_side} effect of interest "
                            f"{self.effect_of_interest.value:g}",
            "looks": list(self.looks), "alpha_each_side": self.alpha}
        return ClaimResult(observed={**self.observed(), **(observed or {})},
                           expected=expected if expected is not None else default_expected,
                           passed=self.verdict == "pass", verdict=self.verdict,
                           control=self.control_result(), arms=self.arms,
                           power=self.power(), artifacts=list(artifacts), notes=notes)


def run_comparison(arms, *, method, baseline, seed, looks, effect_of_interest,
                   alternative="greater", margin=0.0, control_method=None,
                   control_baseline=None, control_name=None, key=(), batched=False,
                   alpha=0.05, metric="figure"):
    """Run ``arms`` on the same sequential seeds and decide the check and its control.

    Parameters
    ----------
    arms : dict of str to callable
        ``arm(seed) -> float or ArmRun`` (or, with ``batched=True``,
        ``arm(list of seeds) -> list``): one figure of one arm on one seed.
        Every arm sees the same seeds, so differences are paired.
    method, baseline : str
        The arms of the check: ``method - baseline`` per seed. ``baseline``
        None checks the method's figures themselves.
    seed : int
        The run's seed; the arms' seeds are derived from it and ``key``.
    looks : sequence of int
        Planned numbers of seeds at each look, e.g. ``(4, 8, 16)``.
    effect_of_interest : EffectOfInterest
        Declared with the claim.
    alternative : {"greater", "less"}, default="greater"
        The paper's direction.
    margin : float, default=0.0
        What the bound on the paper's side must beat (the null effect).
    control_method, control_baseline : str or None, default=None
        The control's arms (the mechanism removed). ``control_baseline``
        defaults to ``baseline``. None: no control.
    control_name : str or None, default=None
        Filled in from the claim when None.
    key : tuple of int, default=()
        Selects an independent seed stream (e.g. a sample size).
    batched : bool, default=False
        Call each arm once per round with the round's seeds (batched training).
    alpha : float, default=0.05
        Each side's error over the whole sequence.
    metric : str, default="figure"
        Name of the figure, for the JSON.

    Returns
    -------
    comparison : Comparison
        Per-seed figures, verdicts of the check and control, arms and power.

    Examples
    --------
    >>> from skpaper.papers import EffectOfInterest, run_comparison
    >>> import numpy as np
    >>> def arm(shift):
    ...     return lambda s: shift + np.random.default_rng(s).normal(0, 0.01)
    >>> result = run_comparison({"new": arm(0.1), "old": arm(0.0), "off": arm(0.0)},
    ...                         method="new", baseline="old", control_method="off",
    ...                         seed=0, looks=(4, 8, 16),
    ...                         effect_of_interest=EffectOfInterest(0.05, "ours", "example"))
    >>> result.verdict, result.control_verdict
    ('pass', 'fail')
    """
    if not isinstance(effect_of_interest, EffectOfInterest):
        raise TypeError(f"effect_of_interest must be an EffectOfInterest, got "
                        f"{type(effect_of_interest).__name__}.")
    control_baseline = control_baseline or (baseline if control_method else None)
    for name in (method, baseline, control_method, control_baseline):
        if name is not None and name not in arms:
            raise ValueError(f"arm {name!r} is not among the arms {sorted(arms)}.")
    looks = tuple(int(n) for n in looks)
    seeds = claim_seeds(seed, looks[-1], *key)
    values = {arm: [] for arm in arms}
    costs = {arm: None for arm in arms}
    varying = set()
    common = dict(effect_of_interest=float(effect_of_interest.value), alternative=alternative,
                  margin=margin, looks=looks, alpha=alpha)

    def differences(a, b):
        va = np.asarray(values[a])
        return va - np.asarray(values[b]) if b is not None else va

    decision = control = None
    done = 0
    for look in looks:
        new = seeds[done:look]
        for arm, func in arms.items():
            outputs = func(list(new)) if batched else [func(s) for s in new]
            if len(outputs) != len(new):
                raise ValueError(f"arm {arm!r} returned {len(outputs)} figures for "
                                 f"{len(new)} seeds.")
            for output in outputs:
                run = _as_run(output, arm)
                values[arm].append(run.value)
                if costs[arm] is None:
                    costs[arm] = run.cost()
                elif costs[arm] != run.cost():
                    varying.add(arm)
        done = look
        decision = decide(differences(method, baseline), **common)
        if control_method is not None:
            control = decide(differences(control_method, control_baseline), **common)
        _report(f"{done}/{looks[-1]} seeds: check {decision.verdict} "
                f"[{decision.lower:.4g}, {decision.upper:.4g}]"
                + (f", control {_control_verdict(control)}" if control is not None else ""))
        settled_control = control is None or _control_verdict(control) != "undecided"
        if decision.verdict != "undecided" and settled_control:
            break
    arm_record = {}
    for arm in arms:
        record = dict(costs[arm] or {})
        if arm in varying:
            record["note"] = "cost varies across seeds; first seed's shown"
        record["seeds"] = len(values[arm])
        arm_record[arm] = record
    return Comparison(method=method, baseline=baseline, control_method=control_method,
                      control_baseline=control_baseline, control_name=control_name,
                      effect_of_interest=effect_of_interest, seeds=seeds[:done],
                      values=values, arms=arm_record, decision=decision,
                      control_decision=control, looks=looks, metric=metric, alpha=alpha)


def decide_claim(method, baseline=None, *, effect_of_interest, alternative="greater",
                 margin=0.0, control_method=None, control_baseline=None, looks=None,
                 alpha=0.05, arms=None, metric="figure", seeds=None):
    """:class:`Comparison` from figures already computed on fixed paired seeds.

    For claims whose figures come from one batch of seeds (or replications):
    the same check and control rule as :func:`run_comparison`, with one look
    unless ``looks`` is given (then the figures must be in seed order).

    Parameters
    ----------
    method : array-like of float
        Per-seed figures of the method.
    baseline : array-like of float or None, default=None
        Per-seed figures of the baseline (None: the method's figures
        themselves are checked).
    effect_of_interest : EffectOfInterest
        Declared with the claim.
    alternative : {"greater", "less"}, default="greater"
        The paper's direction.
    margin : float, default=0.0
        What the bound on the paper's side must beat.
    control_method : array-like of float or None, default=None
        Per-seed figures of the control (the mechanism removed).
    control_baseline : array-like of float or None, default=None
        What the control is compared with; defaults to ``baseline``.
    looks : sequence of int or None, default=None
        Looks at which the figures (in seed order) are evaluated; None: one.
    alpha : float, default=0.05
        Each side's error.
    arms : dict or None, default=None
        ``{arm: {"parameters", "train_steps", "train_examples", ...}}``.
    metric : str, default="figure"
        Name of the figure.
    seeds : list of int or None, default=None
        The seeds the figures came from, for the JSON.

    Returns
    -------
    comparison : Comparison
        Verdicts of the check and of the control, and the power figures.

    Examples
    --------
    >>> from skpaper.papers import EffectOfInterest, decide_claim
    >>> eoi = EffectOfInterest(0.05, "ours", "example")
    >>> decide_claim([0.9, 0.92, 0.91], [0.8, 0.81, 0.8], effect_of_interest=eoi,
    ...              control_method=[0.8, 0.8, 0.81]).control_verdict
    'fail'
    """
    if not isinstance(effect_of_interest, EffectOfInterest):
        raise TypeError(f"effect_of_interest must be an EffectOfInterest, got "
                        f"{type(effect_of_interest).__name__}.")
    named = {"method": method}
    if baseline is not None:
        named["baseline"] = baseline
    if control_method is not None:
        named["control"] = control_method
        if control_baseline is not None:
            named["control_baseline"] = control_baseline
    values = {k: [float(x) for x in np.asarray(v, dtype=float).ravel()]
              for k, v in named.items()}
    sizes = {len(v) for v in values.values()}
    if len(sizes) != 1:
        raise ValueError(f"every arm needs one figure per paired seed, got lengths "
                         f"{ {k: len(v) for k, v in values.items()} }.")
    common = dict(effect_of_interest=float(effect_of_interest.value), alternative=alternative,
                  margin=margin, looks=looks, alpha=alpha)
    base = np.asarray(values.get("baseline", 0.0))
    decision = decide(np.asarray(values["method"]) - base, **common)
    control = None
    if control_method is not None:
        cbase = np.asarray(values.get("control_baseline", values.get("baseline", 0.0)))
        control = decide(np.asarray(values["control"]) - cbase, **common)
    n = sizes.pop()
    return Comparison(method="method", baseline="baseline" if baseline is not None else None,
                      control_method="control" if control_method is not None else None,
                      control_baseline=("control_baseline" if control_baseline is not None
                                        else "baseline" if baseline is not None else None)
                      if control_method is not None else None,
                      control_name=None, effect_of_interest=effect_of_interest,
                      seeds=list(seeds) if seeds is not None else list(range(n)),
                      values=values, arms=arms or {}, decision=decision,
                      control_decision=control, looks=tuple(looks) if looks else (n,),
                      metric=metric, alpha=alpha)


def all_of(comparisons, *, observed, artifacts, notes):
    """One :class:`ClaimResult` from several comparisons that must all hold.

    The check passes when every comparison passes and is contradicted when
    any is; the control fails (decisively) only when every control does,
    and passes when any passes. Each comparison keeps its own figures in
    ``observed["by_setting"]``; the power figures are those of the setting
    that needs the most seeds.

    Parameters
    ----------
    comparisons : dict of str to Comparison
        One comparison per setting (a sample size, a world), each with a control.
    observed : dict
        Extra figures.
    artifacts : sequence of str
        Plots and tables.
    notes : str
        Caveats.

    Returns
    -------
    result : ClaimResult
    """
    from ._registry import ClaimResult, ControlResult

    verdicts = [c.verdict for c in comparisons.values()]
    verdict = ("contradicted" if "contradicted" in verdicts else
               "pass" if all(v == "pass" for v in verdicts) else "undecided")
    controls = [c.control_result() for c in comparisons.values()]
    control_verdicts = [c.verdict for c in controls]
    control_verdict = ("pass" if "pass" in control_verdicts else
                       "fail" if all(v == "fail" for v in control_verdicts) else "undecided")
    by_setting = {label: {**c.observed(), "control": c.control_result().observed,
                          "control_verdict": c.control_verdict}
                  for label, c in comparisons.items()}
    powers = {label: c.power() for label, c in comparisons.items()}
    worst = max(powers.values(), key=lambda p: p["seeds_needed"] or 0)
    arms = {}
    for label, c in comparisons.items():
        for arm, record in c.arms.items():
            arms[f"{arm} [{label}]"] = record
    first = next(iter(comparisons.values()))
    return ClaimResult(
        observed={"by_setting": by_setting, **observed},
        expected={"reproduced": "every setting passes: " + str(
                      first.claim_result().expected["reproduced"]),
                  "contradicted": "any setting excludes the effect of interest "
                                  f"{first.effect_of_interest.value:g}"},
        passed=verdict == "pass", verdict=verdict,
        control=ControlResult(observed={label: c.control_result().observed
                                        for label, c in comparisons.items()},
                              passed=control_verdict == "pass", verdict=control_verdict,
                              zero_spread=any(c.zero_spread for c in controls)),
        arms=arms, power={**worst, "by_setting": powers}, artifacts=list(artifacts),
        notes=notes)


def coverage_comparison(arms, *, method, control_method, seed, looks, key=(),
                         effect_of_interest, under, over, metric):
    """Coverage decided on both sides on the same sequential trials.

    ``under`` is the margin the lower bound must beat, ``over`` the one the
    upper bound must stay below; the nominal rate is the effect of interest
    of both sides. Trials are added look by look until the verdict is
    settled (either side contradicted, or both passing) and the control, on
    the under-coverage side, is decided too, or the last look.
    Returns ``(comparison of the under side, Decision of the over side,
    verdict)``; the verdict is ``"contradicted"`` when either side is.
    """
    from ._stats import decide

    looks = tuple(looks)
    seeds = claim_seeds(seed, looks[-1], *key)
    values = {name: [] for name in arms}
    done = 0
    for look in looks:
        # Each trial runs once; every look sees the prefix of the same trials
        # and spends the level the full planned schedule gives it.
        for name, arm in arms.items():
            values[name].extend(arm(s) for s in seeds[done:look])
        done = look
        cmp = decide_claim(values[method], effect_of_interest=effect_of_interest,
                           alternative="greater", margin=under,
                           control_method=values[control_method], looks=looks,
                           seeds=seeds[:look], metric=metric)
        high = decide(values[method], effect_of_interest=float(effect_of_interest.value),
                      alternative="less", margin=over, looks=looks)
        verdicts = (cmp.verdict, high.verdict)
        settled = ("contradicted" in verdicts or verdicts == ("pass", "pass"))
        if settled and cmp.control_verdict != "undecided":
            break
    cmp.values = {name: v for name, v in values.items()}
    cmp.looks = tuple(looks)
    verdict = ("contradicted" if "contradicted" in verdicts else
               "pass" if verdicts == ("pass", "pass") else "undecided")
    return cmp, high, verdict
