"""numba kernels shared by every policy of :mod:`skpaper.bandits`.

One state layout serves all policies. A policy keeps, for each *row*
(a context, or a single row for a context-free learner), cumulative loss
estimates ``L[r, a]`` and exponential weights ``W[r, a]`` proportional to
``exp(-eta * L[r, a])``, shifted per row by ``base[r]`` (the row minimum at the
last refresh) so that the largest weight is 1 and nothing underflows.

The batch loop :func:`run_policy` and the online methods call the same two
functions, :func:`select_action` and :func:`observe`, so a policy stepped by
hand and a policy fitted in one call follow the same trajectory.
"""

import math

import numpy as np
from numba import njit

from ._layout import (  # noqa: F401  (the kernels' callers read them here too)
    EST_ALL_PAST,
    EST_DOUBLING,
    EST_KNOWN,
    EST_LAGGED,
    EST_PAIRED,
    EST_PREV_EPOCH,
    F_AUTO_ETA,
    F_AUTO_GAMMA,
    F_EST_TOTAL,
    F_ETA,
    F_GAMMA,
    I_EPOCH,
    I_EPOCH_LEN,
    I_N_CUR,
    I_N_EST,
    I_PENDING,
    I_POS,
    I_T,
    N_FSTATE,
    N_ISTATE,
    SCOPE_CROSS,
    SCOPE_PER_CONTEXT,
    SCOPE_POOLED,
    SRC_AUCTION,
    SRC_DENSE,
    SRC_LABELS,
    SRC_POOLED,
    SRC_SLEEPING,
)

# A row whose normaliser drops below this is re-shifted by its minimum estimate.
_TINY = 1e-50
# Weights below this are flushed to zero: subnormal arithmetic is two orders of
# magnitude slower, and such a weight is below 1e-230 of its row's total.
_FLUSH = 1e-280


@njit(cache=True)
def refresh_row(L, W, Z, base, mask, r, c, use_mask, eta):
    """Recompute row ``r`` of the weights from ``L`` with the row minimum subtracted."""
    K = L.shape[1]
    lo = np.inf
    for a in range(K):
        if (not use_mask or mask[c, a]) and L[r, a] < lo:
            lo = L[r, a]
    if lo == np.inf:
        lo = 0.0
    base[r] = lo
    z = 0.0
    for a in range(K):
        if use_mask and not mask[c, a]:
            W[r, a] = 0.0
        else:
            x = -eta * (L[r, a] - lo)
            W[r, a] = math.exp(x) if x > -640.0 else 0.0
            z += W[r, a]
    Z[r] = z


@njit(cache=True)
def refresh_all(L, W, Z, base, mask, scope, eta):
    use_mask = scope != SCOPE_POOLED
    for r in range(L.shape[0]):
        refresh_row(L, W, Z, base, mask, r, r, use_mask, eta)


@njit(cache=True)
def select_action(W, mask, r, c, u):
    """Inverse-CDF draw from ``pi(. | c)``, proportional to ``W[r] * mask[c]``, at ``u``."""
    K = W.shape[1]
    z = 0.0
    for a in range(K):
        if mask[c, a]:
            z += W[r, a]
    target = u * z
    acc = 0.0
    last = -1
    for a in range(K):
        if mask[c, a] and W[r, a] > 0.0:
            acc += W[r, a]
            last = a
            if target < acc:
                return a
    return last


@njit(cache=True)
def _probability(W, mask, r, c, a):
    z = 0.0
    for k in range(W.shape[1]):
        if mask[c, k]:
            z += W[r, k]
    return W[r, a] / z


@njit(cache=True)
def _bump(L, W, Z, base, mask, r, c, a, lhat, eta, use_mask):
    L[r, a] += lhat
    w = W[r, a] * math.exp(-eta * lhat)
    W[r, a] = w if w > _FLUSH else 0.0
    z = 0.0
    for k in range(W.shape[1]):
        z += W[r, k]
    Z[r] = z
    if z < _TINY:
        refresh_row(L, W, Z, base, mask, r, c, use_mask, eta)


@njit(cache=True)
def _apply_column(L, W, Z, base, mask, a, column, denom, eta, move_weights):
    """Cross-learning update: ``L[c, a] += column[c] / denom`` for every context."""
    K = L.shape[1]
    # One loop over the rows, no call per row: array arguments of a call are
    # reference-counted, which costs more than the update itself.
    for r in range(L.shape[0]):
        if not mask[r, a] or column[r] == 0.0:
            continue
        lhat = column[r] / denom
        L[r, a] += lhat
        if not move_weights:
            continue
        w = W[r, a] * math.exp(-eta * lhat)
        W[r, a] = w if w > _FLUSH else 0.0
        z = 0.0
        for k in range(K):
            z += W[r, k]
        Z[r] = z
        if z < _TINY:
            refresh_row(L, W, Z, base, mask, r, r, True, eta)


@njit(cache=True)
def _marginal(W, Z, est_w, ids, n_ids, total, a):
    """f_hat(a) = sum_c w(c) pi(a | c) / sum_c w(c) over the estimation set."""
    f = 0.0
    for j in range(n_ids):
        c = ids[0, j]
        f += est_w[c] * W[c, a] / Z[c]
    return f / total


@njit(cache=True)
def _record_context(cur_w, ids, istate, c):
    if cur_w[c] == 0.0:
        ids[1, istate[I_N_CUR]] = c
        istate[I_N_CUR] += 1
    cur_w[c] += 1.0


@njit(cache=True)
def _close_epoch(est, L, W, Z, base, Lsnap, est_w, cur_w, ids, mask, istate, fstate, log_k):
    K = L.shape[1]
    # The contexts just collected become the next epoch's estimation set.
    for j in range(istate[I_N_EST]):
        est_w[ids[0, j]] = 0.0
    total = 0.0
    for j in range(istate[I_N_CUR]):
        c = ids[1, j]
        ids[0, j] = c
        est_w[c] = cur_w[c]
        total += cur_w[c]
        cur_w[c] = 0.0
    istate[I_N_EST] = istate[I_N_CUR]
    istate[I_N_CUR] = 0
    fstate[F_EST_TOTAL] = total
    istate[I_EPOCH] += 1
    istate[I_POS] = 0
    if est == EST_LAGGED:
        # Play with the estimates up to the end of the epoch before the one just closed.
        refresh_all(Lsnap, W, Z, base, mask, SCOPE_CROSS, fstate[F_ETA])
        for r in range(L.shape[0]):
            for a in range(K):
                Lsnap[r, a] = L[r, a]
    elif est == EST_DOUBLING:
        istate[I_EPOCH_LEN] *= 2
        if fstate[F_AUTO_ETA] > 0.0:
            fstate[F_ETA] = math.sqrt(log_k / (K * istate[I_EPOCH_LEN]))
        if fstate[F_AUTO_GAMMA] > 0.0:
            fstate[F_GAMMA] = fstate[F_ETA] / 2.0
        # Lsnap keeps the learner just finished, for predictions until the next round.
        for r in range(L.shape[0]):
            for a in range(K):
                Lsnap[r, a] = L[r, a]
                L[r, a] = 0.0
        refresh_all(L, W, Z, base, mask, SCOPE_CROSS, fstate[F_ETA])


@njit(cache=True)
def observe(scope, est, L, W, Z, base, Lsnap, est_w, cur_w, ids, mask, istate, fstate,
            pending, c, a, column):
    """Feed the loss column ``column[c'] = l_t(c', a)`` of round ``t`` to the policy."""
    K = L.shape[1]
    eta = fstate[F_ETA]
    gamma = fstate[F_GAMMA]
    istate[I_T] += 1
    if scope == SCOPE_POOLED:
        p = _probability(W, mask, 0, c, a)
        _bump(L, W, Z, base, mask, 0, c, a, column[c] / (p + gamma), eta, False)
        return
    if scope == SCOPE_PER_CONTEXT:
        p = _probability(W, mask, c, c, a)
        _bump(L, W, Z, base, mask, c, c, a, column[c] / (p + gamma), eta, True)
        return

    n_rows = L.shape[0]
    f = -1.0
    if est == EST_KNOWN:
        f = _marginal(W, Z, est_w, ids, istate[I_N_EST], fstate[F_EST_TOTAL], a)
    elif est == EST_ALL_PAST:
        if est_w[c] == 0.0:
            ids[0, istate[I_N_EST]] = c
            istate[I_N_EST] += 1
        est_w[c] += 1.0
        fstate[F_EST_TOTAL] += 1.0
        f = _marginal(W, Z, est_w, ids, istate[I_N_EST], fstate[F_EST_TOTAL], a)
    elif est == EST_PAIRED:
        if istate[I_POS] == 0:
            # First round of a pair: keep its column, update after the held-out context.
            for r in range(n_rows):
                pending[r] = column[r]
            istate[I_PENDING] = a
            istate[I_POS] = 1
            return
        istate[I_POS] = 0
        a = istate[I_PENDING]
        f = W[c, a] / Z[c]
        _apply_column(L, W, Z, base, mask, a, pending, f + gamma, eta, True)
        return
    else:
        _record_context(cur_w, ids, istate, c)
        if istate[I_EPOCH] > 0:
            f = _marginal(W, Z, est_w, ids, istate[I_N_EST], fstate[F_EST_TOTAL], a)

    if f >= 0.0:
        _apply_column(L, W, Z, base, mask, a, column, f + gamma, eta, est != EST_LAGGED)

    if est == EST_PREV_EPOCH or est == EST_LAGGED or est == EST_DOUBLING:
        istate[I_POS] += 1
        if istate[I_POS] == istate[I_EPOCH_LEN]:
            _close_epoch(est, L, W, Z, base, Lsnap, est_w, cur_w, ids, mask, istate, fstate,
                         math.log(K))


@njit(cache=True)
def loss_entry(kind, t, c, a, dense, values, bids, thresholds, arm_losses, labels, mask):
    if kind == SRC_DENSE:
        return dense[t, c, a]
    if kind == SRC_AUCTION:
        win = 1.0 if bids[a] >= thresholds[t] else 0.0
        return 0.5 * (1.0 - (values[c] - bids[a]) * win)
    if kind == SRC_SLEEPING:
        return arm_losses[t, a] if mask[c, a] else 1.0
    if kind == SRC_LABELS:
        return 0.0 if labels[t] == a else 1.0
    return arm_losses[t, a]


@njit(cache=True)
def loss_entries(kind, contexts, actions, dense, values, bids, thresholds, arm_losses, labels,
                 mask):
    out = np.empty(contexts.shape[0])
    for t in range(contexts.shape[0]):
        out[t] = loss_entry(kind, t, contexts[t], actions[t], dense, values, bids, thresholds,
                            arm_losses, labels, mask)
    return out


@njit(cache=True)
def loss_column(kind, t, a, dense, values, bids, thresholds, arm_losses, labels, mask, out):
    n = out.shape[0]
    if kind == SRC_DENSE:
        for c in range(n):
            out[c] = dense[t, c, a]
    elif kind == SRC_AUCTION:
        win = 1.0 if bids[a] >= thresholds[t] else 0.0
        for c in range(n):
            out[c] = 0.5 * (1.0 - (values[c] - bids[a]) * win)
    elif kind == SRC_SLEEPING:
        for c in range(n):
            out[c] = arm_losses[t, a] if mask[c, a] else 1.0
    elif kind == SRC_LABELS:
        value = 0.0 if labels[t] == a else 1.0
        for c in range(n):
            out[c] = value
    else:
        for c in range(n):
            out[c] = arm_losses[t, a]


@njit(cache=True)
def run_policy(scope, est, L, W, Z, base, Lsnap, est_w, cur_w, ids, mask, istate, fstate,
               pending, contexts, u, kind, dense, values, bids, thresholds, arm_losses,
               labels, source_mask, best, actions, regret_curve):
    """Play ``len(contexts)`` rounds against an oblivious loss source.

    ``best[c]`` is the comparator policy; ``regret_curve[t]`` receives the
    cumulative regret against it and the total loss of the played actions is
    returned.
    """
    n_contexts = source_mask.shape[0]
    column = np.empty(n_contexts)
    total = 0.0
    regret = 0.0
    for t in range(contexts.shape[0]):
        c = contexts[t]
        r = c if scope != SCOPE_POOLED else 0
        a = select_action(W, mask, r, c, u[t])
        loss_column(kind, t, a, dense, values, bids, thresholds, arm_losses, labels,
                    source_mask, column)
        observe(scope, est, L, W, Z, base, Lsnap, est_w, cur_w, ids, mask, istate, fstate,
                pending, c, a, column)
        actions[t] = a
        total += column[c]
        regret += column[c] - loss_entry(kind, t, c, best[c], dense, values, bids,
                                         thresholds, arm_losses, labels, source_mask)
        regret_curve[t] = regret
    return total
