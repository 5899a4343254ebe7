"""Data generators for `skpaper.bandits` (numpy only; no torch import).

Both generators describe an *oblivious* adversary: every loss is fixed before
the learner plays. The adversary and the i.i.d. contexts come from two
separate random streams, so that many context draws can share one adversary
(the probability space of a high-probability regret bound).
"""

import numbers

import numpy as np
from sklearn.utils import Bunch, check_random_state

__all__ = ["make_first_price_auction", "make_sleeping_bandits"]

#: Largest number of arms for sleeping bandits: contexts are subsets, 2**n_arms of them.
MAX_SLEEPING_ARMS = 12


def _check_int(value, name, low, high=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r}).")
    if value < low or (high is not None and value > high):
        bounds = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {bounds}, got {value}.")
    return int(value)


def _check_positive_float(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a float, got {type(value).__name__} ({value!r}).")
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite float > 0, got {value}.")
    return float(value)


def _regime_of_round(horizon, regimes):
    """Index of the regime of each round: ``regimes`` blocks of (nearly) equal length."""
    return (np.arange(horizon) * regimes) // horizon


def _sample_contexts(horizon, distribution, rng):
    cdf = np.cumsum(distribution)
    cdf[-1] = 1.0
    return np.searchsorted(cdf, rng.random_sample(horizon), side="right").astype(np.int64)


def make_first_price_auction(
    horizon,
    *,
    n_values=20,
    n_bids=10,
    regimes=8,
    concentration=1.0,
    random_state=None,
    context_random_state=None,
):
    """Generate a repeated first-price auction with an oblivious competing bid.

    The bidder's private value is the context: ``n_values`` values on the grid
    ``(i + 1) / n_values`` drawn i.i.d. from Dirichlet weights nu. The actions
    are the bids ``j / n_bids``. The adversary fixes the highest competing bid
    ``m_t``: the horizon is cut into ``regimes`` blocks, each with its own
    uniform window of width 0.3 centred in ``[0.15, 0.85]``. A bid ``b`` wins
    when ``b >= m_t``, which does not depend on the value, so the loss
    ``(1 - (v - b) [b >= m_t]) / 2`` in ``[0, 1]`` is known for every value
    once the bid is played (cross-learning).

    Parameters
    ----------
    horizon : int
        Number of rounds T.
    n_values : int, default=20
        Number of contexts (values).
    n_bids : int, default=10
        Number of actions (bids).
    regimes : int, default=8
        Number of blocks with a different competing-bid window.
    concentration : float, default=1.0
        Dirichlet concentration of the value distribution.
    random_state : int, RandomState instance or None, default=None
        Draws the adversary: nu and the competing bids.
    context_random_state : int, RandomState instance or None, default=None
        Draws the contexts. ``None`` derives them from ``random_state``.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``contexts`` (T,) int64 value indices, ``thresholds`` (T,) competing
        bids, ``value_grid`` (n_values,), ``bid_grid`` (n_bids,), and
        ``context_distribution`` (n_values,) nu.

    Examples
    --------
    >>> from skpaper.datasets import make_first_price_auction
    >>> data = make_first_price_auction(100, n_values=5, n_bids=4, random_state=0)
    >>> data.contexts.shape, data.value_grid.tolist(), data.bid_grid.tolist()
    ((100,), [0.2, 0.4, 0.6, 0.8, 1.0], [0.0, 0.25, 0.5, 0.75])
    """
    horizon = _check_int(horizon, "horizon", 1)
    n_values = _check_int(n_values, "n_values", 1)
    n_bids = _check_int(n_bids, "n_bids", 2)
    regimes = _check_int(regimes, "regimes", 1)
    concentration = _check_positive_float(concentration, "concentration")

    rng = check_random_state(random_state)
    adversary_seed, context_seed = rng.randint(2**31 - 1, size=2)
    adversary = np.random.RandomState(adversary_seed)
    # Competing bids first: for one seed they do not depend on the number of values.
    centres = adversary.uniform(0.15, 0.85, size=regimes)
    regime = _regime_of_round(horizon, regimes)
    thresholds = centres[regime] + adversary.uniform(-0.15, 0.15, size=horizon)
    nu = adversary.dirichlet(np.full(n_values, concentration))

    if context_random_state is None:
        context_random_state = context_seed
    contexts = _sample_contexts(horizon, nu, check_random_state(context_random_state))
    return Bunch(
        contexts=contexts,
        thresholds=thresholds,
        value_grid=np.arange(1, n_values + 1) / n_values,
        bid_grid=np.arange(n_bids) / n_bids,
        context_distribution=nu,
    )


def _sleeping_context_distribution(availability):
    """Law of the available set: independent arms, an empty set becomes a uniform singleton."""
    n_arms = availability.shape[0]
    sets = np.arange(2**n_arms)
    bits = (sets[:, None] >> np.arange(n_arms)) & 1
    prob = np.prod(np.where(bits == 1, availability, 1.0 - availability), axis=1)
    empty = prob[0]
    prob[0] = 0.0
    prob[1 << np.arange(n_arms)] += empty / n_arms
    return prob / prob.sum(), bits.astype(bool)


def make_sleeping_bandits(
    horizon,
    *,
    n_arms=5,
    availability=0.5,
    regimes=4,
    random_state=None,
    context_random_state=None,
):
    """Generate adversarial sleeping bandits with a stochastic set of available arms.

    The context is the set of available arms, encoded as a bit mask
    (bit ``a`` set when arm ``a`` is available): arm ``a`` is available with
    probability ``availability[a]`` independently of the others, and an empty
    set is replaced by one arm drawn uniformly. The adversary fixes Bernoulli
    losses ``l_t(a)``: the horizon is cut into ``regimes`` blocks, each with its
    own arm means drawn uniformly in ``[0, 1]``. Playing arm ``a`` reveals
    ``l_t(a)`` for every set that contains ``a``.

    Parameters
    ----------
    horizon : int
        Number of rounds T.
    n_arms : int, default=5
        Number of arms K (at most 12: there are ``2**K`` contexts).
    availability : float or array-like of shape (n_arms,), default=0.5
        Probability that each arm is available, in ``(0, 1]``.
    regimes : int, default=4
        Number of blocks with different arm means.
    random_state : int, RandomState instance or None, default=None
        Draws the adversary (the losses).
    context_random_state : int, RandomState instance or None, default=None
        Draws the available sets. ``None`` derives them from ``random_state``.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``contexts`` (T,) int64 bit masks, ``arm_losses`` (T, n_arms) in
        ``{0, 1}``, ``action_mask`` (2**n_arms, n_arms) bool (row ``c`` marks
        the arms in set ``c``), ``availability`` (n_arms,) and
        ``context_distribution`` (2**n_arms,).

    Examples
    --------
    >>> from skpaper.datasets import make_sleeping_bandits
    >>> data = make_sleeping_bandits(50, n_arms=3, random_state=0)
    >>> data.arm_losses.shape, data.action_mask.shape
    ((50, 3), (8, 3))
    >>> bool(data.action_mask[data.contexts].any(axis=1).all())
    True
    """
    horizon = _check_int(horizon, "horizon", 1)
    n_arms = _check_int(n_arms, "n_arms", 2, MAX_SLEEPING_ARMS)
    regimes = _check_int(regimes, "regimes", 1)
    availability = np.asarray(availability, dtype=np.float64)
    if availability.ndim == 0:
        availability = np.full(n_arms, float(availability))
    if availability.shape != (n_arms,):
        raise ValueError(
            f"availability must be a float or an array of shape ({n_arms},), "
            f"got shape {availability.shape}."
        )
    if not np.all((availability > 0) & (availability <= 1)):
        raise ValueError(
            f"availability must lie in (0, 1], got {availability.tolist()}."
        )

    rng = check_random_state(random_state)
    adversary_seed, context_seed = rng.randint(2**31 - 1, size=2)
    adversary = np.random.RandomState(adversary_seed)
    means = adversary.uniform(0.0, 1.0, size=(regimes, n_arms))
    regime = _regime_of_round(horizon, regimes)
    arm_losses = (adversary.random_sample((horizon, n_arms)) < means[regime]).astype(np.float64)

    nu, action_mask = _sleeping_context_distribution(availability)
    if context_random_state is None:
        context_random_state = context_seed
    contexts = _sample_contexts(horizon, nu, check_random_state(context_random_state))
    return Bunch(
        contexts=contexts,
        arm_losses=arm_losses,
        action_mask=action_mask,
        availability=availability,
        context_distribution=nu,
    )
