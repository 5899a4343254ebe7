"""Multi-label learning with smooth base losses and its generalization bounds.

Implements the objects of Zhang & Zhang, "Tight and Fast Bounds for Multi-Label
Learning" (ICML 2025): a linear multi-label learner trained on the Hamming,
subset or ranking surrogate of a smooth (or Lipschitz) base loss, the usual
multi-label metrics (:mod:`skpaper.multilabel.metrics`), and a calculator of
the Lipschitz and smooth generalization bounds on a fitted model.
"""

from . import metrics
from ._bounds import generalization_bounds
from ._classifier import SmoothMultiLabelClassifier

__all__ = ["SmoothMultiLabelClassifier", "generalization_bounds", "metrics"]
