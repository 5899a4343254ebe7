"""Policies: protocol invariants, agreement with the numpy reference, regret claims."""

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils import check_random_state

from skpaper.bandits import (
    CrossLearningExp3,
    Exp3,
    Exp3IX,
    FirstPriceAuction,
    SleepingBandits,
    yield_policy_checks,
)
from skpaper.bandits._reference import reference_run

ESTIMATIONS = ["prev_epoch", "lagged", "doubling", "known", "all_past", "paired"]
POLICIES = (
    [CrossLearningExp3(estimation=e) for e in ESTIMATIONS]
    + [Exp3IX(), Exp3IX(per_context=False), Exp3(), Exp3(per_context=False)]
)


def _policy_checks():
    for policy in POLICIES:
        for check in yield_policy_checks(policy):
            yield pytest.param(policy, check, id=f"{policy!r}-{check.__name__}")


@pytest.mark.parametrize("policy, check", list(_policy_checks()))
def test_policy_conformance(policy, check):
    check(policy)


@pytest.mark.parametrize("estimation", ["prev_epoch", "lagged", "known", "all_past"])
def test_cross_learning_matches_numpy_reference(estimation, dense_problem):
    contexts, losses = dense_problem
    nu = np.full(losses.shape[1], 1 / losses.shape[1])
    policy = CrossLearningExp3(estimation=estimation, epoch_length=23, context_distribution=nu,
                               random_state=3).fit(contexts, losses)
    uniforms = check_random_state(3).random_sample(len(contexts))
    actions, L = reference_run(
        contexts[:, 0], lambda t, a: losses[t, :, a], uniforms, n_contexts=5, n_actions=4,
        eta=policy.eta_, gamma=policy.gamma_, estimation=estimation, epoch_length=23, nu=nu,
    )
    np.testing.assert_array_equal(policy.actions_, actions)
    np.testing.assert_allclose(policy.loss_estimates_, L, rtol=1e-10)


@pytest.mark.parametrize("per_context", [True, False])
def test_exp3ix_matches_numpy_reference(per_context, dense_problem):
    contexts, losses = dense_problem
    policy = Exp3IX(per_context=per_context, random_state=5).fit(contexts, losses)
    uniforms = check_random_state(5).random_sample(len(contexts))
    actions, L = reference_run(
        contexts[:, 0], lambda t, a: losses[t, :, a], uniforms, n_contexts=5, n_actions=4,
        eta=policy.eta_, gamma=policy.gamma_,
        scope="per_context" if per_context else "pooled",
    )
    np.testing.assert_array_equal(policy.actions_, actions)
    np.testing.assert_allclose(policy.loss_estimates_, L, rtol=1e-10)


@pytest.mark.parametrize("estimation", ["known", "all_past"])
def test_single_context_reduces_to_exp3ix(estimation, global_random_seed):
    # With one context the action marginal is pi_t(a) itself: EXP3-IX exactly.
    rng = np.random.RandomState(global_random_seed)
    losses = rng.uniform(size=(300, 1, 5))
    contexts = np.zeros((300, 1))
    cross = CrossLearningExp3(estimation=estimation, eta=0.05, gamma=0.02,
                              context_distribution=[1.0],
                              random_state=global_random_seed).fit(contexts, losses)
    ix = Exp3IX(eta=0.05, gamma=0.02, random_state=global_random_seed).fit(contexts, losses)
    np.testing.assert_array_equal(cross.actions_, ix.actions_)
    np.testing.assert_allclose(cross.loss_estimates_, ix.loss_estimates_, rtol=1e-12)


@pytest.mark.parametrize("estimation", ESTIMATIONS)
def test_cross_learning_policy_is_a_distribution_within_ix_bound(estimation, dense_problem):
    contexts, losses = dense_problem
    policy = CrossLearningExp3(estimation=estimation, context_distribution=np.full(5, 0.2),
                               random_state=0).fit(contexts, losses)
    state = policy._state
    probabilities = state["W"] / state["Z"][:, None]
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)
    assert np.all(probabilities > 0)
    # Implicit exploration: every estimate is at most l / gamma <= 1 / gamma.
    assert policy.loss_estimates_.max() <= len(contexts) / policy.gamma_
    assert policy.actions_.min() >= 0 and policy.actions_.max() < 4


def test_ix_estimates_bounded_by_inverse_gamma_per_round():
    rng = np.random.RandomState(0)
    contexts = rng.randint(3, size=(1, 1))
    losses = np.ones((1, 3, 2))
    policy = CrossLearningExp3(estimation="known", gamma=0.25,
                               context_distribution=np.full(3, 1 / 3), random_state=0)
    policy.fit(contexts, losses)
    # One round: L_hat = 1 / (f + gamma) with f = 1/2 under the uniform policy.
    np.testing.assert_allclose(policy.loss_estimates_[:, policy.actions_[0]], 1 / 0.75)


@given(
    arrays(np.float64, (4, 3), elements=st.floats(0, 1)),
    st.integers(0, 2**31 - 2),
    st.sampled_from(ESTIMATIONS),
)
def test_regret_non_negative_against_constant_losses(loss_matrix, seed, estimation):
    # With l_t = l for every t, every round's regret l(c, a_t) - min_a l(c, a) is >= 0.
    T = 60
    contexts = np.random.RandomState(seed).randint(4, size=(T, 1))
    losses = np.broadcast_to(loss_matrix, (T, 4, 3))
    policy = CrossLearningExp3(estimation=estimation,
                               context_distribution=np.full(4, 0.25),
                               random_state=seed).fit(contexts, losses)
    assert np.all(np.diff(policy.regret_curve_) >= -1e-12)
    assert policy.regret_curve_[0] >= 0


@pytest.mark.parametrize("policy", POLICIES, ids=repr)
def test_regret_zero_when_all_losses_equal(policy):
    contexts = np.arange(50).reshape(-1, 1) % 4
    losses = np.full((50, 4, 3), 0.3)
    fitted = clone(policy).set_params(context_distribution=np.full(4, 0.25)) \
        if "context_distribution" in policy.get_params() else clone(policy)
    fitted.fit(contexts, losses)
    assert fitted.regret_ == 0.0
    np.testing.assert_allclose(fitted.cumulative_loss_, 50 * 0.3)


@pytest.mark.parametrize("policy", POLICIES, ids=repr)
def test_sleeping_policies_never_play_unavailable_arms(policy):
    env = SleepingBandits(n_arms=4, availability=0.4, random_state=0).generate(500)
    fitted = clone(policy).set_params(random_state=0).fit(None, environment=env)
    assert env.action_mask_[env.contexts_, fitted.actions_].all()
    assert env.action_mask_[np.arange(1, 16), fitted.predict(np.arange(1, 16)[:, None])].all()


def test_cross_learning_beats_per_context_on_many_values():
    # Fixed seeds: cross-learning pools the information of 50 values, the
    # per-context learner splits T = 4000 rounds into 50 separate problems.
    env = FirstPriceAuction(n_values=50, n_bids=8, random_state=0)
    gaps = []
    for seed in range(4):
        env.generate(4000, context_random_state=seed)
        cross = CrossLearningExp3(random_state=seed).fit(None, environment=env).regret_
        per_context = Exp3IX(random_state=seed).fit(None, environment=env).regret_
        gaps.append(per_context - cross)
    assert min(gaps) > 0


def test_predict_is_greedy_and_score_is_minus_average_regret(dense_problem):
    contexts, losses = dense_problem
    policy = CrossLearningExp3(random_state=0).fit(contexts, losses)
    greedy = policy.predict(np.arange(5)[:, None])
    np.testing.assert_array_equal(greedy, policy.loss_estimates_.argmin(axis=1))
    T = len(contexts)
    played = losses[np.arange(T), contexts[:, 0], greedy[contexts[:, 0]]]
    best = losses.sum(axis=0).argmin(axis=1)
    comparator = losses[np.arange(T), contexts[:, 0], best[contexts[:, 0]]]
    assert policy.score(contexts, losses) == pytest.approx(-(played - comparator).mean())
    assert policy.score(contexts, losses) <= 0


def test_score_of_the_best_policy_is_zero():
    contexts = np.arange(200).reshape(-1, 1) % 2
    losses = np.zeros((200, 2, 3))
    losses[:, 0, 1:] = 1.0
    losses[:, 1, :2] = 1.0
    policy = CrossLearningExp3(random_state=0).fit(contexts, losses)
    np.testing.assert_array_equal(policy.predict([[0], [1]]), [0, 2])
    assert policy.score(contexts, losses) == 0.0


def test_label_losses_use_distinct_rows_as_contexts():
    rng = np.random.RandomState(0)
    X = rng.choice([-1.5, 2.0], size=(300, 2))
    y = (X[:, 0] > 0).astype(int) * 2
    policy = CrossLearningExp3(random_state=0).fit(X, y)
    assert policy.n_contexts_ == 4 and policy.n_actions_ == 3
    assert policy.predict([[9.0, 9.0]]).shape == (1,)


def test_pickled_fitted_policy_predicts_identically(dense_problem):
    contexts, losses = dense_problem
    policy = CrossLearningExp3(random_state=0).fit(contexts, losses)
    restored = pickle.loads(pickle.dumps(policy))
    np.testing.assert_array_equal(restored.predict(contexts), policy.predict(contexts))
    assert restored.score(contexts, losses) == policy.score(contexts, losses)


def test_online_play_continues_after_fit(dense_problem):
    contexts, losses = dense_problem
    whole = CrossLearningExp3(n_actions=4, horizon=400, random_state=0)
    whole.fit(contexts[:300], losses[:300])
    tail = [whole.select(int(c)) for c in contexts[300:301, 0]]
    assert 0 <= tail[0] < 4


def test_policy_in_pipeline_and_grid_search(dense_problem):
    contexts, losses = dense_problem
    pipe = make_pipeline(FunctionTransformer(), CrossLearningExp3(random_state=0))
    pipe.fit(contexts, losses)
    assert pipe.predict(contexts).shape == (400,)
    search = GridSearchCV(CrossLearningExp3(random_state=0), {"eta": [0.01, 0.1]},
                          cv=KFold(3)).fit(contexts, losses)
    assert search.best_params_["eta"] in (0.01, 0.1)
    assert search.best_score_ <= 0


def test_environment_fit_equals_dense_fit():
    env = FirstPriceAuction(n_values=6, n_bids=4, random_state=1).generate(300)
    from_env = CrossLearningExp3(random_state=2).fit(None, environment=env)
    dense = CrossLearningExp3(random_state=2).fit(env.contexts_[:, None], env.to_dense())
    np.testing.assert_array_equal(from_env.actions_, dense.actions_)
    np.testing.assert_allclose(from_env.regret_curve_, dense.regret_curve_)


def test_doubling_epochs_restart_the_learner():
    env = FirstPriceAuction(n_values=4, n_bids=3, random_state=0).generate(70)
    policy = CrossLearningExp3(estimation="doubling", epoch_length=10, random_state=0)
    policy.fit(None, environment=env)
    # Epochs of 10, 20 and 40 rounds fill T = 70; a fresh learner waits for round 71.
    istate = policy._state["istate"]
    assert istate[1] == 3 and istate[3] == 80
    assert policy.loss_estimates_.sum() == 0
    # Until then the greedy policy is the one of the learner that just finished.
    np.testing.assert_array_equal(policy.predict(np.arange(4)[:, None]),
                                  policy._state["Lsnap"].argmin(axis=1))
    assert policy._state["Lsnap"].sum() > 0
