# cython: language_level=3, boundscheck=False, wraparound=False
"""Hashes of numpy 2 ``StringDType`` arrays, read through numpy's string API.

Built against the numpy 2.0 C API (it is only imported when such an array
arrives, so numpy 1.x installs never load it).
"""

import numpy as np

cimport numpy as cnp
from libc.stdint cimport uint8_t, uint32_t, uint64_t

from _hashcore cimport (
    ALGO_MURMUR3, ALGO_TEXT_KEY, TextHasher, _splitmix64, hash_raw, text_hasher_init,
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


cdef object _hash_string_dtype(cnp.ndarray arr, int algo, uint64_t seed):
    if arr.dtype.kind != "T" or arr.ndim != 1 or not arr.flags.c_contiguous:
        raise TypeError("arr must be a 1-D contiguous StringDType array.")
    cdef Py_ssize_t n = arr.shape[0]
    cdef Py_ssize_t width = arr.dtype.itemsize
    cdef char* base = <char*>cnp.PyArray_DATA(arr)
    cdef npy_string_allocator* allocator
    cdef npy_static_string view
    cdef TextHasher th
    cdef Py_ssize_t i
    cdef Py_ssize_t bad = -1
    cdef int status
    result = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] res = result
    text_hasher_init(&th, algo, seed)
    allocator = NpyString_acquire_allocator(
        <const PyArray_StringDTypeObject*>cnp.PyArray_DESCR(arr))
    with nogil:
        for i in range(n):
            status = NpyString_load(
                allocator, <const npy_packed_static_string*>(base + i * width), &view)
            if status != 0:
                bad = i
                break
            res[i] = hash_raw(&th, <const uint8_t*>view.buf, <Py_ssize_t>view.size)
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
    cdef npy_static_string view
    cdef TextHasher th
    cdef _Ingest st
    cdef uint64_t hs[_BLOCK]
    cdef uint64_t cand[_BLOCK]
    cdef Py_ssize_t start, m, i
    cdef Py_ssize_t bad = -1
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
                if NpyString_load(allocator, <const npy_packed_static_string*>(
                        base + (start + i) * width), &view) != 0:
                    bad = start + i
                    break
                hs[i] = _splitmix64(hash_raw(&th, <const uint8_t*>view.buf,
                                             <Py_ssize_t>view.size) ^ seed)
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
