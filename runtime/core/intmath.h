/*
 * core/intmath.h - integer division and remainder with defined results
 * for every pair of operands, for the `pointwise_int:` expressions of
 * specs/native_functions.yaml (the int64 and int32 loops gen writes into
 * loops/<section>.c; docs/spec-reference.md).
 *
 * C's a / b and a % b trap (SIGFPE) when b is 0 and when a is the most
 * negative value and b is -1.  The kernels of ops declaring an
 * `int_divisor:` refuse a 0 divisor before any loop runs
 * (yg__check_int_divisor, core/core.h), so b == 0 never reaches these in
 * a kernel; they still return 0 for it rather than trap.  INT64_MIN / -1
 * wraps to INT64_MIN (two's complement, as NumPy and a C compiler's
 * unchecked negation give); int32 operands are computed in int64 and the
 * loop's store wraps the same way.
 *
 * Rounding, as PyTorch and Python:
 *   yg_int_div_trunc(-7, 2) == -3   toward zero  (div rounding_mode="trunc")
 *   yg_int_div_floor(-7, 2) == -4   toward -inf  (div rounding_mode="floor", //)
 *   yg_int_remainder(-7, 2) == 1    sign of the divisor (Python's %)
 *   yg_int_remainder(7, -2) == -1
 * so a == yg_int_div_floor(a, b) * b + yg_int_remainder(a, b).
 */
#ifndef YAGRAD_CORE_INTMATH_H
#define YAGRAD_CORE_INTMATH_H

#ifndef __CUDACC_RTC__ /* NVRTC: cuda/launch.h defines int64_t */
#include <stdint.h>
#endif

/* Also device functions where the CUDA loops of generated/cuda/ include
 * this. */
#ifdef __CUDACC__
#define YG_INTMATH_FN static inline __host__ __device__
#else
#define YG_INTMATH_FN static inline
#endif

/* -a with two's complement wrap-around (INT64_MIN stays INT64_MIN); the
 * conversion back from uint64_t is GCC's and clang's modulo 2^64. */
YG_INTMATH_FN int64_t yg__int_neg_wrap(int64_t a)
{
    return (int64_t)(UINT64_C(0) - (uint64_t)a);
}

YG_INTMATH_FN int64_t yg_int_div_trunc(int64_t a, int64_t b)
{
    if (b == 0)
        return 0;
    if (b == -1)
        return yg__int_neg_wrap(a);
    return a / b;
}

YG_INTMATH_FN int64_t yg_int_div_floor(int64_t a, int64_t b)
{
    if (b == 0)
        return 0;
    if (b == -1)
        return yg__int_neg_wrap(a);
    int64_t q = a / b, r = a % b;
    return r != 0 && (r < 0) != (b < 0) ? q - 1 : q;
}

YG_INTMATH_FN int64_t yg_int_remainder(int64_t a, int64_t b)
{
    if (b == 0 || b == -1)
        return 0;
    int64_t r = a % b;
    return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

#endif /* YAGRAD_CORE_INTMATH_H */
