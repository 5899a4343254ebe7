"""Means of differences, their standard errors and normal confidence intervals."""

import numpy as np


def paired_effect(differences):
    """Mean of per-unit differences and its standard error ``sd / sqrt(n)``."""
    differences = np.asarray(differences, dtype=float)
    return (
        float(differences.mean()),
        float(differences.std(ddof=1) / np.sqrt(differences.size)),
    )


def unpaired_effect(treated, untreated):
    """Difference in means and its Welch standard error."""
    treated = np.asarray(treated, dtype=float)
    untreated = np.asarray(untreated, dtype=float)
    return (
        float(treated.mean() - untreated.mean()),
        float(np.sqrt(treated.var(ddof=1) / treated.size
                      + untreated.var(ddof=1) / untreated.size)),
    )
