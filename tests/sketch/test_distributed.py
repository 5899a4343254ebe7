import numpy as np
import pytest

from skpaper.sketch import BottomKSketch, sketch_dask_bag

db = pytest.importorskip("dask.bag")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.mark.distributed
def test_sketch_dask_bag_equals_single_process(client):
    keys = np.random.default_rng(0).integers(0, 2**62, size=20_000)
    bag = db.from_sequence(keys.tolist(), npartitions=9)
    sketch = sketch_dask_bag(bag, k=128, seed=11, split_every=3).compute()
    assert sketch == BottomKSketch(k=128, seed=11).update(keys)


@pytest.mark.distributed
def test_sketch_dask_bag_of_arrays_and_strings(client):
    chunks = [np.arange(i, i + 1000) for i in range(0, 5000, 1000)]
    bag = db.from_sequence(chunks, npartitions=3)
    assert sketch_dask_bag(bag, k=64, seed=2).compute() == BottomKSketch(
        k=64, seed=2).update(np.arange(5000))
    words = [f"user-{i}" for i in range(300)]
    got = sketch_dask_bag(db.from_sequence(words, npartitions=4), k=64, seed=2).compute()
    assert got == BottomKSketch(k=64, seed=2).update(words)


def test_sketch_dask_bag_bad_input():
    with pytest.raises(TypeError, match="dask.bag.Bag"):
        sketch_dask_bag([1, 2, 3], k=8, seed=1)
    bag = db.from_sequence([1, 2], npartitions=1)
    with pytest.raises(ValueError, match="k must be"):
        sketch_dask_bag(bag, k=1, seed=1)
    with pytest.raises(ValueError, match="seed must be"):
        sketch_dask_bag(bag, k=8, seed=-3)
    assert sketch_dask_bag(bag, k=8).compute(scheduler="sync").estimate() == 2
