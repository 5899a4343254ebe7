"""Paper reproductions: one module per paper registers its claims.

A paper's slug is the file name of its specification (``robust-cardinality-sketch``);
its module is the slug with ``_`` for ``-`` (``skpaper/papers/robust_cardinality_sketch.py``).
Run them with ``skpaper reproduce <slug|all>``.
"""

from ._registry import (
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
)

__all__ = [
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
    "run_claim",
]
