# Inline hashing primitives shared by every Cython module of skpaper.
# cimport them with ``from _hashcore cimport _splitmix64, _murmur3_x64_128``.
# The text-key hash of the sketch (skp_text_key) is written in C, in _skhash.h.
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport realloc
from libc.string cimport memcpy, memset


cdef extern from "_skhash.h":
    uint64_t skp_load64(const uint8_t* p) noexcept nogil
    uint64_t skp_load_partial(const uint8_t* p, Py_ssize_t r) noexcept nogil
    uint64_t skp_text_key(const uint8_t* p, Py_ssize_t n, uint64_t k0, uint64_t k1) noexcept nogil
    uint64_t skp_text_key_padded(const uint8_t* p, Py_ssize_t n, uint64_t k0,
                                 uint64_t k1) noexcept nogil
    void skp_text_seeds(uint64_t seed, uint64_t* k0, uint64_t* k1) noexcept nogil
    void SKP_PREFETCH(const void* p) noexcept nogil
    Py_ssize_t skp_trim_nul_padded(const uint8_t* p, Py_ssize_t n) noexcept nogil
    Py_ssize_t skp_ucs4_narrow_ascii(const uint8_t* p, Py_ssize_t units, uint8_t* out) noexcept nogil
    int skp_ucs4_key_short(const uint8_t* p, Py_ssize_t units, uint64_t k0, uint64_t k1,
                           uint64_t* out) noexcept nogil
    int skp_bytes_key_short(const uint8_t* p, Py_ssize_t width, uint64_t k0, uint64_t k1,
                            uint64_t* out) noexcept nogil
    uint64_t skp_text_key_in16(const uint8_t* p, Py_ssize_t m, uint64_t k0,
                               uint64_t k1) noexcept nogil


cdef inline uint64_t _splitmix64(uint64_t x) noexcept nogil:
    # Constants from Steele, Lea & Flood (2014), "Fast splittable PRNGs".
    x = x + <uint64_t>0x9E3779B97F4A7C15ULL
    x = (x ^ (x >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    x = (x ^ (x >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return x ^ (x >> 31)


cdef inline uint64_t _rotl64(uint64_t x, int r) noexcept nogil:
    return (x << r) | (x >> (64 - r))


cdef inline uint64_t _fmix64(uint64_t k) noexcept nogil:
    k = k ^ (k >> 33)
    k = k * <uint64_t>0xFF51AFD7ED558CCDULL
    k = k ^ (k >> 33)
    k = k * <uint64_t>0xC4CEB9FE1A85EC53ULL
    return k ^ (k >> 33)


cdef inline void _murmur3_x64_128(const uint8_t* data, Py_ssize_t length, uint32_t seed,
                           uint64_t* out) noexcept nogil:
    cdef Py_ssize_t nblocks = length // 16
    cdef uint64_t h1 = seed
    cdef uint64_t h2 = seed
    cdef uint64_t c1 = <uint64_t>0x87C37B91114253D5ULL
    cdef uint64_t c2 = <uint64_t>0x4CF5AD432745937FULL
    cdef uint64_t k1, k2
    cdef Py_ssize_t i
    cdef const uint8_t* tail
    cdef Py_ssize_t rem

    for i in range(nblocks):
        # Little-endian block reads; memcpy avoids unaligned access.
        memcpy(&k1, data + 16 * i, 8)
        memcpy(&k2, data + 16 * i + 8, 8)

        k1 = k1 * c1
        k1 = _rotl64(k1, 31)
        k1 = k1 * c2
        h1 = h1 ^ k1
        h1 = _rotl64(h1, 27)
        h1 = h1 + h2
        h1 = h1 * 5 + 0x52DCE729

        k2 = k2 * c2
        k2 = _rotl64(k2, 33)
        k2 = k2 * c1
        h2 = h2 ^ k2
        h2 = _rotl64(h2, 31)
        h2 = h2 + h1
        h2 = h2 * 5 + 0x38495AB5

    tail = data + nblocks * 16
    rem = length & 15
    # The tail as two little-endian words, loaded without reading past the end.
    # A zero word mixes to zero, so mixing both unconditionally gives the same
    # result as the reference's byte-by-byte tail without its length branches.
    if rem >= 8:
        k1 = skp_load64(tail)
        k2 = skp_load_partial(tail + 8, rem - 8)
    else:
        k1 = skp_load_partial(tail, rem)
        k2 = 0
    k2 = k2 * c2
    k2 = _rotl64(k2, 33)
    k2 = k2 * c1
    h2 = h2 ^ k2
    k1 = k1 * c1
    k1 = _rotl64(k1, 31)
    k1 = k1 * c2
    h1 = h1 ^ k1

    h1 = h1 ^ <uint64_t>length
    h2 = h2 ^ <uint64_t>length
    h1 = h1 + h2
    h2 = h2 + h1
    h1 = _fmix64(h1)
    h2 = _fmix64(h2)
    h1 = h1 + h2
    h2 = h2 + h1
    out[0] = h1
    out[1] = h2


cdef inline Py_ssize_t _utf8_encode(int kind, const void* data, Py_ssize_t n,
                                    uint8_t* out) noexcept nogil:
    # UTF-8 of n code points stored with ``kind`` bytes each (1, 2 or 4, as in
    # CPython's PEP 393 strings and numpy's UCS4 arrays); -1 on a surrogate or a
    # value beyond U+10FFFF, which have no UTF-8 form.
    cdef Py_ssize_t i
    cdef Py_ssize_t j = 0
    cdef uint32_t cp
    for i in range(n):
        if kind == 1:
            cp = (<const uint8_t*>data)[i]
        elif kind == 2:
            cp = (<const uint16_t*>data)[i]
        else:
            cp = (<const uint32_t*>data)[i]
        if cp < 0x80:
            out[j] = <uint8_t>cp
            j += 1
        elif cp < 0x800:
            out[j] = <uint8_t>(0xC0 | (cp >> 6))
            out[j + 1] = <uint8_t>(0x80 | (cp & 0x3F))
            j += 2
        elif cp < 0x10000:
            if 0xD800 <= cp <= 0xDFFF:
                return -1
            out[j] = <uint8_t>(0xE0 | (cp >> 12))
            out[j + 1] = <uint8_t>(0x80 | ((cp >> 6) & 0x3F))
            out[j + 2] = <uint8_t>(0x80 | (cp & 0x3F))
            j += 3
        elif cp <= 0x10FFFF:
            out[j] = <uint8_t>(0xF0 | (cp >> 18))
            out[j + 1] = <uint8_t>(0x80 | ((cp >> 12) & 0x3F))
            out[j + 2] = <uint8_t>(0x80 | ((cp >> 6) & 0x3F))
            out[j + 3] = <uint8_t>(0x80 | (cp & 0x3F))
            j += 4
        else:
            return -1
    return j


# ---------------------------------------------------------------------------
# Text keys: str/bytes items hashed from their buffers.

cdef extern from "Python.h":
    ctypedef struct PyObject
    bint PyUnicode_Check(PyObject* o) noexcept nogil
    bint PyUnicode_CheckExact(PyObject* o) noexcept nogil
    bint PyBytes_Check(PyObject* o) noexcept nogil
    bint PyBytes_CheckExact(PyObject* o) noexcept nogil
    bint PyUnicode_IS_COMPACT_ASCII(PyObject* o) noexcept nogil
    int PyUnicode_KIND(PyObject* o) noexcept nogil
    void* PyUnicode_DATA(PyObject* o) noexcept nogil
    Py_ssize_t PyUnicode_GET_LENGTH(PyObject* o) noexcept nogil
    char* PyBytes_AS_STRING(PyObject* o) noexcept nogil
    Py_ssize_t PyBytes_GET_SIZE(PyObject* o) noexcept nogil
    PyObject* PyList_GET_ITEM(PyObject* o, Py_ssize_t i) noexcept nogil
    Py_ssize_t PyList_GET_SIZE(PyObject* o) noexcept nogil

cdef enum:
    # Hash of a key's UTF-8 bytes: MurmurHash3 x64_128 (first half, 32-bit seed)
    # or the sketch's text-key hash (skp_text_key, 64-bit seed).
    ALGO_MURMUR3 = 0
    ALGO_TEXT_KEY = 1
    # Unit kind of bytes: raw bytes (UTF-8 already); PEP 393 kinds are 1, 2, 4.
    KIND_RAW = 0
    # List items hashed per chunk, and how far ahead their objects are fetched.
    TEXT_CHUNK = 512
    PREFETCH_AHEAD = 32
    # How far ahead fixed-width items are fetched (one hint per item, two for
    # items wider than a cache line). On a stream of <U27 words, in the one-pass
    # U loop, the U array ran at 0.75-0.78x the list of str with 1 KB, 0.80-0.90x
    # with 4 KB and 0.84-0.91x with 8 KB.
    PREFETCH_BYTES = 4096


cdef struct TextHasher:
    int algo
    uint32_t seed32
    uint64_t k0
    uint64_t k1
    uint8_t* scratch     # UTF-8 buffer at scratch + 8 (8 bytes of padding before it)
    Py_ssize_t cap       # usable bytes; -1: no UTF-8 form, -2: out of memory


cdef inline void text_hasher_init(TextHasher* th, int algo, uint64_t seed) noexcept nogil:
    th.algo = algo
    th.seed32 = <uint32_t>(seed & 0xFFFFFFFFULL)
    skp_text_seeds(seed, &th.k0, &th.k1)
    th.scratch = NULL
    th.cap = 0


cdef inline uint64_t hash_raw(const TextHasher* th, const uint8_t* data,
                              Py_ssize_t n) noexcept nogil:
    cdef uint64_t out[2]
    if th.algo == ALGO_TEXT_KEY:
        return skp_text_key(data, n, th.k0, th.k1)
    _murmur3_x64_128(data, n, th.seed32, out)
    return out[0]


cdef inline uint64_t hash_padded(const TextHasher* th, const uint8_t* data,
                                 Py_ssize_t n) noexcept nogil:
    # hash_raw of bytes with 8 readable bytes before ``data``.
    cdef uint64_t out[2]
    if th.algo == ALGO_TEXT_KEY:
        return skp_text_key_padded(data, n, th.k0, th.k1)
    _murmur3_x64_128(data, n, th.seed32, out)
    return out[0]


cdef inline int scratch_reserve(TextHasher* th, Py_ssize_t size) noexcept nogil:
    # Room for ``size`` bytes at th.scratch + 8; -1 (th.cap = -2) when out of memory.
    cdef uint8_t* grown
    if size <= th.cap:
        return 0
    grown = <uint8_t*>realloc(th.scratch, size + 72)
    if grown == NULL:
        th.cap = -2
        return -1
    memset(grown, 0, 8)
    th.scratch = grown
    th.cap = size + 64
    return 0


cdef inline uint64_t hash_units(TextHasher* th, const void* data, Py_ssize_t n,
                                int kind) noexcept nogil:
    # Hash of the UTF-8 of n units of ``kind`` bytes (or of n raw bytes inside a
    # Python object for KIND_RAW); 0 with th.cap < 0 on a code point without UTF-8 or a failed
    # allocation.
    cdef Py_ssize_t m
    if kind == KIND_RAW:
        return hash_padded(th, <const uint8_t*>data, n)
    if scratch_reserve(th, 4 * n) != 0:
        return 0
    m = _utf8_encode(kind, data, n, th.scratch + 8)
    if m < 0:
        th.cap = -1
        return 0
    return hash_padded(th, th.scratch + 8, m)


cdef inline int hash_object(TextHasher* th, object item, uint64_t* out) except -1:
    # *out = the hash of one key's UTF-8 bytes: any str or bytes-like object.
    cdef PyObject* o = <PyObject*>item
    cdef const uint8_t[::1] view
    if PyUnicode_Check(o):
        if PyUnicode_IS_COMPACT_ASCII(o):
            out[0] = hash_padded(th, <const uint8_t*>PyUnicode_DATA(o), PyUnicode_GET_LENGTH(o))
        else:
            out[0] = hash_units(th, PyUnicode_DATA(o), PyUnicode_GET_LENGTH(o),
                                PyUnicode_KIND(o))
            if th.cap < 0:
                raise_unhashable(th, item)
        return 0
    if PyBytes_Check(o):
        out[0] = hash_padded(th, <const uint8_t*>PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o))
        return 0
    if not isinstance(item, (bytearray, memoryview)):
        raise TypeError(f"keys must be bytes or str, got {type(item).__name__}.")
    view = memoryview(item).cast("B")
    out[0] = hash_raw(th, &view[0] if view.shape[0] > 0 else NULL, view.shape[0])
    return 0


cdef inline int hash_list(object lst, Py_ssize_t start, Py_ssize_t stop, TextHasher* th,
                          uint64_t* out) except -1:
    # out[j] = the hash of the UTF-8 bytes of the list item lst[start + j]. Runs with
    # the GIL, so the borrowed items cannot go away; each item is a separate
    # object (one cache miss each), so objects are fetched ahead.
    cdef PyObject* ahead
    cdef PyObject* o
    cdef Py_ssize_t i
    cdef Py_ssize_t size = PyList_GET_SIZE(<PyObject*>lst)
    for i in range(start, stop):
        if i + PREFETCH_AHEAD < size:
            ahead = PyList_GET_ITEM(<PyObject*>lst, i + PREFETCH_AHEAD)
            SKP_PREFETCH(ahead)
            SKP_PREFETCH(<const char*>ahead + 63)
        o = PyList_GET_ITEM(<PyObject*>lst, i)
        # The common case inline: an exact str of ASCII, or exact bytes.
        if PyUnicode_CheckExact(o) and PyUnicode_IS_COMPACT_ASCII(o):
            out[i - start] = hash_padded(th, <const uint8_t*>PyUnicode_DATA(o),
                                         PyUnicode_GET_LENGTH(o))
        elif PyBytes_CheckExact(o):
            out[i - start] = hash_padded(th, <const uint8_t*>PyBytes_AS_STRING(o),
                                         PyBytes_GET_SIZE(o))
        else:
            hash_object(th, <object>o, out + (i - start))
    return 0


cdef inline int raise_unhashable(TextHasher* th, object item) except -1:
    # After hash_units failed on ``item``.
    if th.cap == -2:
        raise MemoryError()
    # No UTF-8 form (a lone surrogate): let Python raise its UnicodeEncodeError.
    str(item).encode("utf-8")
    raise ValueError(f"keys hold a string without a UTF-8 encoding: {item!r}.")


# ---------------------------------------------------------------------------
# Fixed-width numpy text: U (UCS4) and S (bytes) items, padded with NULs.

cdef inline Py_ssize_t trim_nul(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    # Length of p[:n] without its trailing NUL bytes, 8 bytes at a time first
    # (fixed-width numpy items are mostly padding).
    cdef uint64_t w
    while n >= 8:
        memcpy(&w, p + n - 8, 8)
        if w != 0:
            break
        n -= 8
    while n > 0 and p[n - 1] == 0:
        n -= 1
    return n


cdef inline bint narrow_ascii(const uint32_t* cps, Py_ssize_t n, uint8_t* out) noexcept nogil:
    # UCS4 to bytes when every code point is ASCII (then UTF-8 is the same bytes).
    cdef Py_ssize_t i
    cdef uint32_t acc = 0
    for i in range(n):
        acc |= cps[i]
        out[i] = <uint8_t>cps[i]
    return acc < 0x80


cdef struct FixedText:
    const uint8_t* base  # n items of ``width`` bytes
    Py_ssize_t n
    Py_ssize_t width
    bint ucs4            # U (code points of 4 bytes) or S (bytes)
    Py_ssize_t lo        # items [lo, hi) take the fast path: for S, 8 bytes before
    Py_ssize_t hi        # the item can be read; for U, up to 12 bytes after it
    Py_ssize_t short_hi  # items [0, short_hi) may take the text-key kernels of short
                         # items (64 bytes from a U item, 16 from an S item can be
                         # read); 0 when the hash is not the text key


cdef inline int fixed_text_init(FixedText* ft, TextHasher* th, const uint8_t* base,
                                Py_ssize_t n, Py_ssize_t width, bint ucs4) noexcept nogil:
    # -1 when out of memory.
    cdef Py_ssize_t reach
    ft.base = base
    ft.n = n
    ft.width = width
    ft.ucs4 = ucs4
    if ucs4 and scratch_reserve(th, width + 16) != 0:
        return -1
    if width == 0:
        ft.lo = ft.hi = ft.short_hi = 0
        return 0
    ft.short_hi = 0
    if th.algo == ALGO_TEXT_KEY:
        reach = 64 if ucs4 else 16
        ft.short_hi = n - (reach + width - 1) // width + 1
        if ft.short_hi < 0:
            ft.short_hi = 0
    if ucs4:
        # The SIMD narrowing reads up to the item's width rounded up to 16 bytes.
        reach = (width + 15) // 16 * 16
        ft.lo = 0
        ft.hi = n - (reach + width - 1) // width + 1
        if ft.hi < 0:
            ft.hi = 0
        return 0
    ft.lo = (8 + width - 1) // width
    ft.hi = n
    return 0


cdef inline void prefetch_item_ahead(const uint8_t* p, Py_ssize_t width) noexcept nogil:
    # A hint PREFETCH_BYTES past the fixed-width item at p, and a second one for
    # items wider than a cache line: hints 64 and width - 64 bytes apart then
    # reach every line of a stream of items up to two lines wide.
    SKP_PREFETCH(p + PREFETCH_BYTES)
    if width > 64:
        SKP_PREFETCH(p + PREFETCH_BYTES + 64)


cdef inline Py_ssize_t hash_fixed(TextHasher* th, const FixedText* ft, Py_ssize_t start,
                                  Py_ssize_t stop, uint64_t* out) noexcept nogil:
    # out[j] = the hash of the UTF-8 of item start + j (trailing NULs dropped as
    # numpy does); -1, or the index of an item without UTF-8 (th.cap < 0).
    # The fields are copied to locals: stores to ``out`` could alias them, and
    # the compiler would reload them after every item.
    cdef Py_ssize_t i, m
    cdef Py_ssize_t width = ft.width
    cdef Py_ssize_t units = width // 4
    cdef Py_ssize_t lo = ft.lo
    cdef Py_ssize_t hi = ft.hi
    cdef Py_ssize_t short_hi = ft.short_hi
    cdef const uint8_t* base = ft.base
    cdef const uint8_t* p
    cdef uint8_t* buf = th.scratch + 8
    cdef uint64_t k0 = th.k0
    cdef uint64_t k1 = th.k1
    if ft.ucs4:
        for i in range(start, stop):
            p = base + i * width
            prefetch_item_ahead(p, width)
            if i < short_hi and skp_ucs4_key_short(p, units, k0, k1, out + (i - start)):
                continue
            if lo <= i < hi:
                m = skp_ucs4_narrow_ascii(p, units, buf)
                if m >= 0:
                    out[i - start] = hash_padded(th, buf, m)
                    continue
            m = (trim_nul(p, width) + 3) // 4
            if narrow_ascii(<const uint32_t*>p, m, buf):
                out[i - start] = hash_padded(th, buf, m)
            else:
                out[i - start] = hash_units(th, p, m, 4)
                if th.cap < 0:
                    return i
                buf = th.scratch + 8
        return -1
    for i in range(start, stop):
        p = base + i * width
        prefetch_item_ahead(p, width)
        if i < short_hi and skp_bytes_key_short(p, width, k0, k1, out + (i - start)):
            continue
        if lo <= i < hi:
            out[i - start] = hash_padded(th, p, skp_trim_nul_padded(p, width))
        else:
            out[i - start] = hash_raw(th, p, trim_nul(p, width))
    return -1
