/* Byte-string keys of the bottom-k sketch: a seeded 64-bit hash for short keys.
 *
 * skp_text_key(p, n, k0, k1) compresses the n bytes at p into 64 bits with
 * one 64x64 -> 128-bit multiplication per 16 bytes, folded to 64 bits
 * (high half XOR low half). Keys of at most 16 bytes -- most words -- take a
 * single multiplication of at most two little-endian words that hold every
 * byte, and the length enters the second operand, so the operands determine
 * the key. The sketch mixes the result once more with splitmix64 (a
 * bijection), which gives the final avalanche.
 *
 * Byte order is fixed (little-endian loads), so a key hashes alike on every
 * platform.
 *
 * The keys k0 and k1 come from the sketch seed (skp_text_seeds), so an
 * analyst who does not know the seed cannot aim keys at a product of zero.
 */
#ifndef SKPAPER_SKHASH_H
#define SKPAPER_SKHASH_H

#include <stdint.h>
#include <string.h>
#if defined(_MSC_VER) && defined(_M_X64)
#include <intrin.h>
#endif

/* A hint to fetch the cache line at p (no effect where unsupported). */
#if defined(__GNUC__) || defined(__clang__)
#define SKP_PREFETCH(p) __builtin_prefetch((const void *)(p))
#else
#define SKP_PREFETCH(p) ((void)(p))
#endif

static inline uint64_t skp_fold_mul(uint64_t a, uint64_t b)
{
#if defined(__SIZEOF_INT128__)
    __uint128_t p = (__uint128_t)a * b;
    return (uint64_t)p ^ (uint64_t)(p >> 64);
#elif defined(_MSC_VER) && defined(_M_X64)
    uint64_t hi;
    uint64_t lo = _umul128(a, b, &hi);
    return lo ^ hi;
#else
    /* Schoolbook product of 32-bit halves: the same 128 bits. */
    uint64_t a_lo = a & 0xFFFFFFFFu, a_hi = a >> 32;
    uint64_t b_lo = b & 0xFFFFFFFFu, b_hi = b >> 32;
    uint64_t ll = a_lo * b_lo, lh = a_lo * b_hi, hl = a_hi * b_lo, hh = a_hi * b_hi;
    uint64_t mid = (ll >> 32) + (lh & 0xFFFFFFFFu) + (hl & 0xFFFFFFFFu);
    uint64_t lo = (ll & 0xFFFFFFFFu) | (mid << 32);
    uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
    return lo ^ hi;
#endif
}

static inline uint64_t skp_load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint64_t skp_load32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

/* Odd constants with balanced bits (the fractional parts of sqrt(2) and sqrt(3),
 * and the golden ratio used by splitmix64). */
#define SKP_C0 0x6A09E667F3BCC909ULL
#define SKP_C1 0xBB67AE8584CAA73BULL
#define SKP_CLEN 0x9E3779B97F4A7C15ULL

static inline uint64_t skp_splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* The two keys of skp_text_key under a (mixed) 64-bit sketch seed. */
static inline void skp_text_seeds(uint64_t seed, uint64_t *k0, uint64_t *k1)
{
    *k0 = skp_splitmix64(seed ^ SKP_C0);
    *k1 = skp_splitmix64(seed ^ SKP_C1);
}

/* Little-endian value of the r < 8 bytes at p, reading no byte past p + r. */
static inline uint64_t skp_load_partial(const uint8_t *p, Py_ssize_t r)
{
    if (r >= 4) {
        return skp_load32(p) | ((skp_load32(p + r - 4) >> (8 * (8 - r))) << 32);
    }
    if (r > 0) {
        uint64_t v = (uint64_t)p[0] | ((uint64_t)p[r >> 1] << 8) | ((uint64_t)p[r - 1] << 16);
        return v & ((1ULL << (8 * r)) - 1);
    }
    return 0;
}

/* Little-endian value of the n <= 8 bytes at p (zero-extended), reading no
 * byte outside [p, p + n). */
static inline uint64_t skp_load_upto8(const uint8_t *p, Py_ssize_t n)
{
    return n == 8 ? skp_load64(p) : skp_load_partial(p, n);
}

/* The same value when the 8 bytes before p may be read too (the header of a
 * Python str or bytes object, or padding): one load ending at p + n, whose
 * bytes before p are shifted out, and no branch on n. */
static inline uint64_t skp_load_upto8_padded(const uint8_t *p, Py_ssize_t n)
{
    uint64_t x = skp_load64(p + n - 8);
    return (x >> ((64 - 8 * n) & 63)) & (0 - (uint64_t)(n != 0));
}

static inline uint64_t skp_text_key_long(const uint8_t *p, Py_ssize_t n, uint64_t h,
                                         uint64_t k1)
{
    /* n > 16: 16-byte blocks while more than 16 bytes remain; the last
     * (possibly overlapping) 16 bytes close the chain. */
    const uint8_t *last = p + n - 16;
    while (p < last) {
        h = skp_fold_mul(skp_load64(p) ^ k1, skp_load64(p + 8) ^ h);
        p += 16;
    }
    return skp_fold_mul(skp_load64(last) ^ k1, skp_load64(last + 8) ^ h);
}

/* The text-key hash. With h = k0 ^ n * SKP_CLEN:
 *   n <= 8:       fold(a ^ k1, h), a the n bytes as a little-endian integer;
 *   8 < n <= 16:  fold(a ^ k1, b ^ h), a the first and b the last 8 bytes;
 *   n > 16:       a chain of folds over 16-byte blocks (skp_text_key_long). */
static inline uint64_t skp_text_key(const uint8_t *p, Py_ssize_t n, uint64_t k0, uint64_t k1)
{
    uint64_t h = k0 ^ ((uint64_t)n * SKP_CLEN);
    if (n <= 8) {
        return skp_fold_mul(skp_load_upto8(p, n) ^ k1, h);
    }
    if (n <= 16) {
        return skp_fold_mul(skp_load64(p) ^ k1, skp_load64(p + n - 8) ^ h);
    }
    return skp_text_key_long(p, n, h, k1);
}

/* skp_text_key for data with 8 readable bytes before p (see skp_load_upto8_padded). */
static inline uint64_t skp_text_key_padded(const uint8_t *p, Py_ssize_t n, uint64_t k0,
                                           uint64_t k1)
{
    uint64_t h = k0 ^ ((uint64_t)n * SKP_CLEN);
    if (n <= 8) {
        return skp_fold_mul(skp_load_upto8_padded(p, n) ^ k1, h);
    }
    if (n <= 16) {
        return skp_fold_mul(skp_load64(p) ^ k1, skp_load64(p + n - 8) ^ h);
    }
    return skp_text_key_long(p, n, h, k1);
}

/* Number of leading zero bits of x != 0. */
static inline int skp_clz64(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_clzll(x);
#else
    int n = 0;
    while (!(x & 0x8000000000000000ULL)) {
        x <<= 1;
        n++;
    }
    return n;
#endif
}

/* Length of p[:n] without its trailing NUL bytes, when the 8 bytes before p
 * may be read: 8 bytes at a time, the last word's zero bytes counted without
 * a loop. */
static inline Py_ssize_t skp_trim_nul_padded(const uint8_t *p, Py_ssize_t n)
{
    uint64_t w;
    while (n >= 8) {
        w = skp_load64(p + n - 8);
        if (w != 0) {
            return n - (skp_clz64(w) >> 3);
        }
        n -= 8;
    }
    if (n == 0) {
        return 0;
    }
    /* The n < 8 bytes end the word; the bytes before p are masked off. */
    w = skp_load64(p + n - 8) & (~0ULL << (8 * (8 - n)));
    if (w == 0) {
        return 0;
    }
    return n - (skp_clz64(w) >> 3);
}

#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#include <emmintrin.h>
#define SKP_HAVE_SSE2 1

/* 1 + the index of the highest set bit of a 4-bit mask (0 for none). */
static const int8_t skp_top4[16] = {0, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4};
static const int32_t skp_keep4[8] = {-1, -1, -1, -1, 0, 0, 0, 0};

/* A numpy UCS4 item of `units` code points (native order, trailing NUL
 * padding) narrowed to bytes at out when every code point before the padding
 * is ASCII (its UTF-8 is then those bytes): returns the length without the
 * trailing NULs, or -1 when some code point is not ASCII (out is then
 * unspecified). Works 4 code points (16 bytes) at a time, so it may read up
 * to 12 bytes past the item, and writes up to 3 bytes past the length. */
static inline Py_ssize_t skp_ucs4_narrow_ascii(const uint8_t *p, Py_ssize_t units, uint8_t *out)
{
    const __m128i zero = _mm_setzero_si128();
    Py_ssize_t u = units, q, m, nblk, b;
    __m128i v, acc, w;
    int nz, valid, four;
    /* The padding, from the end: 8 then 4 code points at a time. */
    while (u >= 8 &&
           _mm_movemask_epi8(_mm_cmpeq_epi32(
               _mm_or_si128(_mm_loadu_si128((const __m128i *)(p + 4 * (u - 8))),
                            _mm_loadu_si128((const __m128i *)(p + 4 * (u - 4)))),
               zero)) == 0xFFFF) {
        u -= 8;
    }
    if (u >= 4 && _mm_movemask_epi8(_mm_cmpeq_epi32(
                      _mm_loadu_si128((const __m128i *)(p + 4 * (u - 4))), zero)) == 0xFFFF) {
        u -= 4;
    }
    /* The last non-zero code point among the (at most 4) before u. */
    q = u >= 4 ? u - 4 : 0;
    valid = (int)(u - q);
    v = _mm_loadu_si128((const __m128i *)(p + 4 * q));
    nz = ~_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v, zero))) & ((1 << valid) - 1);
    m = q + skp_top4[nz];
    /* Narrow 4 code points at a time; the lanes at or past m of the last
     * block (padding or the next item) stay out of the ASCII test. */
    nblk = (m + 3) >> 2;
    acc = zero;
    for (b = 0; b < nblk; b++) {
        v = _mm_loadu_si128((const __m128i *)(p + 16 * b));
        if (b == nblk - 1) {
            v = _mm_and_si128(v, _mm_loadu_si128((const __m128i *)(skp_keep4 + 4 - (m - 4 * b))));
        }
        acc = _mm_or_si128(acc, v);
        w = _mm_packs_epi32(v, v);
        four = _mm_cvtsi128_si32(_mm_packus_epi16(w, w));
        memcpy(out + 4 * b, &four, 4);
    }
    if (_mm_movemask_epi8(_mm_cmpeq_epi32(
            _mm_and_si128(acc, _mm_set1_epi32((int)0xFFFFFF80u)), zero)) != 0xFFFF) {
        return -1;
    }
    return m;
}
/* Bytes [0, m) of the 16 at x, the rest cleared (0 <= m <= 16). */
static const uint8_t skp_keep16[32] = {
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

/* skp_text_key of the m <= 16 bytes x[0:m] of a vector whose other bytes may
 * hold anything: the same arithmetic, on the two words in registers. */
static inline uint64_t skp_text_key_vec16(__m128i x, Py_ssize_t m, uint64_t k0, uint64_t k1)
{
    uint64_t h = k0 ^ ((uint64_t)m * SKP_CLEN);
    uint64_t lo, hi, b;
    int s;
    x = _mm_and_si128(x, _mm_loadu_si128((const __m128i *)(skp_keep16 + 16 - m)));
#if defined(__x86_64__) || defined(_M_X64)
    lo = (uint64_t)_mm_cvtsi128_si64(x);
    hi = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x));
#else
    {
        uint64_t w[2];
        _mm_storeu_si128((__m128i *)w, x);
        lo = w[0];
        hi = w[1];
    }
#endif
    /* b: the last 8 bytes, x[m-8:m], for m > 8; for m <= 8 hi is 0 and the
     * shift by 64 bits leaves b = 0, which is the formula's n <= 8 case. */
    s = 8 * (m > 8 ? (int)m - 8 : 8);
    b = (hi << (64 - s)) | ((lo >> (s - 8)) >> 8);
    return skp_fold_mul(lo ^ k1, b ^ h);
}

/* True when bytes [first, end) of p are all zero (16 <= first < end; the
 * bytes [end - 16, end) are read even when end - first < 16): 16 bytes at a
 * time, the last block ending at `end`, its bytes before `first` ignored. */
static inline int skp_zero_from(const uint8_t *p, Py_ssize_t first, Py_ssize_t end)
{
    const __m128i zero = _mm_setzero_si128();
    __m128i rest = zero, tail;
    Py_ssize_t off, last = end - 16, ov = first - last;
    for (off = first; off < last; off += 16) {
        rest = _mm_or_si128(rest, _mm_loadu_si128((const __m128i *)(p + off)));
    }
    tail = _mm_loadu_si128((const __m128i *)(p + last));
    if (ov > 0) {
        tail = _mm_andnot_si128(_mm_loadu_si128((const __m128i *)(skp_keep16 + 16 - ov)), tail);
    }
    rest = _mm_or_si128(rest, tail);
    return _mm_movemask_epi8(_mm_cmpeq_epi8(rest, zero)) == 0xFFFF;
}

/* Lane j of the 16 at skp_keep_lanes + 16 - u is all ones for j < u (u <= 16). */
static const int32_t skp_keep_lanes[32] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                           -1, -1, -1, -1, 0,  0,  0,  0,  0,  0,  0,  0,
                                           0,  0,  0,  0,  0,  0,  0,  0};

/* The text key of a numpy UCS4 item of `units` code points (native order,
 * trailing NUL padding) when it is ASCII and at most 16 code points long
 * before its padding: stored at *out, returning 1; 0 otherwise (another path
 * must hash it). Reads the 64 bytes at p, and, for items longer than 16 code
 * points, the rest of the item.
 *
 * Lanes past a narrow item (the next item's code points) are cleared, so they
 * read as padding; one OR of the four vectors gives the ASCII test, and the
 * code points, packed to bytes, give the length from one zero-byte mask. */
static inline int skp_ucs4_key_short(const uint8_t *p, Py_ssize_t units, uint64_t k0,
                                     uint64_t k1, uint64_t *out)
{
    const __m128i zero = _mm_setzero_si128();
    __m128i v0 = _mm_loadu_si128((const __m128i *)p);
    __m128i v1 = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i v2 = _mm_loadu_si128((const __m128i *)(p + 32));
    __m128i v3 = _mm_loadu_si128((const __m128i *)(p + 48));
    __m128i acc, packed;
    unsigned nz;
    Py_ssize_t m;
    if (units < 16) {
        const int32_t *keep = skp_keep_lanes + 16 - units;
        v0 = _mm_and_si128(v0, _mm_loadu_si128((const __m128i *)keep));
        v1 = _mm_and_si128(v1, _mm_loadu_si128((const __m128i *)(keep + 4)));
        v2 = _mm_and_si128(v2, _mm_loadu_si128((const __m128i *)(keep + 8)));
        v3 = _mm_and_si128(v3, _mm_loadu_si128((const __m128i *)(keep + 12)));
    }
    acc = _mm_or_si128(_mm_or_si128(v0, v1), _mm_or_si128(v2, v3));
    if (_mm_movemask_epi8(_mm_cmpeq_epi32(
            _mm_and_si128(acc, _mm_set1_epi32((int)0xFFFFFF80u)), zero)) != 0xFFFF) {
        return 0;
    }
    /* The code points past the 16th must all be padding. */
    if (units > 16 && !skp_zero_from(p, 64, 4 * units)) {
        return 0;
    }
    /* Code points below 0x80 pack to their bytes. */
    packed = _mm_packus_epi16(_mm_packs_epi32(v0, v1), _mm_packs_epi32(v2, v3));
    nz = ~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(packed, zero)) & 0xFFFFu;
    m = nz == 0 ? 0 : 64 - skp_clz64((uint64_t)nz);
    *out = skp_text_key_vec16(packed, m, k0, k1);
    return 1;
}

/* The text key of a numpy S item of `width` bytes (trailing NULs dropped)
 * when it is at most 16 bytes long without them: stored at *out, returning 1;
 * 0 otherwise. Reads the 16 bytes at p and, for wider items, the rest of the
 * item. */
static inline int skp_bytes_key_short(const uint8_t *p, Py_ssize_t width, uint64_t k0,
                                      uint64_t k1, uint64_t *out)
{
    const __m128i zero = _mm_setzero_si128();
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    unsigned valid = width >= 16 ? 0xFFFFu : (1u << width) - 1u;
    unsigned nz = ~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, zero)) & valid;
    Py_ssize_t m = nz == 0 ? 0 : 64 - skp_clz64((uint64_t)nz);
    uint64_t a, b;
    if (width > 16 && !skp_zero_from(p, 16, width)) {
        return 0;
    }
    /* The bytes are in memory, so the formula's two words are plain loads:
     * the first 8 bytes (masked to m) and, for m > 8, the 8 ending at m. */
    a = skp_load64(p) & (m >= 8 ? ~0ULL : (1ULL << (8 * m)) - 1);
    b = m > 8 ? skp_load64(p + m - 8) : 0;
    *out = skp_fold_mul(a ^ k1, b ^ k0 ^ ((uint64_t)m * SKP_CLEN));
    return 1;
}

/* skp_text_key of the m <= 15 bytes at p, where all 16 bytes at p can be read
 * (the inline buffer of a short numpy StringDType item, say). */
static inline uint64_t skp_text_key_in16(const uint8_t *p, Py_ssize_t m, uint64_t k0, uint64_t k1)
{
    return skp_text_key_vec16(_mm_loadu_si128((const __m128i *)p), m, k0, k1);
}
#else
#define SKP_HAVE_SSE2 0

/* Portable form of the SSE2 version above (same results; reads only the item). */
static inline Py_ssize_t skp_ucs4_narrow_ascii(const uint8_t *p, Py_ssize_t units, uint8_t *out)
{
    const uint32_t *cps = (const uint32_t *)p;
    Py_ssize_t m = units, i;
    uint32_t acc = 0;
    while (m > 0 && cps[m - 1] == 0) {
        m--;
    }
    for (i = 0; i < m; i++) {
        acc |= cps[i];
        out[i] = (uint8_t)cps[i];
    }
    return acc < 0x80 ? m : -1;
}

/* Without SSE2 the short-item kernels decline every item (the general path
 * hashes them). */
static inline int skp_ucs4_key_short(const uint8_t *p, Py_ssize_t units, uint64_t k0,
                                     uint64_t k1, uint64_t *out)
{
    (void)p; (void)units; (void)k0; (void)k1; (void)out;
    return 0;
}

static inline int skp_bytes_key_short(const uint8_t *p, Py_ssize_t width, uint64_t k0,
                                      uint64_t k1, uint64_t *out)
{
    (void)p; (void)width; (void)k0; (void)k1; (void)out;
    return 0;
}
static inline uint64_t skp_text_key_in16(const uint8_t *p, Py_ssize_t m, uint64_t k0, uint64_t k1)
{
    return skp_text_key(p, m, k0, k1);
}
#endif

#endif
