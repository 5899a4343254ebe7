# cython: language_level=3, boundscheck=False, wraparound=False
"""Bottom-k (KMV) kernels: fused seeded hashing and selection of the k smallest hashes.

A sketch is a sorted array of at most ``k`` distinct 64-bit hashes. Ingestion
keeps a buffer of *candidates* (hashes below the current k-th smallest) and
folds it into the sketch when it fills: a sort of the buffer and one linear
merge. On a stream of distinct keys only about ``k * ln(n / k)`` hashes are ever
candidates, so the per-key cost is one hash and one comparison; a repeated
candidate (frequent words) is dropped by a hash-set lookup before it reaches
the buffer.
"""

import numpy as np

from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort
from libc.string cimport memcpy, memset

from _hashcore cimport (
    ALGO_TEXT_KEY, PyList_GET_SIZE, PyObject, TEXT_CHUNK, TextHasher, _splitmix64, hash_list,
    text_hasher_init,
)

__all__ = ["bottomk_update", "bottomk_update_text", "bottomk_merge", "bottomk_query"]

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


# Sketches up to this size deduplicate candidates with a hash set of their
# hashes (open addressing, at most 3/4 full); larger ones search the sorted
# sketch. The set is built only for updates of at least a quarter of its size.
DEF _TABLE_MAX_K = 65536
# Hashes per block of the branch-free threshold test (one text chunk).
DEF _BLOCK = 512


cdef struct _Ingest:
    uint64_t* sk         # sorted distinct hashes, sk[:ns]
    Py_ssize_t ns
    Py_ssize_t k
    uint64_t lim         # candidates are the hashes h <= lim: sk[k - 1] - 1 once
                         # full (a hash equal to sk[k - 1] is already kept), else all
    uint64_t* buf        # candidates not yet merged
    Py_ssize_t nb
    Py_ssize_t cap
    uint64_t* tmp
    uint64_t* table      # hashes already taken (0: empty slot), or NULL
    uint64_t mask
    Py_ssize_t n_table
    bint zero_in         # hash 0 (no slot) was taken
    const uint64_t* excl # sorted hashes counted instead of sketched
    Py_ssize_t n_excl
    unsigned char* seen
    Py_ssize_t n_hits


cdef bint _remember_slow(_Ingest* st, uint64_t h) noexcept nogil:
    if st.table == NULL:
        # Without a set, a key already kept (frequent in streams with repeats,
        # e.g. words) is dropped by a search of the sketch; before the sketch is
        # full, repeats are merged away at the flush.
        return not (st.ns == st.k and _find(st.sk, st.ns, h) >= 0)
    # h == 0, which has no slot.
    if st.zero_in:
        return False
    st.zero_in = True
    return True


cdef inline bint _remember(_Ingest* st, uint64_t h) noexcept nogil:
    # True the first time ``h`` is taken (since the set was last rebuilt).
    cdef uint64_t i, v
    cdef uint64_t* table = st.table
    if table == NULL or h == 0:
        return _remember_slow(st, h)
    i = h & st.mask
    while True:
        v = table[i]
        if v == h:
            return False
        if v == 0:
            break
        i = (i + 1) & st.mask
    table[i] = h
    st.n_table += 1
    return True


cdef void _rebuild_table(_Ingest* st) noexcept nogil:
    # Only candidates (hashes below the k-th smallest) are ever looked up, and
    # every candidate taken before is in the sketch or the buffer, so stale
    # entries above the threshold are harmless; the set is rebuilt from the
    # sketch before it gets 3/4 full.
    cdef Py_ssize_t i
    memset(st.table, 0, (st.mask + 1) * sizeof(uint64_t))
    st.n_table = 0
    st.zero_in = False
    for i in range(st.ns):
        _remember(st, st.sk[i])


cdef void _flush_state(_Ingest* st) noexcept nogil:
    if st.nb == 0:
        return
    st.ns = _flush(st.sk, st.ns, st.k, st.buf, st.nb, st.tmp)
    st.nb = 0
    if st.ns == st.k:
        st.lim = st.sk[st.k - 1] - 1
    if st.table != NULL and 4 * (st.n_table + st.cap) > 3 * <Py_ssize_t>(st.mask + 1):
        _rebuild_table(st)


cdef inline void _take(_Ingest* st, uint64_t h) noexcept nogil:
    # A candidate (h <= st.lim): buffered unless taken before.
    if not _remember(st, h):
        return
    st.buf[st.nb] = h
    st.nb += 1
    if st.nb == st.cap:
        _flush_state(st)


cdef inline void _offer(_Ingest* st, uint64_t h) noexcept nogil:
    cdef Py_ssize_t pos
    if st.n_excl > 0:
        pos = _find(st.excl, st.n_excl, h)
        if pos >= 0:
            # seen[] counts each excluded key once, however often it repeats.
            if not st.seen[pos]:
                st.seen[pos] = 1
                st.n_hits += 1
            return
    if h <= st.lim:
        _take(st, h)


cdef void _offer_block(_Ingest* st, const uint64_t* hs, Py_ssize_t m,
                       uint64_t* cand) noexcept nogil:
    # Offer m hashes. The threshold test, false for most keys and unpredictable,
    # is a branch-free compaction of the block's candidates; only they go on.
    cdef Py_ssize_t i
    cdef Py_ssize_t j = 0
    cdef uint64_t lim = st.lim
    if st.n_excl > 0:
        for i in range(m):
            _offer(st, hs[i])
        return
    for i in range(m):
        cand[j] = hs[i]
        j += hs[i] <= lim
    for i in range(j):
        # The threshold may have dropped at a flush within the block.
        if cand[i] <= st.lim:
            _take(st, cand[i])


cdef int _ingest_init(_Ingest* st, uint64_t* sk, Py_ssize_t ns, Py_ssize_t k,
                      Py_ssize_t n_keys, const uint64_t* excl, Py_ssize_t n_excl) noexcept nogil:
    # -1 when out of memory (nothing left allocated).
    cdef Py_ssize_t slots
    memset(st, 0, sizeof(_Ingest))
    st.sk = sk
    st.ns = ns
    st.k = k
    st.lim = sk[k - 1] - 1 if ns == k else _UINT64_MAX
    st.cap = k // 4 if k > 4096 else 1024
    st.buf = <uint64_t*>malloc(st.cap * sizeof(uint64_t))
    st.tmp = <uint64_t*>malloc(k * sizeof(uint64_t))
    st.excl = excl
    st.n_excl = n_excl
    st.seen = <unsigned char*>calloc(n_excl if n_excl > 0 else 1, 1)
    if st.buf == NULL or st.tmp == NULL or st.seen == NULL:
        _ingest_free(st)
        return -1
    if k <= _TABLE_MAX_K:
        slots = 64
        while 3 * slots < 4 * (k + st.cap):
            slots *= 2
        if 4 * n_keys >= slots:
            st.table = <uint64_t*>malloc(slots * sizeof(uint64_t))
            if st.table == NULL:
                _ingest_free(st)
                return -1
            st.mask = <uint64_t>(slots - 1)
            _rebuild_table(st)
    return 0


cdef Py_ssize_t _ingest_finish(_Ingest* st) noexcept nogil:
    _flush_state(st)
    return st.ns


cdef void _ingest_free(_Ingest* st) noexcept nogil:
    free(st.buf)
    free(st.tmp)
    free(st.seen)
    free(st.table)
    st.buf = NULL
    st.tmp = NULL
    st.seen = NULL
    st.table = NULL


cdef Py_ssize_t _ingest(_Ingest* st, const uint64_t* keys, Py_ssize_t n, uint64_t seed,
                        bint do_hash) noexcept nogil:
    cdef uint64_t hs[_BLOCK]
    cdef uint64_t cand[_BLOCK]
    cdef Py_ssize_t start, m, i
    for start in range(0, n, _BLOCK):
        m = min(_BLOCK, n - start)
        if do_hash:
            for i in range(m):
                hs[i] = _splitmix64(keys[start + i] ^ seed)
            _offer_block(st, hs, m, cand)
        else:
            _offer_block(st, keys + start, m, cand)
    return _ingest_finish(st)


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
    cdef _Ingest st
    cdef int status
    if n == 0 or k == 0:
        return size
    with nogil:
        status = _ingest_init(&st, &sketch[0], size, k, n, NULL, 0)
        if status == 0:
            size = _ingest(&st, &keys[0], n, seed, do_hash)
            _ingest_free(&st)
    if status != 0:
        raise MemoryError()
    return size


def bottomk_update_text(uint64_t[::1] sketch, Py_ssize_t size, list keys, uint64_t seed):
    """Fold a list of ``str``/``bytes`` keys into a sorted bottom-k array, in place.

    Every key ``x`` gets the hash ``splitmix64(text_key(x, seed) ^ seed)``, with
    ``text_key`` the text-key hash of its UTF-8 bytes
    (``skpaper._ext._hashing.text_keys``): the same as :func:`bottomk_update`
    of ``text_keys(keys, seed)``, without the intermediate array. Each chunk of
    the list is hashed with the GIL held (the items are borrowed) and folded
    into the sketch without it.

    Parameters
    ----------
    sketch : ndarray of uint64 of shape (k,)
        Sorted distinct hashes in ``sketch[:size]``; overwritten, also when an
        error is raised part-way (pass a copy to keep the original).
    size : int
        Number of valid entries of ``sketch``.
    keys : list of str, bytes, bytearray or memoryview
    seed : int
        Hash seed in ``[0, 2**64)``.

    Returns
    -------
    size : int
        The new number of valid entries.

    Raises
    ------
    TypeError
        If an item is not bytes-like or str.
    ValueError
        If a ``str`` has no UTF-8 form (a lone surrogate); the error is a
        ``UnicodeEncodeError``.
    """
    cdef Py_ssize_t k = sketch.shape[0]
    cdef Py_ssize_t n = len(keys)
    cdef Py_ssize_t start, stop, i, m
    cdef TextHasher th
    cdef _Ingest st
    cdef uint64_t hs[TEXT_CHUNK]
    cdef uint64_t cand[TEXT_CHUNK]
    if n == 0 or k == 0:
        return size
    if _ingest_init(&st, &sketch[0], size, k, n, NULL, 0) != 0:
        raise MemoryError()
    text_hasher_init(&th, ALGO_TEXT_KEY, seed)
    try:
        start = 0
        while start < n:
            # The list may change size while the GIL is released.
            stop = min(start + TEXT_CHUNK, PyList_GET_SIZE(<PyObject*>keys), n)
            if stop <= start:
                raise RuntimeError("keys changed size while being sketched.")
            m = stop - start
            hash_list(keys, start, stop, &th, hs)
            with nogil:
                for i in range(m):
                    hs[i] = _splitmix64(hs[i] ^ seed)
                _offer_block(&st, hs, m, cand)
            start = stop
        size = _ingest_finish(&st)
    finally:
        _ingest_free(&st)
        free(th.scratch)
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
    cdef Py_ssize_t size = 0
    cdef const uint64_t* excl_ptr = NULL
    cdef _Ingest st
    cdef int status
    out = np.empty(k, dtype=np.uint64)
    cdef uint64_t[::1] out_view = out
    if n == 0:
        return out[:0], 0
    if n_excl > 0:
        excl_ptr = &excluded[0]
    with nogil:
        status = _ingest_init(&st, &out_view[0], 0, k, n, excl_ptr, n_excl)
        if status == 0:
            size = _ingest(&st, &keys[0], n, seed, True)
            _ingest_free(&st)
    if status != 0:
        raise MemoryError()
    return out[:size], st.n_hits

