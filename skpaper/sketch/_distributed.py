"""Building one bottom-k sketch over a partitioned collection (map, then tree-reduce)."""

from functools import partial

import numpy as np

from ._bottomk import BottomKSketch, merge_sketches
from ._keys import check_seed

__all__ = ["sketch_dask_bag"]


def _sketch_partition(part, k, seed):
    sketch = BottomKSketch(k=k, seed=seed)
    batch = []
    for item in part:
        if isinstance(item, np.ndarray):
            sketch.update(item)
        else:
            batch.append(item)
    if batch:
        sketch.update(batch)
    return sketch


def sketch_dask_bag(bag, k=256, seed=None, *, split_every=8):
    """Sketch a :class:`dask.bag.Bag` of keys: one sketch per partition, then a tree merge.

    Parameters
    ----------
    bag : dask.bag.Bag
        Items are keys (ints, or bytes/str) or 1-D integer arrays of keys.
    k : int, default=256
        Sketch size.
    seed : int or None, default=None
        Hash seed shared by all partitions; ``None`` is the default seed of
        :class:`BottomKSketch`, so the result also merges with default sketches.
    split_every : int, default=8
        Fan-in of the tree reduction.

    Returns
    -------
    sketch : dask.bag.Item
        Lazy; ``.compute()`` gives the :class:`BottomKSketch` of the whole bag,
        identical to sketching all keys in one process.

    Examples
    --------
    >>> import dask.bag as db
    >>> from skpaper.sketch import sketch_dask_bag
    >>> bag = db.from_sequence(range(1000), npartitions=4)
    >>> sketch_dask_bag(bag, k=64, seed=3).compute(scheduler="sync").estimate() > 0
    True
    """
    from dask.bag import Bag  # optional dependency

    if not isinstance(bag, Bag):
        raise TypeError(f"bag must be a dask.bag.Bag, got {type(bag).__name__}.")
    if seed is None:
        seed = BottomKSketch(k=k).seed
    seed = check_seed(seed)
    BottomKSketch(k=k, seed=seed)  # validates k before any graph is built
    return bag.reduction(
        partial(_sketch_partition, k=k, seed=seed),
        merge_sketches,
        split_every=split_every,
    )
