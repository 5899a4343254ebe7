"""The basic robust estimator: its error without attack and under the correlation attack."""

import numpy as np
import pytest

from skpaper.datasets import make_subset_queries
from skpaper.sketch import RobustCardinalitySketch, resolve_epsilon
from skpaper.sketch.attacks import correlation_attack, secret_lowest_keys


def _relative_errors(mode, k, queries, true, seeds):
    out = []
    for seed in seeds:
        est = RobustCardinalitySketch(k=k, mode=mode, epsilon=51.2 / k, random_state=seed).fit()
        out.append(est.predict(queries) / true - 1)
    return np.concatenate(out)


def test_basic_error_within_1_5x_standard_without_attack():
    # Same queries and secret hashes for both modes: the relative RMSE of the
    # basic mode stays within 1.5x the standard estimator's.
    n, k = 2_000, 128
    ground = np.arange(n)
    masks = make_subset_queries(n, 150, random_state=3)
    queries, true = [ground[m] for m in masks], masks.sum(axis=1)
    std = _relative_errors("standard", k, queries, true, (11, 12))
    basic = _relative_errors("basic", k, queries, true, (11, 12))
    rse_std, rse_basic = np.sqrt(np.mean(std**2)), np.sqrt(np.mean(basic**2))
    assert rse_basic <= 1.5 * rse_std
    # No answer of the basic mode is far off (a noise-triggered stop at a tiny
    # threshold would be orders of magnitude too large).
    assert np.abs(basic).max() < 0.6


def test_basic_search_targets_most_of_the_sketch():
    # The released count comes from about 7k/8 sketch keys, not k/2: the charged
    # keys of one tracking answer show where the search stopped.
    k = 256
    est = RobustCardinalitySketch(k=k, mode="tracking", random_state=0).fit()
    est.predict([np.arange(50_000)])
    assert 0.7 * k <= est.n_charged_ <= k


@pytest.mark.parametrize("n_queries", [64, 256])
def test_basic_deviation_not_above_standard_under_attack(n_queries):
    # Paired secret hashes and attack draws, k=64 on 2,000 keys: the basic mode's
    # mean deviation on A_in/A_out is at most the standard one's plus 0.1 at k
    # queries and within 1.25x of it at 4k (the k/2 target of the old search
    # gave 3x the standard deviation at k queries and 7.5x at 4k here).
    n, k = 2_000, 64
    keys = np.arange(n)
    dev = {}
    for mode in ("standard", "basic"):
        d = []
        for seed in (21, 22, 23, 24):
            est = RobustCardinalitySketch(k=k, mode=mode, epsilon=51.2 / k,
                                          random_state=seed).fit()
            res = correlation_attack(est, keys, n_queries=n_queries,
                                     true_lowest=secret_lowest_keys(est, keys, 2 * k),
                                     random_state=seed + 1)
            d.append(max(abs(res.ratio_in - 1), abs(res.ratio_out - 1)))
        dev[mode] = np.mean(d)
    if n_queries == 64:
        assert dev["basic"] <= dev["standard"] + 0.1
    else:
        assert dev["basic"] <= 1.25 * dev["standard"]


def test_auto_epsilon_per_mode():
    assert resolve_epsilon("auto", "tracking", 256) == 0.2
    assert resolve_epsilon("auto", "standard", 64) == 0.2
    assert resolve_epsilon("auto", "basic", 256) == pytest.approx(1.85 / 16)
    # Floored at k * epsilon = 20, below which the threshold search is unreliable.
    assert resolve_epsilon("auto", "basic", 64) == pytest.approx(20 / 64)
    assert resolve_epsilon(0.3, "basic", 256) == 0.3
    for bad, name in ((("auto", "basc", 256), "mode"), (("auto", "basic", 0), "k"),
                      (("auto", "basic", 2.5), "k"), (("Auto", "basic", 256), "epsilon"),
                      ((0.0, "basic", 256), "epsilon"), ((True, "basic", 256), "epsilon")):
        with pytest.raises(ValueError, match=f"^{name} must be"):
            resolve_epsilon(*bad)
    for mode in ("basic", "tracking"):
        est = RobustCardinalitySketch(k=256, mode=mode, random_state=0).fit()
        assert est.epsilon == "auto"
        assert est.epsilon_ == resolve_epsilon("auto", mode, 256)
    # The budget follows the resolved epsilon.
    est = RobustCardinalitySketch(k=256, random_state=0).fit()
    same = RobustCardinalitySketch(k=256, epsilon=0.2, random_state=0).fit()
    assert est.budget_ == same.budget_


@pytest.mark.parametrize("k", [128, 320])
def test_basic_default_noise_within_1_5x_standard_without_attack(k):
    # Fresh random keys per query (no shared ground set), one secret hash: the basic
    # mode at its default epsilon stays within 1.5x the standard relative RMSE at a k
    # below and above the calibration's 192 (the ratio does not drift with k).
    rng = np.random.default_rng(5)
    sizes = rng.integers(2 * k, 20 * k, 500)
    queries = [rng.integers(0, 2**62, size=n) for n in sizes]
    rmse = {}
    for mode in ("standard", "basic"):
        est = RobustCardinalitySketch(k=k, mode=mode, random_state=9).fit()
        rmse[mode] = np.sqrt(np.mean((est.predict(queries) / sizes - 1) ** 2))
    assert 1.1 * rmse["standard"] < rmse["basic"] <= 1.5 * rmse["standard"]
