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
