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

#endif
