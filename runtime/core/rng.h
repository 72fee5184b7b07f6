/*
 * rng.h - the Philox4x32-10 block function and the counter reservation
 * behind yagrad/random.h, shared by the random kernels.  Not public API.
 *
 * Counter layout: element i of an op that reserved base = offset gets the
 * 128-bit counter {lo32(base + i), hi32(base + i), 0, 0} and the key
 * {lo32(seed), hi32(seed)}, so its four output words depend on nothing but
 * (seed, base + i).  Kernels may therefore split elements over threads in
 * any way and still write identical results.
 *
 * Words to values (each documented where the op is declared):
 *   uniform float32 in [0, 1): the top 24 bits of word 0, times 2^-24;
 *   uniform float64 in [0, 1): 27 bits of word 0 and 26 of word 1, times
 *     2^-53 (every multiple of 2^-53 equally likely);
 *   normal: Box-Muller, sqrt(-2 ln(1 - u1)) cos(2 pi u2) with u1 from
 *     words 0-1 and u2 from words 2-3 as float64 uniforms, in double
 *     precision, rounded to the result dtype.
 */
#ifndef YAGRAD_RNG_H
#define YAGRAD_RNG_H

#include <stdint.h>

#include "yagrad/random.h"

/* The block function and the transforms are also device functions where
 * cuda/random.cu includes this, so a GPU draws the CPU's values. */
#ifdef __CUDACC__
#define YG_RNG_FN static inline __host__ __device__
#else
#define YG_RNG_FN static inline
#endif

/* A reserved range of counters: element i uses counter base + i. */
typedef struct yg__philox_range {
    uint32_t key[2];
    uint64_t base;
} yg__philox_range;

/* Reserves n counters of generator (NULL: the default one) under its lock:
 * returns its key and the first counter, and advances its offset by n.
 * Cannot fail. */
void yg__generator_reserve(yg_generator *generator, uint64_t n, yg__philox_range *out);

/* The 32x32 -> 64 multiply of one Philox round, split in halves. */
YG_RNG_FN void yg__philox_mulhilo(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo)
{
    uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    *lo = (uint32_t)p;
}

/* Philox4x32 with 10 rounds; the multipliers and Weyl key increments are
 * those of the paper (and of Random123's philox.h defaults). */
YG_RNG_FN void yg__philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];

    for (int round = 0; round < 10; round++) {
        uint32_t hi0, lo0, hi1, lo1;
        yg__philox_mulhilo(0xD2511F53u, c0, &hi0, &lo0);
        yg__philox_mulhilo(0xCD9E8D57u, c2, &hi1, &lo1);
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/* The four words of element i of range r. */
YG_RNG_FN void yg__philox_words(const yg__philox_range *r, uint64_t i, uint32_t out[4])
{
    uint64_t c = r->base + i;
    const uint32_t ctr[4] = {(uint32_t)c, (uint32_t)(c >> 32), 0, 0};

    yg__philox4x32_10(ctr, r->key, out);
}

/* Uniform float32 in [0, 1) from one word. */
YG_RNG_FN float yg__uniform_f32(uint32_t w)
{
    return (float)(w >> 8) * (1.0f / 16777216.0f);
}

/* Uniform float64 in [0, 1) from two words. */
YG_RNG_FN double yg__uniform_f64(uint32_t w0, uint32_t w1)
{
    return ((double)(w0 >> 5) * 67108864.0 + (double)(w1 >> 6)) * (1.0 / 9007199254740992.0);
}

#endif /* YAGRAD_RNG_H */
