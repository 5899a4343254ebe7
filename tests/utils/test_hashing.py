"""The Cython hashing kernels against mmh3 and a pure-Python splitmix64."""

import mmh3
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from skpaper._ext._hashing import (
    hash_bytes_sequence,
    hash_uint64,
    murmurhash3_x64_64,
    murmurhash3_x64_128,
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


_TEXT = ["", "a", "word", "na\u00efve", "\u00e9t\u00e9", "\u65e5\u672c\u8a9e", "emoji \U0001f600",
         "x" * 40, "caf\u00e9" * 9, "\u0394" * 17]


def test_hash_bytes_sequence_str_hashes_utf8_of_every_kind():
    import mmh3
    from skpaper._ext._hashing import hash_bytes_sequence

    got = hash_bytes_sequence(_TEXT + [t.encode() for t in _TEXT], 77)
    want = [mmh3.hash64(t.encode("utf-8"), 77, signed=False)[0] for t in _TEXT] * 2
    np.testing.assert_array_equal(got, np.array(want, dtype=np.uint64))
    # Past one internal chunk (2048 keys), with bytearray and memoryview keys mixed in.
    many = [f"k{i}\u00e9" if i % 3 else bytearray(b"k%d" % i) for i in range(5000)]
    want = [mmh3.hash64(bytes(v) if not isinstance(v, str) else v.encode(), 1,
                        signed=False)[0] for v in many]
    np.testing.assert_array_equal(hash_bytes_sequence(many, 1), np.array(want, dtype=np.uint64))


def test_hash_bytes_sequence_rejects_bad_items():
    from skpaper._ext._hashing import hash_bytes_sequence

    with pytest.raises(UnicodeEncodeError):
        hash_bytes_sequence(["ok", "\ud800"], 0)
    with pytest.raises(TypeError, match="bytes or str"):
        hash_bytes_sequence(["ok", 3], 0)


def test_hash_text_array_matches_the_list_path():
    from skpaper._ext._hashing import hash_bytes_sequence, hash_text_array

    expected = hash_bytes_sequence(_TEXT, 5)
    np.testing.assert_array_equal(hash_text_array(np.array(_TEXT), 5), expected)
    swapped = np.array(_TEXT).astype(np.dtype("U40").newbyteorder(">"))
    np.testing.assert_array_equal(hash_text_array(swapped, 5), expected)
    raw = [t.encode() for t in _TEXT]
    np.testing.assert_array_equal(hash_text_array(np.array(raw), 5), expected)
    # numpy strips trailing NULs from fixed-width items, and so does the hash.
    np.testing.assert_array_equal(hash_text_array(np.array([b"ab\0", b"ab"]), 5),
                                  hash_bytes_sequence([b"ab", b"ab"], 5))
    strided = np.array(_TEXT)[::2]
    np.testing.assert_array_equal(hash_text_array(strided, 5), expected[::2])
    assert hash_text_array(np.array([], dtype="U3"), 5).size == 0
    with pytest.raises(TypeError, match="U or S"):
        hash_text_array(np.arange(3), 5)
    with pytest.raises(UnicodeEncodeError):
        hash_text_array(np.array(["\ud800"]), 5)


def test_sketch_string_inputs_agree_across_containers():
    from skpaper.sketch import BottomKSketch

    words = [f"w{i % 700}\u00e9" for i in range(3000)]
    ref = BottomKSketch(k=64, seed=2).update(words)
    assert ref.estimate() == pytest.approx(700, rel=0.3)
    for container in (tuple(words), np.array(words), np.array(words, dtype=object),
                      [w.encode() for w in words], np.array([w.encode() for w in words])):
        assert BottomKSketch(k=64, seed=2).update(container) == ref
    string_dtype = getattr(np.dtypes, "StringDType", None)
    if string_dtype is not None:
        assert BottomKSketch(k=64, seed=2).update(np.array(words, dtype=string_dtype())) == ref


def test_string_dtype_hashes_like_str_and_rejects_missing():
    string_dtype = getattr(getattr(np, "dtypes", None), "StringDType", None)
    if string_dtype is None:
        pytest.skip("numpy < 2 has no StringDType")
    from skpaper._ext._hashing import hash_bytes_sequence
    from skpaper._ext._strings import hash_string_dtype_array

    from skpaper.sketch import BottomKSketch

    # Short strings are stored inline, long ones on the arena: both paths.
    text = _TEXT + ["z" * 300, "trailing nul\0"]
    arr = np.array(text, dtype=string_dtype())
    np.testing.assert_array_equal(hash_string_dtype_array(arr, 9),
                                  hash_bytes_sequence(text, 9))
    assert (BottomKSketch(k=8, seed=1).update(arr[::2])
            == BottomKSketch(k=8, seed=1).update(text[::2]))
    missing = np.array(["a", None], dtype=string_dtype(na_object=None))
    with pytest.raises(ValueError, match="keys must not hold missing strings"):
        BottomKSketch(k=8, seed=1).update(missing)
