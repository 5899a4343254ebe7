"""Claim and paper registry behind ``skpaper list`` and ``skpaper reproduce``.

A paper module calls :func:`register_paper` once and decorates each claim
function with :func:`register_claim`. A claim function has the signature
``func(scale, seed, out_dir) -> ClaimResult``: ``scale`` is one of
:data:`SCALES`, ``seed`` an int that must drive every random draw, and
``out_dir`` a :class:`pathlib.Path` (already created) for its plots.
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

_PAPERS = {}
_CLAIMS = {}


@dataclass(frozen=True)
class Paper:
    """A reproducible paper (``kind="paper"``) or a framework self-check (``kind="selfcheck"``)."""

    slug: str
    title: str
    module: str
    kind: str = "paper"


@dataclass
class ClaimResult:
    """Outcome of one claim at one scale.

    Attributes
    ----------
    observed : dict
        Measured figures (JSON-serialisable scalars or short lists).
    expected : dict
        What the paper claims, as figures or as a short description of the
        criterion (``{"accuracy_gap_max": 0.02}``).
    passed : bool
        Whether ``observed`` meets ``expected`` at this scale.
    runtime_s : float
        Wall time, filled in by :func:`run_claim`.
    artifacts : list of str
        Paths (relative to the claim's output folder) of plots and tables.
    notes : str
        Caveats, e.g. why a scale is too small to show the effect.
    error : str or None
        Traceback text when the claim raised instead of returning.
    """

    observed: dict
    expected: dict
    passed: bool
    runtime_s: float = 0.0
    artifacts: list = field(default_factory=list)
    notes: str = ""
    error: str | None = None

    def to_dict(self):
        return _jsonable(asdict(self))


@dataclass(frozen=True)
class Claim:
    """One claim of a paper: an id, a sentence, and the function that checks it."""

    paper: str
    claim_id: str
    description: str
    func: object = field(compare=False, repr=False)

    @property
    def key(self):
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
    """Register a paper (or a framework self-check) under ``slug``."""
    if kind not in ("paper", "selfcheck"):
        raise ValueError(f"kind must be 'paper' or 'selfcheck', got {kind!r}.")
    paper = Paper(slug=slug, title=title, module=module, kind=kind)
    _PAPERS[slug] = paper
    return paper


def register_claim(paper, claim_id, description):
    """Decorator registering ``func(scale, seed, out_dir) -> ClaimResult`` as a claim."""

    def decorator(func):
        claim = Claim(paper=paper, claim_id=claim_id, description=description, func=func)
        _CLAIMS[claim.key] = claim
        return func

    return decorator


def _load_all():
    package = importlib.import_module("skpaper.papers")
    for info in pkgutil.iter_modules(package.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"skpaper.papers.{info.name}")


def get_papers(kind=None):
    """Return registered papers sorted by slug (``kind`` filters papers/self-checks)."""
    _load_all()
    papers = sorted(_PAPERS.values(), key=lambda p: p.slug)
    return [p for p in papers if kind is None or p.kind == kind]


def get_claims(paper=None):
    """Return claims sorted by key, all of them or those of one paper slug ('all' for all).

    Raises
    ------
    ValueError
        If ``paper`` is not a registered slug.
    """
    _load_all()
    if paper in (None, "all"):
        return [_CLAIMS[k] for k in sorted(_CLAIMS)]
    if paper not in _PAPERS:
        raise ValueError(
            f"paper must be 'all' or one of {sorted(_PAPERS)}, got {paper!r}."
        )
    return [_CLAIMS[k] for k in sorted(_CLAIMS) if _CLAIMS[k].paper == paper]


def run_claim(claim, scale="quick", seed=0, out_dir="results"):
    """Run one claim, time it, and write ``<out_dir>/<paper>/<claim_id>.json``.

    An exception inside the claim is caught and recorded in ``error`` (with
    ``passed=False``), so one failing claim does not stop a whole run.

    Returns
    -------
    result : ClaimResult
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}.")
    claim_dir = Path(out_dir) / claim.paper
    claim_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    try:
        result = claim.func(scale, int(seed), claim_dir)
        if not isinstance(result, ClaimResult):
            raise TypeError(
                f"claim {claim.key} must return a ClaimResult, got {type(result).__name__}."
            )
    except Exception:  # noqa: BLE001 - recorded, reported and turned into an exit code
        result = ClaimResult(observed={}, expected={}, passed=False,
                             error=traceback.format_exc())
    result.runtime_s = time.perf_counter() - start
    payload = {"paper": claim.paper, "claim": claim.claim_id,
               "description": claim.description, "scale": scale, "seed": int(seed),
               **result.to_dict()}
    with open(claim_dir / f"{claim.claim_id}.json", "w") as fh:
        json.dump(payload, fh, indent=2, sort_keys=True)
    return result
