"""BottomKSketch shared by threads: updates, per-key updates and merges lose nothing."""

import threading

import numpy as np
import pytest

from skpaper.sketch import BottomKSketch

N_THREADS = 4


def _run_threads(targets):
    barrier = threading.Barrier(len(targets))
    errors = []

    def wrap(func):
        def run():
            barrier.wait()
            try:
                func()
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)
        return run

    threads = [threading.Thread(target=wrap(f)) for f in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def _words(n, seed):
    rng = np.random.default_rng(seed)
    return [f"w{v:x}" for v in rng.integers(0, 2**40, size=n)]


def _inputs(kind, seed):
    # Four chunks per thread, the last one the same in every thread (repeats).
    rng = np.random.default_rng(seed)
    if kind == "int":
        chunks = [rng.integers(0, 2**63, size=50_000, dtype=np.int64) for _ in range(13)]
    else:
        chunks = [_words(20_000, seed + i) for i in range(13)]
        if kind == "U":
            chunks = [np.array(c) for c in chunks]
    return [chunks[3 * i : 3 * i + 3] + [chunks[12]] for i in range(N_THREADS)]


@pytest.mark.parametrize("kind", ["int", "str", "U"])
def test_threads_updating_one_sketch_give_the_single_threaded_sketch(kind):
    k = 4096
    for rnd in range(3):
        per_thread = _inputs(kind, seed=10 * rnd + 1)
        ref = BottomKSketch(k=k, seed=5)
        for chunks in per_thread:
            for c in chunks:
                ref.update(c)
        shared = BottomKSketch(k=k, seed=5)

        def work(chunks=None):
            for c in chunks:
                shared.update(c)

        _run_threads([lambda c=c: work(c) for c in per_thread])
        assert shared == ref
        assert shared.estimate() == ref.estimate()
        assert BottomKSketch.from_bytes(shared.to_bytes()) == ref


def test_threads_mixing_update_one_update_and_merge():
    k = 1024
    words = _words(40_000, 3)
    ints = np.arange(300_000, dtype=np.int64)
    other = BottomKSketch(k=k, seed=9).update(np.arange(10**6, 10**6 + 100_000))
    ref = BottomKSketch(k=k, seed=9).update(words).update(ints).merge(other)
    shared = BottomKSketch(k=k, seed=9)

    def per_key_words():
        for w in words:
            shared.update_one(w)

    def per_key_ints():
        for x in range(0, 300_000, 2):
            shared.update_one(x)

    def bulk():
        for part in np.array_split(ints, 30):
            shared.update(part)

    def merges():
        for _ in range(200):
            shared.merge(other)
            shared.estimate()
            assert BottomKSketch.from_bytes(shared.to_bytes()).k == k

    _run_threads([per_key_words, per_key_ints, bulk, merges])
    assert shared == ref
    assert shared.estimate() == ref.estimate()


def test_two_threads_merging_into_each_other_do_not_deadlock():
    a = BottomKSketch(k=256, seed=1).update(np.arange(0, 5_000))
    b = BottomKSketch(k=256, seed=1).update(np.arange(3_000, 9_000))
    expected = (a | b).hashes

    def ab():
        for _ in range(300):
            a.merge(b)

    def ba():
        for _ in range(300):
            b.merge(a)

    _run_threads([ab, ba])
    np.testing.assert_array_equal(a.hashes, expected)
    np.testing.assert_array_equal(b.hashes, expected)
