# cython: language_level=3, boundscheck=False, wraparound=False
"""Hashes of numpy 2 ``StringDType`` arrays, read through numpy's string API.

Built against the numpy 2.0 C API (it is only imported when such an array
arrives, so numpy 1.x installs never load it).

Short strings (at most 15 bytes, most words) sit inside the array's 16-byte
items, after numpy's small-string optimisation: the bytes, then one byte of
flags and size. That layout is numpy's own, not its API, so this module reads
it directly only after checking, when it is imported, that every string of a
probe array decodes the same as through ``NpyString_load``; any other item,
and every item when the check fails, goes through ``NpyString_load``.
"""

import numpy as np

cimport numpy as cnp
from libc.stdint cimport uint8_t, uint32_t, uint64_t

from _hashcore cimport (
    ALGO_MURMUR3, ALGO_TEXT_KEY, TextHasher, _splitmix64, hash_raw, skp_text_key_in16,
    text_hasher_init,
)
from _ingest cimport _BLOCK, _Ingest, _ingest_finish, _ingest_free, _ingest_init, _offer_block

cnp.import_array()

__all__ = ["bottomk_update_string_dtype", "hash_string_dtype_array", "string_dtype_keys"]


cdef extern from "numpy/ndarraytypes.h":
    ctypedef struct npy_packed_static_string:
        pass
    ctypedef struct npy_static_string:
        size_t size
        const char* buf
    ctypedef struct npy_string_allocator:
        pass
    ctypedef struct PyArray_StringDTypeObject:
        pass

cdef extern from "numpy/arrayobject.h":
    npy_string_allocator* NpyString_acquire_allocator(const PyArray_StringDTypeObject* descr)
    void NpyString_release_allocator(npy_string_allocator* allocator) nogil
    int NpyString_load(npy_string_allocator* allocator, const npy_packed_static_string* packed,
                       npy_static_string* unpacked) nogil


cdef enum:
    # Item size of StringDType, and the inline (short) form's last byte: flags
    # in the high nibble, the size in the low one.
    _PACKED_SIZE = 16
    _SHORT_FLAGS = 0x60
    _NO_INLINE = 0x100   # a flags value no byte has: the direct read is off


cdef int _short_flags = _NO_INLINE


cdef inline int _load(npy_string_allocator* allocator, const uint8_t* item,
                      npy_static_string* view, int short_flags) noexcept nogil:
    # The item's bytes in ``view``: from the item itself (returning 2) when it is
    # a short string in the checked layout, else through numpy (0; 1 or -1 for
    # a missing string or an error).
    cdef uint8_t last = item[_PACKED_SIZE - 1]
    if (last & 0xF0) == short_flags:
        view.size = last & 0x0F
        view.buf = <const char*>item
        return 2
    return NpyString_load(allocator, <const npy_packed_static_string*>item, view)


cdef inline int _item_hash(const TextHasher* th, npy_string_allocator* allocator,
                           const uint8_t* item, int short_flags, uint64_t* out) noexcept nogil:
    # *out = hash_raw of the item's bytes; -1 for a missing string. Inline
    # strings (their buffer is the 16-byte item, all readable) are hashed in
    # registers for the text key.
    cdef npy_static_string view
    cdef int status = _load(allocator, item, &view, short_flags)
    if status == 2 and th.algo == ALGO_TEXT_KEY:
        out[0] = skp_text_key_in16(item, <Py_ssize_t>view.size, th.k0, th.k1)
        return 0
    if status != 0 and status != 2:
        return -1
    out[0] = hash_raw(th, <const uint8_t*>view.buf, <Py_ssize_t>view.size)
    return 0


def _check_inline_layout(bint enable=True):
    # Turn the direct read on when it agrees with NpyString_load on a probe array
    # (every length 0..16, ASCII and not, and a missing string); off with
    # ``enable=False``. Returns whether it is on.
    global _short_flags
    cdef cnp.ndarray arr
    cdef npy_string_allocator* allocator
    cdef npy_static_string ours, theirs
    cdef const uint8_t* item
    cdef Py_ssize_t i
    cdef int status_ours, status_theirs
    cdef bint agree = True
    cdef Py_ssize_t n_inline = 0
    _short_flags = _NO_INLINE
    if not enable:
        return False
    dtype = np.dtypes.StringDType(na_object=None)
    probe = ["abcdefghijklmnop"[:n] for n in range(17)] + ["\u00e9" * n for n in range(9)]
    arr = np.array(probe + [None], dtype=dtype)
    if arr.dtype.itemsize != _PACKED_SIZE:
        return False
    allocator = NpyString_acquire_allocator(
        <const PyArray_StringDTypeObject*>cnp.PyArray_DESCR(arr))
    for i in range(arr.shape[0]):
        item = <const uint8_t*>cnp.PyArray_DATA(arr) + i * _PACKED_SIZE
        status_theirs = NpyString_load(allocator, <const npy_packed_static_string*>item, &theirs)
        status_ours = _load(allocator, item, &ours, _SHORT_FLAGS)
        if status_ours == 2:
            status_ours = 0
        if (item[_PACKED_SIZE - 1] & 0xF0) == _SHORT_FLAGS:
            n_inline += 1
        if status_ours != status_theirs or (status_ours == 0 and (
                ours.size != theirs.size
                or bytes(ours.buf[:ours.size]) != bytes(theirs.buf[:theirs.size]))):
            agree = False
    NpyString_release_allocator(allocator)
    # The strings of 1..15 bytes must all have been inline.
    if agree and n_inline >= 15 + 7:
        _short_flags = _SHORT_FLAGS
    return _short_flags == _SHORT_FLAGS


_check_inline_layout()


cdef object _hash_string_dtype(cnp.ndarray arr, int algo, uint64_t seed):
    if arr.dtype.kind != "T" or arr.ndim != 1 or not arr.flags.c_contiguous:
        raise TypeError("arr must be a 1-D contiguous StringDType array.")
    cdef Py_ssize_t n = arr.shape[0]
    cdef Py_ssize_t width = arr.dtype.itemsize
    cdef char* base = <char*>cnp.PyArray_DATA(arr)
    cdef npy_string_allocator* allocator
    cdef TextHasher th
    cdef Py_ssize_t i
    cdef Py_ssize_t bad = -1
    cdef int short_flags = _short_flags
    result = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] res = result
    text_hasher_init(&th, algo, seed)
    allocator = NpyString_acquire_allocator(
        <const PyArray_StringDTypeObject*>cnp.PyArray_DESCR(arr))
    with nogil:
        for i in range(n):
            if _item_hash(&th, allocator, <const uint8_t*>base + i * width, short_flags,
                          &res[i]) != 0:
                bad = i
                break
        NpyString_release_allocator(allocator)
    if bad >= 0:
        raise ValueError(f"keys must not hold missing strings, got one at position {bad}.")
    return result


def hash_string_dtype_array(cnp.ndarray arr, uint32_t seed):
    """Hash each item of a 1-D ``StringDType`` array (its UTF-8 bytes) with MurmurHash3.

    Parameters
    ----------
    arr : ndarray of numpy.dtypes.StringDType, 1-D and contiguous
    seed : int
        Seed in ``[0, 2**32)``.

    Returns
    -------
    hashes : ndarray of uint64

    Raises
    ------
    ValueError
        If an item is missing (the dtype's ``na_object``).
    """
    return _hash_string_dtype(arr, ALGO_MURMUR3, seed)


def string_dtype_keys(cnp.ndarray arr, uint64_t seed):
    """The sketch's text-key hash of each item of a 1-D ``StringDType`` array.

    Equal to ``skpaper._ext._hashing.text_keys`` of the same strings.

    Parameters
    ----------
    arr : ndarray of numpy.dtypes.StringDType, 1-D and contiguous
    seed : int
        Seed in ``[0, 2**64)``.

    Returns
    -------
    keys : ndarray of uint64

    Raises
    ------
    ValueError
        If an item is missing (the dtype's ``na_object``).
    """
    return _hash_string_dtype(arr, ALGO_TEXT_KEY, seed)


def bottomk_update_string_dtype(uint64_t[::1] sketch, Py_ssize_t size, cnp.ndarray arr,
                                uint64_t seed):
    """Fold a 1-D ``StringDType`` array into a sorted bottom-k array, in place.

    The same as ``skpaper._ext._bottomk.bottomk_update`` of
    :func:`string_dtype_keys` ``(arr, seed)``, in one loop without the GIL and
    without the intermediate array.

    Parameters
    ----------
    sketch : ndarray of uint64 of shape (k,)
        Sorted distinct hashes in ``sketch[:size]``; overwritten, also when an
        error is raised part-way (pass a copy to keep the original).
    size : int
        Number of valid entries of ``sketch``.
    arr : ndarray of numpy.dtypes.StringDType, 1-D and contiguous
    seed : int
        Hash seed in ``[0, 2**64)``.

    Returns
    -------
    size : int

    Raises
    ------
    ValueError
        If an item is missing (the dtype's ``na_object``).
    """
    if arr.dtype.kind != "T" or arr.ndim != 1 or not arr.flags.c_contiguous:
        raise TypeError("arr must be a 1-D contiguous StringDType array.")
    cdef Py_ssize_t k = sketch.shape[0]
    cdef Py_ssize_t n = arr.shape[0]
    cdef Py_ssize_t width = arr.dtype.itemsize
    cdef char* base = <char*>cnp.PyArray_DATA(arr)
    cdef npy_string_allocator* allocator
    cdef TextHasher th
    cdef _Ingest st
    cdef uint64_t hs[_BLOCK]
    cdef uint64_t cand[_BLOCK]
    cdef Py_ssize_t start, m, i
    cdef Py_ssize_t bad = -1
    cdef int short_flags = _short_flags
    if n == 0 or k == 0:
        return size
    if _ingest_init(&st, &sketch[0], size, k, n, NULL, 0) != 0:
        raise MemoryError()
    text_hasher_init(&th, ALGO_TEXT_KEY, seed)
    allocator = NpyString_acquire_allocator(
        <const PyArray_StringDTypeObject*>cnp.PyArray_DESCR(arr))
    with nogil:
        start = 0
        while start < n and bad < 0:
            m = min(<Py_ssize_t>_BLOCK, n - start)
            for i in range(m):
                if _item_hash(&th, allocator, <const uint8_t*>base + (start + i) * width,
                              short_flags, &hs[i]) != 0:
                    bad = start + i
                    break
                hs[i] = _splitmix64(hs[i] ^ seed)
            if bad < 0:
                _offer_block(&st, hs, m, cand)
            start += m
        NpyString_release_allocator(allocator)
        if bad < 0:
            size = _ingest_finish(&st)
        _ingest_free(&st)
    if bad >= 0:
        raise ValueError(f"keys must not hold missing strings, got one at position {bad}.")
    return size
