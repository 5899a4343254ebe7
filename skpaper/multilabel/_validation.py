"""Validation of multi-label indicator targets, shared by the metrics and the bounds."""

import numpy as np
from scipy import sparse

__all__ = ["check_indicator"]


def check_indicator(Y, name="Y"):
    """Return ``Y`` as a dense ``uint8`` 0/1 indicator with at least two columns.

    Raises
    ------
    ValueError
        If ``Y`` is not two-dimensional, has a single column, or holds values
        other than 0 and 1.
    """
    if sparse.issparse(Y):
        Y = Y.toarray()
    Y = np.asarray(Y)
    if Y.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D indicator matrix of shape (n_samples, n_labels); "
            f"got an array with {Y.ndim} dimension(s)."
        )
    if Y.shape[1] < 2:
        raise ValueError(
            f"{name} must have at least 2 label columns; got {Y.shape[1]}. Pass a "
            "1-D y for a single binary label."
        )
    values = np.unique(Y)
    if Y.dtype.kind not in "biuf" or not np.isin(values, (0, 1)).all():
        raise ValueError(
            f"{name} must be a binary indicator matrix holding only 0 and 1; got "
            f"values {values[:6].tolist()}."
        )
    return (Y == 1).astype(np.uint8)
