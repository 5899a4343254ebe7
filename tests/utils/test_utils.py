"""Seeding and parallel helpers, including the dask backend."""

import joblib
import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV

from skpaper.utils import derive_seed, parallel_map, spawn_seeds


def test_derive_and_spawn_seeds_are_deterministic():
    assert derive_seed(0) == derive_seed(0)
    assert spawn_seeds(1, 4) == spawn_seeds(np.random.RandomState(1), 4)
    assert len(set(spawn_seeds(1, 50))) == 50
    with pytest.raises(ValueError, match="n must be non-negative"):
        spawn_seeds(0, -1)


def test_parallel_map_keeps_order():
    assert parallel_map(pow, [1, 2, 3], n_jobs=2, exp=2) == [1, 4, 9]


@pytest.mark.distributed
def test_grid_search_and_parallel_map_on_dask_local_cluster():
    distributed = pytest.importorskip("distributed")
    from sklearn.datasets import make_classification

    from skpaper.nn import MLPClassifier

    X, y = make_classification(n_samples=120, n_features=5, random_state=0)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        with joblib.parallel_config(backend="dask"):
            search = GridSearchCV(
                MLPClassifier(hidden_layer_sizes=(8,), max_epochs=20, lr=1e-2, device="cpu",
                              random_state=0),
                {"alpha": [1e-4, 1e-2]}, cv=2, n_jobs=2,
            ).fit(X, y)
            squares = parallel_map(pow, range(5), n_jobs=2, exp=2)
    assert len(search.cv_results_["mean_test_score"]) == 2
    assert search.best_score_ > 0.6
    assert squares == [0, 1, 4, 9, 16]


def test_memory_limit_reads_the_environment(monkeypatch):
    from skpaper.utils._memory import check_allocation, memory_limit

    monkeypatch.delenv("SKPAPER_MEMORY_LIMIT", raising=False)
    assert memory_limit() == 4 * 2**30
    for text, expected in (("8G", 8 * 2**30), ("1.5 MiB", 3 * 2**19), ("4096", 4096),
                           ("2t", 2 * 2**40)):
        monkeypatch.setenv("SKPAPER_MEMORY_LIMIT", text)
        assert memory_limit() == expected
    monkeypatch.setenv("SKPAPER_MEMORY_LIMIT", "lots")
    with pytest.raises(ValueError, match="SKPAPER_MEMORY_LIMIT must be a number"):
        memory_limit()
    monkeypatch.setenv("SKPAPER_MEMORY_LIMIT", "1K")
    check_allocation(1024, "Model", "a table", "shrink it")
    with pytest.raises(ValueError, match=r"Model: a table \(size=2\) would need 1.001 KiB, "
                                         r"more than the 1 KiB limit.*; shrink it"):
        check_allocation(1025, "Model", "a table (size=2)", "shrink it")
