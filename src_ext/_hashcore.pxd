# Inline hashing primitives shared by every Cython module of skpaper.
# cimport them with ``from _hashcore cimport _splitmix64, _murmur3_x64_128``.
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy


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
    k1 = 0
    k2 = 0
    if rem >= 15: k2 = k2 ^ (<uint64_t>tail[14] << 48)
    if rem >= 14: k2 = k2 ^ (<uint64_t>tail[13] << 40)
    if rem >= 13: k2 = k2 ^ (<uint64_t>tail[12] << 32)
    if rem >= 12: k2 = k2 ^ (<uint64_t>tail[11] << 24)
    if rem >= 11: k2 = k2 ^ (<uint64_t>tail[10] << 16)
    if rem >= 10: k2 = k2 ^ (<uint64_t>tail[9] << 8)
    if rem >= 9:
        k2 = k2 ^ (<uint64_t>tail[8])
        k2 = k2 * c2
        k2 = _rotl64(k2, 33)
        k2 = k2 * c1
        h2 = h2 ^ k2
    if rem >= 8: k1 = k1 ^ (<uint64_t>tail[7] << 56)
    if rem >= 7: k1 = k1 ^ (<uint64_t>tail[6] << 48)
    if rem >= 6: k1 = k1 ^ (<uint64_t>tail[5] << 40)
    if rem >= 5: k1 = k1 ^ (<uint64_t>tail[4] << 32)
    if rem >= 4: k1 = k1 ^ (<uint64_t>tail[3] << 24)
    if rem >= 3: k1 = k1 ^ (<uint64_t>tail[2] << 16)
    if rem >= 2: k1 = k1 ^ (<uint64_t>tail[1] << 8)
    if rem >= 1:
        k1 = k1 ^ (<uint64_t>tail[0])
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
