"""A straightforward numpy implementation of the policies, for checking and timing.

Every round recomputes the whole policy ``pi_t(. | c)`` from the cumulative
estimates, exactly as the formulas read, with no incremental weights. The
tests compare the numba kernels with it trajectory by trajectory, and the
benchmark times it against them.
"""

import numpy as np


def _policy(L, mask, eta):
    shifted = np.where(mask, L, np.inf)
    weights = np.exp(-eta * (shifted - shifted.min(axis=1, keepdims=True)))
    return weights / weights.sum(axis=1, keepdims=True)


def _draw(p, u):
    return int(min(np.searchsorted(np.cumsum(p), u * p.sum(), side="right"), len(p) - 1))


def reference_run(contexts, column, uniforms, *, n_contexts, n_actions, eta, gamma,
                  scope="cross", estimation="prev_epoch", epoch_length=1, nu=None,
                  mask=None):
    """Play a policy with plain numpy and return the actions and the final estimates.

    Parameters
    ----------
    contexts : ndarray of shape (T,)
        Context ids.
    column : callable
        ``column(t, a)`` returns ``l_t(., a)``, shape (n_contexts,).
    uniforms : ndarray of shape (T,)
        One uniform per round for the inverse-CDF action draw.
    n_contexts, n_actions : int
        C and K.
    eta, gamma : float
        Learning rate and implicit exploration.
    scope : {"cross", "per_context", "pooled"}, default="cross"
        Cross-learning, one learner per context, or one context-free learner.
    estimation : {"prev_epoch", "lagged", "known", "all_past"}, default="prev_epoch"
        Source of ``f_hat`` for ``scope="cross"``.
    epoch_length : int, default=1
        Epoch length L.
    nu : ndarray of shape (n_contexts,), default=None
        Context distribution for ``estimation="known"``.
    mask : ndarray of shape (n_contexts, n_actions), default=None
        Available actions per context (all by default).

    Returns
    -------
    actions : ndarray of shape (T,)
    L : ndarray of shape (n_rows, n_actions)
        Cumulative loss estimates.
    """
    if mask is None:
        mask = np.ones((n_contexts, n_actions), dtype=bool)
    rows = 1 if scope == "pooled" else n_contexts
    L = np.zeros((rows, n_actions))
    played_L = L.copy()
    snapshot = L.copy()
    previous, current, seen = None, [], []
    actions = np.empty(len(contexts), dtype=np.int64)
    for t, c in enumerate(contexts):
        policy = _policy(L if estimation != "lagged" else played_L,
                         mask if scope != "pooled" else np.ones_like(L, dtype=bool), eta)
        p = policy[0] * mask[c] if scope == "pooled" else policy[c]
        a = _draw(p, uniforms[t])
        actions[t] = a
        losses = column(t, a)
        if scope == "pooled":
            L[0, a] += losses[c] / (p[a] / p.sum() + gamma)
            continue
        if scope == "per_context":
            L[c, a] += losses[c] / (p[a] + gamma)
            continue
        if estimation == "known":
            f = nu @ policy[:, a]
        elif estimation == "all_past":
            seen.append(c)
            f = policy[seen, a].mean()
        else:
            current.append(c)
            f = None if previous is None else policy[previous, a].mean()
        if f is not None:
            L[:, a] += np.where(mask[:, a], losses, 0.0) / (f + gamma)
        if estimation in ("prev_epoch", "lagged") and len(current) == epoch_length:
            previous, current = current, []
            if estimation == "lagged":
                played_L, snapshot = snapshot, L.copy()
    return actions, L
