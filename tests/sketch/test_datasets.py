import numpy as np
import pytest

from skpaper.datasets import make_participation_queries, make_subset_queries


def test_make_subset_queries_inclusion_rate():
    masks = make_subset_queries(2000, 50, inclusion=0.3, random_state=0)
    assert masks.shape == (50, 2000) and masks.dtype == bool
    # 100000 Bernoulli(0.3) draws: sd of the rate is 0.0014.
    assert abs(masks.mean() - 0.3) < 0.01
    np.testing.assert_array_equal(masks, make_subset_queries(2000, 50, inclusion=0.3,
                                                             random_state=0))


def test_make_participation_queries_uniform_and_pareto():
    q_u, part_u = make_participation_queries(2000, 200, query_size=100, random_state=0)
    q_p, part_p = make_participation_queries(2000, 200, query_size=100, pattern="pareto",
                                             random_state=0)
    for queries, part in ((q_u, part_u), (q_p, part_p)):
        assert all(q.size == 100 and np.unique(q).size == 100 for q in queries)
        assert part.sum() == 200 * 100
        counts = np.bincount(np.concatenate(queries), minlength=2000)
        np.testing.assert_array_equal(counts, part)
    # Heavy-tailed participation: the most exposed key takes part far more often.
    assert part_p.max() > 3 * part_u.max()
    assert np.median(part_p) < np.median(part_u)


def _pareto_reference(n_keys, n_queries, query_size, shape, cap, seed):
    """The Gumbel-top-k draw scored in full on every query (the definition)."""
    rng = np.random.default_rng(np.random.RandomState(seed).randint(0, 2**31 - 1))
    log_w = np.log1p(rng.pareto(shape, n_keys))
    part = np.zeros(n_keys, dtype=np.int64)
    queries = []
    for _ in range(n_queries):
        scores = log_w + rng.gumbel(size=n_keys)
        if cap is not None:
            scores[part >= cap] = -np.inf
        q = np.sort(np.argpartition(-scores, query_size - 1)[:query_size])
        part[q] += 1
        queries.append(q)
    return queries, part


@pytest.mark.parametrize("n_keys, n_queries, size, shape, cap, seed", [
    (2000, 300, 200, 1.5, 40, 0),     # the cap binds: the free set shrinks as keys fill up
    (3000, 400, 100, 0.8, None, 1),   # heavier tail, no cap
    (500, 200, 50, 3.0, 30, 2),       # light tail: the cutoff level moves often
    (100, 20, 100, 1.5, None, 3),     # every key in every query
    (6000, 150, 640, 1.5, 64, 4),
])
def test_pareto_queries_equal_the_full_gumbel_top_k(n_keys, n_queries, size, shape, cap,
                                                    seed):
    # The pruned draw scores only keys that can reach the top; it must pick the same
    # keys from the same random stream as scoring every key.
    queries, part = make_participation_queries(
        n_keys, n_queries, query_size=size, pattern="pareto", pareto_shape=shape,
        max_participation=cap, random_state=seed)
    ref_queries, ref_part = _pareto_reference(n_keys, n_queries, size, shape, cap, seed)
    for q, ref in zip(queries, ref_queries, strict=True):
        np.testing.assert_array_equal(q, ref)
    np.testing.assert_array_equal(part, ref_part)


def test_pareto_top_k_replays_the_gumbel_stream_after_a_zero_uniform():
    # rng.gumbel redraws a uniform of exactly 0; the pruned draw must then give
    # rng.gumbel's own keys and leave the stream where rng.gumbel leaves it.
    from skpaper.datasets._sketch import _GumbelTopK

    class ZeroFirst:
        def __init__(self, seed):
            self.rng = np.random.default_rng(seed)
            self.bit_generator = self.rng.bit_generator
            self.first = True

        def random(self, n):
            u = self.rng.random(n)
            if self.first:
                u[3], self.first = 0.0, False
            return u

        def gumbel(self, size):
            return self.rng.gumbel(size=size)

    log_w = np.log1p(np.random.default_rng(7).pareto(1.5, 300))
    fake = ZeroFirst(5)
    got = _GumbelTopK(log_w, 20)(fake, None)
    ref_rng = np.random.default_rng(5)
    expected = np.argpartition(-(log_w + ref_rng.gumbel(size=300)), 19)[:20]
    np.testing.assert_array_equal(np.sort(got), np.sort(expected))
    assert fake.rng.random() == ref_rng.random()


@pytest.mark.parametrize(
    "func, kwargs, err, match",
    [
        (make_subset_queries, {"n_keys": 0, "n_queries": 3}, ValueError, "n_keys"),
        (make_subset_queries, {"n_keys": 5, "n_queries": 3, "inclusion": 0}, ValueError,
         "inclusion"),
        (make_participation_queries, {"n_keys": 5, "n_queries": 3, "query_size": 6},
         ValueError, "query_size must be at most"),
        (make_participation_queries, {"n_keys": 5, "n_queries": 3, "query_size": 2,
                                      "pattern": "zipf"}, ValueError, "pattern"),
        (make_participation_queries, {"n_keys": 5.0, "n_queries": 3}, TypeError, "n_keys"),
        (make_participation_queries, {"n_keys": 5, "n_queries": 3, "query_size": 2,
                                      "pareto_shape": -1}, ValueError, "pareto_shape"),
    ],
)
def test_sketch_datasets_bad_input(func, kwargs, err, match):
    with pytest.raises(err, match=match):
        func(**kwargs)
