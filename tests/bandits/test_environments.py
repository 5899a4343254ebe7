"""Environments, data generators and simulate."""

import numpy as np
import pytest
from joblib import parallel_config
from scipy import stats

from skpaper.bandits import (
    CrossLearningExp3,
    Exp3IX,
    FirstPriceAuction,
    SleepingBandits,
    simulate,
)
from skpaper.datasets import make_first_price_auction, make_sleeping_bandits


def test_auction_losses_follow_the_first_price_rule():
    env = FirstPriceAuction(n_values=5, n_bids=4, regimes=3, random_state=0).generate(50)
    dense = env.to_dense()
    v, b, m = env.values_, env.bids_, env.thresholds_
    win = b[None, None, :] >= m[:, None, None]
    expected = 0.5 * (1 - (v[None, :, None] - b[None, None, :]) * win)
    np.testing.assert_allclose(dense, expected)
    assert dense.min() >= 0 and dense.max() <= 1
    np.testing.assert_allclose(env.cumulative_losses(), dense.sum(axis=0))
    np.testing.assert_array_equal(env.best_policy(), dense.sum(axis=0).argmin(axis=1))
    np.testing.assert_allclose(env.loss_column(7, 2), dense[7, :, 2])


def test_sleeping_losses_and_masks():
    env = SleepingBandits(n_arms=3, availability=[0.9, 0.5, 0.2], random_state=0).generate(80)
    dense = env.to_dense()
    mask = env.action_mask_
    available = mask[env.contexts_]
    assert available.any(axis=1).all()
    np.testing.assert_allclose(
        np.where(mask[None], dense, 0.0),
        np.where(mask[None], env.arm_losses_[:, None, :], 0.0),
    )
    assert np.all(dense[:, 1:][:, ~mask[1:]] == 1.0)
    np.testing.assert_allclose(env.cumulative_losses(), dense.sum(axis=0))


def test_sleeping_context_distribution_matches_frequencies():
    data = make_sleeping_bandits(20000, n_arms=3, availability=0.5, random_state=1)
    nu = data.context_distribution
    assert nu[0] == 0 and nu.sum() == pytest.approx(1.0)
    counts = np.bincount(data.contexts, minlength=8)
    # Chi-square goodness of fit over the 7 non-empty sets.
    p_value = stats.chisquare(counts[1:], nu[1:] * counts.sum()).pvalue
    assert p_value > 1e-3


def test_auction_contexts_follow_nu():
    data = make_first_price_auction(20000, n_values=6, random_state=3)
    counts = np.bincount(data.contexts, minlength=6)
    p_value = stats.chisquare(counts, data.context_distribution * counts.sum()).pvalue
    assert p_value > 1e-3


def test_adversary_is_shared_across_context_draws():
    env = FirstPriceAuction(n_values=5, random_state=4)
    first = env.generate(100, context_random_state=0)
    thresholds, contexts = first.thresholds_.copy(), first.contexts_.copy()
    second = env.generate(100, context_random_state=1)
    np.testing.assert_array_equal(second.thresholds_, thresholds)
    assert not np.array_equal(second.contexts_, contexts)


def test_simulate_shapes_and_determinism():
    env = FirstPriceAuction(n_values=8, n_bids=4, random_state=0)
    policies = {"cross": CrossLearningExp3(), "per_context": Exp3IX()}
    one = simulate(policies, env, horizon=300, n_seeds=3, random_state=0)
    with parallel_config(backend="threading"):
        two = simulate(policies, env, horizon=300, n_seeds=3, n_jobs=2, random_state=0)
    assert one.names == ["cross", "per_context"]
    assert one.regret.shape == (2, 3) and one.curves.shape == (2, 3, 20)
    np.testing.assert_array_equal(one.regret, two.regret)
    np.testing.assert_array_equal(one.curves[:, :, -1], one.regret)
    assert one.checkpoints[-1] == 300


def test_simulate_fixes_an_unseeded_adversary():
    env = FirstPriceAuction(n_values=4, n_bids=3, random_state=None)
    result = simulate([Exp3IX()], env, horizon=50, n_seeds=2, checkpoints=[10, 50],
                      random_state=0)
    assert result.names == ["Exp3IX_0"] and result.curves.shape == (1, 2, 2)
