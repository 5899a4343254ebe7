"""Checks that every mergeable sketch of skpaper must pass, in the manner of ``river.checks``.

:func:`yield_checks` yields plain functions; each takes an empty sketch and
raises ``AssertionError`` on failure. A sketch class qualifies when it has
``update``, ``merge``, ``estimate``, ``copy``, ``get_params``, ``to_bytes``,
the class method ``from_bytes``, ``__len__`` and ``__eq__``, and when
``type(s)(**s.get_params())`` builds an empty sketch that merges with ``s``.

Examples
--------
>>> from skpaper.sketch import BottomKSketch
>>> from skpaper.sketch.checks import yield_checks
>>> for check in yield_checks(BottomKSketch(k=16, seed=1)):
...     check(BottomKSketch(k=16, seed=1))
"""

import pickle

import numpy as np

__all__ = ["yield_checks"]

_N_KEYS = 2000


def _sibling(sketch):
    return type(sketch)(**sketch.get_params())


def _keys(seed, n=_N_KEYS):
    return np.random.default_rng(seed).integers(0, 2**62, size=n)


def check_get_params_rebuilds(sketch):
    """``type(s)(**s.get_params())`` is an empty sketch equal to a fresh one."""
    twin = _sibling(sketch)
    assert twin.get_params() == sketch.get_params()
    assert len(twin) == 0


def check_repr_stable(sketch):
    """The repr names the class and does not change with the contents."""
    before = repr(sketch)
    assert before.startswith(type(sketch).__name__)
    assert repr(_sibling(sketch).update(_keys(0))) == before


def check_pickle_roundtrip(sketch):
    """A filled sketch survives pickling unchanged and stays mergeable."""
    filled = _sibling(sketch).update(_keys(1))
    clone = pickle.loads(pickle.dumps(filled))
    assert clone == filled
    assert clone.estimate() == filled.estimate()
    clone.merge(filled)


def check_bytes_roundtrip(sketch):
    """``from_bytes(to_bytes())`` restores an equal sketch; the size is O(capacity)."""
    filled = _sibling(sketch).update(_keys(2))
    data = filled.to_bytes()
    assert type(filled).from_bytes(data) == filled
    assert len(data) < 64 + 16 * max(len(filled), 1)


def check_copy_is_independent(sketch):
    """Updating a copy leaves the original unchanged."""
    original = _sibling(sketch).update(_keys(3, 50))
    snapshot = original.to_bytes()
    original.copy().update(_keys(4))
    assert original.to_bytes() == snapshot


def check_duplicates_ignored(sketch):
    """Adding the same keys twice changes nothing."""
    keys = _keys(5)
    once = _sibling(sketch).update(keys)
    twice = _sibling(sketch).update(keys).update(keys[::-1])
    assert once == twice


def check_merge_is_union(sketch):
    """The merge of two sketches is the sketch of the union, in either order."""
    a, b = _keys(6), _keys(7)
    union = _sibling(sketch).update(np.concatenate([a, b]))
    ab = _sibling(sketch).update(a).merge(_sibling(sketch).update(b))
    ba = _sibling(sketch).update(b).merge(_sibling(sketch).update(a))
    assert ab == union
    assert ba == union


def check_merge_rejects_other_seed(sketch):
    """Sketches with different seeds refuse to merge."""
    params = sketch.get_params()
    other = type(sketch)(**{**params, "seed": (params["seed"] + 1) % 2**64})
    try:
        _sibling(sketch).merge(other)
    except ValueError:
        return
    raise AssertionError("merging sketches with different seeds did not raise ValueError")


def check_seeds_give_independent_hashes(sketch):
    """Two seeds keep (nearly) disjoint sets of keys."""
    params = sketch.get_params()
    keys = _keys(8)
    a = type(sketch)(**params).update(keys)
    b = type(sketch)(**{**params, "seed": (params["seed"] + 1) % 2**64}).update(keys)
    assert not np.array_equal(a.hashes, b.hashes)


def check_exact_below_capacity(sketch):
    """Fewer distinct keys than the capacity are counted exactly."""
    n = max(1, sketch.get_params()["k"] - 1)
    assert _sibling(sketch).update(np.arange(n)).estimate() == n


def yield_checks(sketch):
    """Yield the checks that apply to ``sketch`` (an empty instance).

    Parameters
    ----------
    sketch : object
        An empty sketch; it is not modified.

    Yields
    ------
    check : callable
        ``check(sketch)`` raises ``AssertionError`` when the sketch fails it.

    Examples
    --------
    >>> from skpaper.sketch import BottomKSketch
    >>> from skpaper.sketch.checks import yield_checks
    >>> sketch = BottomKSketch(16)
    >>> for check in yield_checks(sketch):
    ...     check(sketch)
    """
    yield check_get_params_rebuilds
    yield check_repr_stable
    yield check_pickle_roundtrip
    yield check_bytes_roundtrip
    yield check_copy_is_independent
    yield check_duplicates_ignored
    yield check_merge_is_union
    yield check_merge_rejects_other_seed
    if "seed" in sketch.get_params():
        yield check_seeds_give_independent_hashes
    if "k" in sketch.get_params():
        yield check_exact_below_capacity
