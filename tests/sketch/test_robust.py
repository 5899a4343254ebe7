import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skpaper.sketch import BottomKSketch, RobustCardinalitySketch, deactivation_budget
from skpaper.sketch._robust import GRID_DENSITY

MODES = ("standard", "basic", "tracking")


def _random_queries(rng, n_queries, size, universe=10**6):
    return [rng.choice(universe, size=size, replace=False) for _ in range(n_queries)]


def test_robust_standard_mode_equals_bottomk_estimate(rng):
    est = RobustCardinalitySketch(k=64, mode="standard", random_state=0).fit()
    queries = _random_queries(rng, 5, 3000) + [np.arange(20)]
    expected = [BottomKSketch(k=64, seed=est._secret_seed).update(q).estimate() for q in queries]
    np.testing.assert_allclose(est.predict(queries), expected)
    assert est.predict([np.arange(20)])[0] == 20


@pytest.mark.parametrize("mode", MODES)
def test_robust_accuracy_without_attack(mode):
    # Non-adaptive random queries of 4000 keys at k=256: every mode within its error band.
    rng = np.random.default_rng(0)
    queries = _random_queries(rng, 60, 4000)
    est = RobustCardinalitySketch(k=256, mode=mode, random_state=0).fit()
    ratios = est.predict(queries) / 4000
    assert np.median(np.abs(ratios - 1)) < (0.06 if mode == "standard" else 0.12)
    assert np.all(np.abs(np.log(ratios)) < np.log(2))


def test_robust_grid_is_public_geometric():
    est = RobustCardinalitySketch(k=256, n_max=2**20, random_state=0).fit()
    tau = est.thresholds_
    assert tau[0] == pytest.approx(128 / 2**20)
    assert tau[-1] == 1.0
    np.testing.assert_allclose(tau[1:-1] / tau[:-2], 2 ** (1 / GRID_DENSITY))


def test_robust_membership_matrix_equals_key_lists(rng):
    X = rng.random((6, 500)) < 0.3
    lists = [np.flatnonzero(row) for row in X]
    for mode in MODES:
        a = RobustCardinalitySketch(k=32, mode=mode, random_state=3).fit(X)
        b = RobustCardinalitySketch(k=32, mode=mode, random_state=3).fit(X)
        c = RobustCardinalitySketch(k=32, mode=mode, random_state=3).fit(X)
        pa = a.predict(X.astype(float))
        np.testing.assert_array_equal(pa, b.predict(lists))
        np.testing.assert_array_equal(pa, c.predict(sp.csr_matrix(X.astype(float))))
    assert a.n_features_in_ == 500


def test_robust_predict_is_stateful_in_robust_modes():
    queries = [np.arange(3000)]
    std = RobustCardinalitySketch(k=64, mode="standard", random_state=0).fit()
    assert std.predict(queries)[0] == std.predict(queries)[0]
    basic = RobustCardinalitySketch(k=64, mode="basic", epsilon=1.0, random_state=0).fit()
    first = basic.predict(queries)[0]
    assert first != basic.predict(queries)[0]
    assert basic.n_queries_ == 2
    # A fresh fit resets the budget and the noise stream.
    assert basic.fit().predict(queries)[0] == first
    assert basic.n_queries_ == 1


def test_robust_tracking_charges_and_deactivates():
    est = RobustCardinalitySketch(k=32, mode="tracking", epsilon=1.0, budget=4,
                                  random_state=0).fit()
    query = np.arange(1000)
    est.predict([query] * 2)
    # Two answers charge the keys below the threshold twice each: they are
    # over-exposed, and every key hashing below the highest of them is deactivated.
    assert est.n_overexposed_ > 0
    theta = est.deactivation_threshold_
    hashes = est._secret_hashes(query)
    assert 0 < theta < 1
    below = np.sort(hashes[hashes < np.uint64(est._ledger.theta)])
    est.predict([query])
    np.testing.assert_array_equal(est._ledger.deactivated, below)
    assert est.n_deactivated_ == below.size
    assert est.n_charged_ == len(est._ledger.charges) > 0
    assert est.memory_bytes_ > 8 * below.size + 36 * est.n_charged_
    # Deactivated keys are counted exactly: a query made only of them is answered as
    # their count plus the non-negative noisy count of an empty active part.
    only_d = query[np.isin(hashes, below)]
    answer = est.predict([only_d])[0]
    assert only_d.size <= answer < only_d.size + 50
    basic = RobustCardinalitySketch(k=32, mode="basic", budget=4, random_state=0).fit()
    basic.predict([query] * 3)
    assert basic.n_deactivated_ == basic.n_overexposed_ == basic.n_charged_ == 0
    assert basic.memory_bytes_ == basic.fit().memory_bytes_


def test_robust_deactivated_count_grows_as_queries_times_k_over_budget():
    # Random half-queries of one ground set: each answer charges about 7k/4 units
    # (the 7k/8 keys below the searched threshold, two each) and a key holds at
    # most B, so about Q * 7k / (4B) keys are deactivated, growing linearly.
    from skpaper.datasets import make_subset_queries

    k, budget, n = 32, 64, 2_000
    ground = np.arange(n)
    masks = make_subset_queries(n, 1_024, random_state=0)
    queries = [ground[m] for m in masks]
    est = RobustCardinalitySketch(k=k, epsilon=0.4, budget=budget, max_deactivated=None,
                                  random_state=0).fit()
    counts, start = {}, 0
    for stop in (128, 512, 1_024):
        est.predict(queries[start:stop])
        counts[stop], start = est.n_deactivated_, stop
    assert counts[128] <= 4 * k
    for q in (512, 1_024):
        assert 0.8 * q * 1.75 * k / budget <= counts[q] <= 1.4 * q * 1.75 * k / budget
    # Twice the budget halves the deactivated set; a fresh fit empties it.
    wide = RobustCardinalitySketch(k=k, epsilon=0.4, budget=2 * budget, max_deactivated=None,
                                   random_state=0).fit()
    wide.predict(queries)
    assert 0.4 * counts[1_024] <= wide.n_deactivated_ <= 0.65 * counts[1_024]
    assert est.fit().n_deactivated_ == 0


def test_robust_rehash_keeps_the_deactivated_set_bounded_and_answers_unbiased():
    # The workload above deactivates about Q * k / B = 512 keys by 1,024 queries
    # without rehashing; with max_deactivated = 4k the set never reaches 4k, fresh
    # hashes are drawn, and the answers stay unbiased (k * epsilon as at the
    # defaults: far smaller values make the threshold search itself noisy).
    from skpaper.datasets import make_subset_queries

    k, budget, n = 32, 64, 2_000
    ground = np.arange(n)
    masks = make_subset_queries(n, 1_024, random_state=0)
    queries = [ground[m] for m in masks]
    sizes = masks.sum(axis=1)
    est = RobustCardinalitySketch(k=k, epsilon=1.6, budget=budget, random_state=0).fit()
    assert est.max_deactivated_ == 4 * k
    first = est._secret_hashes(ground[:50])
    ratios = []
    for start in range(0, 1_024, 64):
        ratios.append(est.predict(queries[start:start + 64]) / sizes[start:start + 64])
        assert est.n_deactivated_ < 4 * k
        assert est._ledger.isolated.size < 4 * k
    assert 2 <= est.n_rehashes_ <= 6
    assert not np.array_equal(est._secret_hashes(ground[:50]), first)
    assert abs(np.mean(np.concatenate(ratios)) - 1) < 0.06
    # The control: without rehashing the same queries leave more than 4k keys.
    never = RobustCardinalitySketch(k=k, epsilon=1.6, budget=budget, max_deactivated=None,
                                    random_state=0).fit()
    never.predict(queries)
    assert never.n_rehashes_ == 0
    assert never.n_deactivated_ > 2 * 4 * k
    # A fresh fit returns to the fit's own hash.
    np.testing.assert_array_equal(est.fit()._secret_hashes(ground[:50]), first)
    assert est.n_rehashes_ == 0


@pytest.mark.parametrize("max_deactivated", [50, "auto"])
def test_robust_tracking_attack_fails_across_rehashes(max_deactivated):
    # The correlation attack with enough queries to force rehashes (k=64, 2,048
    # queries over 3,000 keys deactivate about 640 keys without them) does not
    # break the answers: mean ratios over three secret hashes near 1, where the
    # standard estimator overestimates A_in at least 3x.
    from skpaper.sketch.attacks import correlation_attack

    keys = np.arange(3_000)
    ratios = []
    for seed in range(3):
        est = RobustCardinalitySketch(k=64, epsilon=0.4, max_deactivated=max_deactivated,
                                      random_state=seed).fit()
        res = correlation_attack(est, keys, n_queries=2_048, random_state=seed + 10)
        ratios.append((res.ratio_in, res.ratio_out))
        assert est.n_rehashes_ >= 2
        assert est.n_deactivated_ < est.max_deactivated_
    ratio_in, ratio_out = np.mean(ratios, axis=0)
    assert 0.75 <= ratio_in <= 1.3
    assert 0.75 <= ratio_out <= 1.3
    std = RobustCardinalitySketch(k=64, mode="standard", random_state=0).fit()
    assert correlation_attack(std, keys, n_queries=2_048, random_state=10).ratio_in >= 3


def test_robust_pickle_midstream_continues_identically():
    est = RobustCardinalitySketch(k=64, mode="tracking", epsilon=0.5, budget=2,
                                  random_state=1).fit()
    query = [np.arange(2000), np.arange(500, 3000)]
    est.predict(query)
    twin = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(est.predict(query * 2), twin.predict(query * 2))
    assert twin.n_deactivated_ == est.n_deactivated_


@pytest.mark.parametrize("mode", ["basic", "tracking", "standard"])
def test_robust_pickle_round_trip_with_auto_epsilon(mode):
    est = RobustCardinalitySketch(k=32, mode=mode, random_state=3).fit()
    assert est.epsilon == "auto"
    twin = pickle.loads(pickle.dumps(est))
    assert twin.epsilon == "auto" and twin.epsilon_ == est.epsilon_
    query = [np.arange(800), np.arange(200, 1500)]
    np.testing.assert_array_equal(twin.predict(query), est.predict(query))


def test_robust_pickle_from_before_rehashing_loads_and_never_rehashes():
    # A pickle written before max_deactivated existed: no such parameter or
    # fitted attribute, and a ledger without the hash seed and rehash count.
    est = RobustCardinalitySketch(k=32, epsilon=1.6, budget=4, max_deactivated=None,
                                  random_state=1).fit()
    queries = [np.arange(1000), np.arange(300, 2000)] * 3
    est.predict(queries[:2])
    state = est.__getstate__()
    ledger = pickle.loads(pickle.dumps(state["_ledger"]))
    del ledger.hash_seed, ledger.n_rehashes
    old = {**state, "_ledger": ledger}
    # Nor epsilon_ (from before epsilon="auto").
    del old["max_deactivated"], old["max_deactivated_"], old["epsilon_"]
    loaded = RobustCardinalitySketch.__new__(RobustCardinalitySketch)
    loaded.__setstate__(pickle.loads(pickle.dumps(old)))
    assert loaded.get_params()["max_deactivated"] is None
    assert loaded.epsilon_ == 1.6
    np.testing.assert_array_equal(loaded.predict(queries), est.predict(queries))
    assert loaded.n_rehashes_ == 0


def test_robust_clone_same_seed_same_answers():
    est = RobustCardinalitySketch(k=64, mode="basic", random_state=5)
    q = [np.arange(3000)] * 3
    np.testing.assert_array_equal(est.fit().predict(q), clone(est).fit().predict(q))
    other = RobustCardinalitySketch(k=64, mode="basic", random_state=6).fit()
    assert other._secret_seed != est._secret_seed


def test_robust_score_is_one_minus_mean_relative_error():
    est = RobustCardinalitySketch(k=64, mode="standard", random_state=0).fit()
    queries = [np.arange(10), np.arange(5000)]
    pred = est.predict(queries)
    y = np.array([10, 5000])
    assert est.score(queries, y) == pytest.approx(1 - np.mean(np.abs(pred - y) / y))
    assert est.score([np.arange(0)], [0]) == 1.0


def test_robust_pipeline_and_grid_search():
    rng = np.random.default_rng(0)
    X = (rng.random((40, 3000)) < rng.uniform(0.05, 0.5, size=(40, 1))).astype(float)
    y = X.sum(axis=1)
    pipe = make_pipeline(FunctionTransformer(), RobustCardinalitySketch(random_state=0))
    search = GridSearchCV(
        pipe,
        {"robustcardinalitysketch__k": [8, 128],
         "robustcardinalitysketch__mode": ["standard"]},
        cv=2,
    ).fit(X, y)
    assert search.best_params_["robustcardinalitysketch__k"] == 128
    assert search.score(X, y) > 0.8


@pytest.mark.parametrize(
    "params, match",
    [
        ({"k": 1}, "'k' parameter"),
        ({"mode": "fast"}, "'mode' parameter"),
        ({"epsilon": 0}, "'epsilon' parameter"),
        ({"budget": 0}, "'budget' parameter"),
        ({"max_deactivated": 0}, "'max_deactivated' parameter"),
        ({"max_deactivated": "all"}, "'max_deactivated' parameter"),
        ({"n_max": 1}, "'n_max' parameter"),
        ({"k": 64, "n_max": 64}, "n_max must be larger than k=64"),
    ],
)
def test_robust_bad_params(params, match):
    with pytest.raises(ValueError, match=match):
        RobustCardinalitySketch(**params).fit()


@pytest.mark.parametrize(
    "queries, err, match",
    [
        ([np.array([1.0, 2.5])], ValueError, "queries must be integers"),
        ([np.array([1.0, np.nan])], ValueError, "NaN"),
        ([1, 2, 3], ValueError, "flat sequence of scalars"),
        (np.array([1.0, 2.0]), ValueError, "Expected 2D array"),
        (np.full((2, 5), np.nan), ValueError, "NaN"),
        (np.ones((2, 4)), ValueError, "5 features"),
        ([["a", 1]], TypeError, "all be integers or all be bytes/str"),
    ],
)
def test_robust_predict_bad_input(queries, err, match):
    est = RobustCardinalitySketch(k=8, random_state=0).fit(np.ones((3, 5)))
    with pytest.raises(err, match=match):
        est.predict(queries)


def test_robust_unfitted_and_bad_score_input():
    est = RobustCardinalitySketch(k=8)
    with pytest.raises(AttributeError, match="not fitted"):
        est.predict([np.arange(3)])
    with pytest.raises(AttributeError, match="not fitted"):
        est.n_queries_
    est.fit()
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        est.score([np.arange(3)], [3, 4])
    with pytest.raises(ValueError, match="finite"):
        est.score([np.arange(3)], [np.nan])


def _ridge_attack(est, n_keys, n_queries, n_select, seed):
    # An attack written independently of skpaper.sketch.attacks: a ridge regression of
    # the log answers on key membership ranks keys by their effect on the answers.
    rng = np.random.default_rng(seed)
    keys = np.arange(n_keys)
    masks = rng.random((n_queries, n_keys)) < 0.5
    answers = est.predict([keys[m] for m in masks])
    coef = Ridge(alpha=10.0).fit(masks.astype(np.float32),
                                 np.log(np.maximum(answers, 1.0))).coef_
    top = np.argsort(-coef)[:n_select]
    rest = np.setdiff1d(keys, top)
    est_in, est_out = est.predict([top, rest])
    return est_in / top.size, est_out / rest.size


@pytest.mark.parametrize("mode", ["standard", "tracking"])
def test_robust_own_attack_breaks_standard_not_tracking(mode):
    est = RobustCardinalitySketch(k=128, mode=mode, epsilon=0.4, random_state=0).fit()
    ratio_in, ratio_out = _ridge_attack(est, 4000, 1536, 256, seed=1)
    if mode == "standard":
        assert ratio_in >= 3.0
        assert ratio_out < 0.8
    else:
        assert abs(ratio_in - 1) <= 0.25
        assert abs(ratio_out - 1) <= 0.25


def test_robust_deactivation_budget_from_accounting():
    from skpaper.sketch import deactivation_budget

    b = deactivation_budget(0.2, 50.0, 1e-6)
    # zCDP: b charges of epsilon**2/2 stay within (50, 1e-6)-DP; b + 1 exceed it.
    def eps_of(n):
        rho = n * 0.2**2 / 2
        return rho + 2 * np.sqrt(rho * np.log(1e6))
    assert eps_of(b) <= 50.0 < eps_of(b + 1)
    # Halving epsilon quadruples the budget: B grows as k**2 when epsilon ~ 1/k.
    assert abs(deactivation_budget(0.1, 50.0, 1e-6) / b - 4) < 0.01
    est = RobustCardinalitySketch(random_state=0).fit()
    assert est.budget_ == deactivation_budget(0.2, 20.0, 1e-6) == 220
    assert RobustCardinalitySketch(budget=7).fit().budget_ == 7
    with pytest.raises(ValueError, match="delta"):
        deactivation_budget(0.2, 50.0, 1.5)


@pytest.mark.parametrize("mode", ["basic", "tracking"])
def test_robust_unbiased_without_attack(mode):
    # Fresh random keys per query: the mean ratio over 400 queries of 3000 keys
    # (sd of one answer ~0.1) must be within 3% of 1.
    rng = np.random.default_rng(2)
    queries = [rng.integers(0, 2**62, size=3000) for _ in range(400)]
    est = RobustCardinalitySketch(k=128, mode=mode, epsilon=0.4, random_state=0).fit()
    ratios = est.predict(queries) / 3000
    assert abs(ratios.mean() - 1) < 0.03


def test_robust_tracking_stays_a_sketch_and_unbiased_on_repeated_keys():
    # 160 random half-queries over 3000 keys: each key takes part ~80 times, about
    # three times the budget (28 answers at k=64, epsilon=0.8); the deactivated set
    # stays O(k) and answers stay unbiased (mean over 3 secret hashes).
    rng = np.random.default_rng(0)
    keys = np.arange(3000)
    masks = rng.random((160, 3000)) < 0.5
    means = []
    for seed in range(3):
        est = RobustCardinalitySketch(k=64, epsilon=0.8, random_state=seed).fit()
        means.append(np.mean(est.predict([keys[m] for m in masks]) / masks.sum(1)))
        assert est.n_overexposed_ > 0
        # Deactivated keys, or a rehash once 4k of them were.
        assert est.n_deactivated_ <= 4 * 64 and (est.n_deactivated_ or est.n_rehashes_)
        assert est.n_charged_ <= 3000 and est.memory_bytes_ < 120 * 3000
    assert abs(np.mean(means) - 1) < 0.08


def test_robust_bounds_k_and_n_max():
    with pytest.raises(ValueError, match="'k' parameter"):
        RobustCardinalitySketch(k=2**31 - 1).fit()
    with pytest.raises(ValueError, match="'n_max' parameter"):
        RobustCardinalitySketch(n_max=10**400).fit()
    assert RobustCardinalitySketch(n_max=2**64, random_state=0).fit().thresholds_[-1] == 1.0


def test_robust_warns_when_k_times_epsilon_is_small():
    import warnings

    with pytest.warns(UserWarning, match=r"k \* epsilon = 12.8 is below 20") as record:
        RobustCardinalitySketch(k=32, epsilon=0.4, random_state=0).fit()
    assert record[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        RobustCardinalitySketch(k=32, epsilon=0.4, mode="standard", random_state=0).fit()
        RobustCardinalitySketch(k=64, epsilon=0.4, random_state=0).fit()


def test_robust_ledger_stays_bounded_on_fresh_keys_and_memory_counts_it():
    import tracemalloc

    # 600 queries of 1,000 fresh keys each: every answer charges about k/2 new
    # keys, which never come back. The ledger rehashes at max_charged keys.
    k, n_q = 64, 600
    queries = [np.arange(i * 1000, (i + 1) * 1000, dtype=np.uint64) for i in range(n_q)]
    bounded = RobustCardinalitySketch(k=k, epsilon=0.8, max_charged=2_000,
                                      random_state=0).fit()
    unbounded = RobustCardinalitySketch(k=k, epsilon=0.8, max_charged=None,
                                        random_state=0).fit()
    assert bounded.max_charged_ == 2_000 and unbounded.max_charged_ is None
    assert RobustCardinalitySketch(k=k).fit().max_charged_ == 64 * k
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    start_bytes = unbounded.memory_bytes_
    answers = unbounded.predict(queries)
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert unbounded.n_charged_ > 10_000 and unbounded.n_rehashes_ == 0
    # memory_bytes_ follows what Python really allocated for the ledger.
    assert abs((unbounded.memory_bytes_ - start_bytes) - grown) < 0.1 * grown
    bounded_answers = bounded.predict(queries)
    assert bounded.n_charged_ < 2_000 and bounded.n_rehashes_ > 5
    assert bounded.memory_bytes_ < unbounded.memory_bytes_ / 5
    # Rehashing costs no accuracy: both answer within the sketch's error.
    for ans in (answers, bounded_answers):
        assert abs(np.mean(ans) / 1000 - 1) < 0.05


@pytest.mark.parametrize("value", [1e-300, 1e300, 1e-160, 0.0, -1.0])
@pytest.mark.parametrize("name", ["epsilon", "key_epsilon"])
def test_robust_epsilon_out_of_range_names_the_parameter(name, value):
    with pytest.raises(ValueError, match=f"'{name}' parameter"):
        RobustCardinalitySketch(**{name: value}).fit()
    args = {"epsilon": 0.2, "key_epsilon": 50.0, "delta": 1e-6, name: value}
    with pytest.raises(ValueError, match=f"{name} must be a float in"):
        deactivation_budget(**args)
