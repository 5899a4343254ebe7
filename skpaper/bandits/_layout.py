"""Codes and state layout shared by the bandit kernels and the estimators (no numba).

The estimators read these codes at import time; the numba kernels of
:mod:`._kernels` are compiled only when a policy first runs, through :mod:`._kern`.
"""

# How the loss of the played action is turned into estimates.
SCOPE_CROSS = 0  # cross-learning: the whole column l_t(., a_t), divided by f(a_t) + gamma
SCOPE_PER_CONTEXT = 1  # one learner per context: entry (c_t, a_t) only
SCOPE_POOLED = 2  # one context-free learner: l_t(c_t, a_t) into a single row

# Where the action marginal f(a) = E_{c ~ nu} pi(a | c) of a cross-learner comes from.
EST_PREV_EPOCH = 0
EST_LAGGED = 1
EST_DOUBLING = 2
EST_KNOWN = 3
EST_ALL_PAST = 4
EST_PAIRED = 5

# Loss sources.
SRC_DENSE = 0  # losses[t, c, a]
SRC_AUCTION = 1  # (1 - (values[c] - bids[a]) [bids[a] >= thresholds[t]]) / 2
SRC_SLEEPING = 2  # arm_losses[t, a] when mask[c, a], else 1
SRC_LABELS = 3  # 1[a != labels[t]] for every context
SRC_POOLED = 4  # arm_losses[t, a] for every context

# Integer state slots.
I_T = 0  # rounds observed
I_EPOCH = 1  # current epoch index (0 = the first, collection-only epoch)
I_POS = 2  # position inside the current epoch (or inside the current pair)
I_EPOCH_LEN = 3  # length of the current epoch
I_N_EST = 4  # number of distinct contexts in the estimation set (ids[0])
I_N_CUR = 5  # number of distinct contexts collected in the current epoch (ids[1])
I_PENDING = 6  # action of the first round of a pair
N_ISTATE = 7

# Float state slots.
F_ETA = 0
F_GAMMA = 1
F_AUTO_ETA = 2  # 1.0 when eta follows the default formula (re-derived per doubling epoch)
F_AUTO_GAMMA = 3  # 1.0 when gamma = eta / 2
F_EST_TOTAL = 4  # total weight of the estimation set
N_FSTATE = 5
