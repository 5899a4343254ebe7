"""Confidence bounds and set-operation estimates of BottomKSketch against exact counts."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skpaper.sketch import BottomKSketch
from skpaper.sketch._bottomk import SetEstimate

small_sets = st.sets(st.integers(0, 400), max_size=120)


@given(small_sets, small_sets)
def test_below_k_every_set_estimate_is_exact(a, b):
    # The union has fewer than k keys: both sketches hold every key.
    sa = BottomKSketch(k=256, seed=3).update(np.array(sorted(a), dtype=np.int64))
    sb = BottomKSketch(k=256, seed=3).update(np.array(sorted(b), dtype=np.int64))
    assert sa.estimate_intersection(sb) == SetEstimate(float(len(a & b)), 0.0)
    assert sa.estimate_difference(sb) == SetEstimate(float(len(a - b)), 0.0)
    assert sb.estimate_difference(sa) == SetEstimate(float(len(b - a)), 0.0)
    union = len(a | b)
    assert sa.jaccard(sb) == SetEstimate(len(a & b) / union if union else 0.0, 0.0)
    assert sa.lower_bound(2) == sa.upper_bound(2) == float(len(a))


def _trials(n_trials, k, seed):
    rng = np.random.default_rng(seed)
    for t in range(n_trials):
        n_a, n_b = rng.integers(2_000, 20_000, size=2)
        overlap = int(rng.integers(0, min(n_a, n_b) + 1))
        offset = int(rng.integers(0, 2**40))
        a = np.arange(offset, offset + n_a)
        b = np.arange(offset + n_a - overlap, offset + n_a - overlap + n_b)
        s = int(rng.integers(0, 2**63))
        yield (BottomKSketch(k=k, seed=s).update(a), BottomKSketch(k=k, seed=s).update(b),
               {"inter": overlap, "diff": int(n_a - overlap), "union": int(n_a + n_b - overlap),
                "n_a": int(n_a)})


def test_set_estimates_are_unbiased_and_their_errors_cover_the_truth():
    k = 256
    z = {"inter": [], "diff": [], "jaccard": []}
    rel = {"inter": [], "diff": []}
    for sa, sb, truth in _trials(300, k, seed=0):
        for name, res in (("inter", sa.estimate_intersection(sb)),
                          ("diff", sa.estimate_difference(sb))):
            if truth[name] >= 500:  # enough sampled keys for the normal approximation
                z[name].append((res.estimate - truth[name]) / res.std_error)
                rel[name].append(res.estimate / truth[name] - 1)
        j = sa.jaccard(sb)
        true_j = truth["inter"] / truth["union"]
        if 0.05 < true_j < 0.95:
            z["jaccard"].append((j.estimate - true_j) / j.std_error)
    for name, values in z.items():
        values = np.abs(values)
        assert len(values) > 150, name
        # About 95% within two standard errors; too wide errors would give ~100%.
        assert 0.90 <= np.mean(values <= 2) <= 0.99, (name, np.mean(values <= 2))
    for name, values in rel.items():
        # Unbiased: the mean relative error is within ~3 standard errors of 0.
        assert abs(np.mean(values)) < 3 * np.std(values) / np.sqrt(len(values)) + 0.01, name


def test_confidence_bounds_cover_the_count_at_their_level():
    k = 256
    hits = {1: [0, 0], 2: [0, 0], 3: [0, 0]}
    n_trials = 400
    for sa, _, truth in _trials(n_trials, k, seed=1):
        n = truth["n_a"]
        est = sa.estimate()
        for num_std, counts in hits.items():
            lo, hi = sa.lower_bound(num_std), sa.upper_bound(num_std)
            assert lo <= est <= hi
            counts[0] += lo <= n
            counts[1] += n <= hi
    # One-sided normal levels: 84.1%, 97.7%, 99.87%.
    for num_std, level in ((1, 0.841), (2, 0.977), (3, 0.9987)):
        for share in np.array(hits[num_std]) / n_trials:
            assert abs(share - level) < 0.06, (num_std, share)
    assert BottomKSketch(k=64, seed=1).update(np.arange(10_000)).upper_bound(2.5) > 0


def test_set_operations_validate_their_inputs():
    a = BottomKSketch(k=64, seed=1).update(np.arange(100))
    with pytest.raises(ValueError, match="different seeds"):
        a.jaccard(BottomKSketch(k=64, seed=2))
    with pytest.raises(ValueError, match="different sizes"):
        a.estimate_intersection(BottomKSketch(k=32, seed=1))
    with pytest.raises(TypeError, match="BottomKSketch"):
        a.estimate_difference(np.arange(3))
    for bad in (0, -1, 11, float("nan"), True, "2"):
        with pytest.raises(ValueError, match="num_std"):
            a.lower_bound(bad)
    empty = BottomKSketch(k=64, seed=1)
    assert empty.jaccard(BottomKSketch(k=64, seed=1)) == (0.0, 0.0)
    assert empty.upper_bound() == empty.lower_bound() == 0.0
