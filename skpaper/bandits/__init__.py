"""Cross-learning contextual bandits with unknown context distributions.

Policies (:class:`CrossLearningExp3` and the baselines :class:`Exp3IX` and
:class:`Exp3`), environments (:class:`FirstPriceAuction`,
:class:`SleepingBandits`), :func:`simulate` for many seeds, and
:func:`yield_policy_checks`, the conformance checks every policy passes.
"""

from ._baselines import Exp3, Exp3IX
from ._checks import yield_policy_checks
from ._cross_learning import CrossLearningExp3
from ._environments import FirstPriceAuction, SleepingBandits
from ._simulate import simulate

__all__ = [
    "CrossLearningExp3",
    "Exp3",
    "Exp3IX",
    "FirstPriceAuction",
    "SleepingBandits",
    "simulate",
    "yield_policy_checks",
]
