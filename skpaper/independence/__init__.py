"""Conditional independence tests for discretized data and PC structure learning.

:class:`DiscretizedCITest` tests independence of latent Gaussian variables
observed through discretization (DCT-GMM of Sun et al., ICML 2025, with the
binarized DCT and Fisher-z baselines); :class:`PC` learns a CPDAG with any of
them; :func:`polychoric_corr` is the maximum-likelihood polychoric correlation.
"""

from ._citest import CITestResult, DiscretizedCITest
from ._latent import polychoric_corr
from ._pc import PC, dag_to_cpdag, shd, skeleton_f1

__all__ = [
    "CITestResult",
    "DiscretizedCITest",
    "PC",
    "dag_to_cpdag",
    "polychoric_corr",
    "shd",
    "skeleton_f1",
]
