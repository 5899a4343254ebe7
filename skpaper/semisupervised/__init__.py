"""Semi-supervised estimation with automated computational phenotypes under covariate shift.

:class:`ACPShiftEstimator` is the doubly robust, semiparametrically efficient
estimator of Ying et al. (ICML 2025); :class:`LabeledOnlyEstimator` and
:class:`WeightedPPIEstimator` are the comparators it is measured against.
"""

from ._acp import ACPShiftEstimator
from ._baselines import LabeledOnlyEstimator, WeightedPPIEstimator

__all__ = ["ACPShiftEstimator", "LabeledOnlyEstimator", "WeightedPPIEstimator"]
