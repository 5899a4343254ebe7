"""Paper reproductions: one module per paper registers its claims.

A paper's slug is the file name of its specification (``robust-cardinality-sketch``);
its module is the slug with ``_`` for ``-`` (``skpaper/papers/robust_cardinality_sketch.py``).
Run them with ``skpaper reproduce <slug|all>``.
"""

from ._comparison import ArmRun, Comparison, EffectOfInterest, decide_claim, run_comparison
from ._registry import (
    FAILING_STATUSES,
    SCALES,
    STATUSES,
    Claim,
    ClaimResult,
    ControlResult,
    Paper,
    get_claims,
    get_papers,
    register_claim,
    register_paper,
    run_claim,
    shared_cache,
)

__all__ = [
    "ArmRun",
    "Comparison",
    "EffectOfInterest",
    "FAILING_STATUSES",
    "SCALES",
    "STATUSES",
    "Claim",
    "ClaimResult",
    "ControlResult",
    "Paper",
    "get_claims",
    "get_papers",
    "register_claim",
    "register_paper",
    "decide_claim",
    "run_claim",
    "run_comparison",
    "shared_cache",
]
