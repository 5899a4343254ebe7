# Bottom-k upkeep shared by the sketch kernels (cimported by _bottomk and _strings).
#
# A sketch is a sorted array of at most ``k`` distinct 64-bit hashes. Ingestion
# keeps a buffer of *candidates* (hashes below the current k-th smallest) and
# folds it into the sketch when it fills: a sort of the buffer and one linear
# merge. A repeated candidate is dropped by a hash-set lookup before it reaches
# the buffer.
from libc.stdint cimport uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset


cdef inline void _insertion_sort(uint64_t* a, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i, j
    cdef uint64_t v
    for i in range(1, n):
        v = a[i]
        j = i
        while j > 0 and a[j - 1] > v:
            a[j] = a[j - 1]
            j -= 1
        a[j] = v


cdef inline void _sort_u64(uint64_t* a, Py_ssize_t n, uint64_t* scratch) noexcept nogil:
    # Ascending sort of a[:n] (scratch: room for n values). A radix sort of one
    # byte per pass; the byte histograms come from one read, and passes whose
    # byte is the same in every value are skipped (candidates lie below the
    # threshold, so their top bytes are mostly zero). Several times faster than
    # qsort, whose comparisons go through a function pointer.
    cdef uint32_t counts[8][256]
    cdef uint64_t differ = 0
    cdef uint64_t v
    cdef uint64_t* src = a
    cdef uint64_t* dst = scratch
    cdef uint64_t* swap
    cdef Py_ssize_t i
    cdef uint32_t total, c
    cdef int d, b, shift
    if n <= 32:
        _insertion_sort(a, n)
        return
    memset(counts, 0, sizeof(counts))
    for i in range(n):
        v = a[i]
        differ |= v ^ a[0]
        counts[0][v & 255] += 1
        counts[1][(v >> 8) & 255] += 1
        counts[2][(v >> 16) & 255] += 1
        counts[3][(v >> 24) & 255] += 1
        counts[4][(v >> 32) & 255] += 1
        counts[5][(v >> 40) & 255] += 1
        counts[6][(v >> 48) & 255] += 1
        counts[7][v >> 56] += 1
    for d in range(8):
        shift = 8 * d
        if (differ >> shift) & 255 == 0:
            continue
        total = 0
        for b in range(256):
            c = counts[d][b]
            counts[d][b] = total
            total += c
        for i in range(n):
            v = src[i]
            b = <int>((v >> shift) & 255)
            dst[counts[d][b]] = v
            counts[d][b] += 1
        swap = src
        src = dst
        dst = swap
    if src != a:
        memcpy(a, src, n * sizeof(uint64_t))


cdef inline Py_ssize_t _merge_unique(const uint64_t* a, Py_ssize_t na,
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


cdef inline Py_ssize_t _flush(uint64_t* sk, Py_ssize_t ns, Py_ssize_t k,
                       uint64_t* buf, Py_ssize_t nb, uint64_t* tmp,
                       uint64_t* sort_tmp) noexcept nogil:
    _sort_u64(buf, nb, sort_tmp)
    ns = _merge_unique(sk, ns, buf, nb, tmp, k)
    memcpy(sk, tmp, ns * sizeof(uint64_t))
    return ns


cdef inline Py_ssize_t _find(const uint64_t* arr, Py_ssize_t n, uint64_t v) noexcept nogil:
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


cdef enum:
    # Sketches up to this size deduplicate candidates with a hash set of their
    # hashes (open addressing, at most 3/4 full); larger ones search the sorted
    # sketch. The set is built only for updates of at least a quarter of its size.
    _TABLE_MAX_K = 65536
    # Hashes per block of the branch-free threshold test (one text chunk).
    _BLOCK = 512


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
    uint64_t* sort_tmp   # scratch of the candidates' sort (cap values)
    uint64_t* table      # hashes already taken (0: empty slot), or NULL
    uint64_t mask
    Py_ssize_t n_table
    bint zero_in         # hash 0 (no slot) was taken
    const uint64_t* excl # sorted hashes counted instead of sketched
    Py_ssize_t n_excl
    unsigned char* seen
    Py_ssize_t n_hits


cdef inline bint _remember_slow(_Ingest* st, uint64_t h) noexcept nogil:
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


cdef inline void _rebuild_table(_Ingest* st) noexcept nogil:
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


cdef inline void _flush_state(_Ingest* st) noexcept nogil:
    if st.nb == 0:
        return
    st.ns = _flush(st.sk, st.ns, st.k, st.buf, st.nb, st.tmp, st.sort_tmp)
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


cdef inline void _offer_block(_Ingest* st, const uint64_t* hs, Py_ssize_t m,
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


cdef inline int _ingest_init(_Ingest* st, uint64_t* sk, Py_ssize_t ns, Py_ssize_t k,
                      Py_ssize_t n_keys, const uint64_t* excl, Py_ssize_t n_excl) noexcept nogil:
    # -1 when out of memory (nothing left allocated).
    cdef Py_ssize_t slots
    memset(st, 0, sizeof(_Ingest))
    st.sk = sk
    st.ns = ns
    st.k = k
    st.lim = sk[k - 1] - 1 if ns == k else <uint64_t>0xFFFFFFFFFFFFFFFFULL
    st.cap = k // 4 if k > 4096 else 1024
    st.buf = <uint64_t*>malloc(st.cap * sizeof(uint64_t))
    st.tmp = <uint64_t*>malloc(k * sizeof(uint64_t))
    st.sort_tmp = <uint64_t*>malloc(st.cap * sizeof(uint64_t))
    st.excl = excl
    st.n_excl = n_excl
    st.seen = <unsigned char*>calloc(n_excl if n_excl > 0 else 1, 1)
    if st.buf == NULL or st.tmp == NULL or st.sort_tmp == NULL or st.seen == NULL:
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


cdef inline Py_ssize_t _ingest_finish(_Ingest* st) noexcept nogil:
    _flush_state(st)
    return st.ns


cdef inline void _ingest_free(_Ingest* st) noexcept nogil:
    free(st.buf)
    free(st.tmp)
    free(st.sort_tmp)
    free(st.seen)
    free(st.table)
    st.buf = NULL
    st.tmp = NULL
    st.sort_tmp = NULL
    st.seen = NULL
    st.table = NULL
