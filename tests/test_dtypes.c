/*
 * test_dtypes.c - the dtypes int32, float16 and bfloat16 next to float32,
 * float64, int64 and bool: conversions between every pair (to.dtype,
 * copy_, clone, type_as), float16/bfloat16 bit patterns, int32 arithmetic
 * and comparisons, type promotion, the gradient of to, and the dtype
 * errors of compute ops given float16/bfloat16.
 *
 * References are written here, independently of runtime/core/convert.c:
 * float16/bfloat16 values are decoded with ldexp from their fields, and
 * encoded by a binary search over the (monotone) positive bit patterns for
 * the nearest value, ties to the even pattern, with infinity standing for
 * 2^(emax+1) (IEEE overflow).  That search runs in long double, which on
 * x86-64 holds every int64 exactly.  The fixed bit patterns were checked
 * against Python's struct module ('e' format: binary16, round to nearest
 * even) where it applies.
 */
#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_binary_math.h"
#include "yagrad/ops_blend.h"
#include "yagrad/ops_inplace_fill.h"
#include "yagrad/ops_comparison.h"
#include "yagrad/ops_unary_math.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_cumulative.h"
#include "yagrad/ops_extrema.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_slicing.h"
#include "yagrad/ops_padding.h"
#include "yagrad/ops_indexing.h"
#include "yagrad/ops_dtype_conversion.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- independent reference ---- */

typedef struct ref_format {
    int mant; /* fraction bits */
    int bias;
} ref_format;

static const ref_format REF_F16 = {10, 15};
static const ref_format REF_BF16 = {7, 127};

static ref_format ref_format_of(yg_dtype d)
{
    return d == YG_FLOAT16 ? REF_F16 : REF_BF16;
}

/* Bits of +inf: the all-ones exponent field. */
static unsigned ref_inf_bits(ref_format f)
{
    return (unsigned)(2 * f.bias + 1) << f.mant;
}

/* Value of a non-negative pattern p <= inf bits; inf counts as
 * 2^(emax + 1), the value IEEE rounding compares against. */
static long double ref_value(ref_format f, unsigned p)
{
    unsigned e = p >> f.mant, frac = p & ((1u << f.mant) - 1);
    if (p >= ref_inf_bits(f))
        return ldexpl(1.0L, f.bias + 1);
    if (e == 0)
        return ldexpl((long double)frac, 1 - f.bias - f.mant);
    return ldexpl((long double)((1u << f.mant) + frac), (int)e - f.bias - f.mant);
}

static double ref_decode(ref_format f, uint16_t bits)
{
    unsigned p = bits & 0x7FFF;
    double sign = (bits & 0x8000) ? -1.0 : 1.0;
    if ((p >> f.mant) == (unsigned)(2 * f.bias + 1))
        return (p & ((1u << f.mant) - 1)) ? NAN : sign * INFINITY;
    return sign * (double)ref_value(f, p);
}

/* Nearest pattern to x (not NaN), ties to even. */
static uint16_t ref_encode(ref_format f, long double x)
{
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    long double a = fabsl(x);
    unsigned lo = 0, hi = ref_inf_bits(f);
    if (a >= ref_value(f, hi))
        return sign | (uint16_t)hi;
    /* Largest p with value(p) <= a. */
    while (lo < hi) {
        unsigned mid = (lo + hi + 1) / 2;
        if (ref_value(f, mid) <= a)
            lo = mid;
        else
            hi = mid - 1;
    }
    long double below = a - ref_value(f, lo), above = ref_value(f, lo + 1) - a;
    unsigned p = below < above ? lo : above < below ? lo + 1 : (lo % 2 == 0 ? lo : lo + 1);
    return sign | (uint16_t)p;
}

static bool is_half(yg_dtype d)
{
    return d == YG_FLOAT16 || d == YG_BFLOAT16;
}

static bool is_int(yg_dtype d)
{
    return d == YG_INT64 || d == YG_INT32 || d == YG_BOOL;
}

/* Element i of a contiguous tensor as a long double, decoded here. */
static long double read_elem(const yg_tensor *t, int64_t i)
{
    const char *p = yg_tensor_data(t);
    switch (yg_tensor_dtype(t)) {
    case YG_FLOAT32:
        return ((const float *)p)[i];
    case YG_FLOAT64:
        return ((const double *)p)[i];
    case YG_INT64:
        return (long double)((const int64_t *)p)[i];
    case YG_INT32:
        return ((const int32_t *)p)[i];
    case YG_BOOL:
        return ((const unsigned char *)p)[i];
    case YG_FLOAT16:
    case YG_BFLOAT16:
        return ref_decode(ref_format_of(yg_tensor_dtype(t)), ((const uint16_t *)p)[i]);
    default:
        return NAN;
    }
}

/* Writes x (exactly representable in long double) into element i of a
 * contiguous tensor of dtype d, by this file's rules. */
static void write_elem(yg_tensor *t, int64_t i, long double x)
{
    char *p = yg_tensor_data(t);
    yg_dtype d = yg_tensor_dtype(t);
    switch (d) {
    case YG_FLOAT32:
        ((float *)p)[i] = (float)x;
        break;
    case YG_FLOAT64:
        ((double *)p)[i] = (double)x;
        break;
    case YG_INT64:
        ((int64_t *)p)[i] = (int64_t)x;
        break;
    case YG_INT32:
        ((int32_t *)p)[i] = (int32_t)x;
        break;
    case YG_BOOL:
        ((unsigned char *)p)[i] = x != 0;
        break;
    default:
        ((uint16_t *)p)[i] = isnan(x) ? (uint16_t)(d == YG_FLOAT16 ? 0x7E00 : 0x7FC0)
                                      : ref_encode(ref_format_of(d), x);
        break;
    }
}

/* What converting the value x of a src-dtype element to dst gives, by the
 * documented rules (yagrad/tensor.h). */
static long double ref_convert(long double x, yg_dtype src, yg_dtype dst)
{
    switch (dst) {
    case YG_FLOAT32:
        return (float)x;
    case YG_FLOAT64:
        return (double)x;
    case YG_BOOL:
        return x != 0;
    case YG_INT64:
        if (isnan(x))
            return 0;
        if (x >= 0x1p63L)
            return (long double)INT64_MAX;
        if (x < -0x1p63L)
            return (long double)INT64_MIN;
        return truncl(x) + 0.0L; /* integers have no -0 */
    case YG_INT32:
        if (is_int(src)) { /* wraps */
            long double m = fmodl(x, 0x1p32L);
            if (m < 0)
                m += 0x1p32L;
            return (m >= 0x1p31L ? m - 0x1p32L : m) + 0.0L;
        }
        if (isnan(x))
            return 0;
        if (x >= 0x1p31L)
            return INT32_MAX;
        if (x <= -0x1p31L - 1)
            return INT32_MIN;
        return truncl(x) + 0.0L; /* integers have no -0 */
    default:
        if (isnan(x))
            return NAN;
        return ref_decode(ref_format_of(dst), ref_encode(ref_format_of(dst), x));
    }
}

/* Same value, NaN equal to NaN, and zeros of the same sign. */
static bool same_value(long double a, long double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    /* signbit() returns some non-zero int for negatives, not always the
     * same one: compare truth values. */
    return a == b && !signbit(a) == !signbit(b);
}

/* A contiguous float64 tensor of n values. */
static yg_tensor *f64_tensor(const double *v, int64_t n)
{
    yg_tensor *t = NULL;
    YG_CHECK(yg_tensor_from_data(v, &n, 1, YG_FLOAT64, &t));
    return t;
}

/* The 16-bit patterns of t (float16/bfloat16, contiguous). */
static uint16_t bits_at(const yg_tensor *t, int64_t i)
{
    return ((const uint16_t *)yg_tensor_data(t))[i];
}

/* ---- names, sizes, promotion ---- */

static void test_new_dtypes_have_names_and_sizes(void **state)
{
    (void)state;
    assert_string_equal(yg_dtype_name(YG_INT32), "int32");
    assert_string_equal(yg_dtype_name(YG_FLOAT16), "float16");
    assert_string_equal(yg_dtype_name(YG_BFLOAT16), "bfloat16");
    assert_string_equal(yg_dtype_name(YG_DTYPE_COUNT_), "unknown");
    assert_int_equal(yg_dtype_size(YG_INT32), 4);
    assert_int_equal(yg_dtype_size(YG_FLOAT16), 2);
    assert_int_equal(yg_dtype_size(YG_BFLOAT16), 2);
    /* Append only: the old values keep their numbers. */
    assert_int_equal(YG_FLOAT32, 0);
    assert_int_equal(YG_FLOAT64, 1);
    assert_int_equal(YG_INT64, 2);
    assert_int_equal(YG_BOOL, 3);
}

/* The promoted dtype of a binary op, read from add's result. */
static yg_dtype add_dtype(yg_dtype a, yg_dtype b)
{
    yg_tensor *x = NULL, *y = NULL, *z = NULL;
    yg_dtype d;
    YG_CHECK(yg_tensor_full(NULL, 0, 1, a, &x));
    YG_CHECK(yg_tensor_full(NULL, 0, 1, b, &y));
    YG_CHECK(yg_add(x, y, 1, &z));
    d = yg_tensor_dtype(z);
    yg_release(x);
    yg_release(y);
    yg_release(z);
    return d;
}

static void test_binary_ops_promote_along_the_lattice(void **state)
{
    /* bool < int32 < int64 < float32 < float64 where add computes. */
    static const yg_dtype order[] = {YG_BOOL, YG_INT32, YG_INT64, YG_FLOAT32, YG_FLOAT64};
    (void)state;
    for (int i = 1; i < 5; i++)
        for (int j = 1; j < 5; j++) {
            yg_dtype want = order[i > j ? i : j];
            assert_int_equal(add_dtype(order[i], order[j]), want);
        }
    assert_int_equal(add_dtype(YG_BOOL, YG_INT32), YG_INT32);
    /* float16/bfloat16 with a wider float compute in the wider float. */
    assert_int_equal(add_dtype(YG_FLOAT16, YG_FLOAT32), YG_FLOAT32);
    assert_int_equal(add_dtype(YG_BFLOAT16, YG_FLOAT64), YG_FLOAT64);
    /* Neither 16-bit float holds the other: together they give float32. */
    assert_int_equal(add_dtype(YG_FLOAT16, YG_BFLOAT16), YG_FLOAT32);
}

static void test_half_values_convert_before_a_float32_add(void **state)
{
    /* float16 0.1 is 0x2E66 = 0.0999755859375; bfloat16 0.1 is 0x3DCD =
     * 0.10009765625; the sum is computed in float32. */
    const uint16_t h = 0x2E66, b = 0x3DCD;
    yg_tensor *x = NULL, *y = NULL, *z = NULL;
    const double want = 0.0999755859375 + 0.10009765625;
    (void)state;
    YG_CHECK(yg_tensor_from_data(&h, NULL, 0, YG_FLOAT16, &x));
    YG_CHECK(yg_tensor_from_data(&b, NULL, 0, YG_BFLOAT16, &y));
    YG_CHECK(yg_add(x, y, 1, &z));
    assert_int_equal(yg_tensor_dtype(z), YG_FLOAT32);
    YG_EXPECT_CLOSE(z, NULL, 0, &want, 1e-7, 0);
    yg_release(x);
    yg_release(y);
    yg_release(z);
}

/* ---- float16 / bfloat16 bit patterns ---- */

typedef struct bits_case {
    double value;
    uint16_t bits;
} bits_case;

static void expect_bits(yg_dtype dtype, const bits_case *cases, int n)
{
    double values[32];
    yg_tensor *src = NULL, *dst = NULL;
    for (int i = 0; i < n; i++)
        values[i] = cases[i].value;
    src = f64_tensor(values, n);
    YG_CHECK(yg_to_dtype(src, dtype, false, &dst));
    assert_int_equal(yg_tensor_dtype(dst), dtype);
    for (int i = 0; i < n; i++) {
        if (bits_at(dst, i) != cases[i].bits)
            print_error("%s of %.17g: got 0x%04x, expected 0x%04x\n", yg_dtype_name(dtype),
                        cases[i].value, bits_at(dst, i), cases[i].bits);
        assert_int_equal(bits_at(dst, i), cases[i].bits);
    }
    yg_release(src);
    yg_release(dst);
}

static void test_float16_rounds_to_nearest_even_with_subnormals_and_overflow(void **state)
{
    static const bits_case cases[] = {
        {1.0, 0x3C00},
        {-2.0, 0xC000},
        {0.1, 0x2E66},
        {1.0 / 3, 0x3555},
        {65504, 0x7BFF},                       /* largest finite */
        {65519.99, 0x7BFF},                    /* just below the overflow tie */
        {65520, 0x7C00},                       /* the tie rounds to even: inf */
        {1e6, 0x7C00},                         /* overflow */
        {-1e300, 0xFC00},                      /* far overflow keeps the sign */
        {INFINITY, 0x7C00},
        {-INFINITY, 0xFC00},
        {0.0, 0x0000},
        {-0.0, 0x8000},                        /* the sign of zero is kept */
        {0x1p-24, 0x0001},                     /* smallest subnormal */
        {0x1p-25, 0x0000},                     /* tie between 0 and it: even */
        {0x1.8p-25, 0x0001},                   /* above the tie */
        {0x3p-25, 0x0002},                     /* tie between 1 and 2 quanta */
        {-0x1p-26, 0x8000},                    /* underflow to -0 */
        {1023 * 0x1p-24, 0x03FF},              /* largest subnormal */
        {0x1p-14, 0x0400},                     /* smallest normal */
        {0x1.ffcp-15, 0x0400},                 /* rounds up into the normals */
        {1 + 0x1p-11, 0x3C00},                 /* tie: even */
        {1 + 0x3p-11, 0x3C02},                 /* tie: even is up */
        {1 + 0x1p-11 + 0x1p-40, 0x3C01},       /* one rounding, not via float32 */
        {2049, 0x6800},
        {2051, 0x6802},
    };
    (void)state;
    expect_bits(YG_FLOAT16, cases, (int)(sizeof cases / sizeof cases[0]));
}

static void test_bfloat16_rounds_to_nearest_even_with_subnormals_and_overflow(void **state)
{
    static const bits_case cases[] = {
        {1.0, 0x3F80},
        {-1.0, 0xBF80},
        {0.1, 0x3DCD},
        {1 + 0x1p-8, 0x3F80},                  /* tie: even */
        {1 + 0x3p-8, 0x3F82},                  /* tie: even is up */
        {1 + 0x1p-8 + 0x1p-30, 0x3F81},        /* above the tie */
        {65504, 0x4780},                       /* rounds up to 2^16 */
        {0x1.fep127, 0x7F7F},                  /* largest finite */
        {3.4028234663852886e38, 0x7F80},       /* FLT_MAX rounds to inf */
        {1e39, 0x7F80},
        {-INFINITY, 0xFF80},
        {-0.0, 0x8000},
        {0x1p-133, 0x0001},                    /* smallest subnormal */
        {0x1p-134, 0x0000},                    /* tie: even */
        {0x1.8p-134, 0x0001},
        {0x1p-126, 0x0080},                    /* smallest normal */
        {0x1p-149, 0x0000},                    /* float32's smallest subnormal */
    };
    (void)state;
    expect_bits(YG_BFLOAT16, cases, (int)(sizeof cases / sizeof cases[0]));
}

static void test_nan_stays_nan_in_every_floating_dtype(void **state)
{
    const double v[] = {NAN, -NAN};
    static const yg_dtype dts[] = {YG_FLOAT16, YG_BFLOAT16, YG_FLOAT32};
    yg_tensor *src = NULL;
    (void)state;
    src = f64_tensor(v, 2);
    for (int k = 0; k < 3; k++) {
        yg_tensor *h = NULL, *back = NULL;
        double out[2];
        YG_CHECK(yg_to_dtype(src, dts[k], false, &h));
        if (is_half(dts[k])) {
            /* All-ones exponent and a non-zero fraction. */
            unsigned mant = dts[k] == YG_FLOAT16 ? 10 : 7;
            unsigned inf = dts[k] == YG_FLOAT16 ? 0x7C00 : 0x7F80;
            for (int i = 0; i < 2; i++) {
                assert_int_equal(bits_at(h, i) & inf, inf);
                assert_true((bits_at(h, i) & ((1u << mant) - 1)) != 0);
            }
        }
        YG_CHECK(yg_to_dtype(h, YG_FLOAT64, false, &back));
        YG_CHECK(yg_tensor_to_f64(back, out, 2));
        assert_true(isnan(out[0]) && isnan(out[1]));
        yg_release(h);
        yg_release(back);
    }
    yg_release(src);
}

static void test_int64_rounds_once_into_half_dtypes(void **state)
{
    /* 2^62 + 2^54 + 1 is just above a bfloat16 tie; through double it
     * would land on the tie (2^62 + 2^54) and round down to even. */
    const int64_t v[] = {(INT64_C(1) << 62) + (INT64_C(1) << 54) + 1,
                         (INT64_C(1) << 62) + (INT64_C(1) << 54),
                         INT64_MIN,
                         INT64_MAX,
                         65519,
                         65520,
                         -65520,
                         2049,
                         -3};
    static const uint16_t want_bf16[] = {0x5E81, 0x5E80, 0xDF00, 0x5F00, 0x4780,
                                         0x4780, 0xC780, 0x4500, 0xC040};
    static const uint16_t want_f16[] = {0x7C00, 0x7C00, 0xFC00, 0x7C00, 0x7BFF,
                                        0x7C00, 0xFC00, 0x6800, 0xC200};
    const int64_t n = 9;
    yg_tensor *src = NULL, *bf = NULL, *h = NULL;
    (void)state;
    YG_CHECK(yg_tensor_from_data(v, &n, 1, YG_INT64, &src));
    YG_CHECK(yg_to_dtype(src, YG_BFLOAT16, false, &bf));
    YG_CHECK(yg_to_dtype(src, YG_FLOAT16, false, &h));
    for (int i = 0; i < n; i++) {
        assert_int_equal(bits_at(bf, i), want_bf16[i]);
        assert_int_equal(bits_at(h, i), want_f16[i]);
        /* And the reference agrees. */
        assert_int_equal(ref_encode(REF_BF16, (long double)v[i]), want_bf16[i]);
    }
    yg_release(src);
    yg_release(bf);
    yg_release(h);
}

static void test_half_bit_patterns_decode_exactly(void **state)
{
    static const uint16_t f16[] = {0x0001, 0x03FF, 0x0400, 0x3555, 0x7BFF, 0x8000, 0x7C00, 0xFC00};
    static const double f16_want[] = {0x1p-24, 1023 * 0x1p-24, 0x1p-14, 0.333251953125,
                                      65504,   -0.0,           INFINITY, -INFINITY};
    static const uint16_t bf16[] = {0x0001, 0x3F81, 0x7F7F, 0xFF80, 0x8000};
    static const double bf16_want[] = {0x1p-133, 1.0078125, 0x1.fep127, -INFINITY, -0.0};
    const int64_t n16 = 8, nb = 5;
    yg_tensor *a = NULL, *b = NULL;
    double got[8];
    (void)state;
    YG_CHECK(yg_tensor_from_data(f16, &n16, 1, YG_FLOAT16, &a));
    YG_CHECK(yg_tensor_to_f64(a, got, n16));
    for (int i = 0; i < n16; i++)
        assert_true(same_value(got[i], f16_want[i]));
    YG_CHECK(yg_tensor_from_data(bf16, &nb, 1, YG_BFLOAT16, &b));
    YG_CHECK(yg_tensor_to_f64(b, got, nb));
    for (int i = 0; i < nb; i++)
        assert_true(same_value(got[i], bf16_want[i]));
    /* item() of a 0-dim float16. */
    double item;
    yg_tensor *s = NULL;
    YG_CHECK(yg_tensor_from_data(&f16[3], NULL, 0, YG_FLOAT16, &s));
    YG_CHECK(yg_tensor_item(s, &item));
    assert_true(item == 0.333251953125);
    yg_release(a);
    yg_release(b);
    yg_release(s);
}

/* Doubles that exercise rounding: random significands over the dtype's
 * whole exponent range, and exact midpoints between neighbours. */
static void sweep_values(yg_dtype dtype, double *v, int n, uint64_t seed)
{
    ref_format f = ref_format_of(dtype);
    uint64_t s = seed;
    for (int i = 0; i < n; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        double u = (double)(s >> 11) * 0x1p-53;
        int e = (int)((s >> 3) % (unsigned)(2 * f.bias + 24)) - f.bias - f.mant - 2;
        if (i % 4 == 3) {
            /* Midpoint between pattern p and p + 1 (exact in double). */
            unsigned p = (unsigned)(s >> 40) % (ref_inf_bits(f) - 1);
            v[i] = (double)((ref_value(f, p) + ref_value(f, p + 1)) / 2);
        } else {
            v[i] = ldexp(1 + u, e);
        }
        if (i % 2)
            v[i] = -v[i];
    }
}

static void test_half_rounding_matches_a_nearest_even_search(void **state)
{
    enum { N = 4000 };
    static const yg_dtype dts[] = {YG_FLOAT16, YG_BFLOAT16};
    double *v = malloc(N * sizeof *v);
    (void)state;
    for (int k = 0; k < 2; k++) {
        yg_tensor *src = NULL, *f32 = NULL, *h = NULL, *h32 = NULL;
        sweep_values(dts[k], v, N, 7 + (uint64_t)k);
        src = f64_tensor(v, N);
        YG_CHECK(yg_to_dtype(src, dts[k], false, &h));
        /* From float32 too: the float32 value is what gets rounded. */
        YG_CHECK(yg_to_dtype(src, YG_FLOAT32, false, &f32));
        YG_CHECK(yg_to_dtype(f32, dts[k], false, &h32));
        for (int i = 0; i < N; i++) {
            uint16_t want = ref_encode(ref_format_of(dts[k]), v[i]);
            uint16_t want32 = ref_encode(ref_format_of(dts[k]), (float)v[i]);
            if (bits_at(h, i) != want || bits_at(h32, i) != want32)
                print_error("%s of %a: got 0x%04x/0x%04x, expected 0x%04x/0x%04x\n",
                            yg_dtype_name(dts[k]), v[i], bits_at(h, i), bits_at(h32, i), want,
                            want32);
            assert_int_equal(bits_at(h, i), want);
            assert_int_equal(bits_at(h32, i), want32);
        }
        yg_release(src);
        yg_release(f32);
        yg_release(h);
        yg_release(h32);
    }
    free(v);
}

/* ---- every pair ---- */

static const yg_dtype all_dtypes[] = {YG_FLOAT32, YG_FLOAT64, YG_INT64,   YG_BOOL,
                                      YG_INT32,   YG_FLOAT16, YG_BFLOAT16};

/* Values a source of dtype d holds (before its own rounding). */
static int source_values(yg_dtype d, long double *v)
{
    static const long double floats[] = {0,    -0.0L, 1,        -1,    2.5,   -2.5,  0.7,
                                         -0.7, 1e10,  -1e10,    3e9,   -3e9,  1e20,  -1e20,
                                         NAN,  INFINITY, -INFINITY, 65519, 1e-9, 2147483647.5};
    static const long double ints[] = {0,           1,           -1,           2,
                                       -2,          7,           2147483647,   -2147483648.0L,
                                       2147483648.0L, 5000000000.0L, -5000000000.0L, 65520,
                                       9007199254740993.0L, 0x1p62L + 0x1p54L + 1,
                                       -0x1p63L,    0x1p63L - 1};
    int n;
    if (d == YG_BOOL) {
        v[0] = 0;
        v[1] = 1;
        v[2] = 1;
        v[3] = 0;
        return 4;
    }
    if (is_int(d)) {
        n = (int)(sizeof ints / sizeof ints[0]);
        memcpy(v, ints, sizeof ints);
        if (d == YG_INT32)
            n = 8; /* those that fit */
        return n;
    }
    n = (int)(sizeof floats / sizeof floats[0]);
    memcpy(v, floats, sizeof floats);
    return n;
}

static void test_conversions_between_every_pair_of_dtypes(void **state)
{
    (void)state;
    for (int si = 0; si < 7; si++) {
        yg_dtype src_dt = all_dtypes[si];
        long double v[32];
        int n = source_values(src_dt, v);
        /* An [n, 2] tensor whose column 1 holds the values, read through
         * select(base, 1, 1): stride 2, not contiguous. */
        int64_t sizes[2] = {n, 2};
        yg_tensor *base = NULL, *col = NULL;
        YG_CHECK(yg_tensor_zeros(sizes, 2, src_dt, &base));
        for (int i = 0; i < n; i++)
            write_elem(base, i * 2 + 1, v[i]);
        YG_CHECK(yg_select(base, 1, 1, &col));
        assert_false(yg_tensor_is_contiguous(col));
        for (int di = 0; di < 7; di++) {
            yg_dtype dst_dt = all_dtypes[di];
            yg_tensor *out = NULL;
            YG_CHECK(yg_to_dtype(col, dst_dt, true, &out));
            assert_int_equal(yg_tensor_dtype(out), dst_dt);
            assert_int_equal(yg_tensor_numel(out), n);
            for (int i = 0; i < n; i++) {
                long double held = read_elem(base, i * 2 + 1);
                long double want = ref_convert(held, src_dt, dst_dt);
                long double got = read_elem(out, i);
                if (!same_value(got, want))
                    print_error("%s %La -> %s: got %La, expected %La\n",
                                yg_dtype_name(src_dt), held, yg_dtype_name(dst_dt), got, want);
                assert_true(same_value(got, want));
            }
            yg_release(out);
        }
        yg_release(base);
        yg_release(col);
    }
}

static void test_float_to_integer_truncates_toward_zero_and_saturates(void **state)
{
    const double v[] = {2.9, -2.9, -0.0, 3e9, -3e9, NAN, INFINITY, -INFINITY, 1e19, -2147483648.9};
    const int32_t want32[] = {2, -2, 0, INT32_MAX, INT32_MIN, 0, INT32_MAX, INT32_MIN, INT32_MAX,
                              INT32_MIN};
    const int64_t want64[] = {2,         -2,          0,         3000000000, -3000000000,
                              0,         INT64_MAX,   INT64_MIN, INT64_MAX,  -2147483648};
    yg_tensor *src = NULL, *a = NULL, *b = NULL;
    (void)state;
    src = f64_tensor(v, 10);
    YG_CHECK(yg_to_dtype(src, YG_INT32, false, &a));
    YG_CHECK(yg_to_dtype(src, YG_INT64, false, &b));
    for (int i = 0; i < 10; i++) {
        assert_int_equal(((const int32_t *)yg_tensor_data(a))[i], want32[i]);
        assert_int_equal(((const int64_t *)yg_tensor_data(b))[i], want64[i]);
    }
    yg_release(src);
    yg_release(a);
    yg_release(b);
}

static void test_int64_wraps_into_int32_and_nonzero_is_true(void **state)
{
    const int64_t v[] = {5000000000, -5000000000, 2147483648, 0, -1};
    const int32_t want[] = {705032704, -705032704, INT32_MIN, 0, -1};
    const bool want_b[] = {true, true, true, false, true};
    const int64_t n = 5;
    yg_tensor *src = NULL, *a = NULL, *b = NULL;
    (void)state;
    YG_CHECK(yg_tensor_from_data(v, &n, 1, YG_INT64, &src));
    YG_CHECK(yg_to_dtype(src, YG_INT32, false, &a));
    YG_CHECK(yg_to_dtype(src, YG_BOOL, false, &b));
    for (int i = 0; i < n; i++) {
        assert_int_equal(((const int32_t *)yg_tensor_data(a))[i], want[i]);
        assert_int_equal(((const bool *)yg_tensor_data(b))[i], want_b[i]);
    }
    yg_release(src);
    yg_release(a);
    yg_release(b);
}

/* ---- int32 compute ---- */

static void test_int32_arithmetic_broadcasts_and_keeps_int32(void **state)
{
    const int64_t s23[] = {2, 3}, s32[] = {3, 2}, s3[] = {3};
    const double av[] = {1, -2, 3, 40000, -5, 6}, bv[] = {7, -8, 9};
    yg_tensor *a = NULL, *at = NULL, *b = NULL, *sum = NULL, *prod = NULL, *neg = NULL, *sub = NULL;
    double want_sum[6], want_prod[6], want_neg[6], want_sub[6];
    (void)state;
    /* a is stored [3, 2] and used transposed: [2, 3], non-contiguous. */
    a = yg_test_tensor(YG_INT32, s32, 2, av);
    YG_CHECK(yg_t(a, &at));
    b = yg_test_tensor(YG_INT32, s3, 1, bv);
    YG_CHECK(yg_add(at, b, 2, &sum));
    YG_CHECK(yg_mul(at, b, &prod));
    YG_CHECK(yg_neg(at, &neg));
    YG_CHECK(yg_sub(at, b, 1, &sub));
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) {
            double x = av[j * 2 + i], y = bv[j];
            want_sum[i * 3 + j] = x + 2 * y;
            want_prod[i * 3 + j] = x * y;
            want_neg[i * 3 + j] = -x;
            want_sub[i * 3 + j] = x - y;
        }
    assert_int_equal(yg_tensor_dtype(sum), YG_INT32);
    assert_int_equal(yg_tensor_dtype(prod), YG_INT32);
    YG_EXPECT_CLOSE(sum, s23, 2, want_sum, 0, 0);
    YG_EXPECT_CLOSE(prod, s23, 2, want_prod, 0, 0);
    YG_EXPECT_CLOSE(neg, s23, 2, want_neg, 0, 0);
    YG_EXPECT_CLOSE(sub, s23, 2, want_sub, 0, 0);
    yg_release(a);
    yg_release(at);
    yg_release(b);
    yg_release(sum);
    yg_release(prod);
    yg_release(neg);
    yg_release(sub);
}

static void test_int32_comparisons_give_bool(void **state)
{
    const int64_t s4[] = {4};
    const double av[] = {-3, 0, 2, 7}, bv[] = {-3, 1, 1, 8};
    const double want_eq[] = {1, 0, 0, 0}, want_lt[] = {0, 1, 0, 1}, want_gt25[] = {0, 0, 0, 1};
    const double want_mixed[] = {0, 1, 0, 1};
    yg_tensor *a = NULL, *b = NULL, *b64 = NULL, *eq = NULL, *lt = NULL, *gt = NULL, *mixed = NULL;
    (void)state;
    a = yg_test_tensor(YG_INT32, s4, 1, av);
    b = yg_test_tensor(YG_INT32, s4, 1, bv);
    b64 = yg_test_tensor(YG_INT64, s4, 1, bv);
    YG_CHECK(yg_eq(a, b, &eq));
    YG_CHECK(yg_lt(a, b, &lt));
    YG_CHECK(yg_gt_scalar(a, 2.5, &gt));
    YG_CHECK(yg_lt(a, b64, &mixed));
    assert_int_equal(yg_tensor_dtype(eq), YG_BOOL);
    YG_EXPECT_CLOSE(eq, s4, 1, want_eq, 0, 0);
    YG_EXPECT_CLOSE(lt, s4, 1, want_lt, 0, 0);
    YG_EXPECT_CLOSE(gt, s4, 1, want_gt25, 0, 0);
    YG_EXPECT_CLOSE(mixed, s4, 1, want_mixed, 0, 0);
    yg_release(a);
    yg_release(b);
    yg_release(b64);
    yg_release(eq);
    yg_release(lt);
    yg_release(gt);
    yg_release(mixed);
}

static void test_int32_reductions_promote_like_pytorch(void **state)
{
    const int64_t s23[] = {2, 3}, s2[] = {2};
    const double v[] = {2000000000, 2000000000, -7, 4, 5, 6};
    const int64_t dim1[] = {1};
    yg_tensor *a = NULL, *sum = NULL, *amax = NULL, *cs = NULL, *prod = NULL;
    const double want_sum = 4000000000.0 - 7 + 15;
    const double want_amax[] = {2000000000, 6};
    const double want_cs[] = {2000000000, 4000000000.0, 3999999993.0, 4, 9, 15};
    (void)state;
    a = yg_test_tensor(YG_INT32, s23, 2, v);
    /* sum of int32 is int64 (no overflow at 4e9). */
    YG_CHECK(yg_sum(a, &sum));
    assert_int_equal(yg_tensor_dtype(sum), YG_INT64);
    YG_EXPECT_CLOSE(sum, NULL, 0, &want_sum, 0, 0);
    YG_CHECK(yg_amax(a, dim1, 1, false, &amax));
    assert_int_equal(yg_tensor_dtype(amax), YG_INT32);
    YG_EXPECT_CLOSE(amax, s2, 1, want_amax, 0, 0);
    YG_CHECK(yg_cumsum(a, 1, &cs));
    assert_int_equal(yg_tensor_dtype(cs), YG_INT64);
    YG_EXPECT_CLOSE(cs, s23, 2, want_cs, 0, 0);
    YG_CHECK(yg_prod_dim(a, dim1, 1, false, &prod));
    assert_int_equal(yg_tensor_dtype(prod), YG_INT64);
    /* 2e9 * 2e9 * -7 overflows int64 (it wraps): check the second row. */
    double got[2];
    YG_CHECK(yg_tensor_to_f64(prod, got, 2));
    assert_true(got[1] == 120);
    yg_release(a);
    yg_release(sum);
    yg_release(amax);
    yg_release(cs);
    yg_release(prod);
}

static void test_int32_and_half_scatter_pad_where_and_in_place(void **state)
{
    const int64_t s23[] = {2, 3}, s13[] = {1, 3}, s3[] = {3}, pad[] = {1, 0};
    const double av[] = {1, -2, 3, 4, 5, -6}, iv[] = {1, 0, 1}, cv[] = {1, 0, 1};
    const double bv[] = {10, 20, 30};
    yg_tensor *a = NULL, *idx = NULL, *sc = NULL, *h = NULL, *hs = NULL, *hp = NULL;
    yg_tensor *b = NULL, *f = NULL, *cond = NULL, *w = NULL, *mx = NULL, *same = NULL;
    (void)state;
    a = yg_test_tensor(YG_INT32, s23, 2, av);
    idx = yg_test_tensor(YG_INT64, s13, 2, iv);
    /* scatter a value into int32 (the value truncates toward zero). */
    YG_CHECK(yg_scatter_value(a, 0, idx, -7.9, &sc));
    const double want_sc[] = {1, -7, 3, -7, 5, -7};
    assert_int_equal(yg_tensor_dtype(sc), YG_INT32);
    YG_EXPECT_CLOSE(sc, s23, 2, want_sc, 0, 0);
    /* ... and into float16 (rounded: 0.1 is 0x2E66). */
    YG_CHECK(yg_tensor_zeros(s23, 2, YG_FLOAT16, &h));
    YG_CHECK(yg_scatter_value(h, 0, idx, 0.1, &hs));
    assert_int_equal(bits_at(hs, 0), 0);
    assert_int_equal(bits_at(hs, 3), 0x2E66);
    /* constant padding of a float16 tensor fills with the rounded value. */
    YG_CHECK(yg_constant_pad_nd(h, pad, 2, 65520, &hp));
    assert_int_equal(yg_tensor_size(hp, 1), 4);
    assert_int_equal(bits_at(hp, 0), 0x7C00); /* 65520 rounds to inf */
    assert_int_equal(bits_at(hp, 1), 0);
    /* where and maximum on int32, in place add on int32. */
    b = yg_test_tensor(YG_INT32, s3, 1, bv);
    cond = yg_test_tensor(YG_BOOL, s3, 1, cv);
    YG_CHECK(yg_where(cond, a, b, &w));
    const double want_w[] = {1, 20, 3, 4, 20, -6};
    assert_int_equal(yg_tensor_dtype(w), YG_INT32);
    YG_EXPECT_CLOSE(w, s23, 2, want_w, 0, 0);
    YG_CHECK(yg_maximum(a, b, &mx));
    const double want_mx[] = {10, 20, 30, 10, 20, 30};
    YG_EXPECT_CLOSE(mx, s23, 2, want_mx, 0, 0);
    YG_CHECK(yg_add_(a, b, 1, &same));
    yg_release(same);
    const double want_a[] = {11, 18, 33, 14, 25, 24};
    YG_EXPECT_CLOSE(a, s23, 2, want_a, 0, 0);
    /* A float32 other would need a float32 result, which int32 self
     * cannot hold. */
    YG_CHECK(yg_tensor_full(s3, 1, 0.5, YG_FLOAT32, &f));
    same = (yg_tensor *)0x1;
    YG_EXPECT_ERROR(yg_add_(a, f, 1, &same), YG_ERR_DTYPE,
                    "add_: result dtype float32 cannot be stored in self of dtype int32");
    assert_null(same);
    yg_release(a);
    yg_release(idx);
    yg_release(sc);
    yg_release(h);
    yg_release(hs);
    yg_release(hp);
    yg_release(b);
    yg_release(f);
    yg_release(cond);
    yg_release(w);
    yg_release(mx);
}

/* ---- float16 / bfloat16 as storage ---- */

static void test_compute_ops_refuse_half_with_a_dtype_error(void **state)
{
    const int64_t s22[] = {2, 2}, d0[] = {0};
    yg_tensor *h = NULL, *b = NULL, *i64 = NULL, *idx = NULL, *out = (yg_tensor *)0x1;
    (void)state;
    YG_CHECK(yg_tensor_full(s22, 2, 1.5, YG_FLOAT16, &h));
    YG_CHECK(yg_tensor_full(s22, 2, 1.5, YG_BFLOAT16, &b));
    YG_CHECK(yg_tensor_full(s22, 2, 1, YG_INT64, &i64));
    YG_CHECK(yg_tensor_zeros(s22, 2, YG_INT64, &idx));
    YG_EXPECT_ERROR(yg_exp(h, &out), YG_ERR_DTYPE, "exp: unsupported dtype float16 for self");
    assert_null(out);
    /* add, mul.Scalar, sum and the matrix products compute them now
     * (test_ops_half_matmul.c); the rest refuse them. */
    YG_EXPECT_ERROR(yg_sub(b, b, 1, &out), YG_ERR_DTYPE, "sub: unsupported dtype bfloat16");
    /* int64 with float16 promotes to float16, which mul does not compute. */
    YG_EXPECT_ERROR(yg_mul(i64, h, &out), YG_ERR_DTYPE, "mul: unsupported dtype float16 for other");
    YG_EXPECT_ERROR(yg_mean(h, &out), YG_ERR_DTYPE, "mean: unsupported dtype float16");
    YG_EXPECT_ERROR(yg_eq(b, b, &out), YG_ERR_DTYPE, "eq: unsupported dtype bfloat16");
    YG_EXPECT_ERROR(yg_cumsum(h, 0, &out), YG_ERR_DTYPE,
                    "cumsum: self has dtype float16, a storage type on cpu", "to()");
    YG_EXPECT_ERROR(yg_prod_dim(b, d0, 1, false, &out), YG_ERR_DTYPE,
                    "prod: self has dtype bfloat16, a storage type on cpu");
    YG_EXPECT_ERROR(yg_scatter_add(h, 0, idx, h, &out), YG_ERR_DTYPE,
                    "scatter_add: self has dtype float16");
    assert_null(out);
    yg_release(h);
    yg_release(b);
    yg_release(i64);
    yg_release(idx);
}

static void test_half_storage_ops_fill_copy_view_and_index(void **state)
{
    const int64_t s23[] = {2, 3}, s2[] = {2};
    const double v[] = {0.5, -1, 2, 3, 0.1, 65504};
    const double idxv[] = {2, 0};
    yg_tensor *f = NULL, *h = NULL, *ht = NULL, *c = NULL, *idx = NULL, *sel = NULL, *same = NULL;
    yg_tensor *mx = NULL;
    (void)state;
    YG_CHECK(yg_tensor_full(s23, 2, 0.1, YG_FLOAT16, &h));
    for (int i = 0; i < 6; i++)
        assert_int_equal(bits_at(h, i), 0x2E66);
    /* copy_ converts float64 into float16 (rounding 0.1 again). */
    f = yg_test_tensor(YG_FLOAT64, s23, 2, v);
    YG_CHECK(yg_copy_(h, f, &same));
    yg_release(same);
    assert_int_equal(bits_at(h, 4), 0x2E66);
    assert_int_equal(bits_at(h, 5), 0x7BFF);
    /* clone of a transposed view keeps the dtype and the values. */
    YG_CHECK(yg_t(h, &ht));
    YG_CHECK(yg_clone(ht, &c));
    assert_int_equal(yg_tensor_dtype(c), YG_FLOAT16);
    assert_true(yg_tensor_is_contiguous(c));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++)
            assert_int_equal(bits_at(c, i * 2 + j), bits_at(h, j * 3 + i));
    idx = yg_test_tensor(YG_INT64, s2, 1, idxv);
    YG_CHECK(yg_index_select(h, 1, idx, &sel));
    assert_int_equal(yg_tensor_dtype(sel), YG_FLOAT16);
    assert_int_equal(bits_at(sel, 0), bits_at(h, 2));
    assert_int_equal(bits_at(sel, 3), bits_at(h, 3));
    /* The maximum is one of the elements: exact. */
    YG_CHECK(yg_amax(h, NULL, 0, false, &mx));
    assert_int_equal(yg_tensor_dtype(mx), YG_FLOAT16);
    assert_int_equal(bits_at(mx, 0), 0x7BFF);
    YG_CHECK(yg_zero_(h, &same));
    yg_release(same);
    assert_int_equal(bits_at(h, 5), 0);
    yg_release(f);
    yg_release(h);
    yg_release(ht);
    yg_release(c);
    yg_release(idx);
    yg_release(sel);
    yg_release(mx);
}

/* ---- to, type_as, clone ---- */

static void test_to_returns_self_when_the_dtype_matches(void **state)
{
    const int64_t s3[] = {3};
    const double v[] = {1, 2, 3};
    yg_tensor *x = NULL, *same = NULL, *copy = NULL, *as = NULL;
    (void)state;
    x = yg_test_tensor(YG_FLOAT32, s3, 1, v);
    YG_CHECK(yg_to_dtype(x, YG_FLOAT32, false, &same));
    assert_ptr_equal(same, x);
    YG_CHECK(yg_type_as(x, x, &as));
    assert_ptr_equal(as, x);
    /* copy = true always gives new storage. */
    YG_CHECK(yg_to_dtype(x, YG_FLOAT32, true, &copy));
    assert_ptr_not_equal(copy, x);
    assert_ptr_not_equal(yg_tensor_data(copy), yg_tensor_data(x));
    YG_EXPECT_CLOSE(copy, s3, 1, v, 0, 0);
    yg_release(same);
    yg_release(as);
    yg_release(copy);
    yg_release(x);
}

static void test_type_as_takes_the_dtype_of_other(void **state)
{
    const int64_t s23[] = {2, 3}, s32[] = {3, 2};
    const double v[] = {1.7, -2.2, 3.5, 4, -5.9, 6};
    double want[6];
    yg_tensor *x = NULL, *xt = NULL, *other = NULL, *y = NULL;
    (void)state;
    x = yg_test_tensor(YG_FLOAT64, s23, 2, v);
    YG_CHECK(yg_t(x, &xt));
    YG_CHECK(yg_tensor_zeros(NULL, 0, YG_INT32, &other));
    YG_CHECK(yg_type_as(xt, other, &y));
    assert_int_equal(yg_tensor_dtype(y), YG_INT32);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++)
            want[i * 2 + j] = trunc(v[j * 3 + i]);
    YG_EXPECT_CLOSE(y, s32, 2, want, 0, 0);
    yg_release(x);
    yg_release(xt);
    yg_release(other);
    yg_release(y);
}

static void test_clone_keeps_every_dtype_of_a_strided_view(void **state)
{
    const int64_t s23[] = {2, 3};
    (void)state;
    for (int k = 0; k < 7; k++) {
        yg_tensor *x = NULL, *xt = NULL, *c = NULL;
        YG_CHECK(yg_tensor_zeros(s23, 2, all_dtypes[k], &x));
        for (int i = 0; i < 6; i++)
            write_elem(x, i, all_dtypes[k] == YG_BOOL ? i % 2 : i - 2);
        YG_CHECK(yg_t(x, &xt));
        YG_CHECK(yg_clone(xt, &c));
        assert_int_equal(yg_tensor_dtype(c), all_dtypes[k]);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 2; j++)
                assert_true(same_value(read_elem(c, i * 2 + j), read_elem(x, j * 3 + i)));
        yg_release(x);
        yg_release(xt);
        yg_release(c);
    }
}

static void test_to_gradient_comes_back_in_the_dtype_of_self(void **state)
{
    const int64_t s3[] = {3};
    const double v[] = {0.5, -1, 2}, twos[] = {2, 2, 2}, ones[] = {1, 1, 1};
    yg_tensor *x = NULL, *y = NULL, *z = NULL, *loss = NULL, *g = NULL;
    (void)state;
    /* float64 -> float32: the float32 graph's gradient returns as float64. */
    x = yg_test_tensor(YG_FLOAT64, s3, 1, v);
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_to_dtype(x, YG_FLOAT32, false, &y));
    assert_true(yg_tensor_requires_grad(y));
    YG_CHECK(yg_mul_scalar(y, 2, &z));
    YG_CHECK(yg_sum(z, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    YG_CHECK(yg_tensor_grad(x, &g));
    assert_int_equal(yg_tensor_dtype(g), YG_FLOAT64);
    YG_EXPECT_CLOSE(g, s3, 1, twos, 0, 0);
    yg_release(x);
    yg_release(y);
    yg_release(z);
    yg_release(loss);
    yg_release(g);
    /* float32 -> float64 through type_as. */
    yg_tensor *other = NULL;
    x = yg_test_tensor(YG_FLOAT32, s3, 1, v);
    YG_CHECK(yg_tensor_zeros(NULL, 0, YG_FLOAT64, &other));
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_type_as(x, other, &y));
    assert_int_equal(yg_tensor_dtype(y), YG_FLOAT64);
    YG_CHECK(yg_sum(y, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    YG_CHECK(yg_tensor_grad(x, &g));
    assert_int_equal(yg_tensor_dtype(g), YG_FLOAT32);
    YG_EXPECT_CLOSE(g, s3, 1, ones, 0, 0);
    yg_release(x);
    yg_release(other);
    yg_release(y);
    yg_release(loss);
    yg_release(g);
}

/* ToCopyBackward saves self's dtype, not self, so an in-place write to
 * self after the conversion leaves the conversion's gradient intact (it
 * used to save self and fail with "modified by an in-place operation"). */
static void test_to_gradient_survives_an_in_place_write_to_self(void **state)
{
    const int64_t s3[] = {3};
    const double v[] = {0.5, -1, 2}, sixes[] = {6, 6, 6};
    yg_tensor *w = NULL, *a = NULL, *same = NULL, *y = NULL, *z = NULL, *loss = NULL, *g = NULL;
    (void)state;
    w = yg_test_tensor(YG_FLOAT64, s3, 1, v);
    YG_CHECK(yg_tensor_set_requires_grad(w, true));
    YG_CHECK(yg_mul_scalar(w, 3, &a));
    YG_CHECK(yg_to_dtype(a, YG_FLOAT32, false, &y));
    YG_CHECK(yg_add_(a, a, 1.0, &same)); /* a's version moves on */
    YG_CHECK(yg_mul_scalar(y, 2, &z));
    YG_CHECK(yg_sum(z, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    YG_CHECK(yg_tensor_grad(w, &g));
    assert_int_equal(yg_tensor_dtype(g), YG_FLOAT64);
    YG_EXPECT_CLOSE(g, s3, 1, sixes, 0, 0); /* d(sum(2 * 3w))/dw, through the old a */
    yg_release(w);
    yg_release(a);
    yg_release(same);
    yg_release(y);
    yg_release(z);
    yg_release(loss);
    yg_release(g);
}

static void test_to_integer_result_carries_no_gradient_and_half_carries_one(void **state)
{
    const int64_t s3[] = {3};
    const double v[] = {0.5, -1, 2};
    static const yg_dtype ints[] = {YG_INT64, YG_INT32, YG_BOOL};
    yg_tensor *x = NULL, *y = NULL;
    (void)state;
    x = yg_test_tensor(YG_FLOAT32, s3, 1, v);
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    for (int k = 0; k < 3; k++) {
        YG_CHECK(yg_to_dtype(x, ints[k], false, &y));
        assert_int_equal(yg_tensor_dtype(y), ints[k]);
        assert_false(yg_tensor_requires_grad(y));
        assert_null(yg_tensor_grad_fn(y));
        yg_release(y);
        y = NULL;
    }
    /* A 16-bit float carries the gradient: ToCopyBackward converts it
     * back to self's dtype. */
    for (int k = 0; k < 2; k++) {
        yg_dtype half = k == 0 ? YG_FLOAT16 : YG_BFLOAT16;
        yg_tensor *g = NULL, *ones = NULL;
        const double want[] = {1, 1, 1};
        YG_CHECK(yg_to_dtype(x, half, false, &y));
        assert_int_equal(yg_tensor_dtype(y), half);
        assert_true(yg_tensor_requires_grad(y));
        YG_CHECK(yg_tensor_full(s3, 1, 1.0, half, &ones));
        YG_CHECK(yg_backward(y, ones, false));
        YG_CHECK(yg_tensor_grad(x, &g));
        assert_int_equal(yg_tensor_dtype(g), YG_FLOAT32);
        YG_EXPECT_CLOSE(g, s3, 1, want, 0, 0);
        yg_tensor_zero_grad(x);
        yg_release(g);
        yg_release(ones);
        yg_release(y);
        y = NULL;
    }
    /* Under no-grad, or from a detached tensor, it converts without one. */
    bool prev = yg_set_grad_enabled(false);
    YG_CHECK(yg_to_dtype(x, YG_FLOAT16, false, &y));
    yg_set_grad_enabled(prev);
    assert_int_equal(yg_tensor_dtype(y), YG_FLOAT16);
    assert_false(yg_tensor_requires_grad(y));
    yg_release(y);
    yg_release(x);
}

static void test_to_rejects_an_invalid_dtype(void **state)
{
    const int64_t s3[] = {3};
    yg_tensor *x = NULL, *out = (yg_tensor *)0x1;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s3, 1, YG_FLOAT32, &x));
    YG_EXPECT_ERROR(yg_to_copy(x, (yg_dtype)42, &out), YG_ERR_DTYPE, "to_copy: invalid dtype 42");
    assert_null(out);
    out = (yg_tensor *)0x1;
    YG_EXPECT_ERROR(
        yg_to_dtype(x, (yg_dtype)-1, false, &out), YG_ERR_DTYPE, "to: to_copy: invalid dtype -1");
    assert_null(out);
    YG_EXPECT_ERROR(yg_to_dtype(NULL, YG_FLOAT32, false, &out), YG_ERR_INVALID_ARGUMENT,
                    "to: self is undefined");
    YG_EXPECT_ERROR(yg_type_as(x, NULL, &out), YG_ERR_INVALID_ARGUMENT,
                    "type_as: other is undefined");
    yg_release(x);
}

static void test_to_converts_empty_and_zero_dim_tensors(void **state)
{
    const int64_t s0[] = {0, 3};
    yg_tensor *e = NULL, *eh = NULL, *s = NULL, *sh = NULL;
    double back;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s0, 2, YG_FLOAT64, &e));
    YG_CHECK(yg_to_dtype(e, YG_BFLOAT16, false, &eh));
    assert_int_equal(yg_tensor_numel(eh), 0);
    assert_int_equal(yg_tensor_ndim(eh), 2);
    YG_CHECK(yg_tensor_scalar(-7.75, YG_INT32, &s));
    YG_CHECK(yg_to_dtype(s, YG_FLOAT16, false, &sh));
    assert_int_equal(yg_tensor_ndim(sh), 0);
    YG_CHECK(yg_tensor_item(sh, &back));
    assert_true(back == -7.0); /* int32 truncated -7.75 to -7 */
    yg_release(e);
    yg_release(eh);
    yg_release(s);
    yg_release(sh);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_dtypes_have_names_and_sizes),
        cmocka_unit_test(test_binary_ops_promote_along_the_lattice),
        cmocka_unit_test(test_half_values_convert_before_a_float32_add),
        cmocka_unit_test(test_float16_rounds_to_nearest_even_with_subnormals_and_overflow),
        cmocka_unit_test(test_bfloat16_rounds_to_nearest_even_with_subnormals_and_overflow),
        cmocka_unit_test(test_nan_stays_nan_in_every_floating_dtype),
        cmocka_unit_test(test_int64_rounds_once_into_half_dtypes),
        cmocka_unit_test(test_half_bit_patterns_decode_exactly),
        cmocka_unit_test(test_half_rounding_matches_a_nearest_even_search),
        cmocka_unit_test(test_conversions_between_every_pair_of_dtypes),
        cmocka_unit_test(test_float_to_integer_truncates_toward_zero_and_saturates),
        cmocka_unit_test(test_int64_wraps_into_int32_and_nonzero_is_true),
        cmocka_unit_test(test_int32_arithmetic_broadcasts_and_keeps_int32),
        cmocka_unit_test(test_int32_comparisons_give_bool),
        cmocka_unit_test(test_int32_reductions_promote_like_pytorch),
        cmocka_unit_test(test_int32_and_half_scatter_pad_where_and_in_place),
        cmocka_unit_test(test_compute_ops_refuse_half_with_a_dtype_error),
        cmocka_unit_test(test_half_storage_ops_fill_copy_view_and_index),
        cmocka_unit_test(test_to_returns_self_when_the_dtype_matches),
        cmocka_unit_test(test_type_as_takes_the_dtype_of_other),
        cmocka_unit_test(test_clone_keeps_every_dtype_of_a_strided_view),
        cmocka_unit_test(test_to_gradient_comes_back_in_the_dtype_of_self),
        cmocka_unit_test(test_to_gradient_survives_an_in_place_write_to_self),
        cmocka_unit_test(test_to_integer_result_carries_no_gradient_and_half_carries_one),
        cmocka_unit_test(test_to_rejects_an_invalid_dtype),
        cmocka_unit_test(test_to_converts_empty_and_zero_dim_tensors),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
