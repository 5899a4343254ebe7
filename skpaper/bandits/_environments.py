"""Cross-learning environments: a first-price auction and sleeping bandits.

An environment is an oblivious adversary plus a context distribution. Its
parameters and ``random_state`` fix the adversary; :meth:`generate` draws it
together with one sequence of i.i.d. contexts (from ``context_random_state``,
so that many context draws can share one adversary). Losses are produced one
column ``l_t(., a)`` at a time, so memory stays ``O(T + C K)`` and never
``O(T C K)``.
"""

import numbers

import numpy as np
from sklearn.base import BaseEstimator

from ..datasets._bandits import (
    MAX_SLEEPING_ARMS,
    make_first_price_auction,
    make_sleeping_bandits,
)
from ..utils._sklearn import Interval
from . import _kern as kern
from ._source import LossSource


class _BaseEnvironment(BaseEstimator):
    """Common API of the environments (not a fit/predict estimator)."""

    def generate(self, horizon, *, context_random_state=None):
        """Draw the adversary and a sequence of contexts for ``horizon`` rounds.

        Parameters
        ----------
        horizon : int
            Number of rounds T.
        context_random_state : int, RandomState instance or None, default=None
            Draws the contexts. ``None`` derives them from ``random_state``,
            which always draws the adversary.

        Returns
        -------
        self : object
            The environment, with ``contexts_`` (T,) and ``context_distribution_``.
        """
        self._validate_params()
        if isinstance(horizon, bool) or not isinstance(horizon, numbers.Integral) \
                or horizon < 1:
            raise ValueError(f"horizon must be an int >= 1, got {horizon!r}.")
        self._generate(int(horizon), context_random_state)
        self.horizon_ = int(horizon)
        return self

    def _check_generated(self):
        if not hasattr(self, "contexts_"):
            raise ValueError(
                f"This {type(self).__name__} has not been generated yet: call generate(horizon)."
            )

    def _check_round(self, t):
        self._check_generated()
        if isinstance(t, bool) or not isinstance(t, numbers.Integral) \
                or not 0 <= t < self.horizon_:
            raise ValueError(f"t must be an int in [0, {self.horizon_}), got {t!r}.")
        return int(t)

    def loss_column(self, t, action):
        """Return the losses ``l_t(c, action)`` of one action for every context ``c``.

        Parameters
        ----------
        t : int
            Round, in ``[0, horizon_)``.
        action : int
            Action, in ``[0, n_actions_)``.

        Returns
        -------
        column : ndarray of shape (n_contexts_,)
            Loss of ``action`` at round ``t`` in each context, in ``[0, 1]``.
        """
        t = self._check_round(t)
        if isinstance(action, bool) or not isinstance(action, numbers.Integral) \
                or not 0 <= action < self.n_actions_:
            raise ValueError(f"action must be an int in [0, {self.n_actions_}), got {action!r}.")
        return self._loss_source(t + 1).column(t, int(action))

    def losses_at(self, t):
        """Return the loss matrix ``l_t(c, a)`` of round ``t``.

        Parameters
        ----------
        t : int
            Round, in ``[0, horizon_)``.

        Returns
        -------
        losses : ndarray of shape (n_contexts_, n_actions_)
            Loss of each action in each context at round ``t``.
        """
        t = self._check_round(t)
        source = self._loss_source(t + 1)
        return np.stack([source.column(t, a) for a in range(self.n_actions_)], axis=1)

    def cumulative_losses(self):
        """Return the cumulative losses ``S[c, a] = sum_t l_t(c, a)``.

        Returns
        -------
        S : ndarray of shape (n_contexts_, n_actions_)
            Sum of the losses over the generated horizon.
        """
        self._check_generated()
        return self._loss_source(self.horizon_).cumulative_losses()

    def best_policy(self):
        """Return the best fixed policy ``argmin_a S[c, a]`` (among available actions).

        Returns
        -------
        policy : ndarray of shape (n_contexts_,)
            Best action of each context over the generated horizon.
        """
        self._check_generated()
        return self._loss_source(self.horizon_).best_policy()

    def to_dense(self):
        """Return all losses as one dense array (for small problems and tests).

        Returns
        -------
        losses : ndarray of shape (horizon_, n_contexts_, n_actions_)
            ``l_t(c, a)`` of every round, context and action.
        """
        self._check_generated()
        return np.stack([self.losses_at(t) for t in range(self.horizon_)])


class FirstPriceAuction(_BaseEnvironment):
    """Learning to bid in a repeated first-price auction (cross-learning).

    The context is the bidder's private value, on the grid ``(i + 1) / C``,
    drawn i.i.d. from Dirichlet weights nu; the actions are the bids
    ``j / K``. The adversary fixes the highest competing bid ``m_t``, in
    ``regimes`` blocks of rounds with different windows. Since winning,
    ``b >= m_t``, does not depend on the value, one auction reveals the loss
    ``(1 - (v - b) [b >= m_t]) / 2`` of the played bid for every value.

    Parameters
    ----------
    n_values : int, default=20
        Number of contexts C.
    n_bids : int, default=10
        Number of actions K.
    regimes : int, default=8
        Number of blocks of rounds with their own competing-bid window.
    random_state : int, RandomState instance or None, default=None
        Draws the adversary (nu and the competing bids).

    Attributes
    ----------
    contexts_ : ndarray of shape (horizon_,)
        Value index of each round.
    thresholds_ : ndarray of shape (horizon_,)
        Highest competing bid ``m_t``.
    values_ : ndarray of shape (n_values,)
        The value grid.
    bids_ : ndarray of shape (n_bids,)
        The bids.
    context_distribution_ : ndarray of shape (n_values,)
        nu.
    n_contexts_ : int
        Number of contexts.
    n_actions_ : int
        Number of actions.
    horizon_ : int
        Number of rounds generated.

    See Also
    --------
    skpaper.datasets.make_first_price_auction : The generator behind it.
    SleepingBandits : The other cross-learning application.

    Notes
    -----
    Rewards ``(v - b) [b >= m_t]`` lie in ``[-1, 1]`` and are mapped to losses
    in ``[0, 1]``; the application is the one of Balseiro et al. and of
    Schneider & Zimmert [1]_.

    References
    ----------
    .. [1] J. Schneider and J. Zimmert. "Optimal cross-learning for contextual
       bandits with unknown context distributions". NeurIPS 36, 2023.

    Examples
    --------
    >>> from skpaper.bandits import FirstPriceAuction
    >>> env = FirstPriceAuction(n_values=4, n_bids=3, random_state=0).generate(10)
    >>> env.loss_column(0, 2).round(3).tolist()
    [0.708, 0.583, 0.458, 0.333]
    """

    _parameter_constraints = {
        "n_values": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_bids": [Interval(numbers.Integral, 2, None, closed="left")],
        "regimes": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, *, n_values=20, n_bids=10, regimes=8, random_state=None):
        self.n_values = n_values
        self.n_bids = n_bids
        self.regimes = regimes
        self.random_state = random_state

    def _generate(self, horizon, context_random_state):
        data = make_first_price_auction(
            horizon, n_values=self.n_values, n_bids=self.n_bids, regimes=self.regimes,
            random_state=self.random_state, context_random_state=context_random_state,
        )
        self.contexts_ = data.contexts
        self.thresholds_ = data.thresholds
        self.values_ = data.value_grid
        self.bids_ = data.bid_grid
        self.context_distribution_ = data.context_distribution
        self.n_contexts_ = self.n_values
        self.n_actions_ = self.n_bids

    def _loss_source(self, n_rounds):
        return LossSource(
            kern.SRC_AUCTION, n_rounds, self.n_contexts_, self.n_actions_,
            np.ones((self.n_contexts_, self.n_actions_), dtype=bool),
            values=self.values_, bids=self.bids_,
            thresholds=np.ascontiguousarray(self.thresholds_[:n_rounds]),
        )


class SleepingBandits(_BaseEnvironment):
    """Adversarial sleeping bandits with a stochastic set of available arms.

    The context is the set of available arms (a bit mask; arm ``a`` is
    available with probability ``availability[a]``, independently, and an
    empty set becomes one uniform arm). The adversary fixes Bernoulli losses
    ``l_t(a)`` that change in ``regimes`` blocks. Playing arm ``a`` reveals
    ``l_t(a)`` for every set containing ``a``: cross-learning over the
    ``2**n_arms`` contexts. Policies never play an unavailable arm; for
    completeness its loss is 1.

    Parameters
    ----------
    n_arms : int, default=5
        Number of arms K (at most 12).
    availability : float or array-like of shape (n_arms,), default=0.5
        Probability that each arm is available, in ``(0, 1]``.
    regimes : int, default=4
        Number of blocks of rounds with their own arm means.
    random_state : int, RandomState instance or None, default=None
        Draws the adversary (the losses).

    Attributes
    ----------
    contexts_ : ndarray of shape (horizon_,)
        Available set of each round, as a bit mask.
    arm_losses_ : ndarray of shape (horizon_, n_arms)
        ``l_t(a)``.
    action_mask_ : ndarray of shape (2**n_arms, n_arms)
        Row ``c`` marks the arms in set ``c``.
    context_distribution_ : ndarray of shape (2**n_arms,)
        Law of the available set.
    n_contexts_ : int
        ``2**n_arms``.
    n_actions_ : int
        ``n_arms``.
    horizon_ : int
        Number of rounds generated.

    See Also
    --------
    skpaper.datasets.make_sleeping_bandits : The generator behind it.
    FirstPriceAuction : The other cross-learning application.

    References
    ----------
    .. [1] J. Schneider and J. Zimmert. "Optimal cross-learning for contextual
       bandits with unknown context distributions". NeurIPS 36, 2023.

    Examples
    --------
    >>> from skpaper.bandits import SleepingBandits
    >>> env = SleepingBandits(n_arms=3, random_state=0).generate(20)
    >>> env.n_contexts_, env.action_mask_[5].tolist()
    (8, [True, False, True])
    """

    _parameter_constraints = {
        "n_arms": [Interval(numbers.Integral, 2, MAX_SLEEPING_ARMS, closed="both")],
        "availability": [Interval(numbers.Real, 0, 1, closed="right"), "array-like"],
        "regimes": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, *, n_arms=5, availability=0.5, regimes=4, random_state=None):
        self.n_arms = n_arms
        self.availability = availability
        self.regimes = regimes
        self.random_state = random_state

    def _generate(self, horizon, context_random_state):
        data = make_sleeping_bandits(
            horizon, n_arms=self.n_arms, availability=self.availability,
            regimes=self.regimes, random_state=self.random_state,
            context_random_state=context_random_state,
        )
        self.contexts_ = data.contexts
        self.arm_losses_ = data.arm_losses
        self.action_mask_ = data.action_mask
        self.context_distribution_ = data.context_distribution
        self.n_contexts_ = 2**self.n_arms
        self.n_actions_ = self.n_arms

    def _loss_source(self, n_rounds):
        mask = self.action_mask_.copy()
        # The empty set never occurs; give it every arm so that its row stays well defined.
        mask[0] = True
        return LossSource(
            kern.SRC_SLEEPING, n_rounds, self.n_contexts_, self.n_actions_, mask,
            arm_losses=np.ascontiguousarray(self.arm_losses_[:n_rounds]),
        )
