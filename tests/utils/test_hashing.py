"""The Cython hashing kernels against mmh3 and a pure-Python splitmix64."""

import mmh3
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skpaper._ext._hashing import (
    hash_bytes_sequence,
    hash_uint64,
    murmurhash3_x64_128,
    murmurhash3_x64_64,
    splitmix64,
)

MASK = 2**64 - 1


def _splitmix64_reference(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


@given(st.binary(max_size=100), st.integers(0, 2**32 - 1))
def test_murmurhash3_matches_mmh3(key, seed):
    assert murmurhash3_x64_128(key, seed) == mmh3.hash64(key, seed, signed=False)
    assert murmurhash3_x64_64(key, seed) == mmh3.hash64(key, seed, signed=False)[0]


@given(st.text(max_size=40), st.integers(0, 2**32 - 1))
def test_str_keys_hash_as_utf8(key, seed):
    assert murmurhash3_x64_128(key, seed) == murmurhash3_x64_128(key.encode("utf-8"), seed)


@given(st.lists(st.integers(0, 2**64 - 1), max_size=50), st.integers(0, 2**64 - 1))
def test_hash_uint64_matches_reference(keys, seed):
    out = hash_uint64(np.array(keys, dtype=np.uint64), seed)
    assert out.dtype == np.uint64
    assert [int(h) for h in out] == [_splitmix64_reference(k ^ seed) for k in keys]
    assert [splitmix64(k, seed) for k in keys] == [int(h) for h in out]


def test_splitmix64_known_value():
    # First output of the splitmix64 generator seeded with 0.
    assert splitmix64(0) == 0xE220A8397B1DCDAF


def test_hash_uint64_accepts_read_only_and_signed_input():
    keys = np.arange(-5, 5, dtype=np.int64)
    keys.setflags(write=False)
    out = hash_uint64(keys, seed=7)
    expected = [_splitmix64_reference((int(k) & MASK) ^ 7) for k in keys]
    assert [int(h) for h in out] == expected
    np.testing.assert_array_equal(hash_uint64(keys.astype(np.int32), 7), out)


def test_hash_bytes_sequence_read_only_buffers():
    buf = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
    assert not buf.flags.writeable
    out = hash_bytes_sequence([memoryview(buf), b"", "é"], seed=3)
    assert [int(h) for h in out] == [mmh3.hash64(b"abcdefghijklmnopqrstuvwxyz", 3,
                                                 signed=False)[0],
                                     mmh3.hash64(b"", 3, signed=False)[0],
                                     mmh3.hash64("é".encode(), 3, signed=False)[0]]


def test_seeds_give_different_hash_families():
    keys = np.arange(1024, dtype=np.uint64)
    # A raw small seed only permutes a contiguous key range: same multiset of hashes.
    np.testing.assert_array_equal(np.sort(hash_uint64(keys, 1)), np.sort(hash_uint64(keys, 2)))
    # Mixed seeds give unrelated families.
    a, b = hash_uint64(keys, splitmix64(1)), hash_uint64(keys, splitmix64(2))
    assert len(np.intersect1d(a, b)) == 0
    # Top bit of the hash is a fair coin.
    assert abs(np.mean(a >> np.uint64(63)) - 0.5) < 0.06


def test_bad_input_raises():
    with pytest.raises(TypeError, match="integer dtype"):
        hash_uint64(np.array([1.5]))
    with pytest.raises(ValueError, match="seed must be in"):
        hash_uint64(np.arange(3), seed=-1)
    with pytest.raises(ValueError, match="seed must be in"):
        murmurhash3_x64_128(b"x", seed=2**32)
    with pytest.raises(TypeError, match="bytes or str"):
        murmurhash3_x64_128(12)
    with pytest.raises(TypeError, match="bytes or str"):
        hash_bytes_sequence([b"a", 3])
    with pytest.raises(ValueError, match="key must fit in 64 bits"):
        splitmix64(2**64)
