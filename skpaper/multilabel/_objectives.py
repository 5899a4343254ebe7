"""Multi-label surrogate losses built from a base loss, with gradients in the scores.

With scores ``F`` of shape ``(n, c)``, a 0/1 indicator ``Y`` and signs
``s = 2 Y - 1``, the per-sample surrogates of [1]_ are

* Hamming: ``(1/c) sum_j l(s_ij F_ij)``;
* subset: ``max_j l(s_ij F_ij)``;
* ranking: ``mean_{p in Y_i+, q in Y_i-} l(F_ip - F_iq)`` (0 when a side is empty).

References
----------
.. [1] Y.-F. Zhang and M.-L. Zhang, "Tight and Fast Bounds for Multi-Label
   Learning", ICML 2025, PMLR 267:76909-76938.
"""

import numpy as np

OBJECTIVES = ("hamming", "subset", "ranking")


def _ranking(F, Y, base, want_grad):
    from ._kernels import LOSS_CODES, ranking_loss_and_grad

    return ranking_loss_and_grad(
        np.ascontiguousarray(F, dtype=np.float64),
        np.ascontiguousarray(Y, dtype=np.uint8),
        LOSS_CODES[base.name],
        float(base.huber_width),
        want_grad,
    )


def surrogate_losses(F, Y, base, objective):
    """Per-sample multi-label surrogate losses, shape ``(n,)``."""
    if objective == "ranking":
        return _ranking(F, Y, base, False)[0]
    values = base.value(np.where(Y != 0, F, -F))
    if objective == "hamming":
        return values.mean(axis=1)
    return values.max(axis=1)


def surrogate_value_and_grad(F, Y, base, objective, temperature=None, sample_weight=None):
    """Mean surrogate over the samples and its gradient with respect to ``F``.

    For the subset loss, a positive ``temperature`` replaces the max over
    labels by its log-sum-exp smoothing ``tau log sum_j exp(v_j / tau)``,
    which lies within ``tau log c`` above the max; ``None`` keeps the max and
    returns a subgradient. ``sample_weight`` (positive, shape ``(n,)``) turns
    the mean into the weighted mean ``sum_i w_i l_i / sum_i w_i``: a weight of
    2 is the same as the row appearing twice.
    """
    n, c = F.shape
    # per-row factor of the mean: 1/n unweighted, w_i / sum(w) weighted
    row = np.full(n, 1.0 / n) if sample_weight is None else sample_weight / sample_weight.sum()
    if objective == "ranking":
        loss, grad = _ranking(F, Y, base, True)
        return float(row @ loss), grad * row[:, None]
    signs = np.where(Y != 0, 1.0, -1.0)
    margins = signs * F
    values = base.value(margins)
    if objective == "hamming":
        return (float(row @ values.mean(axis=1)),
                signs * base.derivative(margins) * (row[:, None] / c))
    if temperature is not None:
        top = values.max(axis=1, keepdims=True)
        weights = np.exp((values - top) / temperature)
        total = weights.sum(axis=1, keepdims=True)
        smooth = top[:, 0] + temperature * np.log(total[:, 0])
        weights /= total
        return float(row @ smooth), weights * signs * base.derivative(margins) * row[:, None]
    top = np.argmax(values, axis=1)
    rows = np.arange(n)
    grad = np.zeros_like(F)
    grad[rows, top] = signs[rows, top] * base.derivative(margins[rows, top]) * row
    return float(row @ values[rows, top]), grad
