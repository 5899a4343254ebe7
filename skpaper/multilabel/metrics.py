"""Multi-label evaluation metrics.

Each metric takes a 0/1 indicator ``Y_true`` of shape ``(n_samples, n_labels)``
and either a predicted indicator ``Y_pred`` or real-valued label scores
``Y_score`` of the same shape. Where scikit-learn has the same metric the
definitions agree with it: :func:`hamming_loss` with
:func:`sklearn.metrics.hamming_loss`, :func:`subset_accuracy` with
:func:`sklearn.metrics.accuracy_score`, :func:`ranking_loss` with
:func:`sklearn.metrics.label_ranking_loss`, :func:`macro_auc` with
``roc_auc_score(average="macro")`` on the labels where it is defined, and the
F1 scores with ``f1_score(average="micro"|"macro")``. :func:`one_error` and
:func:`coverage` follow Zhang & Zhou (2014).

References
----------
.. [1] M.-L. Zhang and Z.-H. Zhou, "A Review on Multi-Label Learning
   Algorithms", IEEE TKDE 26(8), 2014.
.. [2] Y.-F. Zhang and M.-L. Zhang, "Tight and Fast Bounds for Multi-Label
   Learning", ICML 2025, PMLR 267:76909-76938.
"""

import numbers
import warnings

import numpy as np
from scipy.stats import rankdata
from sklearn.metrics import label_ranking_loss
from sklearn.utils import check_array

from ..utils._sklearn import Interval, validate_params
from ._validation import check_indicator

__all__ = [
    "coverage",
    "hamming_loss",
    "macro_auc",
    "macro_f1",
    "micro_f1",
    "one_error",
    "ranking_loss",
    "subset_accuracy",
]

_PAIR = {"Y_true": ["array-like", "sparse matrix"], "Y_pred": ["array-like", "sparse matrix"]}
_SCORED = {"Y_true": ["array-like", "sparse matrix"], "Y_score": ["array-like"]}


def _check_pair(Y_true, Y_pred):
    T = check_indicator(Y_true, name="Y_true")
    P = check_indicator(Y_pred, name="Y_pred")
    if T.shape != P.shape:
        raise ValueError(
            f"Y_true and Y_pred must have the same shape; got {T.shape} and {P.shape}."
        )
    return T, P


def _check_scored(Y_true, Y_score):
    T = check_indicator(Y_true, name="Y_true")
    S = check_array(Y_score, dtype=np.float64, input_name="Y_score")
    if T.shape != S.shape:
        raise ValueError(
            f"Y_true and Y_score must have the same shape; got {T.shape} and {S.shape}."
        )
    return T, S


@validate_params(_PAIR, prefer_skip_nested_validation=True)
def hamming_loss(Y_true, Y_pred):
    """Fraction of wrongly predicted (sample, label) entries.

    Parameters
    ----------
    Y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        True 0/1 label indicator.
    Y_pred : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Predicted 0/1 label indicator.

    Returns
    -------
    loss : float
        ``(1 / (n c)) sum_ij [Y_true_ij != Y_pred_ij]``, in [0, 1].

    Examples
    --------
    >>> from skpaper.multilabel.metrics import hamming_loss
    >>> hamming_loss([[1, 0], [0, 1]], [[1, 1], [0, 1]])
    0.25
    """
    T, P = _check_pair(Y_true, Y_pred)
    return float(np.mean(T != P))


@validate_params(_PAIR, prefer_skip_nested_validation=True)
def subset_accuracy(Y_true, Y_pred):
    """Fraction of samples whose whole label set is predicted exactly.

    Parameters
    ----------
    Y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        True 0/1 label indicator.
    Y_pred : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Predicted 0/1 label indicator.

    Returns
    -------
    accuracy : float
        In [0, 1]; one minus the 0/1 subset loss.

    Examples
    --------
    >>> from skpaper.multilabel.metrics import subset_accuracy
    >>> subset_accuracy([[1, 0], [0, 1]], [[1, 1], [0, 1]])
    0.5
    """
    T, P = _check_pair(Y_true, Y_pred)
    return float(np.mean(np.all(T == P, axis=1)))


@validate_params(_SCORED, prefer_skip_nested_validation=True)
def ranking_loss(Y_true, Y_score):
    """Mean fraction of (relevant, irrelevant) label pairs ranked wrongly.

    A pair counts as wrong when the relevant label's score is not strictly
    higher (ties count as errors, as in
    :func:`sklearn.metrics.label_ranking_loss`). Samples whose labels are all
    relevant or all irrelevant contribute 0. The value is computed by
    :func:`sklearn.metrics.label_ranking_loss` after the inputs are validated
    (a 0/1 indicator with at least two labels, scores of the same shape).

    Parameters
    ----------
    Y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        True 0/1 label indicator.
    Y_score : array-like of shape (n_samples, n_labels)
        Label scores; higher means more relevant.

    Returns
    -------
    loss : float
        In [0, 1].

    Examples
    --------
    >>> from skpaper.multilabel.metrics import ranking_loss
    >>> ranking_loss([[1, 0, 0], [0, 0, 1]], [[0.9, 0.5, 0.1], [0.8, 0.2, 0.3]])
    0.25
    """
    T, S = _check_scored(Y_true, Y_score)
    # Same definition (ties are errors, all-relevant or all-irrelevant rows
    # count 0), computed from per-row rankings instead of a c x c comparison.
    return float(label_ranking_loss(T, S))


@validate_params(
    {**_SCORED, "return_n_skipped": ["boolean"]}, prefer_skip_nested_validation=True
)
def macro_auc(Y_true, Y_score, *, return_n_skipped=False):
    """Macro-averaged area under the ROC curve over the labels where it is defined.

    AUC is undefined for a label without positive or without negative
    examples; such labels are skipped and counted (a warning says how many).

    Parameters
    ----------
    Y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        True 0/1 label indicator.
    Y_score : array-like of shape (n_samples, n_labels)
        Label scores; higher means more relevant.
    return_n_skipped : bool, default=False
        Also return the number of skipped labels.

    Returns
    -------
    auc : float
        Mean over the defined labels of the Mann-Whitney AUC (ties count one
        half); ``nan`` when no label is defined.
    n_skipped : int
        Number of labels skipped; only when ``return_n_skipped=True``.

    Notes
    -----
    Label ``j`` contributes ``(1 / (n_j+ n_j-)) sum_{a in pos, b in neg}
    ([f_j(x_a) > f_j(x_b)] + [f_j(x_a) = f_j(x_b)] / 2)``: the quantity the
    Macro-AUC bounds of [2]_ control through the pairwise surrogate
    ``l(f_j(x_a) - f_j(x_b))``.

    Examples
    --------
    >>> from skpaper.multilabel.metrics import macro_auc
    >>> macro_auc([[1, 0], [0, 0], [1, 1]], [[0.9, 0.1], [0.2, 0.3], [0.8, 0.7]])
    1.0
    """
    T, S = _check_scored(Y_true, Y_score)
    n_pos = T.sum(axis=0).astype(float)
    n_neg = T.shape[0] - n_pos
    defined = (n_pos > 0) & (n_neg > 0)
    n_skipped = int((~defined).sum())
    if n_skipped:
        warnings.warn(
            f"macro_auc skipped {n_skipped} of {T.shape[1]} label(s) that lack positive "
            "or negative examples.",
            UserWarning,
            stacklevel=3,  # past the validate_params wrapper
        )
    if not defined.any():
        auc = float("nan")
    else:
        ranks = rankdata(S[:, defined], axis=0)
        pos_rank_sum = (ranks * T[:, defined]).sum(axis=0)
        p, q = n_pos[defined], n_neg[defined]
        auc = float(np.mean((pos_rank_sum - p * (p + 1) / 2) / (p * q)))
    return (auc, n_skipped) if return_n_skipped else auc


@validate_params(_SCORED, prefer_skip_nested_validation=True)
def one_error(Y_true, Y_score):
    """Fraction of samples whose top-scoring label is irrelevant.

    Parameters
    ----------
    Y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        True 0/1 label indicator.
    Y_score : array-like of shape (n_samples, n_labels)
        Label scores; the first label with the highest score is the top one.

    Returns
    -------
    error : float
        In [0, 1]. A sample without any relevant label always counts as an
        error, as in the definition of [1]_.

    Examples
    --------
    >>> from skpaper.multilabel.metrics import one_error
    >>> one_error([[1, 0], [0, 1]], [[0.9, 0.1], [0.6, 0.4]])
    0.5
    """
    T, S = _check_scored(Y_true, Y_score)
    top = np.argmax(S, axis=1)
    return float(np.mean(T[np.arange(T.shape[0]), top] == 0))


@validate_params(_SCORED, prefer_skip_nested_validation=True)
def coverage(Y_true, Y_score):
    """Mean number of steps down the ranked label list needed to cover every relevant label.

    Parameters
    ----------
    Y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        True 0/1 label indicator.
    Y_score : array-like of shape (n_samples, n_labels)
        Label scores; tied labels are all counted as ranked above.

    Returns
    -------
    coverage : float
        ``mean_i (max_{y in Y_i} rank(y) - 1)`` with ranks starting at 1, as
        in [1]_; a sample without relevant labels contributes 0. Equals
        ``sklearn.metrics.coverage_error - 1`` when every sample has a
        relevant label.

    Examples
    --------
    >>> from skpaper.multilabel.metrics import coverage
    >>> coverage([[1, 0, 1], [0, 1, 0]], [[0.9, 0.5, 0.1], [0.8, 0.7, 0.3]])
    1.5
    """
    T, S = _check_scored(Y_true, Y_score)
    has_relevant = T.any(axis=1)
    lowest_relevant = np.where(T == 1, S, np.inf).min(axis=1, keepdims=True)
    depth = (S >= lowest_relevant).sum(axis=1) - 1
    return float(np.mean(np.where(has_relevant, depth, 0)))


def _f1_counts(T, P, axis):
    tp = np.sum(T & P, axis=axis).astype(float)
    fp = np.sum(~T & P, axis=axis).astype(float)
    fn = np.sum(T & ~P, axis=axis).astype(float)
    return 2 * tp, 2 * tp + fp + fn


_F1_PARAMS = {
    **_PAIR,
    "zero_division": [Interval(numbers.Real, 0, 1, closed="both")],
}


@validate_params(_F1_PARAMS, prefer_skip_nested_validation=True)
def micro_f1(Y_true, Y_pred, *, zero_division=0.0):
    """F1 score of the pooled (sample, label) decisions.

    Parameters
    ----------
    Y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        True 0/1 label indicator.
    Y_pred : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Predicted 0/1 label indicator.
    zero_division : float in [0, 1], default=0.0
        Value returned when there is neither a true nor a predicted positive.

    Returns
    -------
    f1 : float
        ``2 TP / (2 TP + FP + FN)`` over all entries.

    Examples
    --------
    >>> from skpaper.multilabel.metrics import micro_f1
    >>> micro_f1([[1, 0], [0, 1]], [[1, 1], [0, 1]])
    0.8
    """
    T, P = _check_pair(Y_true, Y_pred)
    num, den = _f1_counts(T.astype(bool), P.astype(bool), axis=None)
    return float(num / den) if den > 0 else float(zero_division)


@validate_params(_F1_PARAMS, prefer_skip_nested_validation=True)
def macro_f1(Y_true, Y_pred, *, zero_division=0.0):
    """Unweighted mean over labels of the per-label F1 score.

    Parameters
    ----------
    Y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        True 0/1 label indicator.
    Y_pred : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Predicted 0/1 label indicator.
    zero_division : float in [0, 1], default=0.0
        F1 of a label with neither a true nor a predicted positive.

    Returns
    -------
    f1 : float
        ``mean_j 2 TP_j / (2 TP_j + FP_j + FN_j)``.

    Examples
    --------
    >>> from skpaper.multilabel.metrics import macro_f1
    >>> macro_f1([[1, 0], [0, 1]], [[1, 1], [0, 1]])
    0.8333333333333333
    """
    T, P = _check_pair(Y_true, Y_pred)
    num, den = _f1_counts(T.astype(bool), P.astype(bool), axis=0)
    per_label = np.divide(num, den, out=np.full(den.shape, float(zero_division)), where=den > 0)
    return float(per_label.mean())
