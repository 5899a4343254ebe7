"""Claim and paper registry behind ``skpaper list`` and ``skpaper reproduce``.

A paper module calls :func:`register_paper` once and decorates each claim
function with :func:`register_claim`. A claim function has the signature
``func(scale, seed, out_dir) -> ClaimResult``: ``scale`` is one of
:data:`SCALES`, ``seed`` an int that must drive every random draw, and
``out_dir`` a :class:`pathlib.Path` (already created) for its plots.
Asserting claims declare their effect of interest
(:class:`~skpaper.papers.EffectOfInterest`) when they are registered, and
most build their result with :func:`~skpaper.papers.run_comparison`.

Every claim ends in one of :data:`STATUSES`:

``"reproduced"``
    The check passed (its bound beats the margin in the paper's direction)
    and its negative control (the same check with the paper's mechanism
    removed) failed decisively: the control's own bound excludes the
    effect of interest.
``"contradicted"``
    The check's interval excludes the effect of interest in the paper's
    direction: the effect is absent, or smaller than the one of interest,
    with the stated confidence.
``"inconclusive"``
    Neither the check nor its opposite was decided at the claim's largest
    budget.
``"uninformative"``
    The check passed, but the control did not fail decisively: it passed
    too, stayed undecided, had no bound, or its figures had zero spread (a
    control that fails by construction is no control). The pass is no
    evidence.
``"reported"``
    The claim asserts nothing (an ablation, a figure, a measurement), or it
    has no negative control. It never counts as reproduced.
``"error"``
    The claim raised, or returned something the framework rejects.
"""

import contextlib
import contextvars
import functools
import importlib
import json
import math
import os
import pkgutil
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from numbers import Real
from pathlib import Path

from ._comparison import EffectOfInterest

#: ``smoke``: seconds (what the tests run); ``quick``: the committed reports' scale
#: (the default; docs/results records each claim's time and the load); ``full``: paper-sized.
SCALES = ("smoke", "quick", "full")

#: Every status a claim can end in (see the module docstring).
STATUSES = ("reproduced", "contradicted", "inconclusive", "uninformative", "reported", "error")

#: Statuses that make ``skpaper reproduce --strict`` exit non-zero.
FAILING_STATUSES = ("contradicted", "inconclusive", "uninformative", "error")

#: Verdicts a claim's check can return, and a control's.
CHECK_VERDICTS = ("pass", "contradicted", "undecided")
CONTROL_VERDICTS = ("fail", "pass", "undecided")

_PAPERS = {}
_CLAIMS = {}


@dataclass(frozen=True)
class Paper:
    """A reproducible paper (``kind="paper"``) or a framework self-check (``kind="selfcheck"``).

    Parameters
    ----------
    slug : str
        Short name of the paper, used on the command line and in result paths.
    title : str
        Title of the paper.
    module : str
        Module of :mod:`skpaper.papers` that registers its claims.
    kind : {"paper", "selfcheck"}, default="paper"
        A paper, or a check of the reproduction framework itself.
    quick_cost_s : float or None, default=None
        Rough seconds of its claims at ``--scale quick`` on one idle core. Only a
        scheduling hint: ``skpaper reproduce --jobs N`` starts the costliest papers
        first; no figure depends on it.

    See Also
    --------
    register_paper : Create and register a paper.

    Examples
    --------
    >>> from skpaper.papers import get_papers
    >>> paper = get_papers(kind="paper")[0]
    >>> paper.kind
    'paper'
    """

    slug: str
    title: str
    module: str
    kind: str = "paper"
    quick_cost_s: float | None = None


@dataclass
class ControlResult:
    """Outcome of a claim's negative control: the same check, the paper's mechanism removed.

    Parameters
    ----------
    observed : dict
        The control's figures.
    passed : bool
        Whether the control passes the claim's check. It should not: a
        control that passes makes the claim ``"uninformative"``.
    name : str or None
        Filled in from :func:`register_claim` when left None.
    verdict : {"fail", "pass", "undecided"} or None, default=None
        ``"fail"`` only when the control's own bound excludes a pass (the
        effect of interest); :func:`~skpaper.papers.run_comparison` sets it.
        None (no bound) never counts as a failed control.
    zero_spread : bool or None, default=None
        True when the control's figures do not vary at all (identical arms,
        an output that is 0 whatever the method does): such a control fails
        by construction and is flagged.

    Examples
    --------
    >>> from skpaper.papers import ControlResult
    >>> ControlResult(observed={"gain": 0.01}, passed=False, verdict="fail").verdict
    'fail'
    """

    observed: dict
    passed: bool
    name: str | None = None
    verdict: str | None = None
    zero_spread: bool | None = None


@dataclass
class ClaimResult:
    """Outcome of one claim at one scale.

    Parameters
    ----------
    observed : dict
        Measured figures (JSON-serialisable scalars or short lists).
    expected : dict
        The criterion, as figures or as a short description
        (``{"gain_lower_bound": "> 0"}``).
    passed : bool or None, default=None
        Whether ``observed`` meets ``expected``; None for a reported claim.
    verdict : {"pass", "contradicted", "undecided"} or None, default=None
        The decision of the check. None (a claim that only returns
        ``passed``) reads ``passed=True`` as ``"pass"`` and ``passed=False``
        as ``"undecided"``: a failed check is not, by itself, evidence
        against the paper.
    power : dict or None, default=None
        ``{"n_seeds", "sd", "seeds_needed"}``: paired seeds used, standard
        deviation of the paired differences, and the seeds that standard
        deviation needs to decide at the effect of interest.
    control : ControlResult or None, default=None
        The negative control's outcome; required for an asserting claim
        registered with a ``control``.
    arms : dict or None, default=None
        For comparisons: ``{arm: {"parameters": ..., "train_steps": ...,
        "train_examples": ...}}``, so that the fairness of the comparison
        can be read from the JSON.
    status : str, default=""
        One of :data:`STATUSES`, set by :func:`run_claim`.
    runtime_s : float, default=0.0
        Wall time, filled in by :func:`run_claim`.
    artifacts : list of str, default=[]
        Paths (relative to the claim's output folder) of plots and tables.
    notes : str, default=""
        Caveats, e.g. why a scale is too small to show the effect.
    error : str or None, default=None
        Traceback text when the claim raised instead of returning.
    precheck_failed : str or None, default=None
        Why a pre-check, run before the check, found that the test bed cannot
        show the paper's mechanism (for example: the learnt features do not
        beat a pixel baseline). The claim is then ``"uninformative"`` with
        this reason, whatever its check returned; None: no pre-check failed.

    Examples
    --------
    >>> from skpaper.papers import ClaimResult
    >>> result = ClaimResult(observed={"gain": 0.2}, expected={"gain": "> 0"}, passed=True)
    >>> result.to_dict()["observed"]
    {'gain': 0.2}
    """

    observed: dict
    expected: dict
    passed: bool | None = None
    verdict: str | None = None
    power: dict | None = None
    control: ControlResult | None = None
    arms: dict | None = None
    status: str = ""
    runtime_s: float = 0.0
    artifacts: list = field(default_factory=list)
    notes: str = ""
    error: str | None = None
    precheck_failed: str | None = None

    def to_dict(self):
        """Return the result as a JSON-serialisable dict.

        Returns
        -------
        result : dict
            Every field, with numpy values turned into Python ones and
            non-finite floats and paths into strings.
        """
        return _jsonable(asdict(self))


@dataclass(frozen=True)
class Claim:
    """One claim of a paper: an id, a sentence, and the function that checks it.

    Parameters
    ----------
    paper, claim_id, description : str
        Slug of the paper, identifier of the claim within it, and a one-line
        description.
    func : callable
        ``func(scale, seed, out_dir) -> ClaimResult``.
    paper_statement : str, default=""
        What the paper says, with section or table where known.
    check : str, default=""
        What the claim asserts, in words (the statistic, the bound, the seeds).
    control : str or None, default=None
        Name of the negative control (the check with the paper's mechanism
        removed). None for a reported claim.
    reported : bool, default=False
        True when the claim asserts nothing (status ``"reported"``).
    effect_of_interest : EffectOfInterest or None, default=None
        The smallest effect that would confirm the paper in this setting,
        declared before the run; every asserting claim has one.

    See Also
    --------
    register_claim : Create and register a claim.
    run_claim : Run a claim and record its result.

    Examples
    --------
    >>> from skpaper.papers import get_claims
    >>> claim = get_claims("framework-selfcheck")[0]
    >>> claim.key == f"{claim.paper}/{claim.claim_id}"
    True
    """

    paper: str
    claim_id: str
    description: str
    func: object = field(compare=False, repr=False)
    paper_statement: str = ""
    check: str = ""
    control: str | None = None
    reported: bool = False
    effect_of_interest: EffectOfInterest | None = None

    @property
    def key(self):
        """Identifier of the claim across papers, ``"<paper>/<claim_id>"``."""
        return f"{self.paper}/{self.claim_id}"


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "tolist"):  # numpy scalars and arrays
        return _jsonable(obj.tolist())
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, Path):
        return str(obj)
    return obj


def register_paper(slug, title, module, kind="paper", quick_cost_s=None):
    """Register a paper (or a framework self-check) under ``slug``.

    Parameters
    ----------
    slug : str
        Short name of the paper; registering a slug again replaces its paper.
    title : str
        Title of the paper.
    module : str
        Module that registers the paper's claims.
    kind : {"paper", "selfcheck"}, default="paper"
        A paper, or a check of the reproduction framework itself.
    quick_cost_s : float or None, default=None
        Rough seconds of its claims at ``--scale quick`` on one idle core, a
        scheduling hint for ``skpaper reproduce --jobs N`` (costliest first); papers
        without one count 30 s per claim.

    Returns
    -------
    paper : Paper
        The registered paper.

    Raises
    ------
    ValueError
        If ``kind`` is neither ``"paper"`` nor ``"selfcheck"``, or ``quick_cost_s`` is
        not positive and finite.
    TypeError
        If ``quick_cost_s`` is neither a real number nor None.

    See Also
    --------
    register_claim : Register a claim of a registered paper.

    Examples
    --------
    Registering a paper again with the same fields leaves the registry as it was:

    >>> from skpaper.papers import get_papers, register_paper
    >>> paper = get_papers(kind="selfcheck")[0]
    >>> register_paper(paper.slug, paper.title, paper.module, kind=paper.kind,
    ...                quick_cost_s=paper.quick_cost_s) == paper
    True
    """
    if kind not in ("paper", "selfcheck"):
        raise ValueError(f"kind must be 'paper' or 'selfcheck', got {kind!r}.")
    if quick_cost_s is not None:
        if isinstance(quick_cost_s, bool) or not isinstance(quick_cost_s, Real):
            raise TypeError(f"quick_cost_s must be a number or None, got "
                            f"{type(quick_cost_s).__name__}.")
        if not (math.isfinite(quick_cost_s) and quick_cost_s > 0):
            raise ValueError(f"quick_cost_s must be positive and finite, got {quick_cost_s!r}.")
        quick_cost_s = float(quick_cost_s)
    paper = Paper(slug=slug, title=title, module=module, kind=kind, quick_cost_s=quick_cost_s)
    _PAPERS[slug] = paper
    return paper


def register_claim(paper, claim_id, description, *, paper_statement="", check="",
                   control=None, reported=False, effect_of_interest=None):
    """Decorator registering ``func(scale, seed, out_dir) -> ClaimResult`` as a claim.

    Parameters
    ----------
    paper, claim_id, description : str
        Slug of the registered paper, identifier of the claim within it, and a
        one-line description.
    paper_statement : str, default=""
        What the paper states (section/table when known).
    check : str, default=""
        What is asserted.
    control : str or None, default=None
        Name of the negative control. An asserting claim without one is
        reported, not asserted.
    reported : bool, default=False
        The claim asserts nothing; its function returns ``passed=None``.
    effect_of_interest : EffectOfInterest, dict or None, default=None
        The smallest effect that would confirm the paper in this setting,
        with its provenance (``source="paper"`` with the figure, or
        ``"ours"`` with the reason). Required for an asserting claim (one
        with a control); a dict is passed to :class:`EffectOfInterest`.

    Returns
    -------
    decorator : callable
        Registers the function it decorates and returns it unchanged.

    Raises
    ------
    ValueError
        If a reported claim names a control. (An asserting claim without an
        effect of interest registers, but ends in ``"error"`` when run.)

    See Also
    --------
    run_claim : Run a registered claim.

    Examples
    --------
    Registering a claim again with the same fields leaves the registry as it was:

    >>> from skpaper.papers import ClaimResult, get_claims, register_claim
    >>> claim = get_claims("framework-selfcheck")[0]
    >>> decorator = register_claim(claim.paper, claim.claim_id, claim.description,
    ...                            paper_statement=claim.paper_statement, check=claim.check,
    ...                            control=claim.control, reported=claim.reported,
    ...                            effect_of_interest=claim.effect_of_interest)
    >>> decorator(claim.func) is claim.func
    True
    """
    if reported and control is not None:
        raise ValueError(f"claim {paper}/{claim_id}: a reported claim asserts nothing and "
                         f"takes no control, got control={control!r}.")
    if isinstance(effect_of_interest, dict):
        effect_of_interest = EffectOfInterest(**effect_of_interest)
    if effect_of_interest is not None and not isinstance(effect_of_interest, EffectOfInterest):
        raise TypeError(f"claim {paper}/{claim_id}: effect_of_interest must be an "
                        f"EffectOfInterest or a dict, got {type(effect_of_interest).__name__}.")

    def decorator(func):
        claim = Claim(paper=paper, claim_id=claim_id, description=description, func=func,
                      paper_statement=paper_statement, check=check, control=control,
                      reported=bool(reported), effect_of_interest=effect_of_interest)
        _CLAIMS[claim.key] = claim
        return func

    return decorator


def _load_all():
    package = importlib.import_module("skpaper.papers")
    for info in pkgutil.iter_modules(package.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"skpaper.papers.{info.name}")


def get_papers(kind=None):
    """Return the registered papers sorted by slug.

    Parameters
    ----------
    kind : {"paper", "selfcheck"} or None, default=None
        Keep only papers or only self-checks; None keeps both.

    Returns
    -------
    papers : list of Paper
        The registered papers of that kind.

    See Also
    --------
    get_claims : The registered claims.

    Examples
    --------
    >>> from skpaper.papers import get_papers
    >>> slugs = [paper.slug for paper in get_papers()]
    >>> slugs == sorted(slugs)
    True
    """
    _load_all()
    papers = sorted(_PAPERS.values(), key=lambda p: p.slug)
    return [p for p in papers if kind is None or p.kind == kind]


def get_claims(paper=None):
    """Return the registered claims sorted by key.

    Parameters
    ----------
    paper : str or None, default=None
        Slug of one paper; None or ``"all"`` returns the claims of every paper.

    Returns
    -------
    claims : list of Claim
        The claims, sorted by :attr:`Claim.key`.

    Raises
    ------
    ValueError
        If ``paper`` is not a registered slug.

    See Also
    --------
    run_claim : Run one claim.

    Examples
    --------
    >>> from skpaper.papers import get_claims
    >>> all(claim.paper == "framework-selfcheck" for claim in get_claims("framework-selfcheck"))
    True
    """
    _load_all()
    if paper in (None, "all"):
        return [_CLAIMS[k] for k in sorted(_CLAIMS)]
    if paper not in _PAPERS:
        raise ValueError(
            f"paper must be 'all' or one of {sorted(_PAPERS)}, got {paper!r}."
        )
    return [_CLAIMS[k] for k in sorted(_CLAIMS) if _CLAIMS[k].paper == paper]


def _status(claim, result):
    """The status of a returned result, and a note when the framework overrides the claim."""
    if claim.reported:
        if result.passed is not None or result.verdict is not None:
            return "error", (f"reported claim {claim.key} must return passed=None, got "
                             f"{result.passed!r}")
        return "reported", ""
    if result.precheck_failed is not None:
        if not isinstance(result.precheck_failed, str) or not result.precheck_failed.strip():
            return "error", (f"claim {claim.key} returned precheck_failed="
                             f"{result.precheck_failed!r}; it must be a reason or None")
        if result.verdict == "pass" or result.passed:
            return "error", (f"claim {claim.key} failed its pre-check but returned a passing "
                             f"check")
        return "uninformative", f"pre-check failed: {result.precheck_failed}"
    verdict = result.verdict
    if verdict is None:
        if not isinstance(result.passed, bool):
            return "error", (f"asserting claim {claim.key} must return passed as a bool, got "
                             f"{result.passed!r}")
        verdict = "pass" if result.passed else "undecided"
    elif verdict not in CHECK_VERDICTS:
        return "error", (f"claim {claim.key} returned verdict {verdict!r}, not one of "
                         f"{CHECK_VERDICTS}")
    elif result.passed is not None and result.passed != (verdict == "pass"):
        return "error", (f"claim {claim.key} returned passed={result.passed!r} with "
                         f"verdict {verdict!r}")
    if claim.control is None:
        return "reported", "no negative control registered: reported, not asserted"
    if claim.effect_of_interest is None:
        return "error", (f"asserting claim {claim.key} declares no effect_of_interest: the "
                         f"smallest effect that would confirm the paper must be stated "
                         f"before the run")
    control = result.control
    if not isinstance(control, ControlResult) or not isinstance(control.passed, bool):
        return "error", (f"claim {claim.key} declares the control {claim.control!r} but "
                         f"returned no ControlResult with a bool passed")
    if control.verdict is not None and control.verdict not in CONTROL_VERDICTS:
        return "error", (f"claim {claim.key} returned control verdict {control.verdict!r}, "
                         f"not one of {CONTROL_VERDICTS}")
    if verdict == "contradicted":
        return "contradicted", ""
    if verdict == "undecided":
        return "inconclusive", ("the check is not decided either way at this budget"
                                if result.verdict is None else "")
    if control.zero_spread:
        return "uninformative", ("the control's figures have zero spread: it fails by "
                                 "construction and is no control")
    control_verdict = control.verdict
    if control_verdict is None:
        control_verdict = "pass" if control.passed else None
    if control_verdict == "pass":
        return "uninformative", "the negative control passes the check too"
    if control_verdict != "fail":
        return "uninformative", ("the negative control did not fail decisively (its bound "
                                 "does not exclude the effect of interest)"
                                 if control_verdict == "undecided" else
                                 "the negative control reports no bound, so its failure is "
                                 "not shown to be decisive")
    return "reproduced", ""


def run_claim(claim, scale="quick", seed=0, out_dir="results", threads=None):
    """Run one claim in a fixed process state, time it, write ``<out>/<paper>/<claim_id>.json``.

    The process state (threads, default dtype, global RNGs, deterministic
    flags, working directory) is set before the claim and restored after it
    (see :mod:`skpaper.papers._environment`), so a claim's figures do not
    depend on what ran before it. An exception inside the claim is caught
    and recorded in ``error`` (status ``"error"``), so one failing claim does
    not stop a whole run.

    Parameters
    ----------
    claim : Claim
        The claim to run (see :func:`get_claims`).
    scale : {"smoke", "quick", "full"}, default="quick"
        Size of the experiment: a seconds-long smoke run, the quick run of the
        reports, or the paper's scale.
    seed : int, default=0
        In ``[0, 2**32 - 1]``.
    out_dir : str or path, default="results"
        Directory under which the result JSON is written.
    threads : int or None, default=None
        Threads for torch and BLAS during the claim; None means
        :data:`~skpaper.papers._environment.DEFAULT_THREADS`.

    Returns
    -------
    result : ClaimResult
        Outcome of the claim, also written as JSON.

    See Also
    --------
    get_claims : The claims that can be run.

    Examples
    --------
    >>> import tempfile
    >>> from skpaper.papers import get_claims, run_claim
    >>> claim = get_claims("framework-selfcheck")[0]
    >>> with tempfile.TemporaryDirectory() as out_dir:
    ...     result = run_claim(claim, scale="smoke", out_dir=out_dir)
    >>> result.status in ("reproduced", "reported")
    True
    """
    from ._environment import DEFAULT_THREADS, claim_environment

    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}.")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= 2**32 - 1:
        raise ValueError(f"seed must be an integer in [0, 2**32 - 1], got {seed!r}.")
    threads = DEFAULT_THREADS if threads is None else threads
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}.")
    claim_dir = Path(out_dir) / claim.paper
    claim_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    environment = {}
    token = _CURRENT_CLAIM.set(claim.key)
    _ACCOUNTS[claim.key] = {"computed_s": 0.0, "entries": set()}
    try:
        with claim_environment(claim.key, seed, threads) as environment:
            result = claim.func(scale, int(seed), claim_dir)
        if not isinstance(result, ClaimResult):
            raise TypeError(
                f"claim {claim.key} must return a ClaimResult, got {type(result).__name__}."
            )
        status, note = _status(claim, result)
    except Exception:  # noqa: BLE001 - recorded, reported and turned into an exit code
        if _INTERRUPTED:
            # An interrupt that a library turned into another exception: nothing is recorded.
            raise KeyboardInterrupt from None
        result = ClaimResult(observed={}, expected={}, passed=False,
                             error=traceback.format_exc())
        status, note = "error", ""
    finally:
        _CURRENT_CLAIM.reset(token)
    if status == "error" and result.error is None:
        result.error = note
        note = ""
    if note:
        result.notes = f"{result.notes} [{note}]" if result.notes else f"[{note}]"
    if result.control is not None and result.control.name is None:
        result.control.name = claim.control
    check_passed = result.passed if isinstance(result.passed, bool) else (
        result.verdict == "pass" if result.verdict is not None else None)
    if result.verdict is None and isinstance(result.passed, bool) and status != "error":
        result.verdict = "pass" if result.passed else "undecided"
    result.status = status
    result.passed = status == "reproduced"
    result.runtime_s = time.perf_counter() - start
    if result.power is None:
        result.power = {"n_seeds": None, "sd": None, "seeds_needed": None,
                        "note": "no paired comparison recorded by this claim"}
    payload = {"paper": claim.paper, "claim": claim.claim_id,
               "description": claim.description, "paper_statement": claim.paper_statement,
               "check": claim.check, "reported": claim.reported,
               "check_passed": check_passed,
               "effect_of_interest": (claim.effect_of_interest.to_dict()
                                      if claim.effect_of_interest is not None else None),
               "scale": scale, "seed": int(seed), "environment": environment,
               **result.to_dict(),
               "runtime": {"wall_s": result.runtime_s, "charged_s": result.runtime_s,
                           "shared_fits_s": 0.0}}
    write_json_atomic(claim_dir / f"{claim.claim_id}.json", payload)
    return result


def write_json_atomic(path, payload):
    """Write ``payload`` as JSON to ``path`` through a temporary file and a rename.

    A reader sees the old file or the complete new one, never a part; on a
    failure (a full disk) the old file stays and the temporary one is removed.

    Parameters
    ----------
    path : str or path
    payload : dict
        Passed through the framework's JSON conversion first.
    """
    text = json.dumps(_jsonable(payload), indent=2, sort_keys=True)
    write_atomic(path, text.encode())


def write_atomic(path, data):
    """Write ``data`` (bytes) to ``path`` atomically (temporary file, then rename)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# ---------------------------------------------------------------- interrupts

_INTERRUPTED = []


def note_interrupt():
    """Record that the run was interrupted (called by the CLI's SIGINT handler).

    After it, a claim that raises anything is taken as interrupted: nothing
    is recorded for it and :class:`KeyboardInterrupt` propagates.
    """
    _INTERRUPTED.append(True)


# ---------------------------------------------------------------- fits shared by claims

_CURRENT_CLAIM = contextvars.ContextVar("skpaper_current_claim", default=None)
_ACCOUNTS = {}
_ENTRIES = {}
_TIMERS = []


def shared_cache(maxsize=8):
    """Cache the fits that several claims of a paper share, and account for their time.

    Works like :func:`functools.lru_cache` (hashable arguments), and records
    for each cached entry the time it took to compute (excluding nested
    shared entries) and which claims used it, so that
    :func:`apportion_runtimes` can charge each claim its share instead of
    charging the first claim for every fit.

    Parameters
    ----------
    maxsize : int, default=8
        Entries kept (least recently used dropped first).

    Returns
    -------
    decorator : callable
        Wraps a function with the cache (``cache_info()`` and ``cache_clear()``
        as :func:`functools.lru_cache` offers).

    Examples
    --------
    >>> from skpaper.papers._registry import shared_cache
    >>> @shared_cache(maxsize=2)
    ... def square(x):
    ...     return x * x
    >>> square(3), square(3), square.cache_info()["hits"]
    (9, 9, 1)
    """
    if isinstance(maxsize, bool) or not isinstance(maxsize, int) or maxsize < 1:
        raise ValueError(f"maxsize must be a positive integer, got {maxsize!r}.")

    def decorator(func):
        cache = {}
        info = {"hits": 0, "misses": 0}

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            key = (args, tuple(sorted(kwargs.items())))
            entry_id = (func.__module__, func.__qualname__, key)
            if key in cache:
                info["hits"] += 1
                value = cache.pop(key)
                cache[key] = value
            else:
                info["misses"] += 1
                _TIMERS.append(0.0)
                began = time.perf_counter()
                try:
                    value = func(*args, **kwargs)
                finally:
                    elapsed = time.perf_counter() - began
                    nested = _TIMERS.pop()
                    if _TIMERS:
                        _TIMERS[-1] += elapsed
                own = elapsed - nested
                cache[key] = value
                while len(cache) > maxsize:
                    cache.pop(next(iter(cache)))
                _ENTRIES[entry_id] = {"cost_s": own, "users": set()}
                account = _ACCOUNTS.get(_CURRENT_CLAIM.get())
                if account is not None:
                    account["computed_s"] += own
            claim_key = _CURRENT_CLAIM.get()
            if claim_key is not None and entry_id in _ENTRIES:
                _ENTRIES[entry_id]["users"].add(claim_key)
                _ACCOUNTS.setdefault(claim_key, {"computed_s": 0.0, "entries": set()})[
                    "entries"].add(entry_id)
            return value

        def cache_clear():
            cache.clear()

        wrapper.cache_info = lambda: dict(info, size=len(cache))
        wrapper.cache_clear = cache_clear
        return wrapper

    return decorator


def apportion_runtimes(rows, out_dir):
    """Charge each claim its share of the shared fits, in its result and its JSON.

    A claim's charged runtime is its wall time, less the shared fits it
    computed, plus each shared fit it used divided by the number of claims
    that used it. Call it once the claims that share fits (a paper's) have run.

    Parameters
    ----------
    rows : list of (Claim, ClaimResult)
    out_dir : str or path
        The folder :func:`run_claim` wrote the JSON files into.
    """
    for claim, result in rows:
        account = _ACCOUNTS.get(claim.key)
        if account is None or result.status == "error" and not account["entries"]:
            continue
        share = sum(_ENTRIES[e]["cost_s"] / max(1, len(_ENTRIES[e]["users"]))
                    for e in account["entries"] if e in _ENTRIES)
        wall = result.runtime_s
        charged = max(0.0, wall - account["computed_s"] + share)
        if abs(charged - wall) < 1e-9:
            continue
        result.runtime_s = charged
        path = Path(out_dir) / claim.paper / f"{claim.claim_id}.json"
        try:
            payload = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        payload["runtime_s"] = charged
        payload["runtime"] = {"wall_s": wall, "charged_s": charged, "shared_fits_s": share}
        write_json_atomic(path, payload)
