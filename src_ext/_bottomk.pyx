# cython: language_level=3, boundscheck=False, wraparound=False
"""Bottom-k (KMV) kernels: fused seeded hashing and selection of the k smallest hashes.

A sketch is a sorted array of at most ``k`` distinct 64-bit hashes. Ingestion
keeps a buffer of *candidates* (hashes below the current k-th smallest) and
folds it into the sketch when it fills: a sort of the buffer and one linear
merge. On a stream of distinct keys only about ``k * ln(n / k)`` hashes are ever
candidates, so the per-key cost is one hash and one comparison.
"""

import numpy as np

from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort
from libc.string cimport memcpy

from _hashcore cimport _splitmix64

__all__ = ["bottomk_update", "bottomk_merge", "bottomk_query"]

cdef uint64_t _UINT64_MAX = <uint64_t>0xFFFFFFFFFFFFFFFFULL


cdef int _cmp_u64(const void* a, const void* b) noexcept nogil:
    cdef uint64_t x = (<const uint64_t*>a)[0]
    cdef uint64_t y = (<const uint64_t*>b)[0]
    return (x > y) - (x < y)


cdef Py_ssize_t _merge_unique(const uint64_t* a, Py_ssize_t na,
                              const uint64_t* b, Py_ssize_t nb,
                              uint64_t* out, Py_ssize_t k) noexcept nogil:
    # Both inputs sorted ascending; the output holds the k smallest distinct values.
    cdef Py_ssize_t i = 0
    cdef Py_ssize_t j = 0
    cdef Py_ssize_t n = 0
    cdef uint64_t v
    while n < k and (i < na or j < nb):
        if j >= nb or (i < na and a[i] <= b[j]):
            v = a[i]
            i += 1
        else:
            v = b[j]
            j += 1
        if n == 0 or out[n - 1] != v:
            out[n] = v
            n += 1
    return n


cdef Py_ssize_t _flush(uint64_t* sk, Py_ssize_t ns, Py_ssize_t k,
                       uint64_t* buf, Py_ssize_t nb, uint64_t* tmp) noexcept nogil:
    qsort(buf, nb, sizeof(uint64_t), _cmp_u64)
    ns = _merge_unique(sk, ns, buf, nb, tmp, k)
    memcpy(sk, tmp, ns * sizeof(uint64_t))
    return ns


cdef Py_ssize_t _find(const uint64_t* arr, Py_ssize_t n, uint64_t v) noexcept nogil:
    # Index of v in the sorted arr, or -1.
    cdef Py_ssize_t lo = 0
    cdef Py_ssize_t hi = n
    cdef Py_ssize_t mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if arr[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    if lo < n and arr[lo] == v:
        return lo
    return -1


cdef Py_ssize_t _ingest(uint64_t* sk, Py_ssize_t ns, Py_ssize_t k,
                        const uint64_t* keys, Py_ssize_t n, uint64_t seed, bint do_hash,
                        const uint64_t* excl, Py_ssize_t n_excl,
                        unsigned char* seen, Py_ssize_t* n_hits,
                        uint64_t* buf, Py_ssize_t cap, uint64_t* tmp) noexcept nogil:
    # A hash equal to the current k-th smallest is already in the sketch, so
    # ``h < thr`` is the exact candidate test once the sketch is full.
    cdef uint64_t thr = sk[k - 1] if ns == k else _UINT64_MAX
    cdef bint full = ns == k
    cdef Py_ssize_t nb = 0
    cdef Py_ssize_t i
    cdef Py_ssize_t pos
    cdef uint64_t h
    for i in range(n):
        h = _splitmix64(keys[i] ^ seed) if do_hash else keys[i]
        if n_excl > 0:
            pos = _find(excl, n_excl, h)
            if pos >= 0:
                # seen[] counts each excluded key once, however often it repeats.
                if not seen[pos]:
                    seen[pos] = 1
                    n_hits[0] += 1
                continue
        if h < thr or not full:
            # A key already kept (frequent in streams with repeats, e.g. words) is
            # dropped here rather than filling the buffer with duplicates.
            if full and _find(sk, ns, h) >= 0:
                continue
            buf[nb] = h
            nb += 1
            if nb == cap:
                ns = _flush(sk, ns, k, buf, nb, tmp)
                nb = 0
                if ns == k:
                    full = True
                    thr = sk[k - 1]
    if nb > 0:
        ns = _flush(sk, ns, k, buf, nb, tmp)
    return ns


cdef Py_ssize_t _buffer_size(Py_ssize_t k) noexcept nogil:
    return k if k > 1024 else 1024


def bottomk_update(uint64_t[::1] sketch, Py_ssize_t size, const uint64_t[::1] keys,
                   uint64_t seed, bint do_hash=True):
    """Fold ``keys`` into a sorted bottom-k array, in place.

    Parameters
    ----------
    sketch : ndarray of uint64 of shape (k,)
        Sorted distinct hashes in ``sketch[:size]``; overwritten.
    size : int
        Number of valid entries of ``sketch``.
    keys : ndarray of uint64
        Keys (hashed with ``splitmix64(key ^ seed)``) or, with
        ``do_hash=False``, hashes.
    seed : int
        Hash seed in ``[0, 2**64)``.
    do_hash : bool, default=True

    Returns
    -------
    size : int
        The new number of valid entries.
    """
    cdef Py_ssize_t k = sketch.shape[0]
    cdef Py_ssize_t n = keys.shape[0]
    cdef Py_ssize_t cap = _buffer_size(k)
    cdef Py_ssize_t no_hits = 0
    cdef uint64_t* buf
    cdef uint64_t* tmp
    if n == 0 or k == 0:
        return size
    buf = <uint64_t*>malloc(cap * sizeof(uint64_t))
    tmp = <uint64_t*>malloc(k * sizeof(uint64_t))
    if buf == NULL or tmp == NULL:
        free(buf)
        free(tmp)
        raise MemoryError()
    with nogil:
        size = _ingest(&sketch[0], size, k, &keys[0], n, seed, do_hash,
                       NULL, 0, NULL, &no_hits, buf, cap, tmp)
    free(buf)
    free(tmp)
    return size


def bottomk_merge(uint64_t[::1] sketch, Py_ssize_t size,
                  const uint64_t[::1] other, Py_ssize_t other_size):
    """Merge the sorted ``other[:other_size]`` into ``sketch``, in place; return the size."""
    cdef Py_ssize_t k = sketch.shape[0]
    cdef uint64_t* tmp
    if other_size == 0 or k == 0:
        return size
    tmp = <uint64_t*>malloc(k * sizeof(uint64_t))
    if tmp == NULL:
        raise MemoryError()
    with nogil:
        size = _merge_unique(&sketch[0], size, &other[0], other_size, tmp, k)
        memcpy(&sketch[0], tmp, size * sizeof(uint64_t))
    free(tmp)
    return size


def bottomk_query(const uint64_t[::1] keys, uint64_t seed, Py_ssize_t k,
                  const uint64_t[::1] excluded):
    """Sketch a query over its keys that are not in ``excluded``.

    Parameters
    ----------
    keys : ndarray of uint64
        The query's keys (duplicates allowed).
    seed : int
        Hash seed in ``[0, 2**64)``.
    k : int
        Sketch size.
    excluded : ndarray of uint64
        Sorted hashes of keys kept out of the sketch (they are counted instead).

    Returns
    -------
    sketch : ndarray of uint64
        Sorted bottom-k of the hashes of the keys outside ``excluded``.
    n_excluded : int
        Number of distinct keys of the query whose hash is in ``excluded``.
    """
    cdef Py_ssize_t n = keys.shape[0]
    cdef Py_ssize_t n_excl = excluded.shape[0]
    cdef Py_ssize_t cap = _buffer_size(k)
    cdef Py_ssize_t size = 0
    cdef Py_ssize_t n_hits = 0
    cdef const uint64_t* excl_ptr = NULL
    cdef uint64_t* buf
    cdef uint64_t* tmp
    cdef unsigned char* seen
    out = np.empty(k, dtype=np.uint64)
    cdef uint64_t[::1] out_view = out
    if n == 0:
        return out[:0], 0
    if n_excl > 0:
        excl_ptr = &excluded[0]
    buf = <uint64_t*>malloc(cap * sizeof(uint64_t))
    tmp = <uint64_t*>malloc(k * sizeof(uint64_t))
    seen = <unsigned char*>calloc(n_excl if n_excl > 0 else 1, 1)
    if buf == NULL or tmp == NULL or seen == NULL:
        free(buf)
        free(tmp)
        free(seen)
        raise MemoryError()
    with nogil:
        size = _ingest(&out_view[0], 0, k, &keys[0], n, seed, True,
                       excl_ptr, n_excl, seen, &n_hits, buf, cap, tmp)
    free(buf)
    free(tmp)
    free(seen)
    return out[:size], n_hits
