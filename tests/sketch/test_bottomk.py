import pickle
import struct
import warnings
import zlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from skpaper._ext._hashing import hash_uint64, splitmix64

from skpaper.sketch import BottomKSketch, merge_sketches
from skpaper.sketch._bottomk import hash_to_unit
from skpaper.sketch.checks import yield_checks

keys_st = st.lists(st.integers(0, 2**64 - 1), max_size=300)
small_k = st.integers(2, 40)
SEED = 12345


def _reference(keys, k, seed):
    arr = np.asarray(list(keys), dtype=np.uint64)
    return np.unique(hash_uint64(arr, splitmix64(seed)))[:k]


@pytest.mark.parametrize("check", list(yield_checks(BottomKSketch(k=16, seed=SEED))),
                         ids=lambda c: c.__name__)
def test_bottomk_sketch_checks(check):
    check(BottomKSketch(k=16, seed=SEED))


def test_bottomk_update_matches_numpy_reference(rng):
    keys = rng.integers(0, 2**63, size=50_000)
    sketch = BottomKSketch(k=128, seed=SEED).update(keys)
    np.testing.assert_array_equal(sketch.hashes, _reference(keys.astype(np.uint64), 128, SEED))
    tau_k = hash_to_unit(sketch.hashes[-1])
    assert sketch.estimate() == pytest.approx(127 / tau_k)


@pytest.mark.parametrize("k", [1, 5, 33, 4096, 20_000])
def test_bottomk_kernel_sorts_candidates_of_every_shape(k):
    # The candidates' radix sort skips the byte passes on which all values
    # agree: hashes that share their high bytes, or differ in one byte only,
    # with repeats, in buffers below and above its insertion-sort cutoff.
    from skpaper._ext._bottomk import bottomk_update

    rng = np.random.default_rng(k)
    shapes = [
        rng.integers(0, 2**20, 30_000, dtype=np.uint64),
        np.uint64(0xABCDEF0123456700) + rng.integers(0, 256, 9_000, dtype=np.uint64),
        rng.integers(0, 2**64, 30_000, dtype=np.uint64) & np.uint64(0xFF000000000000FF),
        np.repeat(rng.integers(0, 2**64, 3_000, dtype=np.uint64), 7),
        rng.integers(0, 2**64, 31, dtype=np.uint64),
        rng.integers(0, 2**64, 70_000, dtype=np.uint64),
    ]
    for keys in shapes:
        for chunk in (len(keys), 997):
            out = np.zeros(k, dtype=np.uint64)
            size = 0
            for i in range(0, len(keys), chunk):
                size = bottomk_update(out, size, keys[i:i + chunk], np.uint64(0), False)
            np.testing.assert_array_equal(out[:size], np.unique(keys)[:k])


def test_bottomk_update_chunked_equals_single_pass(rng):
    keys = rng.integers(0, 2**63, size=20_000)
    whole = BottomKSketch(k=64, seed=1).update(keys)
    chunked = BottomKSketch(k=64, seed=1)
    for part in np.array_split(keys, 37):
        chunked.update(part)
    assert chunked == whole


def test_bottomk_integer_dtypes_agree():
    keys = np.arange(1000)
    ref = BottomKSketch(k=32, seed=3).update(keys.astype(np.uint64))
    for dtype in (np.int8, np.int16, np.int32, np.int64, np.uint16, np.uint32):
        vals = keys.astype(dtype) if np.iinfo(dtype).max >= 999 else None
        if vals is not None:
            assert BottomKSketch(k=32, seed=3).update(vals) == ref
    assert BottomKSketch(k=32, seed=3).update(keys.tolist()) == ref
    assert BottomKSketch(k=32, seed=3).update(keys.astype(np.float64)) == ref


def test_bottomk_negative_keys_use_twos_complement():
    a = BottomKSketch(k=8, seed=3).update(np.array([-1, -2], dtype=np.int64))
    b = BottomKSketch(k=8, seed=3).update(np.array([2**64 - 1, 2**64 - 2], dtype=np.uint64))
    assert a == b


def test_bottomk_exact_below_k_and_monotone():
    sketch = BottomKSketch(k=100, seed=5)
    previous = 0.0
    for stop in range(10, 5000, 250):
        sketch.update(np.arange(stop - 250 if stop > 250 else 0, stop))
        current = sketch.estimate()
        if stop < 100:
            assert current == stop
        assert current >= previous
        previous = current


def test_bottomk_relative_standard_error_matches_theory():
    # 400 seeded trials: the RSE estimate has sd ~ rse / sqrt(2 * 400) = 3.5%; 15% is > 4 sd.
    k, n = 128, 5000
    rng = np.random.default_rng(0)
    ratios = np.array([
        BottomKSketch(k=k, seed=int(rng.integers(2**63))).update(
            rng.integers(0, 2**63, size=n)).estimate() / n
        for _ in range(400)
    ])
    rse = np.sqrt(np.mean((ratios - 1) ** 2))
    assert abs(rse * np.sqrt(k - 2) - 1) < 0.15
    # Unbiasedness: mean within 4 standard errors of 1.
    assert abs(ratios.mean() - 1) < 4 * rse / np.sqrt(400)


def test_bottomk_memory_is_order_k():
    small = BottomKSketch(k=256, seed=1).update(np.arange(1000))
    large = BottomKSketch(k=256, seed=1).update(np.arange(1_000_000))
    assert small._hashes.nbytes == large._hashes.nbytes == 8 * 256
    assert len(large.to_bytes()) == len(small.to_bytes()) == 24 + 8 * 256 + 4


def test_bottomk_merge_operator_and_copy():
    a = BottomKSketch(k=32, seed=9).update(np.arange(100))
    b = BottomKSketch(k=32, seed=9).update(np.arange(50, 300))
    snapshot = a.copy()
    union = a | b
    assert a == snapshot
    assert union == BottomKSketch(k=32, seed=9).update(np.arange(300))
    assert merge_sketches([a, b]) == union
    assert merge_sketches([a]) == a and merge_sketches([a]) is not a


def test_bottomk_small_seeds_give_independent_estimates():
    # Contiguous keys under seeds 0..199: the estimates must vary like independent draws.
    ratios = np.array([BottomKSketch(k=64, seed=s).update(np.arange(50_000)).estimate()
                       for s in range(200)]) / 50_000
    assert np.unique(ratios).size == 200
    assert abs(np.sqrt(np.mean((ratios - 1) ** 2)) * np.sqrt(62) - 1) < 0.2


def test_bottomk_seed_none_is_the_fixed_default_so_default_sketches_merge():
    from skpaper.sketch._bottomk import DEFAULT_SEED

    a, b = BottomKSketch(k=8), BottomKSketch(k=8)
    assert a.seed == b.seed == DEFAULT_SEED == 0x5EED
    a.update(np.arange(5)).merge(b.update(np.arange(3, 7)))
    assert a.estimate() == 7.0
    assert a == BottomKSketch(k=8, seed=DEFAULT_SEED).update(np.arange(7))
    sketch = BottomKSketch(k=8)
    assert BottomKSketch(**sketch.get_params()).seed == sketch.seed
    # The robust estimator still draws a secret seed of its own.
    from skpaper.sketch import RobustCardinalitySketch

    seeds = {RobustCardinalitySketch(k=8, mode="standard").fit()._secret_seed for _ in range(3)}
    assert len(seeds) == 3


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({"k": 1}, ValueError, "k must be an int in"),
        ({"k": 2.5}, TypeError, "k must be an int"),
        ({"k": True}, TypeError, "k must be an int"),
        ({"seed": -1}, ValueError, "seed must be an int"),
        ({"seed": 2**64}, ValueError, "seed must be an int"),
        ({"seed": "x"}, TypeError, "seed must be an int"),
    ],
)
def test_bottomk_bad_params(kwargs, err, match):
    with pytest.raises(err, match=match):
        BottomKSketch(**kwargs)


@pytest.mark.parametrize(
    "keys, err, match",
    [
        (np.array([1.0, 2.5]), ValueError, "non-integer value 2.5"),
        (np.array([1.0, np.nan]), ValueError, "NaN"),
        (np.array([1.0, np.inf]), ValueError, "infinite"),
        ([1, "a"], TypeError, "all be integers or all be bytes/str"),
        (["a", 1], TypeError, "all be integers or all be bytes/str"),
        ("abc", TypeError, "single str"),
        (np.zeros((2, 2), dtype=int), ValueError, "1-D"),
        ([2**64], ValueError, "fit in 64 bits"),
        (np.array([1 + 2j]), TypeError, "dtype complex128"),
        (5, TypeError, "iterable"),
    ],
)
def test_bottomk_update_bad_keys(keys, err, match):
    with pytest.raises(err, match=match):
        BottomKSketch(k=8, seed=1).update(keys)


def test_bottomk_merge_mismatch_raises():
    a = BottomKSketch(k=8, seed=1)
    with pytest.raises(ValueError, match="different seeds: 1 and 2"):
        a.merge(BottomKSketch(k=8, seed=2))
    with pytest.raises(ValueError, match="different sizes: k=8 and k=16"):
        a.merge(BottomKSketch(k=16, seed=1))
    with pytest.raises(TypeError, match="BottomKSketch"):
        a.merge({1, 2})
    with pytest.raises(ValueError, match="non-empty"):
        merge_sketches([])


def _with_crc(body):
    return body + zlib.crc32(body).to_bytes(4, "little")


def test_bottomk_from_bytes_rejects_garbage():
    data = BottomKSketch(k=8, seed=1).update(np.arange(20)).to_bytes()
    with pytest.raises(ValueError, match="too short"):
        BottomKSketch.from_bytes(data[:10])
    with pytest.raises(ValueError, match="not a serialized"):
        BottomKSketch.from_bytes(b"XXXX" + data[4:])
    with pytest.raises(ValueError, match="expected"):
        BottomKSketch.from_bytes(data[:-8])
    # Swapped hashes with a recomputed checksum still fail the order check.
    body = data[:-4]
    swapped = _with_crc(body[:-16] + body[-8:] + body[-16:-8])
    with pytest.raises(ValueError, match="sorted"):
        BottomKSketch.from_bytes(swapped)
    with pytest.raises(TypeError, match="bytes"):
        BottomKSketch.from_bytes("text")


def test_bottomk_from_bytes_validates_header_before_allocating():
    # A 28-byte input claiming k = 2**31 - 1 (16 GiB) is rejected; a valid k of 2**24
    # with no hashes allocates only its payload.
    huge = _with_crc(struct.pack("<4sB3sIIQ", b"SKBK", 3, bytes(3), 2**31 - 1, 0, 1))
    with pytest.raises(ValueError, match="k=2147483647"):
        BottomKSketch.from_bytes(huge)
    big = BottomKSketch.from_bytes(
        _with_crc(struct.pack("<4sB3sIIQ", b"SKBK", 3, bytes(3), 2**24, 0, 1)))
    assert big.k == 2**24 and big._hashes.nbytes == 0 and big.estimate() == 0.0
    assert big.update([1, 2, 3]).estimate() == 3.0
    with pytest.raises(ValueError, match="more than k"):
        BottomKSketch.from_bytes(
            _with_crc(struct.pack("<4sB3sIIQ", b"SKBK", 3, bytes(3), 2, 3, 1) + bytes(24)))
    with pytest.raises(ValueError, match="reserved"):
        BottomKSketch.from_bytes(
            _with_crc(struct.pack("<4sB3sIIQ", b"SKBK", 3, b"\x01\0\0", 8, 0, 1)))
    v1 = struct.pack("<4sBxxxIIQ", b"SKBK", 1, 8, 0, 1)
    with pytest.raises(ValueError, match="version-1 .* no checksum"):
        BottomKSketch.from_bytes(v1)
    v2 = _with_crc(struct.pack("<4sB3sIIQ", b"SKBK", 2, bytes(3), 8, 0, 1))
    with pytest.raises(ValueError, match="version-2 .* MurmurHash3 .* Rebuild"):
        BottomKSketch.from_bytes(v2)
    with pytest.raises(ValueError, match="format version 7"):
        BottomKSketch.from_bytes(b"SKBK\x07" + bytes(30))


_FULL = BottomKSketch(k=16, seed=3).update(np.arange(500)).to_bytes()


@given(st.integers(0, len(_FULL) - 1))
def test_bottomk_from_bytes_rejects_every_truncation(cut):
    with pytest.raises(ValueError):
        BottomKSketch.from_bytes(_FULL[:cut])


@given(st.integers(0, 8 * len(_FULL) - 1))
def test_bottomk_from_bytes_rejects_every_bit_flip(bit):
    # CRC-32 detects every single-bit error, in the header, hashes or checksum.
    flipped = bytearray(_FULL)
    flipped[bit // 8] ^= 1 << (bit % 8)
    with pytest.raises(ValueError):
        BottomKSketch.from_bytes(bytes(flipped))


@given(st.binary(max_size=200), st.booleans())
def test_bottomk_from_bytes_random_bytes_raise_value_error_or_round_trip(data, with_magic):
    if with_magic:
        data = b"SKBK\x03" + data
    try:
        sketch = BottomKSketch.from_bytes(data)
    except ValueError:
        return
    assert sketch.to_bytes() == data


def test_bottomk_pickle_goes_through_validation():
    sketch = BottomKSketch(k=8, seed=1).update(np.arange(20))
    payload = pickle.dumps(sketch)
    assert pickle.loads(payload) == sketch
    corrupt = payload.replace(sketch.to_bytes()[-4:], bytes(4))
    with pytest.raises(ValueError, match="checksum"):
        pickle.loads(corrupt)


def test_bottomk_negative_integer_keys_alias_twos_complement():
    a = BottomKSketch(k=8, seed=1).update(np.array([-1, -2], dtype=np.int64))
    b = BottomKSketch(k=8, seed=1).update(np.array([2**64 - 1, 2**64 - 2], dtype=np.uint64))
    assert a == b


def test_bottomk_k_is_bounded():
    with pytest.raises(ValueError, match=r"\[2, 2\*\*24\]"):
        BottomKSketch(k=2**31 - 1)


@given(keys_st, keys_st, keys_st, small_k)
def test_bottomk_merge_associative_commutative_union(a, b, c, k):
    sa, sb, sc = (BottomKSketch(k=k, seed=SEED).update(x) for x in (a, b, c))
    left = (sa | sb) | sc
    right = sa | (sb | sc)
    assert left == right
    assert sa | sb == sb | sa
    assert left == BottomKSketch(k=k, seed=SEED).update(a + b + c)


@given(keys_st, small_k, st.randoms(use_true_random=False))
def test_bottomk_permutation_and_duplicate_invariance(keys, k, random):
    shuffled = keys * 2
    random.shuffle(shuffled)
    assert BottomKSketch(k=k, seed=SEED).update(keys) == BottomKSketch(
        k=k, seed=SEED).update(shuffled)


@given(st.lists(st.integers(0, 2**64 - 1), unique=True, max_size=60), small_k)
def test_bottomk_exact_below_k_property(keys, k):
    sketch = BottomKSketch(k=k, seed=SEED).update(keys)
    if len(keys) < k:
        assert sketch.estimate() == len(keys)
        assert sketch.is_exact
    np.testing.assert_array_equal(sketch.hashes, _reference(keys, k, SEED))


@given(keys_st, keys_st, small_k)
def test_bottomk_estimate_monotone_under_insertion(a, b, k):
    sketch = BottomKSketch(k=k, seed=SEED).update(a)
    before = sketch.estimate()
    assert sketch.update(b).estimate() >= before


@given(st.lists(st.binary(max_size=20), max_size=80), small_k)
def test_bottomk_serialization_roundtrip(keys, k):
    sketch = BottomKSketch(k=k, seed=SEED).update(keys)
    assert BottomKSketch.from_bytes(sketch.to_bytes()) == sketch
    assert pickle.loads(pickle.dumps(sketch)) == sketch


class BottomKAgainstSet(RuleBasedStateMachine):
    """A sketch and an exact Python set receive the same operations."""

    def __init__(self):
        super().__init__()
        self.k = 16
        self.sketch = BottomKSketch(k=self.k, seed=SEED)
        self.model = set()
        self.saved = []

    @rule(keys=st.lists(st.integers(0, 2**64 - 1), max_size=40))
    def add(self, keys):
        self.sketch.update(keys)
        self.model.update(keys)

    @rule(keys=st.lists(st.integers(0, 2**64 - 1), max_size=40))
    def merge_other(self, keys):
        self.sketch.merge(BottomKSketch(k=self.k, seed=SEED).update(keys))
        self.model.update(keys)

    @rule()
    def save_copy(self):
        self.saved.append((self.sketch.copy(), set(self.model)))

    @precondition(lambda self: self.saved)
    @rule()
    def merge_saved(self):
        other, other_model = self.saved[-1]
        self.sketch.merge(other)
        self.model |= other_model

    @rule()
    def roundtrip(self):
        self.sketch = BottomKSketch.from_bytes(self.sketch.to_bytes())

    @invariant()
    def matches_model(self):
        np.testing.assert_array_equal(self.sketch.hashes, _reference(self.model, self.k, SEED))
        n = len(self.model)
        if n < self.k:
            assert self.sketch.estimate() == n
        else:
            # k-th smallest of n uniforms: (k-1)/tau_k stays within a loose 20-sigma band.
            assert abs(self.sketch.estimate() / n - 1) < 20 / np.sqrt(self.k - 2)


TestBottomKAgainstSet = BottomKAgainstSet.TestCase


def test_merge_sketches_folds_in_place_without_copying_the_inputs():
    import tracemalloc

    k = 2**14
    rng = np.random.default_rng(0)
    parts = [BottomKSketch(k=k, seed=4).update(rng.integers(0, 2**63, size=2 * k))
             for _ in range(24)]
    ref = parts[0].copy()
    for p in parts[1:]:
        ref.merge(p)
    before = [p.to_bytes() for p in parts]
    tracemalloc.start()
    merged = merge_sketches(iter(parts))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert merged == ref and [p.to_bytes() for p in parts] == before
    # The result and a little bookkeeping, not one copy per input (24 sketches).
    assert peak < 3 * 8 * k
    with pytest.raises(TypeError, match="BottomKSketch objects"):
        merge_sketches([parts[0], "sketch"])
    with pytest.raises(ValueError, match="different seeds"):
        merge_sketches([parts[0], BottomKSketch(k=k, seed=5)])


def test_float_keys_above_two_to_the_53_warn():
    exact = np.array([2.0**53, -(2.0**53), 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        BottomKSketch(k=8, seed=1).update(exact)
    with pytest.warns(UserWarning, match="above 2\\*\\*53"):
        s = BottomKSketch(k=8, seed=1).update(np.array([2.0**53 + 2, 2.0**60]))
    assert s.estimate() == 2.0
    with pytest.warns(UserWarning, match="above 2\\*\\*53"):
        BottomKSketch(k=8, seed=1).update([float(2**63)])


def test_a_forged_payload_with_a_valid_crc_is_accepted():
    # The CRC is a checksum, not a signature (documented in from_bytes).
    k, hashes = 16, np.arange(1, 17, dtype="<u8") * 2**40
    body = struct.pack("<4sB3sIIQ", b"SKBK", 3, bytes(3), k, k, 1) + hashes.tobytes()
    forged = BottomKSketch.from_bytes(body + struct.pack("<I", zlib.crc32(body)))
    assert forged.estimate() > 1e6
