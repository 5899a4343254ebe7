"""Claim and paper registry behind ``skpaper list`` and ``skpaper reproduce``.

A paper module calls :func:`register_paper` once and decorates each claim
function with :func:`register_claim`. A claim function has the signature
``func(scale, seed, out_dir) -> ClaimResult``: ``scale`` is one of
:data:`SCALES`, ``seed`` an int that must drive every random draw, and
``out_dir`` a :class:`pathlib.Path` (already created) for its plots.

Every claim ends in one of :data:`STATUSES`:

``"reproduced"``
    The check passed and its negative control (the same check with the
    paper's mechanism removed) failed.
``"not reproduced"``
    The check failed.
``"uninformative"``
    The check passed, but so did its control: the check cannot tell the
    paper's mechanism from its absence, so the pass is no evidence.
``"reported"``
    The claim asserts nothing (an ablation, a figure, a measurement), or it
    has no negative control. It never counts as reproduced.
``"error"``
    The claim raised, or returned something the framework rejects.
"""

import importlib
import json
import math
import pkgutil
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path

#: ``smoke``: seconds (what the tests run); ``quick``: about a minute per paper
#: on two CPU cores (the default); ``full``: paper-sized.
SCALES = ("smoke", "quick", "full")

#: Every status a claim can end in (see the module docstring).
STATUSES = ("reproduced", "not reproduced", "uninformative", "reported", "error")

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

    Examples
    --------
    >>> from skpaper.papers import ControlResult
    >>> ControlResult(observed={"gain": 0.01}, passed=False).passed
    False
    """

    observed: dict
    passed: bool
    name: str | None = None


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
    control: ControlResult | None = None
    arms: dict | None = None
    status: str = ""
    runtime_s: float = 0.0
    artifacts: list = field(default_factory=list)
    notes: str = ""
    error: str | None = None

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


def register_paper(slug, title, module, kind="paper"):
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

    Returns
    -------
    paper : Paper
        The registered paper.

    Raises
    ------
    ValueError
        If ``kind`` is neither ``"paper"`` nor ``"selfcheck"``.

    See Also
    --------
    register_claim : Register a claim of a registered paper.

    Examples
    --------
    Registering a paper again with the same fields leaves the registry as it was:

    >>> from skpaper.papers import get_papers, register_paper
    >>> paper = get_papers(kind="selfcheck")[0]
    >>> register_paper(paper.slug, paper.title, paper.module, kind=paper.kind) == paper
    True
    """
    if kind not in ("paper", "selfcheck"):
        raise ValueError(f"kind must be 'paper' or 'selfcheck', got {kind!r}.")
    paper = Paper(slug=slug, title=title, module=module, kind=kind)
    _PAPERS[slug] = paper
    return paper


def register_claim(paper, claim_id, description, *, paper_statement="", check="",
                   control=None, reported=False):
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

    Returns
    -------
    decorator : callable
        Registers the function it decorates and returns it unchanged.

    Raises
    ------
    ValueError
        If a reported claim names a control.

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
    ...                            control=claim.control, reported=claim.reported)
    >>> decorator(claim.func) is claim.func
    True
    """
    if reported and control is not None:
        raise ValueError(f"claim {paper}/{claim_id}: a reported claim asserts nothing and "
                         f"takes no control, got control={control!r}.")

    def decorator(func):
        claim = Claim(paper=paper, claim_id=claim_id, description=description, func=func,
                      paper_statement=paper_statement, check=check, control=control,
                      reported=bool(reported))
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
        if result.passed is not None:
            return "error", (f"reported claim {claim.key} must return passed=None, got "
                             f"{result.passed!r}")
        return "reported", ""
    if not isinstance(result.passed, bool):
        return "error", (f"asserting claim {claim.key} must return passed as a bool, got "
                         f"{result.passed!r}")
    if claim.control is None:
        return "reported", "no negative control registered: reported, not asserted"
    if not isinstance(result.control, ControlResult) or not isinstance(result.control.passed,
                                                                       bool):
        return "error", (f"claim {claim.key} declares the control {claim.control!r} but "
                         f"returned no ControlResult with a bool passed")
    if not result.passed:
        return "not reproduced", ""
    if result.control.passed:
        return "uninformative", "the negative control passes the check too"
    return "reproduced", ""


def run_claim(claim, scale="quick", seed=0, out_dir="results", threads=None):
    """Run one claim in a fixed process state, time it, write ``<out_dir>/<paper>/<claim_id>.json``.

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
    try:
        with claim_environment(claim.key, seed, threads) as environment:
            result = claim.func(scale, int(seed), claim_dir)
        if not isinstance(result, ClaimResult):
            raise TypeError(
                f"claim {claim.key} must return a ClaimResult, got {type(result).__name__}."
            )
        status, note = _status(claim, result)
    except Exception:  # noqa: BLE001 - recorded, reported and turned into an exit code
        result = ClaimResult(observed={}, expected={}, passed=False,
                             error=traceback.format_exc())
        status, note = "error", ""
    if status == "error" and result.error is None:
        result.error = note
        note = ""
    if note:
        result.notes = f"{result.notes} [{note}]" if result.notes else f"[{note}]"
    if result.control is not None and result.control.name is None:
        result.control.name = claim.control
    check_passed = result.passed if isinstance(result.passed, bool) else None
    result.status = status
    result.passed = status == "reproduced"
    result.runtime_s = time.perf_counter() - start
    payload = {"paper": claim.paper, "claim": claim.claim_id,
               "description": claim.description, "paper_statement": claim.paper_statement,
               "check": claim.check, "reported": claim.reported,
               "check_passed": check_passed,
               "scale": scale, "seed": int(seed), "environment": environment,
               **result.to_dict()}
    with open(claim_dir / f"{claim.claim_id}.json", "w") as fh:
        json.dump(_jsonable(payload), fh, indent=2, sort_keys=True)
    return result
