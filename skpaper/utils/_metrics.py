"""Fast metrics for the inner loops of model selection."""

import numpy as np
from scipy.stats import rankdata
from sklearn.metrics import roc_auc_score

__all__ = ["binary_roc_auc"]


def binary_roc_auc(y_true, y_score, sample_weight=None):
    """ROC AUC of a binary problem, through ranks instead of the ROC curve.

    The area under the ROC curve equals the Mann-Whitney statistic
    :math:`(R_+ - n_+(n_+ + 1)/2) / (n_+ n_-)`, with :math:`R_+` the sum of the
    positives' average ranks (tied scores count one half), which is what
    :func:`sklearn.metrics.roc_auc_score` computes by the trapezoidal rule. The
    two agree up to float rounding (about 1e-15). Without its input validation
    this costs a sort, about a hundred times less than ``roc_auc_score`` on a
    few hundred samples: model selection calls it once per fold and candidate.

    Anything else (sample weights, one class or more than two, non-finite or
    mismatched scores) goes to ``roc_auc_score``, which raises or warns as usual.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Labels; the larger of two labels is the positive class, as in
        ``roc_auc_score``.
    y_score : array-like of shape (n_samples,)
        Scores of the positive class.
    sample_weight : array-like of shape (n_samples,), default=None
        Passed to ``roc_auc_score`` when given.

    Returns
    -------
    auc : float
        The area under the ROC curve, in [0, 1].

    Examples
    --------
    >>> from skpaper.utils._metrics import binary_roc_auc
    >>> binary_roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    y = np.asarray(y_true)
    score = np.asarray(y_score)
    if sample_weight is None and y.ndim == 1 and score.shape == y.shape \
            and score.dtype.kind in "fiu":
        classes, codes = np.unique(y, return_inverse=True)
        score = score.astype(np.float64, copy=False)
        if classes.size == 2 and np.isfinite(score).all():
            positive = codes == 1
            n_pos = int(positive.sum())
            n_neg = y.size - n_pos
            rank_sum = float(rankdata(score)[positive].sum())
            return (rank_sum - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)
    return float(roc_auc_score(y_true, y_score, sample_weight=sample_weight))
