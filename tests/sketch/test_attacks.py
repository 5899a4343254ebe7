import numpy as np
import pytest
from scipy.stats import binomtest

from skpaper.sketch import RobustCardinalitySketch
from skpaper.sketch.attacks import correlation_attack, secret_lowest_keys


class ExactCounter:
    """An estimator that cannot be attacked: it answers the true distinct count."""

    k = 16

    def predict(self, queries):
        return np.array([np.unique(q).size for q in queries], dtype=float)


def test_correlation_attack_breaks_standard_estimator():
    est = RobustCardinalitySketch(k=64, mode="standard", random_state=0).fit()
    keys = np.arange(3000)
    res = correlation_attack(est, keys, n_queries=768,
                             true_lowest=secret_lowest_keys(est, keys, 128), random_state=0)
    assert res.ratio_in > 3
    assert res.ratio_out < 0.8
    # Recovery far above chance (128 / 3000): a one-sided binomial test.
    assert binomtest(round(res.recovery * 128), 128, 128 / 3000,
                     alternative="greater").pvalue < 1e-6
    assert res.n_queries == 770
    assert res.size_in == 128 and res.size_out == 2872
    assert res.participation == pytest.approx(384, rel=0.05)


def test_correlation_attack_on_exact_counter_is_harmless():
    keys = np.arange(1000) * 7 + 3
    res = correlation_attack(ExactCounter(), keys, n_queries=64, random_state=0)
    assert res.ratio_in == 1.0 and res.ratio_out == 1.0
    assert np.isnan(res.recovery)
    assert res.selected.size == 32
    assert np.isin(res.selected, keys).all()


def test_correlation_attack_is_seeded():
    keys = np.arange(500)
    a = correlation_attack(ExactCounter(), keys, n_queries=40, random_state=3)
    b = correlation_attack(ExactCounter(), keys, n_queries=40, random_state=3, batch_size=7)
    np.testing.assert_array_equal(a.answers, b.answers)
    np.testing.assert_allclose(a.scores, b.scores)


def test_secret_lowest_keys_orders_by_secret_hash():
    est = RobustCardinalitySketch(k=8, random_state=0).fit()
    keys = np.arange(100)
    low = secret_lowest_keys(est, keys, 10)
    hashes = est._secret_hashes(low)
    assert (np.diff(hashes.astype(float)) > 0).all()
    assert hashes[-1] < np.sort(est._secret_hashes(keys))[10]


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({"estimator": object()}, TypeError, "predict"),
        ({"keys": np.arange(1)}, ValueError, "at least 2 keys"),
        ({"n_queries": 1}, ValueError, "n_queries must be an int >= 2"),
        ({"n_queries": 2.5}, TypeError, "n_queries must be an int"),
        ({"n_select": 100}, ValueError, "n_select must be smaller"),
        ({"inclusion": 1.0}, ValueError, "inclusion must be a float in"),
        ({"batch_size": 0}, ValueError, "batch_size must be an int >= 1"),
    ],
)
def test_correlation_attack_bad_input(kwargs, err, match):
    args = {"estimator": ExactCounter(), "keys": np.arange(100), "n_queries": 8, **kwargs}
    with pytest.raises(err, match=match):
        correlation_attack(args.pop("estimator"), args.pop("keys"), **args)


def test_correlation_attack_needs_n_select_without_k():
    class NoK:
        def predict(self, queries):
            return np.ones(len(queries))

    with pytest.raises(ValueError, match="n_select is required"):
        correlation_attack(NoK(), np.arange(10), n_queries=4)


def test_correlation_attack_on_given_pareto_queries():
    from skpaper.datasets import make_participation_queries

    queries, part = make_participation_queries(2000, 300, query_size=200, pattern="pareto",
                                               random_state=0)
    est = RobustCardinalitySketch(k=32, mode="standard", random_state=0).fit()
    res = correlation_attack(est, np.arange(2000), queries=queries, random_state=0)
    assert res.n_queries == 302
    assert res.max_participation == part.max()
    assert res.participation == pytest.approx(part.mean())
    # The scores of given queries are the mean standardised answer of the queries
    # holding a key minus that of the others, as for random masks.
    masks = np.zeros((300, 2000), dtype=bool)
    for row, q in zip(masks, queries):
        row[q] = True
    z = (res.answers - res.answers.mean()) / res.answers.std()
    count = masks.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = np.nan_to_num(z @ masks / count - z @ ~masks / (300 - count), nan=0.0)
    np.testing.assert_allclose(res.scores, expected, rtol=1e-10, atol=1e-12)
    # A query given unsorted or with repeats is the set of its positions.
    shuffled = [np.random.default_rng(i).permutation(np.r_[q, q[:3]])
                for i, q in enumerate(queries)]
    again = correlation_attack(RobustCardinalitySketch(k=32, mode="standard",
                                                       random_state=0).fit(),
                               np.arange(2000), queries=shuffled, random_state=0)
    np.testing.assert_array_equal(again.answers, res.answers)
    np.testing.assert_array_equal(again.selected, res.selected)
    with pytest.raises(ValueError, match="positions in"):
        correlation_attack(est, np.arange(10), queries=[[0, 1], [5, 12]])
    with pytest.raises(ValueError, match="n_queries is required"):
        correlation_attack(est, np.arange(10))
