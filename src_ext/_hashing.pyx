# cython: language_level=3, boundscheck=False, wraparound=False
"""Seeded 64-bit hashing kernels.

Integer keys go through splitmix64 of ``key ^ seed``; byte strings through
MurmurHash3 x64_128 (Austin Appleby's public-domain algorithm), written here
from its specification, or through the sketch's text-key hash (``_skhash.h``).
All work on read-only buffers and release the GIL.
"""

import numpy as np

cimport numpy as cnp
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy

cnp.import_array()

__all__ = [
    "splitmix64",
    "hash_uint64",
    "murmurhash3_x64_128",
    "murmurhash3_x64_64",
    "hash_bytes_sequence",
    "hash_text_array",
    "text_keys",
    "text_keys_array",
]


from _hashcore cimport (
    ALGO_MURMUR3, ALGO_TEXT_KEY, FixedText, TextHasher, _murmur3_x64_128, _splitmix64,
    fixed_text_init, hash_fixed, hash_list, raise_unhashable, text_hasher_init,
)


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


cdef object _hash_sequence(keys, int algo, uint64_t seed):
    # With the GIL throughout: the items are borrowed from the list.
    cdef list items = keys if type(keys) is list else list(keys)
    cdef Py_ssize_t n = len(items)
    cdef TextHasher th
    result = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] res = result
    text_hasher_init(&th, algo, seed)
    try:
        if n:
            hash_list(items, 0, n, &th, &res[0])
    finally:
        free(th.scratch)
    return result


def hash_bytes_sequence(keys, seed=0):
    """Hash each ``bytes``/``str`` item of an iterable with MurmurHash3 (64-bit half).

    ``str`` keys hash as their UTF-8 encoding, read straight from the string's
    buffer (no copy for ASCII strings), with the GIL held.

    Parameters
    ----------
    keys : iterable of bytes, bytearray, memoryview or str
    seed : int, default=0
        Seed in ``[0, 2**32)``.

    Returns
    -------
    hashes : ndarray of uint64

    Raises
    ------
    TypeError
        If an item is not bytes-like or str.
    """
    return _hash_sequence(keys, ALGO_MURMUR3, _check_seed32(seed))


def text_keys(keys, seed=0):
    """The 64-bit text-key hash of each ``bytes``/``str`` item (UTF-8), as the sketch uses.

    The hash of ``skpaper.sketch`` string keys (see ``_skhash.h``): one folded
    64x64-bit multiplication per 16 bytes, keyed by two words drawn from
    ``seed``. ``str`` keys hash as their UTF-8 encoding, read from the string's
    buffer; the same key gives the same value as ``bytes``, in a numpy ``U`` or
    ``S`` array (:func:`text_keys_array`) or in a ``StringDType`` array.

    Parameters
    ----------
    keys : iterable of bytes, bytearray, memoryview or str
    seed : int, default=0
        Seed in ``[0, 2**64)``.

    Returns
    -------
    keys : ndarray of uint64

    Raises
    ------
    TypeError
        If an item is not bytes-like or str.
    ValueError
        If a ``str`` has no UTF-8 form (a lone surrogate); the error is a
        ``UnicodeEncodeError``.
    """
    return _hash_sequence(keys, ALGO_TEXT_KEY, _check_seed64(seed))


cdef object _hash_text(arr, int algo, uint64_t seed):
    arr = np.asarray(arr)
    if arr.dtype.kind not in "US":
        raise TypeError(f"arr must have a numpy U or S dtype, got {arr.dtype}.")
    if arr.dtype.kind == "U" and not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    arr = np.ascontiguousarray(arr.reshape(-1))
    cdef Py_ssize_t n = arr.shape[0]
    cdef Py_ssize_t width = arr.dtype.itemsize
    cdef int unit = 4 if arr.dtype.kind == "U" else 1
    cdef const uint8_t[::1] raw = arr.view(np.uint8).reshape(-1) if n * width else \
        np.zeros(1, dtype=np.uint8)
    cdef TextHasher th
    cdef FixedText ft
    cdef Py_ssize_t bad = -1
    result = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] res = result
    text_hasher_init(&th, algo, seed)
    try:
        if fixed_text_init(&ft, &th, &raw[0], n, width, unit == 4) != 0:
            raise MemoryError()
        if n:
            with nogil:
                bad = hash_fixed(&th, &ft, 0, n, &res[0])
        if bad >= 0:
            raise_unhashable(&th, arr[bad])
    finally:
        free(th.scratch)
    return result


def hash_text_array(arr, seed=0):
    """Hash every string of a numpy ``U`` or ``S`` array with MurmurHash3 (64-bit half).

    Equal to :func:`hash_bytes_sequence` of ``arr.tolist()``: items lose their
    trailing NUL characters as numpy does, ``U`` items hash as their UTF-8.
    The whole loop runs without the GIL.

    Parameters
    ----------
    arr : ndarray of dtype U or S, 1-D
    seed : int, default=0
        Seed in ``[0, 2**32)``.

    Returns
    -------
    hashes : ndarray of uint64
    """
    return _hash_text(arr, ALGO_MURMUR3, _check_seed32(seed))


def text_keys_array(arr, seed=0):
    """:func:`text_keys` of every string of a numpy ``U`` or ``S`` array, without the GIL.

    Equal to :func:`text_keys` of ``arr.tolist()`` (trailing NULs dropped as
    numpy does; ``U`` items hash as their UTF-8).

    Parameters
    ----------
    arr : ndarray of dtype U or S, 1-D
    seed : int, default=0
        Seed in ``[0, 2**64)``.

    Returns
    -------
    keys : ndarray of uint64
    """
    return _hash_text(arr, ALGO_TEXT_KEY, _check_seed64(seed))
