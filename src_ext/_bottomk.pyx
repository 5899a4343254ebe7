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

from time import sleep as _sleep

cimport cython
from libc.stdint cimport uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

from _ingest cimport (
    _BLOCK, _find, _flush, _Ingest, _ingest_finish, _ingest_free, _ingest_init, _merge_unique,
    _offer_block, _take,
)

from _hashcore cimport (
    ALGO_TEXT_KEY, FixedText, PyBytes_CheckExact, PyList_GET_SIZE, PyObject,
    PyUnicode_CheckExact, TEXT_CHUNK, TextHasher, _splitmix64, fixed_text_init, hash_fixed,
    hash_list, hash_object, prefetch_item_ahead, raise_unhashable, skp_ucs4_key_short,
    text_hasher_init,
)

cdef extern from "Python.h":
    bint PyLong_CheckExact(object o)
    long long PyLong_AsLongLongAndOverflow(object o, int* overflow) except? -1
    unsigned long long PyLong_AsUnsignedLongLong(object o) except? -1

cdef enum:
    # Items per round of the fused U loop (hash, threshold, then the candidates).
    _FUSED = 64

__all__ = [
    "SketchState", "bottomk_update", "bottomk_update_text", "bottomk_update_text_array", "bottomk_merge",
    "bottomk_query",
]

cdef Py_ssize_t _ingest(_Ingest* st, const uint64_t* keys, Py_ssize_t n, uint64_t seed,
                        bint do_hash) noexcept nogil:
    cdef uint64_t hs[_BLOCK]
    cdef uint64_t cand[_BLOCK]
    cdef Py_ssize_t start, m, i
    start = 0
    while start < n:
        m = min(<Py_ssize_t>_BLOCK, n - start)
        if do_hash:
            for i in range(m):
                hs[i] = _splitmix64(keys[start + i] ^ seed)
            _offer_block(st, hs, m, cand)
        else:
            _offer_block(st, keys + start, m, cand)
        start += m
    return _ingest_finish(st)


cdef Py_ssize_t _ingest_ucs4_short(_Ingest* st, const TextHasher* th, const FixedText* ft,
                                   Py_ssize_t start, Py_ssize_t stop,
                                   uint64_t seed) noexcept nogil:
    # Hash and offer the U items [start, stop) in one pass while they take the
    # kernel of short ASCII items; returns the first item that does not (or
    # stop). Rounds of _FUSED items keep the prefetches of the items ahead in
    # flight while a round's candidates are taken, so the bottom-k upkeep
    # overlaps the memory stream (measured on <U27 words: about 0.85x the list
    # of str, against 0.78x with a separate pass over blocks of 512).
    cdef Py_ssize_t i, j, c, m
    cdef Py_ssize_t width = ft.width
    cdef Py_ssize_t units = width // 4
    cdef const uint8_t* p = ft.base + start * width
    cdef uint64_t k0 = th.k0
    cdef uint64_t k1 = th.k1
    cdef uint64_t h, lim
    cdef uint64_t cand[_FUSED]
    cdef bint declined = False
    i = start
    while i < stop and not declined:
        m = min(<Py_ssize_t>_FUSED, stop - i)
        lim = st.lim
        c = 0
        for j in range(m):
            prefetch_item_ahead(p, width)
            if not skp_ucs4_key_short(p, units, k0, k1, &h):
                declined = True
                m = j
                break
            h = _splitmix64(h ^ seed)
            cand[c] = h
            c += h <= lim
            p += width
        for j in range(c):
            # The threshold may drop at a flush within the round.
            if cand[j] <= st.lim:
                _take(st, cand[j])
        i += m
    return i


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


def bottomk_update_text_array(uint64_t[::1] sketch, Py_ssize_t size, arr, uint64_t seed):
    """Fold the strings of a 1-D contiguous numpy ``U`` or ``S`` array into a bottom-k array.

    The same as :func:`bottomk_update_text` of ``arr.tolist()`` (trailing NULs
    dropped as numpy does; ``U`` items hash as their UTF-8), in one loop
    without the GIL: each chunk is hashed (ASCII ``U`` items narrowed to bytes
    4 code points at a time) and folded into the sketch.

    Parameters
    ----------
    sketch : ndarray of uint64 of shape (k,)
        Sorted distinct hashes in ``sketch[:size]``; overwritten, also when an
        error is raised part-way (pass a copy to keep the original).
    size : int
        Number of valid entries of ``sketch``.
    arr : ndarray of dtype U (native byte order) or S, 1-D and C-contiguous
    seed : int
        Hash seed in ``[0, 2**64)``.

    Returns
    -------
    size : int
        The new number of valid entries.

    Raises
    ------
    ValueError
        If a ``U`` item has no UTF-8 form (a lone surrogate); the error is a
        ``UnicodeEncodeError``.
    """
    if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "US" or arr.ndim != 1 \
            or not arr.flags.c_contiguous or not arr.dtype.isnative:
        raise TypeError("arr must be a 1-D contiguous numpy U (native order) or S array.")
    cdef Py_ssize_t k = sketch.shape[0]
    cdef Py_ssize_t n = arr.shape[0]
    cdef Py_ssize_t width = arr.dtype.itemsize
    if n == 0 or k == 0:
        return size
    cdef const uint8_t[::1] raw = arr.view(np.uint8).reshape(-1) if width else \
        np.zeros(1, dtype=np.uint8)
    cdef Py_ssize_t start, stop, m, i
    cdef Py_ssize_t general = 1
    cdef Py_ssize_t bad = -1
    cdef int status = 0
    cdef bint ucs4 = arr.dtype.kind == "U"
    cdef TextHasher th
    cdef FixedText ft
    cdef _Ingest st
    cdef uint64_t hs[_BLOCK]
    cdef uint64_t cand[_BLOCK]
    if _ingest_init(&st, &sketch[0], size, k, n, NULL, 0) != 0:
        raise MemoryError()
    text_hasher_init(&th, ALGO_TEXT_KEY, seed)
    try:
        with nogil:
            status = fixed_text_init(&ft, &th, &raw[0], n, width, ucs4)
            if status == 0:
                start = 0
                while start < n:
                    if start < ft.short_hi and ucs4:
                        stop = _ingest_ucs4_short(&st, &th, &ft, start, ft.short_hi, seed)
                        if stop == n:
                            break
                        # The items from the one the short kernel declined go
                        # by the general path: one, and twice as many each time
                        # the next item is declined too (text that is mostly
                        # not ASCII then goes in blocks).
                        general = 1 if stop > start else min(2 * general, <Py_ssize_t>_BLOCK)
                        start = stop
                        m = min(general, n - start)
                    else:
                        m = min(<Py_ssize_t>_BLOCK, n - start)
                    bad = hash_fixed(&th, &ft, start, start + m, hs)
                    if bad >= 0:
                        break
                    for i in range(m):
                        hs[i] = _splitmix64(hs[i] ^ seed)
                    _offer_block(&st, hs, m, cand)
                    start += m
                size = _ingest_finish(&st)
        if status != 0:
            raise MemoryError()
        if bad >= 0:
            raise_unhashable(&th, arr[bad])
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



_NO_HASHES = np.zeros(0, dtype=np.uint64)


@cython.auto_pickle(False)
cdef class SketchState:
    """Hash array, lock and per-key buffer of a bottom-k sketch (base of ``BottomKSketch``).

    ``_hashes[:_size]`` holds the sorted kept hashes. Every change of them, and
    every read that must see a consistent sketch, runs between :meth:`_acquire`
    and :meth:`_release`, which hold this sketch's lock (the kernels write the
    array without the GIL). The lock is a flag read and set with the GIL held,
    so taking it uncontended costs no system call (builds with a GIL); a
    thread that finds it taken waits with the GIL released, so the holder can
    always finish. :meth:`update_one` buffers candidate hashes (those below
    the k-th smallest) and :meth:`_acquire` folds them in.
    """

    cdef bint _busy
    cdef object _arr
    cdef uint64_t* _ptr
    cdef Py_ssize_t _cap
    cdef public Py_ssize_t _size
    cdef public Py_ssize_t _k
    cdef object _mixed_obj
    cdef uint64_t _mix
    cdef TextHasher _th
    cdef uint64_t* _pend
    cdef Py_ssize_t _npend
    cdef Py_ssize_t _pcap

    def __cinit__(self, *args, **kwargs):
        self._arr = _NO_HASHES
        self._mixed_obj = 0
        text_hasher_init(&self._th, ALGO_TEXT_KEY, 0)

    def __dealloc__(self):
        free(self._pend)
        free(self._th.scratch)

    @property
    def _hashes(self):
        return self._arr

    @_hashes.setter
    def _hashes(self, arr):
        cdef uint64_t[::1] view = arr
        self._arr = arr
        self._cap = view.shape[0]
        self._ptr = &view[0] if self._cap else NULL

    @property
    def _mixed(self):
        return self._mixed_obj

    @_mixed.setter
    def _mixed(self, value):
        self._mix = <uint64_t>value
        self._mixed_obj = value
        free(self._th.scratch)
        text_hasher_init(&self._th, ALGO_TEXT_KEY, self._mix)

    def _acquire(self):
        """Take this sketch's lock and fold the buffered per-key hashes."""
        self._lock()
        try:
            self._fold()
        except BaseException:
            self._busy = False
            raise

    def _release(self):
        """Release the lock taken by :meth:`_acquire`."""
        self._busy = False

    cdef inline int _lock(self) except -1:
        # Check and set run with the GIL held, so no other thread comes between.
        if self._busy:
            self._wait()
        self._busy = True
        return 0

    cdef int _wait(self) except -1:
        # Sleeping releases the GIL, so the holder (whose kernel may need it) goes on.
        cdef double pause = 0.0
        while self._busy:
            _sleep(pause)
            pause = min(2 * pause + 1e-6, 1e-4)
        return 0

    def _reserve(self):
        """Grow the hash array to ``k`` entries (a deserialized sketch holds its payload only)."""
        if self._cap < self._k:
            full = np.zeros(self._k, dtype=np.uint64)
            full[: self._size] = self._arr[: self._size]
            self._hashes = full

    cdef int _fold(self) except -1:
        cdef uint64_t* tmp
        cdef uint64_t* sort_tmp
        if self._npend == 0:
            return 0
        self._reserve()
        tmp = <uint64_t*>malloc(self._k * sizeof(uint64_t))
        sort_tmp = <uint64_t*>malloc(self._npend * sizeof(uint64_t))
        if tmp == NULL or sort_tmp == NULL:
            free(tmp)
            free(sort_tmp)
            raise MemoryError()
        self._size = _flush(self._ptr, self._size, self._k, self._pend, self._npend, tmp,
                            sort_tmp)
        self._npend = 0
        free(tmp)
        free(sort_tmp)
        return 0

    cdef int _offer_one(self, uint64_t h) except -1:
        # Lock held. A candidate is below the k-th smallest kept hash; one
        # already kept (a frequent word) is found by a search of the sketch.
        if self._size == self._k and h >= self._ptr[self._k - 1]:
            return 0
        if self._size and _find(self._ptr, self._size, h) >= 0:
            return 0
        if self._pend == NULL:
            self._pcap = max(256, self._k // 8)
            self._pend = <uint64_t*>malloc(self._pcap * sizeof(uint64_t))
            if self._pend == NULL:
                raise MemoryError()
        elif self._npend == self._pcap:
            self._fold()
            if self._size == self._k and h >= self._ptr[self._k - 1]:
                return 0
        self._pend[self._npend] = h
        self._npend += 1
        return 0

    def update_one(self, key):
        """Add one key to the sketch (the per-key path of a streaming loop).

        The same as ``update([key])``, in one call without building a list:
        ``int``, ``str`` and ``bytes`` keys are hashed here, any other key
        goes through :meth:`update`. Safe to call from several threads.

        Parameters
        ----------
        key : int, str, bytes or other key accepted by :meth:`update`

        Returns
        -------
        self : BottomKSketch
            This sketch, with the key added.

        Raises
        ------
        ValueError
            If an integer key does not fit in 64 bits, or as :meth:`update`
            for the other key types (the sketch is then left unchanged).

        Examples
        --------
        >>> from skpaper.sketch import BottomKSketch
        >>> sketch = BottomKSketch(k=64)
        >>> for word in ["to", "be", "or", "not", "to", "be"]:
        ...     _ = sketch.update_one(word)
        >>> sketch.estimate()
        4.0
        """
        cdef int overflow = 0
        cdef long long v
        cdef uint64_t x
        if PyLong_CheckExact(key):
            v = PyLong_AsLongLongAndOverflow(key, &overflow)
            if overflow == 0:
                x = <uint64_t>v
            elif overflow > 0:
                try:
                    x = <uint64_t>PyLong_AsUnsignedLongLong(key)
                except OverflowError:
                    raise ValueError(f"keys must fit in 64 bits, got {key}.") from None
            else:
                raise ValueError(f"keys must fit in 64 bits, got {key}.")
        elif PyUnicode_CheckExact(<PyObject*>key) or PyBytes_CheckExact(<PyObject*>key):
            self._lock()
            try:
                hash_object(&self._th, key, &x)
                self._offer_one(_splitmix64(x ^ self._mix))
            finally:
                self._busy = False
            return self
        else:
            return self.update([key])
        self._lock()
        try:
            self._offer_one(_splitmix64(x ^ self._mix))
        finally:
            self._busy = False
        return self
