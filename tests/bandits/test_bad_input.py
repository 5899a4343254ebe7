"""Every public entry point rejects bad input with a message naming it."""

import numpy as np
import pytest
from sklearn.base import clone

from skpaper.bandits import (
    CrossLearningExp3,
    Exp3,
    Exp3IX,
    FirstPriceAuction,
    SleepingBandits,
    simulate,
)
from skpaper.datasets import make_first_price_auction, make_sleeping_bandits

CONTEXTS = np.zeros((10, 1), dtype=int)
LOSSES = np.full((10, 2, 3), 0.5)


@pytest.mark.parametrize("policy", [CrossLearningExp3(), Exp3IX(), Exp3()], ids=repr)
@pytest.mark.parametrize(
    "X, y, match",
    [
        (CONTEXTS, LOSSES + 1.0, r"y \(the losses\) must lie in \[0, 1\]"),
        (CONTEXTS, LOSSES - 1.0, r"must lie in \[0, 1\]"),
        (CONTEXTS, np.full((10, 3), 2.0), r"must lie in \[0, 1\]"),
        (np.zeros((10, 2)), LOSSES, "one column of integer context ids"),
        (np.full((10, 1), 2), LOSSES, r"ids in \[0, 2\)"),
        (np.full((10, 1), 0.5), LOSSES, "integer context ids"),
        (CONTEXTS[:7], LOSSES, "inconsistent numbers of samples"),
        (CONTEXTS, np.zeros((10, 2, 3, 1)), "y must be losses of shape"),
        (CONTEXTS, np.full(10, -1.0), "correct action of each round"),
        (CONTEXTS, None, "requires y to be passed"),
    ],
)
def test_fit_rejects_bad_losses_and_contexts(policy, X, y, match):
    with pytest.raises(ValueError, match=match):
        clone(policy).fit(X, y)


def test_fit_rejects_n_actions_mismatch_and_bad_labels():
    with pytest.raises(ValueError, match="expecting n_actions=4"):
        CrossLearningExp3(n_actions=4).fit(CONTEXTS, LOSSES)
    with pytest.raises(ValueError, match="holds actions up to 5"):
        Exp3IX(n_actions=3).fit(CONTEXTS, np.full(10, 5))


def test_fit_rejects_bad_environment_use():
    env = FirstPriceAuction(n_values=2, n_bids=3, random_state=0)
    with pytest.raises(ValueError, match="has not been generated"):
        CrossLearningExp3().fit(None, environment=env)
    env.generate(10)
    with pytest.raises(ValueError, match="either as y or as an environment"):
        CrossLearningExp3().fit(CONTEXTS, LOSSES, environment=env)
    with pytest.raises(TypeError, match="must be a skpaper.bandits environment"):
        CrossLearningExp3().fit(CONTEXTS, environment=object())
    with pytest.raises(ValueError, match="generated for 10"):
        CrossLearningExp3().fit(np.zeros((11, 1)), environment=env)


def test_known_estimation_needs_a_distribution():
    with pytest.raises(ValueError, match="needs context_distribution"):
        CrossLearningExp3(estimation="known").fit(CONTEXTS, LOSSES)
    with pytest.raises(ValueError, match="2 non-negative weights"):
        CrossLearningExp3(estimation="known", context_distribution=[1, -1]).fit(
            CONTEXTS, LOSSES)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"eta": -1.0}, "'eta' parameter"),
        ({"gamma": -0.1}, "'gamma' parameter"),
        ({"estimation": "future"}, "'estimation' parameter"),
        ({"epoch_length": 0}, "'epoch_length' parameter"),
        ({"n_actions": 1}, "'n_actions' parameter"),
    ],
)
def test_invalid_parameters_name_the_parameter(params, match):
    with pytest.raises(ValueError, match=match):
        CrossLearningExp3(**params).fit(CONTEXTS, LOSSES)


def test_predict_and_score_reject_bad_contexts():
    policy = CrossLearningExp3(random_state=0).fit(CONTEXTS, LOSSES)
    with pytest.raises(ValueError, match="ids in"):
        policy.predict([[5]])
    with pytest.raises(ValueError, match="features"):
        policy.predict(np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        policy.score(CONTEXTS, LOSSES * 3)


@pytest.mark.parametrize("policy", [CrossLearningExp3(), Exp3IX(), Exp3()], ids=repr)
def test_online_api_rejects_bad_calls(policy):
    with pytest.raises(ValueError, match="n_actions must be set"):
        clone(policy).select(0)
    online = clone(policy).set_params(n_actions=3, horizon=20)
    with pytest.raises(TypeError, match="context must be an int"):
        online.select(1.5)
    with pytest.raises(ValueError, match="context must be in"):
        online.select(-1)
    with pytest.raises(ValueError, match=r"losses must lie in \[0, 1\]"):
        online.update(0, 0, [0.5, 1.5])
    with pytest.raises(ValueError, match="1-D array"):
        online.update(0, 0, [[0.5]])
    online.update(0, online.select(0), [0.5, 0.2])
    with pytest.raises(ValueError, match="one entry per context"):
        online.update(0, 0, [0.5, 0.2, 0.1])
    with pytest.raises(ValueError, match="action must be in"):
        online.update(0, 3, [0.5, 0.2])
    with pytest.raises(ValueError, match="context must be in"):
        online.update(2, 0, [0.5, 0.2])


def test_online_api_needs_a_horizon():
    with pytest.raises(ValueError, match="horizon must be set"):
        CrossLearningExp3(n_actions=2).update(0, 0, [0.1])


def test_environments_reject_bad_input():
    with pytest.raises(ValueError, match="'n_values' parameter"):
        FirstPriceAuction(n_values=0).generate(10)
    with pytest.raises(ValueError, match="'n_arms' parameter"):
        SleepingBandits(n_arms=13).generate(10)
    with pytest.raises(ValueError, match="horizon must be an int >= 1"):
        FirstPriceAuction().generate(0)
    env = FirstPriceAuction(n_values=3, n_bids=2, random_state=0)
    with pytest.raises(ValueError, match="has not been generated"):
        env.loss_column(0, 0)
    env.generate(5)
    with pytest.raises(ValueError, match=r"t must be an int in \[0, 5\)"):
        env.loss_column(5, 0)
    with pytest.raises(ValueError, match=r"action must be an int in \[0, 2\)"):
        env.loss_column(0, 2)
    with pytest.raises(ValueError, match="availability must lie in"):
        SleepingBandits(n_arms=2, availability=[0.5, 0.0]).generate(5)


def test_generators_reject_bad_input():
    with pytest.raises(ValueError, match="n_bids must be"):
        make_first_price_auction(10, n_bids=1)
    with pytest.raises(TypeError, match="horizon must be an int"):
        make_first_price_auction(10.5)
    with pytest.raises(ValueError, match="concentration must be"):
        make_first_price_auction(10, concentration=0.0)
    with pytest.raises(ValueError, match=r"n_arms must be in \[2, 12\]"):
        make_sleeping_bandits(10, n_arms=20)
    with pytest.raises(ValueError, match="availability must be a float or an array of shape"):
        make_sleeping_bandits(10, n_arms=3, availability=[0.5, 0.5])


def test_simulate_rejects_bad_input():
    env = FirstPriceAuction(n_values=3, n_bids=2, random_state=0)
    with pytest.raises(ValueError, match="at least one policy"):
        simulate([], env, horizon=10)
    with pytest.raises(TypeError, match="must be skpaper.bandits policies"):
        simulate([object()], env, horizon=10)
    with pytest.raises(TypeError, match="must be a skpaper.bandits environment"):
        simulate([Exp3IX()], object(), horizon=10)
    with pytest.raises(ValueError, match="n_seeds must be an int >= 1"):
        simulate([Exp3IX()], env, horizon=10, n_seeds=0)
    with pytest.raises(ValueError, match=r"checkpoints must be .* rounds in \[1, 10\]"):
        simulate([Exp3IX()], env, horizon=10, checkpoints=[0, 10])


@pytest.mark.parametrize("policy", [CrossLearningExp3(), Exp3IX(), Exp3()], ids=repr)
@pytest.mark.parametrize("label", [4_194_304, 10**9])
def test_a_huge_label_is_rejected_before_sizing_the_tables(policy, label):
    y = np.zeros(20)
    y[3] = label
    with pytest.raises(ValueError, match=r"holds the action \d+, past the largest action "
                                         r"index 1048575.*LabelEncoder"):
        clone(policy).fit(np.zeros((20, 1)), y)


def test_the_largest_label_still_fits():
    y = np.zeros(20)
    y[3] = 2**20 - 1
    policy = Exp3(random_state=0).fit(np.zeros((20, 1)), y)
    assert policy.n_actions_ == 2**20


def test_tables_past_the_memory_limit_are_refused(monkeypatch):
    monkeypatch.setenv("SKPAPER_MEMORY_LIMIT", "1M")
    X = np.arange(200).reshape(-1, 1)  # 200 distinct contexts
    y = np.arange(200) % 1000
    y[0] = 999
    with pytest.raises(ValueError, match=r"200 contexts x n_actions=1000.*SKPAPER_MEMORY_LIMIT"):
        Exp3().fit(X, y)
    monkeypatch.setenv("SKPAPER_MEMORY_LIMIT", "1G")
    assert Exp3(random_state=0).fit(X, y).n_actions_ == 1000
