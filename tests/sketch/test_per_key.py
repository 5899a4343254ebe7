"""BottomKSketch.update_one: the per-key path gives the sketch of update."""

import numpy as np
import pytest

from skpaper.sketch import BottomKSketch


@pytest.mark.parametrize("k", [2, 64, 4096])
def test_update_one_equals_update_on_every_key_type(k):
    rng = np.random.default_rng(k)
    ints = rng.integers(0, 2**63, size=3_000, dtype=np.int64).tolist()
    keys = [*ints, *ints[:500], -1, -(2**63), 2**64 - 1, 2**63, 0]
    words = [f"word{v % 4_000}" for v in ints] + ["é", "日本", "", b"raw", b"", "a"]
    for batch in (keys, words):
        ref = BottomKSketch(k=k, seed=3).update(batch)
        one = BottomKSketch(k=k, seed=3)
        for key in batch:
            assert one.update_one(key) is one
        assert one == ref and one.estimate() == ref.estimate()
        assert BottomKSketch.from_bytes(one.to_bytes()) == ref


def test_update_one_other_types_go_through_update():
    ref = BottomKSketch(k=16, seed=1).update(np.array([5, 6], dtype=np.uint8))
    one = BottomKSketch(k=16, seed=1).update_one(np.uint8(5)).update_one(6.0)
    assert one == ref
    with pytest.raises(ValueError, match="64 bits"):
        one.update_one(2**64)
    with pytest.raises(ValueError, match="64 bits"):
        one.update_one(-(2**63) - 1)
    with pytest.raises(ValueError, match="integers"):
        one.update_one(0.5)
    with pytest.raises(UnicodeEncodeError):
        one.update_one("\ud800")
    assert one == ref  # failed keys leave the sketch unchanged


def test_update_one_mixes_with_update_merge_and_deserialized_sketches():
    keys = np.arange(20_000)
    ref = BottomKSketch(k=256, seed=2).update(keys)
    half = BottomKSketch(k=256, seed=2).update(keys[:10_000])
    back = BottomKSketch.from_bytes(half.to_bytes())  # payload-sized array
    for key in keys[10_000:15_000].tolist():
        back.update_one(key)
    back.update(keys[15_000:])
    assert back == ref
    small = BottomKSketch.from_bytes(BottomKSketch(k=256, seed=2).to_bytes())
    small.update_one(7)
    assert small.hashes.size == 1 and len(small) == 1 and small.estimate() == 1.0
    merged = BottomKSketch(k=256, seed=2)
    for key in keys[:100].tolist():
        merged.update_one(key)
    assert merged.merge(ref) == ref
