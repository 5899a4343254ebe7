"""Conformance checks for bandit policies, in the manner of river's ``checks``.

Policies are not fit/predict estimators, so sklearn's common checks say little
about their protocol. :func:`yield_policy_checks` yields the checks every
policy of this package passes: a stable repr, parameters left untouched,
pickling in the middle of a run, the same trajectory for the same seed, and
the same trajectory whether played online or fitted in one call.
"""

import pickle

import numpy as np
from sklearn.base import clone

_N_ROUNDS, _N_CONTEXTS, _N_ACTIONS = 60, 4, 3


def _problem(seed=0):
    rng = np.random.RandomState(seed)
    losses = rng.uniform(size=(_N_ROUNDS, _N_CONTEXTS, _N_ACTIONS))
    contexts = rng.randint(_N_CONTEXTS, size=_N_ROUNDS)
    return contexts, losses


def _ready(policy, random_state=0):
    """A clone set up to play the check problem online as well as in a batch."""
    params = {"n_actions": _N_ACTIONS, "horizon": _N_ROUNDS, "random_state": random_state}
    if getattr(policy, "estimation", None) == "known":
        params["context_distribution"] = np.full(_N_CONTEXTS, 1.0 / _N_CONTEXTS)
    return clone(policy).set_params(**params)


def _play_online(policy, contexts, losses, start=0, stop=None):
    actions = []
    for t in range(start, len(contexts) if stop is None else stop):
        c = int(contexts[t])
        a = policy.select(c)
        policy.update(c, a, losses[t, :, a])
        actions.append(a)
    return actions


def check_repr_stable(policy):
    """The repr only shows parameters and is the same after a fit."""
    before = repr(policy)
    assert repr(clone(policy)) == before
    contexts, losses = _problem()
    fitted = _ready(policy).fit(contexts[:, None], losses)
    assert repr(fitted) == repr(clone(fitted))


def check_params_untouched(policy):
    """Fitting and playing online leave every parameter as it was set."""
    contexts, losses = _problem()
    fresh = _ready(policy)
    params = {k: repr(v) for k, v in fresh.get_params().items()}
    fresh.fit(contexts[:, None], losses)
    _play_online(fresh, contexts, losses, stop=5)
    assert {k: repr(v) for k, v in fresh.get_params().items()} == params


def check_pickle_mid_run(policy):
    """A policy pickled in the middle of an online run continues identically."""
    contexts, losses = _problem()
    first = _ready(policy)
    _play_online(first, contexts, losses, stop=_N_ROUNDS // 2)
    second = pickle.loads(pickle.dumps(first))
    tail_first = _play_online(first, contexts, losses, start=_N_ROUNDS // 2)
    tail_second = _play_online(second, contexts, losses, start=_N_ROUNDS // 2)
    assert tail_first == tail_second
    np.testing.assert_array_equal(first.loss_estimates_, second.loss_estimates_)


def check_same_seed_same_trajectory(policy):
    """Two fits with the same random_state play the same actions."""
    contexts, losses = _problem()
    a = _ready(policy, random_state=7).fit(contexts[:, None], losses)
    b = _ready(policy, random_state=7).fit(contexts[:, None], losses)
    np.testing.assert_array_equal(a.actions_, b.actions_)
    np.testing.assert_array_equal(a.loss_estimates_, b.loss_estimates_)


def check_online_matches_fit(policy):
    """select/update round by round reproduces fit exactly."""
    contexts, losses = _problem()
    batch = _ready(policy).fit(contexts[:, None], losses)
    online = _ready(policy)
    actions = _play_online(online, contexts, losses)
    np.testing.assert_array_equal(batch.actions_, actions)
    np.testing.assert_allclose(batch.loss_estimates_, online.loss_estimates_, rtol=0, atol=0)


def check_fit_bookkeeping(policy):
    """Actions are valid and the losses and regret add up."""
    contexts, losses = _problem()
    fitted = _ready(policy).fit(contexts[:, None], losses)
    played = losses[np.arange(_N_ROUNDS), contexts, fitted.actions_]
    assert fitted.actions_.min() >= 0 and fitted.actions_.max() < _N_ACTIONS
    np.testing.assert_allclose(fitted.cumulative_loss_, played.sum())
    best = losses.sum(axis=0).argmin(axis=1)
    comparator = losses[np.arange(_N_ROUNDS), contexts, best[contexts]]
    np.testing.assert_allclose(fitted.regret_curve_, np.cumsum(played - comparator))
    np.testing.assert_allclose(fitted.regret_, fitted.regret_curve_[-1])


def yield_policy_checks(policy):
    """Yield the conformance checks for a bandit policy.

    Parameters
    ----------
    policy : policy
        An unfitted policy of :mod:`skpaper.bandits` (or one following its API).

    Yields
    ------
    check : callable
        ``check(policy)`` raises ``AssertionError`` on failure.

    Examples
    --------
    >>> from skpaper.bandits import Exp3IX, yield_policy_checks
    >>> policy = Exp3IX()
    >>> for check in yield_policy_checks(policy):
    ...     check(policy)
    """
    yield check_repr_stable
    yield check_params_untouched
    yield check_pickle_mid_run
    yield check_same_seed_same_trajectory
    yield check_online_matches_fit
    yield check_fit_bookkeeping
