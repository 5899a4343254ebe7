"""Many seeds of several policies against one oblivious adversary."""

import numbers

import numpy as np
from sklearn.base import clone
from sklearn.utils import Bunch

from ..utils import derive_seed, parallel_map, spawn_seeds
from ._base import _BasePolicy


def _one_seed(seeds, *, policies, environment, horizon, checkpoints):
    context_seed, policy_seeds = seeds
    env = clone(environment).generate(horizon, context_random_state=context_seed)
    final = np.empty(len(policies))
    curves = np.empty((len(policies), checkpoints.shape[0]))
    for i, (policy, seed) in enumerate(zip(policies, policy_seeds)):
        fitted = clone(policy).set_params(random_state=seed).fit(None, environment=env)
        final[i] = fitted.regret_
        curves[i] = fitted.regret_curve_[checkpoints - 1]
    return final, curves


def simulate(policies, environment, *, horizon, n_seeds=10, checkpoints=None, n_jobs=None,
             random_state=None):
    """Run policies over many context draws of one fixed oblivious adversary.

    Each seed draws a fresh sequence of contexts from the environment (the
    adversary, fixed by the environment's ``random_state``, is shared by all
    seeds and all policies) and fits a clone of every policy on it with its own
    seed. This is the probability space of a high-probability regret bound:
    the contexts and the learner's internal randomness.

    Parameters
    ----------
    policies : dict of str to policy, or list of policies
        Unfitted policies; a list is named by class name and index.
    environment : FirstPriceAuction or SleepingBandits
        The environment (need not be generated). When its ``random_state`` is
        not an int, one adversary seed is drawn from it first.
    horizon : int
        Number of rounds T.
    n_seeds : int, default=10
        Number of context draws.
    checkpoints : array-like of int, default=None
        Rounds (1-based) at which the cumulative regret is recorded.
        ``None`` means 20 evenly spaced rounds ending at T.
    n_jobs : int, default=None
        Seeds run in parallel through :func:`skpaper.utils.parallel_map`.
    random_state : int, RandomState instance or None, default=None
        Draws the context and policy seeds.

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch`
        ``names`` (list of str), ``regret`` (n_policies, n_seeds) final regret,
        ``curves`` (n_policies, n_seeds, n_checkpoints) cumulative regret and
        ``checkpoints`` (n_checkpoints,).

    Examples
    --------
    >>> from skpaper.bandits import CrossLearningExp3, Exp3IX, FirstPriceAuction, simulate
    >>> env = FirstPriceAuction(n_values=10, n_bids=5, random_state=0)
    >>> result = simulate({"cross": CrossLearningExp3(), "ix": Exp3IX()}, env,
    ...                   horizon=500, n_seeds=3, random_state=0)
    >>> result.regret.shape, result.curves.shape
    ((2, 3), (2, 3, 20))
    """
    if isinstance(policies, dict):
        names, policies = list(policies), list(policies.values())
    else:
        policies = list(policies)
        names = [f"{type(p).__name__}_{i}" for i, p in enumerate(policies)]
    if not policies:
        raise ValueError("policies must hold at least one policy, got none.")
    for policy in policies:
        if not isinstance(policy, _BasePolicy):
            raise TypeError(
                f"policies must be skpaper.bandits policies, got {type(policy).__name__}."
            )
    if not hasattr(environment, "generate") or not hasattr(environment, "_loss_source"):
        raise TypeError(
            "environment must be a skpaper.bandits environment, got "
            f"{type(environment).__name__}."
        )
    for name, value, low in (("horizon", horizon, 1), ("n_seeds", n_seeds, 1)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ValueError(f"{name} must be an int >= {low}, got {value!r}.")
    if checkpoints is None:
        checkpoints = np.unique(np.linspace(horizon / 20, horizon, 20).round().astype(int))
    checkpoints = np.asarray(checkpoints, dtype=np.int64)
    if checkpoints.ndim != 1 or checkpoints.size == 0 or checkpoints.min() < 1 \
            or checkpoints.max() > horizon:
        raise ValueError(
            f"checkpoints must be a non-empty 1-D array of rounds in [1, {horizon}], "
            f"got {checkpoints!r}."
        )

    rs = environment.get_params().get("random_state")
    if not isinstance(rs, numbers.Integral):
        environment = clone(environment).set_params(random_state=derive_seed(rs))
    seeds = spawn_seeds(random_state, n_seeds * (1 + len(policies)))
    jobs = [
        (seeds[k], seeds[n_seeds + k * len(policies): n_seeds + (k + 1) * len(policies)])
        for k in range(n_seeds)
    ]
    results = parallel_map(_one_seed, jobs, n_jobs=n_jobs, policies=policies,
                           environment=environment, horizon=int(horizon),
                           checkpoints=checkpoints)
    return Bunch(
        names=names,
        regret=np.stack([r[0] for r in results], axis=1),
        curves=np.stack([r[1] for r in results], axis=1),
        checkpoints=checkpoints,
    )
