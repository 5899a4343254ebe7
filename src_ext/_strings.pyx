# cython: language_level=3, boundscheck=False, wraparound=False
"""MurmurHash3 of numpy 2 ``StringDType`` arrays, read through numpy's string API.

Built against the numpy 2.0 C API (it is only imported when such an array
arrives, so numpy 1.x installs never load it).
"""

import numpy as np

cimport numpy as cnp
from libc.stdint cimport uint8_t, uint32_t, uint64_t

from _hashcore cimport _murmur3_x64_128

cnp.import_array()

__all__ = ["hash_string_dtype_array"]


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
    if arr.dtype.kind != "T" or arr.ndim != 1 or not arr.flags.c_contiguous:
        raise TypeError("arr must be a 1-D contiguous StringDType array.")
    cdef Py_ssize_t n = arr.shape[0]
    cdef Py_ssize_t width = arr.dtype.itemsize
    cdef char* base = <char*>cnp.PyArray_DATA(arr)
    cdef npy_string_allocator* allocator
    cdef npy_static_string view
    cdef uint64_t out[2]
    cdef Py_ssize_t i
    cdef Py_ssize_t bad = -1
    cdef int status
    result = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] res = result
    allocator = NpyString_acquire_allocator(
        <const PyArray_StringDTypeObject*>cnp.PyArray_DESCR(arr))
    with nogil:
        for i in range(n):
            status = NpyString_load(
                allocator, <const npy_packed_static_string*>(base + i * width), &view)
            if status != 0:
                bad = i
                break
            _murmur3_x64_128(<const uint8_t*>view.buf, <Py_ssize_t>view.size, seed, out)
            res[i] = out[0]
        NpyString_release_allocator(allocator)
    if bad >= 0:
        raise ValueError(f"keys must not hold missing strings, got one at position {bad}.")
    return result
