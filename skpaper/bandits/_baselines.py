"""Baselines without cross-learning: EXP3-IX and EXP3, per context or context-free."""

import math

from . import _kern as kern
from ._base import _GAMMA_CONSTRAINT, _POLICY_CONSTRAINTS, _BasePolicy, fill_doc


class _NoCrossLearningPolicy(_BasePolicy):
    """EXP3 family without cross-learning: only the played entry is updated."""

    #: Numerator of the default learning rate ``sqrt(c ln K / (K n))``.
    _eta_constant = 2.0

    @property
    def _scope(self):
        return kern.SCOPE_PER_CONTEXT if self.per_context else kern.SCOPE_POOLED

    def _rounds_per_learner(self, horizon, n_contexts):
        return horizon / n_contexts if self.per_context else horizon

    def _default_eta(self, horizon, n_contexts, n_actions):
        n = max(self._rounds_per_learner(horizon, n_contexts), 1.0)
        return math.sqrt(self._eta_constant * math.log(n_actions) / (n_actions * n))


@fill_doc
class Exp3IX(_NoCrossLearningPolicy):
    """EXP3 with implicit exploration (EXP3-IX), per context or context-free.

    The baseline that ignores cross-learning: it only learns from the loss
    ``l_t(c_t, a_t)`` of the round it plays. With ``per_context=True`` it runs
    one EXP3-IX learner per context (regret ``O~(sqrt(C K T))``, growing with
    the number of contexts C); with ``per_context=False`` one learner ignores
    the context (it competes with the best single action only).

    Parameters
    ----------
    {online_parameters}
    eta : float, default=None
        Learning rate. ``None`` means ``sqrt(2 ln K / (K n))`` with ``n = T / C``
        rounds per context learner (``n = T`` when ``per_context=False``).
    gamma : float, default=None
        Implicit exploration. ``None`` means ``eta / 2``.
    per_context : bool, default=True
        One learner per context, or a single context-free learner.
    {random_state}

    Attributes
    ----------
    {protocol_attributes}
    loss_estimates_ : ndarray of shape (n_contexts or 1, n_actions)
        Cumulative loss estimates (one row when ``per_context=False``).
    eta_ : float
        Learning rate used.
    gamma_ : float
        Implicit exploration used.

    See Also
    --------
    CrossLearningExp3 : The cross-learning policy these baselines are compared with.
    Exp3 : EXP3 with the unbiased importance-weighted estimator.

    Notes
    -----
    With ``p_t = pi_t(. | c_t)`` proportional to ``exp(-eta L_hat_t(c_t, .))``,
    the update is ``L_hat(c_t, a_t) += l_t(c_t, a_t) / (p_t(a_t) + gamma)``
    (Neu's EXP3-IX, whose optimistic bias gives high-probability regret
    bounds). In sleeping bandits the context-free learner renormalises its
    weights over the available arms.

    References
    ----------
    .. [1] G. Neu. "Explore no more: Improved high-probability regret bounds
       for non-stochastic bandits". NeurIPS 2015.
    .. [2] R. Huang and Z. Huang. "High Probability Bound for Cross-Learning
       Contextual Bandits with Unknown Context Distributions". ICML, PMLR 267,
       25329-25355, 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.bandits import Exp3IX
    >>> rng = np.random.default_rng(0)
    >>> losses = rng.uniform(size=(500, 3, 4))
    >>> contexts = rng.integers(3, size=(500, 1))
    >>> policy = Exp3IX(random_state=0).fit(contexts, losses)
    >>> policy.loss_estimates_.shape
    (3, 4)
    """

    _parameter_constraints = {
        **_POLICY_CONSTRAINTS,
        "gamma": _GAMMA_CONSTRAINT,
        "per_context": ["boolean"],
    }

    def __init__(self, *, n_actions=None, horizon=None, eta=None, gamma=None, per_context=True,
                 random_state=None):
        self.n_actions = n_actions
        self.horizon = horizon
        self.eta = eta
        self.gamma = gamma
        self.per_context = per_context
        self.random_state = random_state

    def _hyperparameters(self, horizon, n_contexts, n_actions):
        eta = self.eta if self.eta is not None else self._default_eta(
            horizon, n_contexts, n_actions)
        gamma = self.gamma if self.gamma is not None else eta / 2
        return eta, gamma, 0, self.eta is None, self.gamma is None


@fill_doc
class Exp3(_NoCrossLearningPolicy):
    """EXP3 with the unbiased importance-weighted loss estimator.

    Plain EXP3 (no implicit exploration, no forced exploration): the update is
    ``L_hat(c_t, a_t) += l_t(c_t, a_t) / p_t(a_t)``. Its expected regret is
    ``O(sqrt(K n ln K))`` per learner, but the estimator's variance gives its
    regret a heavy upper tail, which is what the high-probability analysis of
    the implicit-exploration variants avoids.

    Parameters
    ----------
    {online_parameters}
    eta : float, default=None
        Learning rate. ``None`` means ``sqrt(2 ln K / (K n))`` with ``n = T / C``
        rounds per context learner (``n = T`` when ``per_context=False``).
    per_context : bool, default=True
        One learner per context, or a single context-free learner.
    {random_state}

    Attributes
    ----------
    {protocol_attributes}
    loss_estimates_ : ndarray of shape (n_contexts or 1, n_actions)
        Cumulative loss estimates.
    eta_ : float
        Learning rate used.
    gamma_ : float
        Always 0.

    See Also
    --------
    Exp3IX : The implicit-exploration variant.
    CrossLearningExp3 : The cross-learning policy.

    Notes
    -----
    ``pi_t(a | c)`` is proportional to ``exp(-eta L_hat_t(c, a))``; the default
    learning rate is the one of Theorem 11.2 of [1]_.

    References
    ----------
    .. [1] T. Lattimore and C. Szepesvari. "Bandit Algorithms". Cambridge
       University Press, 2020, chapter 11.
    .. [2] P. Auer, N. Cesa-Bianchi, Y. Freund and R. E. Schapire. "The
       nonstochastic multiarmed bandit problem". SIAM J. Comput. 32(1), 2002.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.bandits import Exp3
    >>> rng = np.random.default_rng(0)
    >>> losses = rng.uniform(size=(500, 4))
    >>> policy = Exp3(per_context=False, random_state=0).fit(np.zeros((500, 1)), losses)
    >>> policy.gamma_
    0.0
    """

    _parameter_constraints = {**_POLICY_CONSTRAINTS, "per_context": ["boolean"]}

    def __init__(self, *, n_actions=None, horizon=None, eta=None, per_context=True,
                 random_state=None):
        self.n_actions = n_actions
        self.horizon = horizon
        self.eta = eta
        self.per_context = per_context
        self.random_state = random_state

    def _hyperparameters(self, horizon, n_contexts, n_actions):
        eta = self.eta if self.eta is not None else self._default_eta(
            horizon, n_contexts, n_actions)
        return eta, 0.0, 0, self.eta is None, False
