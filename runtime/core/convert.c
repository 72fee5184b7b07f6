/*
 * convert.c - conversions of one element between dtypes that C's casts do
 * not give: float16 and bfloat16 (storage types on CPU, held as their
 * uint16_t bit patterns), and float-to-integer conversions that C leaves
 * undefined (NaN, values out of range).
 *
 * float16 (IEEE 754 binary16: 1 sign, 5 exponent, 10 fraction bits) and
 * bfloat16 (the top half of a float32: 1 sign, 8 exponent, 7 fraction
 * bits) are encoded by one routine, round_pack, that rounds m * 2^e
 * (an exact 64-bit significand and a binary exponent) to the nearest
 * representable value, ties to even, with gradual underflow to
 * subnormals and overflow to infinity.  Every source reaches it exactly:
 * a double is split into its 53-bit significand and exponent, and an
 * integer is its own significand, so there is one rounding, never two
 * (rounding an int64 to double and then to bfloat16 can land on a tie
 * the exact value was not on).  No compiler _Float16 support is needed.
 * NaN stays NaN (a quiet NaN of the same sign); -0.0 keeps its sign.
 * Decoding is exact: every float16 and bfloat16 value is a float32.
 *
 * Floating values converted to integers truncate toward zero, as C does;
 * where C's behaviour is undefined this file defines it: NaN gives 0 and
 * values beyond the integer's range saturate to its minimum or maximum.
 */
#include "core/core.h"

#include <math.h>
#include <string.h>

/* A binary format with `mant` fraction bits and exponent bias `bias`. */
typedef struct half_format {
    int mant;
    int bias;
    uint16_t inf;  /* bits of +inf */
    uint16_t qnan; /* bits of the positive quiet NaN we produce */
} half_format;

static const half_format f16_format = {10, 15, 0x7C00, 0x7E00};
static const half_format bf16_format = {7, 127, 0x7F80, 0x7FC0};

/* Index of the highest set bit of m != 0.  The builtin is one
 * instruction; the loop it replaces cost about 15 ns per conversion. */
static int msb64(uint64_t m)
{
#if defined(__GNUC__) || defined(__clang__)
    return 63 - __builtin_clzll(m);
#else
    int p = 0;
    while (m >>= 1)
        p++;
    return p;
#endif
}

/* The bits of (-1)^sign * m * 2^e rounded to fmt, ties to even. */
static uint16_t round_pack(const half_format *fmt, bool sign, uint64_t m, int e)
{
    uint16_t s = sign ? 0x8000 : 0;
    if (m == 0)
        return s;
    int exp = e + msb64(m); /* the value is in [2^exp, 2^(exp+1)) */
    int emin = 1 - fmt->bias;
    int emax = fmt->bias;
    if (exp > emax + 1)
        return s | fmt->inf;
    /* q: the exponent of the quantum (one unit in the last place) at
     * this magnitude; subnormals share the quantum of the smallest
     * normal exponent. */
    int q = (exp > emin ? exp : emin) - fmt->mant;
    int shift = q - e;
    uint64_t r;
    if (shift <= 0) {
        r = m << -shift; /* exact: r < 2^(mant + 1) here */
    } else if (shift > 64) {
        r = 0; /* far below half a quantum */
    } else {
        uint64_t rem, half;
        if (shift == 64) {
            r = 0;
            rem = m;
        } else {
            r = m >> shift;
            rem = m & ((UINT64_C(1) << shift) - 1);
        }
        half = UINT64_C(1) << (shift - 1);
        if (rem > half || (rem == half && (r & 1)))
            r++;
    }
    /* r counts quanta.  For a normal value r includes the hidden bit, so
     * adding it to the biased exponent minus one carries into the
     * exponent field exactly as the encoding needs, including the carry
     * when rounding reaches the next power of two; a subnormal's biased
     * exponent field is 0 and its bits are r itself. */
    uint32_t bits =
        exp >= emin ? ((uint32_t)(exp + fmt->bias - 1) << fmt->mant) + (uint32_t)r : (uint32_t)r;
    if (bits >= fmt->inf)
        return s | fmt->inf;
    return s | (uint16_t)bits;
}

static uint16_t pack_f64(const half_format *fmt, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    bool sign = (u >> 63) != 0;
    int expf = (int)((u >> 52) & 0x7FF);
    uint64_t frac = u & ((UINT64_C(1) << 52) - 1);
    if (expf == 0x7FF)
        return (uint16_t)((sign ? 0x8000 : 0) | (frac != 0 ? fmt->qnan : fmt->inf));
    if (expf == 0)
        return round_pack(fmt, sign, frac, -1074);
    return round_pack(fmt, sign, frac | (UINT64_C(1) << 52), expf - 1075);
}

static uint16_t pack_i64(const half_format *fmt, int64_t v)
{
    /* The magnitude as uint64: -INT64_MIN does not fit int64. */
    uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    return round_pack(fmt, v < 0, m, 0);
}

uint16_t yg__f16_from_f64(double v)
{
    return pack_f64(&f16_format, v);
}

uint16_t yg__f16_from_i64(int64_t v)
{
    return pack_i64(&f16_format, v);
}

uint16_t yg__bf16_from_f64(double v)
{
    return pack_f64(&bf16_format, v);
}

uint16_t yg__bf16_from_i64(int64_t v)
{
    return pack_i64(&bf16_format, v);
}

float yg__f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t expf = (h >> 10) & 0x1F;
    uint32_t frac = h & 0x3FF;
    uint32_t bits;
    float f;

    if (expf == 0) {
        /* Zero or subnormal: frac * 2^-24, exact in float32. */
        f = (float)frac * 0x1p-24f;
        return sign ? -f : f;
    }
    if (expf == 0x1F)
        bits = sign | 0x7F800000u | (frac << 13) | (frac != 0 ? 0x400000u : 0);
    else
        bits = sign | ((expf - 15 + 127) << 23) | (frac << 13);
    memcpy(&f, &bits, sizeof f);
    return f;
}

float yg__bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

int64_t yg__i64_from_f64(double v)
{
    if (isnan(v))
        return 0;
    if (v >= 0x1p63)
        return INT64_MAX;
    if (v < -0x1p63)
        return INT64_MIN;
    return (int64_t)v;
}

int32_t yg__i32_from_f64(double v)
{
    if (isnan(v))
        return 0;
    if (v >= 0x1p31)
        return INT32_MAX;
    if (v <= -0x1p31 - 1)
        return INT32_MIN;
    return (int32_t)v;
}

int32_t yg__i32_from_i64(int64_t v)
{
    /* Two's complement wrap-around, spelled without implementation-
     * defined conversions. */
    uint32_t u = (uint32_t)v;
    return u <= INT32_MAX ? (int32_t)u : (int32_t)(u - 0x80000000u) - INT32_MAX - 1;
}

double yg__load_f64(const void *p, yg_dtype dtype)
{
    switch (dtype) {
    case YG_FLOAT32:
        return *(const float *)p;
    case YG_FLOAT64:
        return *(const double *)p;
    case YG_INT64:
        return (double)*(const int64_t *)p;
    case YG_BOOL:
        return *(const unsigned char *)p != 0;
    case YG_INT32:
        return *(const int32_t *)p;
    case YG_FLOAT16:
        return yg__f16_to_f32(*(const uint16_t *)p);
    case YG_BFLOAT16:
        return yg__bf16_to_f32(*(const uint16_t *)p);
    default:
        return 0;
    }
}

void yg__store_f64_as(void *p, yg_dtype dtype, double v)
{
    switch (dtype) {
    case YG_FLOAT32:
        *(float *)p = (float)v;
        break;
    case YG_FLOAT64:
        *(double *)p = v;
        break;
    case YG_INT64:
        *(int64_t *)p = yg__i64_from_f64(v);
        break;
    case YG_BOOL:
        *(bool *)p = v != 0;
        break;
    case YG_INT32:
        *(int32_t *)p = yg__i32_from_f64(v);
        break;
    case YG_FLOAT16:
        *(uint16_t *)p = yg__f16_from_f64(v);
        break;
    case YG_BFLOAT16:
        *(uint16_t *)p = yg__bf16_from_f64(v);
        break;
    default:
        break;
    }
}
