"""Throughput of skpaper's Cython hashing against mmh3 and numpy.

Run: ``python benchmarks/bench_hashing.py [--quick] [--json out.json]``.
"""

import numpy as np
from _harness import Case, main_cli
from skpaper._ext._hashing import hash_bytes_sequence, hash_text_array, hash_uint64


def _numpy_splitmix64(keys, seed):
    with np.errstate(over="ignore"):
        x = (keys ^ np.uint64(seed)) + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def make_cases(quick):
    import mmh3

    rng = np.random.default_rng(0)
    n_int = 1_000_000 if quick else 10_000_000
    n_str = 100_000 if quick else 1_000_000
    ints = rng.integers(0, 2**63, size=n_int, dtype=np.uint64)
    strings = [f"user-{i:012d}".encode() for i in rng.integers(0, 10**12, size=n_str)]
    texts = [s.decode() for s in strings]
    accented = [t.replace("u", "\u00fc") for t in texts]
    as_unicode = np.array(texts)
    assert np.array_equal(hash_uint64(ints[:1000], 5), _numpy_splitmix64(ints[:1000], 5))
    return [
        Case("uint64 keys: Cython vs numpy splitmix64", lambda: hash_uint64(ints, 5),
             lambda: _numpy_splitmix64(ints, 5), "numpy", items=n_int),
        Case("bytes keys: Cython MurmurHash3 vs mmh3", lambda: hash_bytes_sequence(strings, 5),
             lambda: [mmh3.hash64(s, 5, signed=False)[0] for s in strings], "mmh3 (per call)",
             items=n_str),
        Case("str keys (ASCII): Cython vs mmh3", lambda: hash_bytes_sequence(texts, 5),
             lambda: [mmh3.hash64(t, 5, signed=False)[0] for t in texts], "mmh3 (per call)",
             items=n_str),
        Case("str keys (non-ASCII): Cython vs mmh3", lambda: hash_bytes_sequence(accented, 5),
             lambda: [mmh3.hash64(t, 5, signed=False)[0] for t in accented],
             "mmh3 (per call)", items=n_str),
        Case("numpy U array: Cython vs list of str", lambda: hash_text_array(as_unicode, 5),
             lambda: hash_bytes_sequence(texts, 5), "ours, list", items=n_str),
    ]


if __name__ == "__main__":
    main_cli(make_cases, __doc__.splitlines()[0])
