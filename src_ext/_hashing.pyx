# cython: language_level=3, boundscheck=False, wraparound=False
"""Seeded 64-bit hashing kernels.

Integer keys go through splitmix64 of ``key ^ seed``; byte strings through
MurmurHash3 x64_128 (Austin Appleby's public-domain algorithm), written here
from its specification. Both work on read-only buffers and release the GIL.
"""

import numpy as np

cimport numpy as cnp
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdint cimport uint8_t, uint32_t, uint64_t

cnp.import_array()

__all__ = [
    "splitmix64",
    "hash_uint64",
    "murmurhash3_x64_128",
    "murmurhash3_x64_64",
    "hash_bytes_sequence",
]


from _hashcore cimport _splitmix64, _murmur3_x64_128


def _check_seed64(seed):
    seed = int(seed)
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed must be in [0, 2**64), got {seed}.")
    return seed


def _check_seed32(seed):
    seed = int(seed)
    if not 0 <= seed < 2**32:
        raise ValueError(f"seed must be in [0, 2**32), got {seed}.")
    return seed


def splitmix64(key, seed=0):
    """Hash one integer key with splitmix64 of ``key ^ seed``.

    Parameters
    ----------
    key : int
        Integer in ``[-2**63, 2**64)``; negative keys use their two's complement.
    seed : int, default=0
        Seed in ``[0, 2**64)``.

    Returns
    -------
    h : int
        Hash in ``[0, 2**64)``.
    """
    key = int(key)
    if not -(2**63) <= key < 2**64:
        raise ValueError(f"key must fit in 64 bits, got {key}.")
    cdef uint64_t k = <uint64_t>(key & 0xFFFFFFFFFFFFFFFF)
    cdef uint64_t s = _check_seed64(seed)
    return _splitmix64(k ^ s)


def _hash_uint64_view(const uint64_t[::1] keys, uint64_t seed):
    cdef Py_ssize_t n = keys.shape[0]
    cdef Py_ssize_t i
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] out_view = out
    with nogil:
        for i in range(n):
            out_view[i] = _splitmix64(keys[i] ^ seed)
    return out


def hash_uint64(keys, seed=0):
    """Hash an integer array with seeded splitmix64, element-wise: ``splitmix64(key ^ seed)``.

    This is the raw primitive: the seed is XOR-ed in unmixed, so small seeds only
    permute a contiguous key range (``arange(n) ^ 1`` is the same set as ``arange(n)``)
    and give the same multiset of hashes. For independent hash families, pass a mixed
    seed, ``hash_uint64(keys, splitmix64(seed))``, as :mod:`skpaper.sketch` does.

    Parameters
    ----------
    keys : array-like of integers
        Any integer dtype; signed values are reinterpreted as their 64-bit
        two's complement, so ``-1`` and ``2**64 - 1`` hash alike. Read-only
        arrays are accepted.
    seed : int, default=0
        Seed in ``[0, 2**64)``.

    Returns
    -------
    hashes : ndarray of uint64, same length as ``keys``
    """
    arr = np.asarray(keys)
    if arr.dtype.kind not in "iub":
        raise TypeError(f"keys must have an integer dtype, got {arr.dtype}.")
    if arr.ndim != 1:
        arr = arr.reshape(-1)
    if arr.dtype != np.uint64:
        arr = arr.astype(np.int64, copy=False).view(np.uint64) if arr.dtype.kind != "u" \
            else arr.astype(np.uint64, copy=False)
    arr = np.ascontiguousarray(arr)
    return _hash_uint64_view(arr, _check_seed64(seed))


cdef inline const uint8_t[::1] _as_bytes_view(obj) except *:
    if isinstance(obj, str):
        obj = obj.encode("utf-8")
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return memoryview(obj).cast("B")
    raise TypeError(f"keys must be bytes or str, got {type(obj).__name__}.")


def murmurhash3_x64_128(key, seed=0):
    """MurmurHash3 x64_128 of a byte string.

    Parameters
    ----------
    key : bytes, bytearray, memoryview or str
        ``str`` is encoded as UTF-8.
    seed : int, default=0
        Seed in ``[0, 2**32)``.

    Returns
    -------
    h1, h2 : tuple of int
        The two 64-bit halves, as ``mmh3.hash64(key, seed, signed=False)``.
    """
    cdef const uint8_t[::1] view = _as_bytes_view(key)
    cdef uint32_t s = _check_seed32(seed)
    cdef uint64_t out[2]
    cdef const uint8_t* ptr = NULL
    if view.shape[0] > 0:
        ptr = &view[0]
    with nogil:
        _murmur3_x64_128(ptr, view.shape[0], s, out)
    return int(out[0]), int(out[1])


def murmurhash3_x64_64(key, seed=0):
    """First 64-bit half of :func:`murmurhash3_x64_128`."""
    return murmurhash3_x64_128(key, seed)[0]


def hash_bytes_sequence(keys, seed=0):
    """Hash each ``bytes``/``str`` item of an iterable with MurmurHash3 (64-bit half).

    Parameters
    ----------
    keys : iterable of bytes or str
    seed : int, default=0
        Seed in ``[0, 2**32)``.

    Returns
    -------
    hashes : ndarray of uint64
    """
    cdef uint32_t s = _check_seed32(seed)
    cdef list items = list(keys)
    cdef Py_ssize_t n = len(items)
    cdef Py_ssize_t i
    cdef const uint8_t[::1] view
    cdef const uint8_t* ptr
    cdef uint64_t out[2]
    cdef object item
    result = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] res = result
    for i in range(n):
        item = items[i]
        if type(item) is str:
            item = (<str>item).encode("utf-8")
        if type(item) is bytes:
            # Fast path: read the bytes object's buffer without a memoryview.
            _murmur3_x64_128(<const uint8_t*>PyBytes_AS_STRING(item),
                             PyBytes_GET_SIZE(item), s, out)
        else:
            view = _as_bytes_view(item)
            ptr = NULL
            if view.shape[0] > 0:
                ptr = &view[0]
            _murmur3_x64_128(ptr, view.shape[0], s, out)
        res[i] = out[0]
    return result
