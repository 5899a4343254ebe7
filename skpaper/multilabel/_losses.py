"""Base losses ``l(t)`` of the margin ``t`` and their Lipschitz and smoothness constants.

Every multi-label loss of [1]_ is built from a base loss applied to a margin:
``t = y_j f_j(x)`` for the Hamming and subset losses, ``t = f_p(x) - f_q(x)`` for
the ranking and Macro-AUC losses. A loss here is a small frozen object with a
vectorised value, a derivative (a subgradient where the loss has a kink), and
the constants the bounds need on an interval ``|t| <= B``:

* ``rho(B)``, the Lipschitz constant on ``[-B, B]``;
* ``gamma``, the smoothness constant (``inf`` for a loss with a kink);
* ``sup(B)``, the largest value on ``[-B, B]`` (the ``M`` of the bounds).

References
----------
.. [1] Y.-F. Zhang and M.-L. Zhang, "Tight and Fast Bounds for Multi-Label
   Learning", ICML 2025, PMLR 267:76909-76938.
"""

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

__all__ = ["BASE_LOSSES", "BaseLoss", "get_base_loss"]


@dataclass(frozen=True)
class BaseLoss:
    """A non-negative convex base loss of a margin ``t``, largest at ``t = -B`` on ``[-B, B]``."""

    name: str
    huber_width: float = 1.0

    def value(self, t):
        t = np.asarray(t, dtype=float)
        if self.name == "logistic":
            # log(1 + exp(-t)) without overflow for large |t|
            return np.logaddexp(0.0, -t)
        if self.name == "hinge":
            return np.maximum(0.0, 1.0 - t)
        if self.name == "squared_hinge":
            return np.maximum(0.0, 1.0 - t) ** 2
        if self.name == "squared":
            return (1.0 - t) ** 2
        h = self.huber_width
        u = 1.0 - t
        return np.where(u <= 0.0, 0.0, np.where(u < h, u * u / (2.0 * h), u - h / 2.0))

    def derivative(self, t):
        """First derivative in ``t`` (the subgradient 0 at the kink of the hinge)."""
        t = np.asarray(t, dtype=float)
        if self.name == "logistic":
            return -expit(-t)
        if self.name == "hinge":
            return np.where(t < 1.0, -1.0, 0.0)
        if self.name == "squared_hinge":
            return -2.0 * np.maximum(0.0, 1.0 - t)
        if self.name == "squared":
            return -2.0 * (1.0 - t)
        h = self.huber_width
        u = 1.0 - t
        return np.where(u <= 0.0, 0.0, np.where(u < h, -u / h, -1.0))

    @property
    def gamma(self):
        """Smoothness constant: ``|l'(s) - l'(t)| <= gamma |s - t|`` for all s, t."""
        return {
            "logistic": 0.25,
            "squared_hinge": 2.0,
            "squared": 2.0,
            "huberized_hinge": 1.0 / self.huber_width,
            "hinge": np.inf,
        }[self.name]

    @property
    def is_smooth(self):
        return np.isfinite(self.gamma)

    def rho(self, bound):
        """Lipschitz constant of the loss on ``[-bound, bound]``."""
        bound = float(bound)
        if self.name in ("squared_hinge", "squared"):
            return 2.0 * (1.0 + bound)
        return 1.0

    def sup(self, bound):
        """``M = sup_{|t| <= bound} l(t)``: every loss here peaks at ``t = -bound``."""
        return float(self.value(-float(bound)))


#: The base losses that :class:`SmoothMultiLabelClassifier` accepts.
BASE_LOSSES = ("logistic", "squared_hinge", "squared", "huberized_hinge", "hinge")


def get_base_loss(name, huber_width=1.0):
    """Return the :class:`BaseLoss` called ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not one of :data:`BASE_LOSSES` or ``huber_width <= 0``.
    """
    if name not in BASE_LOSSES:
        raise ValueError(f"loss must be one of {list(BASE_LOSSES)}, got {name!r}.")
    if not float(huber_width) > 0.0:
        raise ValueError(f"huber_width must be > 0, got {huber_width!r}.")
    return BaseLoss(name=name, huber_width=float(huber_width))
