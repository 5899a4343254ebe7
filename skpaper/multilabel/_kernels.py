"""numba kernels for the pairwise losses (ranking within a sample, AUC across samples).

Imported lazily: the Hamming and subset losses never need numba, so importing
:mod:`skpaper.multilabel` stays light until a pairwise loss is evaluated.
"""

import math

import numpy as np
from numba import njit

#: Integer codes of the base losses inside the kernels (see ``_losses.BASE_LOSSES``).
LOSS_CODES = {"logistic": 0, "hinge": 1, "squared_hinge": 2, "squared": 3, "huberized_hinge": 4}


@njit(cache=True)
def _base_value_and_derivative(code, width, t):
    if code == 0:
        # log(1 + exp(-t)) and its derivative, evaluated on the stable side
        if t >= 0.0:
            e = math.exp(-t)
            return math.log1p(e), -e / (1.0 + e)
        e = math.exp(t)
        return -t + math.log1p(e), -1.0 / (1.0 + e)
    u = 1.0 - t
    if code == 1:
        if u > 0.0:
            return u, -1.0
        return 0.0, 0.0
    if code == 2:
        if u > 0.0:
            return u * u, -2.0 * u
        return 0.0, 0.0
    if code == 3:
        return u * u, -2.0 * u
    if u <= 0.0:
        return 0.0, 0.0
    if u < width:
        return u * u / (2.0 * width), -u / width
    return u - width / 2.0, -1.0


@njit(cache=True)
def ranking_loss_and_grad(F, Y, code, width, want_grad):
    """Per-sample pairwise ranking surrogate and its gradient in the scores.

    ``loss[i] = mean_{p in Y_i+, q in Y_i-} l(F[i, p] - F[i, q])`` (0 when
    ``Y_i+`` or ``Y_i-`` is empty) and ``grad[i] = d loss[i] / d F[i]``.
    """
    n, c = F.shape
    loss = np.zeros(n)
    grad = np.zeros((n, c))
    pos = np.empty(c, dtype=np.int64)
    neg = np.empty(c, dtype=np.int64)
    for i in range(n):
        n_pos = 0
        n_neg = 0
        for j in range(c):
            if Y[i, j] != 0:
                pos[n_pos] = j
                n_pos += 1
            else:
                neg[n_neg] = j
                n_neg += 1
        if n_pos == 0 or n_neg == 0:
            continue
        scale = 1.0 / (n_pos * n_neg)
        acc = 0.0
        for a in range(n_pos):
            p = pos[a]
            fp = F[i, p]
            for b in range(n_neg):
                q = neg[b]
                value, deriv = _base_value_and_derivative(code, width, fp - F[i, q])
                acc += value
                if want_grad:
                    grad[i, p] += deriv * scale
                    grad[i, q] -= deriv * scale
        loss[i] = acc * scale
    return loss, grad


@njit(cache=True)
def auc_pair_loss(scores, positive, code, width):
    """``mean_{a in pos, b in neg} l(scores[a] - scores[b])`` over one label's examples."""
    n = scores.shape[0]
    n_pos = 0
    for i in range(n):
        if positive[i]:
            n_pos += 1
    n_neg = n - n_pos
    if n_pos == 0 or n_neg == 0:
        return np.nan
    acc = 0.0
    for a in range(n):
        if not positive[a]:
            continue
        for b in range(n):
            if positive[b]:
                continue
            value, _ = _base_value_and_derivative(code, width, scores[a] - scores[b])
            acc += value
    return acc / (n_pos * n_neg)
