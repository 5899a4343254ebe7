"""The text-key hash of str/bytes keys: one value per key whatever its container."""

import numpy as np
import pytest
from skpaper._ext._bottomk import bottomk_update, bottomk_update_text
from skpaper._ext._hashing import hash_uint64, splitmix64, text_keys, text_keys_array

from skpaper.sketch import BottomKSketch, RobustCardinalitySketch
from skpaper.sketch._keys import TEXT_HASH_VERSION, key_hashes, mix_seed

_M64 = 2**64 - 1


def _splitmix(x):
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def _fold(a, b):
    p = a * b
    return (p & _M64) ^ (p >> 64)


def _reference_text_key(data, seed):
    """The text-key hash, written from its definition in ``src_ext/_skhash.h``."""
    k0 = _splitmix(seed ^ 0x6A09E667F3BCC909)
    k1 = _splitmix(seed ^ 0xBB67AE8584CAA73B)
    n = len(data)
    h = k0 ^ ((n * 0x9E3779B97F4A7C15) & _M64)

    def word(b):
        return int.from_bytes(b, "little")

    if n <= 8:
        return _fold(word(data) ^ k1, h)
    if n <= 16:
        return _fold(word(data[:8]) ^ k1, word(data[-8:]) ^ h)
    i = 0
    while n - i > 16:
        h = _fold(word(data[i:i + 8]) ^ k1, word(data[i + 8:i + 16]) ^ h)
        i += 16
    return _fold(word(data[-16:-8]) ^ k1, word(data[-8:]) ^ h)


class _Str(str):
    pass


# ASCII, latin-1 beyond ASCII (1-byte kind), UCS-2 (2-byte kind), astral code
# points (4-byte kind), mixed kinds past one 16-byte block, and a str subclass.
TEXT = ["", "a", "ab", "abc", "word", "seven77", "eight888", "ninenine9", "x" * 16, "y" * 17,
        "z" * 33, "caf\u00e9", "\u00ff" * 9, "\u00e9t\u00e9", "\u0394\u03b5\u03bb\u03c4\u03b1",
        "\u65e5\u672c\u8a9e", "emoji \U0001f600", "\U0001f600" * 5, "na\u00efve" * 7,
        "trailing space ", _Str("subclass"), "\u0394" * 17]


@pytest.mark.parametrize("seed", [0, 1, 2**64 - 1, 0x0123456789ABCDEF])
def test_text_key_matches_its_definition(seed):
    rng = np.random.default_rng(seed % 2**32)
    data = [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in range(0, 70)]
    data += [t.encode() for t in TEXT]
    want = np.array([_reference_text_key(d, seed) for d in data], dtype=np.uint64)
    np.testing.assert_array_equal(text_keys(data, seed), want)
    # bytearray and memoryview items take the generic loads, bytes the padded ones.
    np.testing.assert_array_equal(text_keys([bytearray(d) for d in data], seed), want)
    np.testing.assert_array_equal(text_keys([memoryview(d) for d in data], seed), want)


@pytest.mark.parametrize("seed", [3, 2**63 + 5])
def test_text_key_is_the_same_in_every_container(seed):
    want = text_keys([t.encode("utf-8") for t in TEXT], seed)
    np.testing.assert_array_equal(text_keys(TEXT, seed), want)
    np.testing.assert_array_equal(text_keys(tuple(TEXT), seed), want)
    arr = np.array(TEXT)
    np.testing.assert_array_equal(text_keys_array(arr, seed), want)
    swapped = arr.astype(arr.dtype.newbyteorder(">"))
    np.testing.assert_array_equal(text_keys_array(swapped, seed), want)
    np.testing.assert_array_equal(text_keys_array(arr[::3], seed), want[::3])
    raw = np.array([t.encode() for t in TEXT])
    np.testing.assert_array_equal(text_keys_array(raw, seed), want)
    string_dtype = getattr(getattr(np, "dtypes", None), "StringDType", None)
    if string_dtype is not None:
        from skpaper._ext._strings import string_dtype_keys

        long = TEXT + ["w" * 300]
        np.testing.assert_array_equal(
            string_dtype_keys(np.array(long, dtype=string_dtype()), seed),
            text_keys(long, seed))
    assert len(set(want.tolist())) == len(TEXT)


def test_sketches_of_the_same_words_merge_across_containers():
    words = [TEXT[i % len(TEXT)] + str(i % 500) for i in range(3000)]
    ref = BottomKSketch(k=64, seed=11).update(words)
    mixed = mix_seed(11)
    np.testing.assert_array_equal(
        ref.hashes, np.unique(hash_uint64(text_keys(words, mixed), mixed))[:64])
    containers = [tuple(words), [w.encode() for w in words], np.array(words),
                  np.array(words, dtype=object), np.array([w.encode() for w in words]),
                  [bytearray(w.encode()) for w in words]]
    string_dtype = getattr(getattr(np, "dtypes", None), "StringDType", None)
    if string_dtype is not None:
        containers.append(np.array(words, dtype=string_dtype()))
    for keys in containers:
        assert BottomKSketch(k=64, seed=11).update(keys) == ref
    # Halves sketched from different containers merge into the sketch of all.
    half = len(words) // 2
    a = BottomKSketch(k=64, seed=11).update(words[:half])
    b = BottomKSketch(k=64, seed=11).update(np.array([w.encode() for w in words[half:]]))
    assert a.merge(b) == ref
    # The robust estimator's query path hashes the same keys alike.
    robust = RobustCardinalitySketch(k=64, random_state=0).fit()
    seed = robust._secret_seed
    np.testing.assert_array_equal(
        key_hashes(words, seed), hash_uint64(text_keys(words, mix_seed(seed)), mix_seed(seed)))
    np.testing.assert_array_equal(key_hashes(np.array(words), seed), key_hashes(words, seed))


@pytest.mark.parametrize("k", [2, 7, 256, 4096, 70_000])
def test_fused_text_update_equals_the_reference(k):
    # Past several chunks of 512 keys, with repeats; k = 70,000 takes the sorted
    # search instead of the hash set, and a short update no hash set either.
    rng = np.random.default_rng(k)
    words = [f"w{v}" for v in rng.integers(0, 20_000, 30_000)]
    mixed = mix_seed(9)
    hashes = hash_uint64(text_keys(words, mixed), mixed)
    sketch = BottomKSketch(k=k, seed=9).update(words)
    np.testing.assert_array_equal(sketch.hashes, np.unique(hashes)[:k])
    step = BottomKSketch(k=k, seed=9)
    for i in range(0, len(words), 1_234):
        step.update(words[i:i + 1_234])
    assert step == sketch
    out = np.zeros(k, dtype=np.uint64)
    size = bottomk_update_text(out, 0, words, np.uint64(mixed))
    np.testing.assert_array_equal(out[:size], sketch.hashes)


def test_bottomk_kernel_keeps_extreme_hashes():
    # Hash 0 has no slot in the hash set and 2**64 - 1 equals the "not full" limit.
    extremes = np.array([0, 2**64 - 1, 1, 2**64 - 2] * 3, dtype=np.uint64)
    noise = np.random.default_rng(1).integers(0, 2**64, 5_000, dtype=np.uint64)
    for keys in (extremes, np.concatenate([extremes, noise, extremes])):
        for k in (2, 3, 8, 2_000):
            out = np.zeros(k, dtype=np.uint64)
            size = bottomk_update(out, 0, keys, np.uint64(0), False)
            np.testing.assert_array_equal(out[:size], np.unique(keys)[:k])


def test_bad_text_keys_leave_the_sketch_unchanged():
    sketch = BottomKSketch(k=8, seed=1).update(["a", "b", "c"])
    before = sketch.copy()
    # A lone surrogate (UCS-2 kind) has no UTF-8 form, deep in a long list.
    keys = [f"k{i}" for i in range(5_000)] + ["ok\ud800"]
    with pytest.raises(UnicodeEncodeError):
        sketch.update(keys)
    assert sketch == before
    with pytest.raises(TypeError, match="keys must all be integers or all be bytes/str.*int"):
        sketch.update(["x", "y", 3])
    assert sketch == before
    with pytest.raises(UnicodeEncodeError):
        sketch.update(np.array(["fine", "\udfff"]))
    assert sketch == before
    with pytest.raises(UnicodeEncodeError):
        text_keys(["\ud83d\ude00"], 0)  # a surrogate pair in a str is two lone surrogates
    # A fresh sketch that fails is empty, not half-filled.
    fresh = BottomKSketch(k=8, seed=1)
    with pytest.raises(UnicodeEncodeError):
        fresh.update(keys)
    assert len(fresh) == 0 and fresh.update(["a", "b", "c"]) == before


def test_text_key_hash_version_is_in_the_format():
    assert TEXT_HASH_VERSION == 2
    data = BottomKSketch(k=8, seed=1).update(["a", "b"]).to_bytes()
    assert data[4] == 3
    assert BottomKSketch.from_bytes(data) == BottomKSketch(k=8, seed=1).update([b"a", b"b"])


def test_text_keys_are_well_mixed():
    # Structured keys (a shared prefix and consecutive numbers) give uniform
    # sketch hashes: every output bit is balanced, one flipped input bit flips
    # about half the output bits, and bottom-k estimates are unbiased.
    keys = [f"user-{i:06d}".encode() for i in range(20_000)]
    mixed = mix_seed(5)
    hashes = hash_uint64(text_keys(keys, mixed), mixed)
    bits = (hashes[:, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)
    frac = bits.mean(axis=0)
    assert np.abs(frac - 0.5).max() < 0.02  # 5.7 standard errors
    flipped = [bytes([k[0] ^ 1]) + k[1:] for k in keys[:2_000]]
    flipped += [k[:-1] + bytes([k[-1] ^ 4]) for k in keys[:2_000]]
    base = np.concatenate([hashes[:2_000], hashes[:2_000]])
    other = hash_uint64(text_keys(flipped, mixed), mixed)
    changed = np.unpackbits((base ^ other).view(np.uint8)).reshape(-1, 64).sum(axis=1)
    assert 31 < changed.mean() < 33 and changed.min() > 10
    ratios = [BottomKSketch(k=256, seed=s).update(keys).estimate() / len(keys)
              for s in range(40)]
    assert abs(np.mean(ratios) - 1) < 0.03
    assert 0.5 / np.sqrt(254) < np.std(ratios) < 1.5 / np.sqrt(254)


def test_text_keys_validate_seed():
    with pytest.raises(ValueError, match="seed"):
        text_keys([b"a"], 2**64)
    with pytest.raises(ValueError, match="seed"):
        text_keys_array(np.array(["a"]), -1)
    with pytest.raises(TypeError, match="bytes or str"):
        text_keys([b"a", 3.0], 0)
    assert splitmix64(0) == _splitmix(0)


@pytest.mark.parametrize("width", [1, 3, 4, 5, 16, 17, 27])
def test_fixed_width_arrays_sketch_as_their_lists(width):
    # The fused U/S kernels (SIMD narrowing, padded reads) against the list path:
    # non-ASCII and astral code points, embedded NULs, items of every length.
    rng = np.random.default_rng(width)
    alphabet = ["a", "b", "\0", "é", "\u20ac", "\U0001F600", "z"]
    words = ["".join(rng.choice(alphabet, size=rng.integers(0, width + 1)))
             for _ in range(3000)]
    U = np.array(words, dtype=f"U{width}")
    S = np.array([w.encode() for w in U.tolist()], dtype=f"S{4 * width}")
    for arr in (U, S, U[::-1].copy(), S[1:].copy()):
        ref = BottomKSketch(k=256, seed=3).update(arr.tolist())
        got = BottomKSketch(k=256, seed=3).update(arr)
        assert np.array_equal(got._hashes[: got._size], ref._hashes[: ref._size])
        np.testing.assert_array_equal(text_keys_array(arr, 7), text_keys(arr.tolist(), 7))


@pytest.mark.parametrize("width", [16, 20, 27, 40])
def test_fused_u_update_hands_declined_items_to_the_general_path(width):
    # The fused loop over short ASCII U items (rounds of 64) stops at an item it
    # declines -- non-ASCII, or longer than 16 code points -- which the general
    # path hashes before the loop resumes: at round boundaries, back to back,
    # first and last, and a run of 1,500 (which the general path takes in
    # growing blocks). A small k makes the threshold drop within rounds.
    rng = np.random.default_rng(width)
    words = ["".join(rng.choice(list("abcdefgh"), size=rng.integers(0, 17)))
             for _ in range(5_000)]
    odd = ["\u00e9t\u00e9", "x" * width, "\U0001F600", "q" * 17]
    for i, pos in enumerate([0, 63, 64, 65, 127, 128, 129, 1_000, 1_001, 4_999]):
        words[pos] = odd[i % len(odd)][:width]
    words[2_000:3_500] = [w + "\u00e9" for w in words[2_000:3_500]]
    U = np.array(words, dtype=f"U{width}")
    for k in (3, 64, 4096):
        ref = BottomKSketch(k=k, seed=8).update(U.tolist())
        got = BottomKSketch(k=k, seed=8).update(U)
        assert np.array_equal(got._hashes[: got._size], ref._hashes[: ref._size])


def _reference_keys(items, seed):
    return np.array([_reference_text_key(t.encode("utf-8") if isinstance(t, str) else t, seed)
                     for t in items], dtype=np.uint64)


@pytest.mark.parametrize("width", [1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 18, 19, 20, 27, 31, 32, 33,
                                   40])
def test_short_item_kernels_match_the_definition(width):
    # Items of every length 0..17 (and up to the width), ASCII or not, each
    # array read from a buffer that ends with its last item; strided views and
    # byte-swapped U arrays too.
    rng = np.random.default_rng(100 + width)
    seed = 0x0123456789ABCDEF
    lengths = list(range(0, min(width, 17) + 1)) + [width] * 3
    words = []
    for n in lengths:
        for alphabet in ("abcxyz \x7f", "ab\u00e9\u20ac", "a\U0001F600"):
            words.append("".join(rng.choice(list(alphabet), size=n)))
    words += ["a" * width, "\x7f" * width, "\x80" * min(width, 3)]
    for order in (words, words[::-1]):
        U = np.array(order, dtype=f"U{width}")
        tight = np.frombuffer(U.tobytes(), dtype=U.dtype)
        want = _reference_keys(U.tolist(), seed)
        for arr in (U, tight, U.astype(U.dtype.newbyteorder(">"))):
            np.testing.assert_array_equal(text_keys_array(arr, seed), want)
        np.testing.assert_array_equal(text_keys_array(U[::2], seed), want[::2])
        np.testing.assert_array_equal(text_keys_array(U[1::3], seed), want[1::3])
        raw = [w.encode("utf-8")[:width] for w in order]
        S = np.array(raw, dtype=f"S{width}")
        tight_s = np.frombuffer(S.tobytes(), dtype=S.dtype)
        want_s = _reference_keys(S.tolist(), seed)
        for arr in (S, tight_s):
            np.testing.assert_array_equal(text_keys_array(arr, seed), want_s)
        np.testing.assert_array_equal(text_keys_array(S[::2], seed), want_s[::2])
        for arr in (U, tight, S, tight_s):
            ref = BottomKSketch(k=64, seed=5).update(arr.tolist())
            got = BottomKSketch(k=64, seed=5).update(arr)
            assert np.array_equal(got._hashes[: got._size], ref._hashes[: ref._size])


@pytest.mark.parametrize("width", [5, 16, 17, 24])
def test_short_item_kernels_keep_embedded_nuls_and_drop_padding(width):
    seed = 11
    words = ["\0a", "a\0", "a\0b", "\0" * 3 + "q", "x" * (width - 1) + "\0", "\0" * width,
             "y" + "\0" * (width - 2) + "z", "\u00e9\0"]
    U = np.array(words, dtype=f"U{width}")
    np.testing.assert_array_equal(text_keys_array(U, seed), _reference_keys(U.tolist(), seed))
    S = np.array([w.encode("utf-8")[:width] for w in words], dtype=f"S{width}")
    np.testing.assert_array_equal(text_keys_array(S, seed), _reference_keys(S.tolist(), seed))
    tight = np.frombuffer(S.tobytes(), dtype=S.dtype)
    np.testing.assert_array_equal(text_keys_array(tight, seed),
                                  _reference_keys(S.tolist(), seed))


@pytest.mark.skipif(not hasattr(__import__("os"), "sysconf"), reason="needs mmap/mprotect")
@pytest.mark.parametrize("dtype", ["U1", "U3", "U5", "U17", "U27", "S1", "S7", "S15", "S17"])
def test_fixed_width_kernels_read_nothing_past_the_array(dtype):
    # The array ends where an unreadable page begins: a read past its last
    # item would crash the process.
    import ctypes
    import mmap

    libc = ctypes.CDLL(None, use_errno=True)
    page = mmap.PAGESIZE
    itemsize = np.dtype(dtype).itemsize
    n = page // itemsize
    region = mmap.mmap(-1, 2 * page, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(region))
    assert libc.mprotect(ctypes.c_void_p(base + page), page, 0) == 0
    try:
        offset = page - n * itemsize
        arr = np.frombuffer(region, dtype=dtype, count=n, offset=offset)
        words = ["ab"[: i % 3] + "x" * (i % 19) for i in range(n)]
        src = np.array(words if dtype[0] == "U" else [w.encode() for w in words], dtype=dtype)
        region[offset:page] = src.tobytes()
        np.testing.assert_array_equal(text_keys_array(arr, 9),
                                      _reference_keys(arr.tolist(), 9))
        ref = BottomKSketch(k=64, seed=5).update(arr.tolist())
        got = BottomKSketch(k=64, seed=5).update(arr)
        assert np.array_equal(got._hashes[: got._size], ref._hashes[: ref._size])
        del arr
    finally:
        libc.mprotect(ctypes.c_void_p(base + page), page, mmap.PROT_READ | mmap.PROT_WRITE)


_STRING_DTYPE = getattr(getattr(np, "dtypes", None), "StringDType", None)


@pytest.fixture
def inline_layout():
    """Switch the direct read of short StringDType items on or off; restored after."""
    from skpaper._ext import _strings

    yield _strings._check_inline_layout
    _strings._check_inline_layout()


@pytest.mark.skipif(_STRING_DTYPE is None, reason="needs numpy 2")
def test_string_dtype_inline_items_hash_as_their_definition(inline_layout):
    # Short items are read from numpy's inline layout, checked when the module
    # is imported; long, arena-held and missing items go through numpy's API.
    from skpaper._ext._strings import bottomk_update_string_dtype, string_dtype_keys

    assert inline_layout(True), "the inline layout check failed on this numpy"
    rng = np.random.default_rng(5)
    words = ["".join(rng.choice(list(alphabet), size=n))
             for n in range(41) for alphabet in ("abz \x7f\0", "a\u00e9\u20ac\U0001F600")]
    arr = np.array(words, dtype=_STRING_DTYPE())
    # Slots that held a long string and were then given a short one, and a
    # slice that starts past the first item.
    mutated = np.array(["x" * 40] * 8 + words, dtype=_STRING_DTYPE())
    mutated[:8] = ["", "a", "bb", "x" * 15, "y" * 16, "\u00e9", "q" * 3, "z" * 40]
    seed = 0x0123456789ABCDEF
    for a in (arr, mutated, arr[3:].copy(), arr[::-1].copy()):
        want = _reference_keys(a.tolist(), seed)
        for enabled in (True, False):
            inline_layout(enabled)
            np.testing.assert_array_equal(string_dtype_keys(a, seed), want)
            sk = np.zeros(64, dtype=np.uint64)
            size = bottomk_update_string_dtype(sk, 0, a, np.uint64(seed))
            ref = np.zeros(64, dtype=np.uint64)
            ref_size = bottomk_update(ref, 0, want, np.uint64(seed))
            np.testing.assert_array_equal(sk[:size], ref[:ref_size])


@pytest.mark.skipif(_STRING_DTYPE is None, reason="needs numpy 2")
def test_string_dtype_missing_items_are_rejected_on_both_paths(inline_layout):
    from skpaper._ext._strings import string_dtype_keys

    arr = np.array(["a", None, "b"], dtype=_STRING_DTYPE(na_object=None))
    for enabled in (True, False):
        inline_layout(enabled)
        with pytest.raises(ValueError, match="position 1"):
            string_dtype_keys(arr, 1)
        with pytest.raises(ValueError, match="position 1"):
            BottomKSketch(k=8, seed=1).update(arr)
