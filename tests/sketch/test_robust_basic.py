"""The basic robust estimator: its error without attack and under the correlation attack."""

import numpy as np
import pytest

from skpaper.datasets import make_subset_queries
from skpaper.sketch import RobustCardinalitySketch
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
