/*
 * test_ops_binary.c - forward values of the binary and ternary pointwise
 * ops (maximum, minimum, atan2, remainder, pow.Tensor, lerp, addcmul,
 * addcdiv, where, masked_fill), the comparisons and the logical ops,
 * against naive float64 loops written here; and their bad-input messages.
 *
 * Each binary op of the table runs on float32 and float64 with equal
 * shapes, with other broadcast over rows ([4, 3] with [3]), with a
 * transposed self and with 0-dim and empty operands.
 */
#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_binary_math.h"
#include "yagrad/ops_blend.h"
#include "yagrad/ops_comparison.h"
#include "yagrad/ops_views.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef yg_status (*binary_fn)(const yg_tensor *, const yg_tensor *, yg_tensor **);

typedef struct binary_case {
    const char *name;
    binary_fn op;
    double (*ref)(double, double);
    double lo, hi;   /* range of self */
    double olo, ohi; /* range of other */
} binary_case;

static double ref_maximum(double a, double b) {
    return a > b ? a : b;
}
static double ref_minimum(double a, double b) {
    return a < b ? a : b;
}
static double ref_remainder(double a, double b) {
    return a - floor(a / b) * b;
}
static double ref_lerp(double a, double b) {
    return a + 0.25 * (b - a);
}
static double ref_eq(double a, double b) {
    return a == b;
}
static double ref_ne(double a, double b) {
    return a != b;
}
static double ref_lt(double a, double b) {
    return a < b;
}
static double ref_le(double a, double b) {
    return a <= b;
}
static double ref_gt(double a, double b) {
    return a > b;
}
static double ref_ge(double a, double b) {
    return a >= b;
}
static double ref_and(double a, double b) {
    return a != 0 && b != 0;
}
static double ref_or(double a, double b) {
    return a != 0 || b != 0;
}
static double ref_xor(double a, double b) {
    return (a != 0) != (b != 0);
}

static yg_status w_lerp(const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    return yg_lerp_scalar(a, b, 0.25, o);
}

/* Values are rounded to a multiple of 0.5 for the comparisons (see
 * round_inputs), so that equal elements occur. */
static const binary_case binary_cases[] = {
    {"maximum", yg_maximum, ref_maximum, -2, 2, -2, 2},
    {"minimum", yg_minimum, ref_minimum, -2, 2, -2, 2},
    {"atan2", yg_atan2, atan2, -2, 2, -2, 2},
    {"remainder", yg_remainder, ref_remainder, -5, 5, 0.5, 2},
    {"remainder", yg_remainder, ref_remainder, -5, 5, -2, -0.5},
    {"pow", yg_pow, pow, 0.1, 3, -2, 2},
    {"lerp.Scalar", w_lerp, ref_lerp, -2, 2, -2, 2},
    {"eq", yg_eq, ref_eq, -1, 1, -1, 1},
    {"ne", yg_ne, ref_ne, -1, 1, -1, 1},
    {"lt", yg_lt, ref_lt, -1, 1, -1, 1},
    {"le", yg_le, ref_le, -1, 1, -1, 1},
    {"gt", yg_gt, ref_gt, -1, 1, -1, 1},
    {"ge", yg_ge, ref_ge, -1, 1, -1, 1},
    {"logical_and", yg_logical_and, ref_and, -1, 1, -1, 1},
    {"logical_or", yg_logical_or, ref_or, -1, 1, -1, 1},
    {"logical_xor", yg_logical_xor, ref_xor, -1, 1, -1, 1},
};
#define N_BINARY ((int)(sizeof binary_cases / sizeof binary_cases[0]))

static bool is_bool_op(const binary_case *c) {
    return c->ref == ref_eq || c->ref == ref_ne || c->ref == ref_lt || c->ref == ref_le ||
           c->ref == ref_gt || c->ref == ref_ge || c->ref == ref_and || c->ref == ref_or ||
           c->ref == ref_xor;
}

/* A random tensor; for bool ops rounded to multiples of 0.5 so that ties
 * and zeros (false) occur. */
static yg_tensor *operand(const binary_case *c,
                          yg_dtype dt,
                          const int64_t *s,
                          int64_t nd,
                          bool other,
                          uint64_t seed) {
    yg_tensor *t = yg_test_rand(dt, s, nd, other ? c->olo : c->lo, other ? c->ohi : c->hi, seed);
    if (is_bool_op(c)) {
        double *v = yg_test_values(t);
        for (int64_t i = 0; i < yg_tensor_numel(t); i++)
            v[i] = round(v[i] * 2) / 2;
        yg_release(t);
        t = yg_test_tensor(dt, s, nd, v);
        free(v);
    }
    return t;
}

/* Checks op(a, b) element by element against ref over the broadcast of
 * a's and b's shapes (given as out_sizes). */
static void expect_binary(const binary_case *c,
                          const yg_tensor *a,
                          const yg_tensor *b,
                          const int64_t *out_sizes,
                          int64_t out_ndim) {
    double *av = yg_test_values(a), *bv = yg_test_values(b), *expected, *got;
    int64_t n = 1, an = yg_tensor_ndim(a), bn = yg_tensor_ndim(b);
    bool f32 = yg_tensor_dtype(a) == YG_FLOAT32 || yg_tensor_dtype(b) == YG_FLOAT32;
    double tol = f32 ? 2e-6 : 1e-14;
    yg_tensor *y = NULL;

    for (int64_t d = 0; d < out_ndim; d++)
        n *= out_sizes[d];
    expected = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        /* Row-major index i into the broadcast operands. */
        int64_t ai = 0, bi = 0, astride = 1, bstride = 1, rem = i;
        for (int64_t d = out_ndim - 1; d >= 0; d--) {
            int64_t k = rem % out_sizes[d];
            int64_t ad = d - (out_ndim - an), bd = d - (out_ndim - bn);
            rem /= out_sizes[d];
            if (ad >= 0) {
                int64_t sz = yg_tensor_sizes(a)[ad];
                ai += (sz == 1 ? 0 : k) * astride;
                astride *= sz;
            }
            if (bd >= 0) {
                int64_t sz = yg_tensor_sizes(b)[bd];
                bi += (sz == 1 ? 0 : k) * bstride;
                bstride *= sz;
            }
        }
        expected[i] = c->ref(av[ai], bv[bi]);
    }
    YG_CHECK(c->op(a, b, &y));
    if (is_bool_op(c))
        assert_int_equal(yg_tensor_dtype(y), YG_BOOL);
    got = yg_test_values(y);
    for (int64_t i = 0; i < n; i++) {
        if (isnan(got[i]) && isnan(expected[i]))
            continue;
        if (!(fabs(got[i] - expected[i]) <= tol + tol * fabs(expected[i]))) {
            print_error("%s: element %lld is %.17g, expected %.17g\n",
                        c->name,
                        (long long)i,
                        got[i],
                        expected[i]);
            fail();
        }
    }
    YG_EXPECT_CLOSE(y, out_sizes, out_ndim, expected, tol, tol);
    free(got);
    free(expected);
    free(av);
    free(bv);
    yg_release(y);
}

static void test_binary_ops_match_reference_on_equal_shapes(void **state) {
    const int64_t s[] = {4, 3};
    (void)state;
    for (int d = 0; d < 2; d++) {
        yg_dtype dt = d ? YG_FLOAT64 : YG_FLOAT32;
        for (int k = 0; k < N_BINARY; k++) {
            yg_tensor *a = operand(&binary_cases[k], dt, s, 2, false, 3 + k);
            yg_tensor *b = operand(&binary_cases[k], dt, s, 2, true, 50 + k);
            expect_binary(&binary_cases[k], a, b, s, 2);
            yg_release(a);
            yg_release(b);
        }
    }
}

static void test_binary_ops_broadcast_other_over_rows(void **state) {
    const int64_t s[] = {4, 3}, r[] = {3};
    (void)state;
    for (int k = 0; k < N_BINARY; k++) {
        yg_tensor *a = operand(&binary_cases[k], YG_FLOAT64, s, 2, false, 7 + k);
        yg_tensor *b = operand(&binary_cases[k], YG_FLOAT64, r, 1, true, 70 + k);
        expect_binary(&binary_cases[k], a, b, s, 2);
        expect_binary(&binary_cases[k], b, a, s, 2);
        yg_release(a);
        yg_release(b);
    }
}

static void test_binary_ops_on_transposed_self_match_reference(void **state) {
    const int64_t s[] = {3, 4}, ts[] = {4, 3};
    (void)state;
    for (int k = 0; k < N_BINARY; k++) {
        yg_tensor *a = operand(&binary_cases[k], YG_FLOAT64, s, 2, false, 9 + k), *at = NULL;
        yg_tensor *b = operand(&binary_cases[k], YG_FLOAT64, ts, 2, true, 90 + k);
        YG_CHECK(yg_t(a, &at));
        expect_binary(&binary_cases[k], at, b, ts, 2);
        yg_release(at);
        yg_release(a);
        yg_release(b);
    }
}

static void test_binary_ops_accept_0_dim_and_empty_operands(void **state) {
    const int64_t s[] = {2, 3}, e[] = {0, 3};
    (void)state;
    for (int k = 0; k < N_BINARY; k++) {
        const binary_case *c = &binary_cases[k];
        yg_tensor *a = operand(c, YG_FLOAT64, s, 2, false, 1 + k), *z = NULL, *empty = NULL;
        YG_CHECK(yg_tensor_scalar(0.5 * (c->olo + c->ohi) + 0.25, YG_FLOAT64, &z));
        expect_binary(c, a, z, s, 2);
        YG_CHECK(yg_tensor_zeros(e, 2, YG_FLOAT32, &empty));
        expect_binary(c, empty, z, e, 2);
        yg_release(a);
        yg_release(z);
        yg_release(empty);
    }
}

static void test_maximum_and_minimum_propagate_nan(void **state) {
    const int64_t s[] = {3};
    const double a[] = {NAN, 1, 2}, b[] = {0, NAN, 1}, expected[] = {NAN, NAN, 2};
    const double expected_min[] = {NAN, NAN, 1};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 1, a), *y = yg_test_tensor(YG_FLOAT64, s, 1, b);
    yg_tensor *z = NULL;
    (void)state;
    YG_CHECK(yg_maximum(x, y, &z));
    YG_EXPECT_CLOSE(z, s, 1, expected, 0, 0);
    yg_release(z);
    YG_CHECK(yg_minimum(x, y, &z));
    YG_EXPECT_CLOSE(z, s, 1, expected_min, 0, 0);
    yg_release(z);
    yg_release(x);
    yg_release(y);
}

static void test_maximum_of_int64_stays_int64(void **state) {
    const int64_t s[] = {3};
    const double a[] = {-4, 5, 9}, b[] = {3, 5, -1}, expected[] = {3, 5, 9};
    yg_tensor *x = yg_test_tensor(YG_INT64, s, 1, a), *y = yg_test_tensor(YG_INT64, s, 1, b);
    yg_tensor *z = NULL;
    (void)state;
    YG_CHECK(yg_maximum(x, y, &z));
    assert_int_equal(yg_tensor_dtype(z), YG_INT64);
    YG_EXPECT_CLOSE(z, s, 1, expected, 0, 0);
    yg_release(z);
    yg_release(x);
    yg_release(y);
}

static void test_remainder_takes_the_sign_of_other(void **state) {
    const int64_t s[] = {4};
    const double a[] = {5, -5, 5, -5}, b[] = {3, 3, -3, -3}, expected[] = {2, 1, -1, -2};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 1, a), *y = yg_test_tensor(YG_FLOAT64, s, 1, b);
    yg_tensor *z = NULL;
    (void)state;
    YG_CHECK(yg_remainder(x, y, &z));
    YG_EXPECT_CLOSE(z, s, 1, expected, 0, 0);
    yg_release(z);
    YG_CHECK(yg_remainder_scalar(x, -3, &z));
    {
        const double e2[] = {-1, -2, -1, -2};
        YG_EXPECT_CLOSE(z, s, 1, e2, 0, 0);
    }
    yg_release(z);
    yg_release(x);
    yg_release(y);
}

static void test_ternary_ops_match_reference(void **state) {
    const int64_t s[] = {2, 3}, r[] = {3};
    yg_tensor *a = yg_test_rand(YG_FLOAT64, s, 2, -1, 1, 1),
              *b = yg_test_rand(YG_FLOAT64, r, 1, -1, 1, 2);
    yg_tensor *c = yg_test_rand(YG_FLOAT64, s, 2, 0.5, 2, 3),
              *w = yg_test_rand(YG_FLOAT64, r, 1, 0, 1, 4);
    yg_tensor *y = NULL;
    double *av = yg_test_values(a), *bv = yg_test_values(b), *cv = yg_test_values(c);
    double *wv = yg_test_values(w), mul_e[6], div_e[6], lerp_e[6];
    (void)state;
    for (int i = 0; i < 6; i++) {
        mul_e[i] = av[i] + 0.5 * bv[i % 3] * cv[i];
        div_e[i] = av[i] - 2 * bv[i % 3] / cv[i];
        lerp_e[i] = av[i] + wv[i % 3] * (cv[i] - av[i]);
    }
    YG_CHECK(yg_addcmul(a, b, c, 0.5, &y));
    YG_EXPECT_CLOSE(y, s, 2, mul_e, 1e-15, 1e-15);
    yg_release(y);
    YG_CHECK(yg_addcdiv(a, b, c, -2, &y));
    YG_EXPECT_CLOSE(y, s, 2, div_e, 1e-15, 1e-15);
    yg_release(y);
    YG_CHECK(yg_lerp(a, c, w, &y));
    YG_EXPECT_CLOSE(y, s, 2, lerp_e, 1e-15, 1e-15);
    yg_release(y);
    free(av);
    free(bv);
    free(cv);
    free(wv);
    yg_release(a);
    yg_release(b);
    yg_release(c);
    yg_release(w);
}

static void test_where_and_masked_fill_select_by_bool_mask(void **state) {
    const int64_t s[] = {2, 3}, r[] = {3};
    const double cv[] = {1, 0, 1}, av[] = {1, 2, 3, 4, 5, 6}, bv[] = {-1, -2, -3};
    const double where_e[] = {1, -2, 3, 4, -2, 6}, fill_e[] = {9, 2, 9, 9, 5, 9};
    const double so_e[] = {1, 7, 3, 4, 7, 6};
    yg_tensor *cond = yg_test_tensor(YG_BOOL, r, 1, cv), *a = yg_test_tensor(YG_FLOAT32, s, 2, av);
    yg_tensor *b = yg_test_tensor(YG_FLOAT32, r, 1, bv), *y = NULL;
    (void)state;
    YG_CHECK(yg_where(cond, a, b, &y));
    assert_int_equal(yg_tensor_dtype(y), YG_FLOAT32);
    YG_EXPECT_CLOSE(y, s, 2, where_e, 0, 0);
    yg_release(y);
    YG_CHECK(yg_where_scalarother(cond, a, 7, &y));
    YG_EXPECT_CLOSE(y, s, 2, so_e, 0, 0);
    yg_release(y);
    YG_CHECK(yg_where_scalarself(cond, 7, b, &y));
    {
        const int64_t s2[] = {3};
        const double e2[] = {7, -2, 7};
        YG_EXPECT_CLOSE(y, s2, 1, e2, 0, 0);
    }
    yg_release(y);
    YG_CHECK(yg_masked_fill(a, cond, 9, &y));
    assert_int_equal(yg_tensor_dtype(y), YG_FLOAT32);
    YG_EXPECT_CLOSE(y, s, 2, fill_e, 0, 0);
    yg_release(y);
    yg_release(cond);
    yg_release(a);
    yg_release(b);
}

static void test_scalar_comparisons_compare_as_double(void **state) {
    const int64_t s[] = {4};
    const double v[] = {1, 3, 4, -2};
    const double lt_e[] = {1, 1, 0, 1}, eq_e[] = {0, 0, 0, 0}, ge_e[] = {0, 0, 1, 0};
    yg_tensor *x = yg_test_tensor(YG_INT64, s, 1, v), *y = NULL;
    (void)state;
    YG_CHECK(yg_lt_scalar(x, 3.5, &y));
    assert_int_equal(yg_tensor_dtype(y), YG_BOOL);
    YG_EXPECT_CLOSE(y, s, 1, lt_e, 0, 0);
    yg_release(y);
    YG_CHECK(yg_eq_scalar(x, 3.5, &y));
    YG_EXPECT_CLOSE(y, s, 1, eq_e, 0, 0);
    yg_release(y);
    YG_CHECK(yg_ge_scalar(x, 3.5, &y));
    YG_EXPECT_CLOSE(y, s, 1, ge_e, 0, 0);
    yg_release(y);
    YG_CHECK(yg_ne_scalar(x, 3, &y));
    {
        const double e[] = {1, 0, 1, 1};
        YG_EXPECT_CLOSE(y, s, 1, e, 0, 0);
    }
    yg_release(y);
    YG_CHECK(yg_le_scalar(x, 3, &y));
    {
        const double e[] = {1, 1, 0, 1};
        YG_EXPECT_CLOSE(y, s, 1, e, 0, 0);
    }
    yg_release(y);
    YG_CHECK(yg_gt_scalar(x, 3, &y));
    {
        const double e[] = {0, 0, 1, 0};
        YG_EXPECT_CLOSE(y, s, 1, e, 0, 0);
    }
    yg_release(y);
    yg_release(x);
}

static void test_comparisons_of_nan_are_false_except_ne(void **state) {
    const int64_t s[] = {1};
    const double v[] = {NAN}, f[] = {0}, t[] = {1};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 1, v), *y = NULL;
    (void)state;
    YG_CHECK(yg_eq(x, x, &y));
    YG_EXPECT_CLOSE(y, s, 1, f, 0, 0);
    yg_release(y);
    YG_CHECK(yg_ne(x, x, &y));
    YG_EXPECT_CLOSE(y, s, 1, t, 0, 0);
    yg_release(y);
    YG_CHECK(yg_le(x, x, &y));
    YG_EXPECT_CLOSE(y, s, 1, f, 0, 0);
    yg_release(y);
    YG_CHECK(yg_logical_not(x, &y)); /* NaN is non-zero: true, so not is false */
    YG_EXPECT_CLOSE(y, s, 1, f, 0, 0);
    yg_release(y);
    yg_release(x);
}

static void test_comparisons_of_bool_and_int64_operands(void **state) {
    const int64_t s[] = {3};
    const double bv[] = {1, 0, 1}, iv[] = {1, 1, 2}, eq_e[] = {1, 0, 0}, not_e[] = {0, 1, 0};
    yg_tensor *b = yg_test_tensor(YG_BOOL, s, 1, bv), *i = yg_test_tensor(YG_INT64, s, 1, iv);
    yg_tensor *y = NULL;
    (void)state;
    YG_CHECK(yg_eq(b, i, &y));
    YG_EXPECT_CLOSE(y, s, 1, eq_e, 0, 0);
    yg_release(y);
    YG_CHECK(yg_logical_not(b, &y));
    YG_EXPECT_CLOSE(y, s, 1, not_e, 0, 0);
    yg_release(y);
    YG_CHECK(yg_logical_and(b, b, &y));
    YG_EXPECT_CLOSE(y, s, 1, bv, 0, 0);
    yg_release(y);
    yg_release(b);
    yg_release(i);
}

static void test_comparisons_reject_shapes_that_do_not_broadcast(void **state) {
    const int64_t as[] = {2, 3}, bs[] = {2};
    yg_tensor *a = NULL, *b = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(as, 2, YG_FLOAT32, &a));
    YG_CHECK(yg_tensor_zeros(bs, 1, YG_FLOAT32, &b));
    YG_EXPECT_ERROR(
        yg_lt(a, b, &y), YG_ERR_SHAPE, "lt: cannot broadcast self [2, 3] with other [2]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_logical_or(a, b, &y), YG_ERR_SHAPE, "logical_or: cannot broadcast");
    assert_null(y);
    YG_EXPECT_ERROR(yg_where(a, a, b, &y), YG_ERR_SHAPE, "where: cannot broadcast");
    assert_null(y);
    yg_release(a);
    yg_release(b);
}

static void test_binary_math_rejects_integer_operands(void **state) {
    const int64_t s[] = {2};
    yg_tensor *a = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 1, YG_INT64, &a));
    YG_EXPECT_ERROR(yg_atan2(a, a, &y), YG_ERR_DTYPE, "atan2: unsupported dtype int64 for self");
    assert_null(y);
    YG_EXPECT_ERROR(yg_div(a, a, &y), YG_ERR_DTYPE, "div: unsupported dtype int64 for self");
    assert_null(y);
    yg_release(a);
}

/* Integer div with a rounding mode and remainder, as Python and PyTorch
 * compute them (-7 // 2 == -4, -7 % 2 == 1, 7 % -2 == -1, trunc(-7 / 2)
 * == -3), exact, in the inputs' integer dtype; the most negative value
 * divided by -1 wraps to itself instead of trapping. */
static void check_integer_division(yg_dtype dtype, double most_negative) {
    const int64_t s[] = {6};
    const double a[] = {7, -7, 7, -7, 0, most_negative}, b[] = {2, 2, -2, -2, 3, -1};
    const double tr[] = {3, -3, -3, 3, 0, most_negative};
    const double fl[] = {3, -4, -4, 3, 0, most_negative};
    const double rem[] = {1, 1, -1, -1, 0, 0};
    yg_tensor *x = yg_test_tensor(dtype, s, 1, a), *y = yg_test_tensor(dtype, s, 1, b), *z = NULL;

    YG_CHECK(yg_div_mode(x, y, YG_ROUNDING_MODE_TRUNC, &z));
    assert_int_equal(yg_tensor_dtype(z), dtype);
    YG_EXPECT_CLOSE(z, s, 1, tr, 0, 0);
    yg_release(z);
    YG_CHECK(yg_div_mode(x, y, YG_ROUNDING_MODE_FLOOR, &z));
    assert_int_equal(yg_tensor_dtype(z), dtype);
    YG_EXPECT_CLOSE(z, s, 1, fl, 0, 0);
    yg_release(z);
    YG_CHECK(yg_remainder(x, y, &z));
    assert_int_equal(yg_tensor_dtype(z), dtype);
    YG_EXPECT_CLOSE(z, s, 1, rem, 0, 0);
    yg_release(z);
    /* a == (a // b) * b + a % b, element by element */
    for (int i = 0; i < 5; i++)
        assert_true(fl[i] * b[i] + rem[i] == a[i]);
    YG_CHECK(yg_remainder_scalar(x, -3, &z));
    {
        /* 2^63 and 2^31 are both 2 modulo 3 */
        const double e[] = {-2, -1, -2, -1, 0, -2};
        YG_EXPECT_CLOSE(z, s, 1, e, 0, 0);
    }
    yg_release(z);
    yg_release(x);
    yg_release(y);
}

static void test_integer_div_and_remainder_follow_python(void **state) {
    (void)state;
    check_integer_division(YG_INT64, -9223372036854775808.0);
    check_integer_division(YG_INT32, -2147483648.0);
}

/* int32 with int64 promotes to int64; a float operand makes it floating. */
static void test_integer_division_promotes_mixed_operands(void **state) {
    const int64_t s[] = {2};
    const double a[] = {-7, 9}, b[] = {2, -4}, fl[] = {-4, -3}, half[] = {0.5, 0.5};
    yg_tensor *x = yg_test_tensor(YG_INT32, s, 1, a), *y = yg_test_tensor(YG_INT64, s, 1, b);
    yg_tensor *h = yg_test_tensor(YG_FLOAT32, s, 1, half), *z = NULL;
    (void)state;
    YG_CHECK(yg_div_floor(x, y, &z));
    assert_int_equal(yg_tensor_dtype(z), YG_INT64);
    YG_EXPECT_CLOSE(z, s, 1, fl, 0, 0);
    yg_release(z);
    YG_CHECK(yg_div_trunc(x, h, &z));
    assert_int_equal(yg_tensor_dtype(z), YG_FLOAT32);
    {
        const double e[] = {-14, 18};
        YG_EXPECT_CLOSE(z, s, 1, e, 0, 0);
    }
    yg_release(z);
    yg_release(h);
    yg_release(x);
    yg_release(y);
}

/* A 0 divisor on integers is an error naming the op, the argument and the
 * first zero (broadcast divisors included), and nothing is returned; on
 * floating inputs it stays IEEE arithmetic. */
static void test_integer_division_by_zero_is_an_error(void **state) {
    const int64_t s[] = {2, 3}, col[] = {2, 1};
    const double a[] = {1, 2, 3, 4, 5, 6}, b[] = {1, 0};
    yg_tensor *x = yg_test_tensor(YG_INT64, s, 2, a), *y = yg_test_tensor(YG_INT64, col, 2, b);
    yg_tensor *x32 = yg_test_tensor(YG_INT32, s, 2, a), *f = yg_test_tensor(YG_FLOAT64, s, 2, a);
    yg_tensor *fy = yg_test_tensor(YG_FLOAT64, col, 2, b), *z = NULL;
    (void)state;
    YG_EXPECT_ERROR(yg_remainder(x, y, &z), YG_ERR_INVALID_ARGUMENT,
                    "remainder: integer division by zero: other holds a 0 (at [1, 0]; the inputs "
                    "are int64)");
    assert_null(z);
    YG_EXPECT_ERROR(yg_div_mode(x32, y, YG_ROUNDING_MODE_FLOOR, &z), YG_ERR_INVALID_ARGUMENT,
                    "div: integer division by zero: other holds a 0 (at [1, 0]; the inputs are "
                    "int64)");
    assert_null(z);
    YG_CHECK(yg_div_mode(x32, x32, YG_ROUNDING_MODE_TRUNC, &z)); /* no zero: fine */
    yg_release(z);
    YG_EXPECT_ERROR(yg_div_trunc(y, y, &z), YG_ERR_INVALID_ARGUMENT,
                    "div: integer division by zero: other holds a 0 (at [1, 0]");
    assert_null(z);
    YG_EXPECT_ERROR(yg_remainder_scalar(x32, 0, &z), YG_ERR_INVALID_ARGUMENT,
                    "remainder: integer division by zero: other is 0 (the input is int32)");
    assert_null(z);
    YG_CHECK(yg_div_mode(f, fy, YG_ROUNDING_MODE_FLOOR, &z));
    {
        const double e[] = {1, 2, 3, INFINITY, INFINITY, INFINITY};
        YG_EXPECT_CLOSE(z, s, 2, e, 0, 0);
    }
    yg_release(z);
    yg_release(fy);
    yg_release(f);
    yg_release(x32);
    yg_release(x);
    yg_release(y);
}

static void test_comparisons_of_inputs_that_require_grad_do_not_require_grad(void **state) {
    const int64_t s[] = {2};
    yg_tensor *a = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 1, YG_FLOAT64, &a));
    YG_CHECK(yg_tensor_set_requires_grad(a, true));
    YG_CHECK(yg_gt_scalar(a, 0, &y));
    assert_false(yg_tensor_requires_grad(y));
    assert_null(yg_tensor_grad_fn_name(y));
    yg_release(y);
    YG_CHECK(yg_logical_and(a, a, &y));
    assert_false(yg_tensor_requires_grad(y));
    yg_release(y);
    yg_release(a);
}

static void test_div_with_rounding_modes(void **state) {
    const int64_t s[] = {4};
    const double a[] = {7, -7, 7.5, -0.5}, b[] = {2, 2, -2, 3};
    const double tr[] = {3, -3, -3, 0}, fl[] = {3, -4, -4, -1};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 1, a), *y = yg_test_tensor(YG_FLOAT64, s, 1, b),
              *z = NULL;
    (void)state;
    YG_CHECK(yg_div_mode(x, y, YG_ROUNDING_MODE_TRUNC, &z));
    YG_EXPECT_CLOSE(z, s, 1, tr, 0, 0);
    yg_release(z);
    YG_CHECK(yg_div_mode(x, y, YG_ROUNDING_MODE_FLOOR, &z));
    YG_EXPECT_CLOSE(z, s, 1, fl, 0, 0);
    yg_release(z);
    YG_EXPECT_ERROR(yg_div_mode(x, y, (yg_rounding_mode)2, &z),
                    YG_ERR_INVALID_ARGUMENT,
                    "div: rounding_mode must be trunc (0) or floor (1), not 2");
    assert_null(z);
    yg_release(x);
    yg_release(y);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binary_ops_match_reference_on_equal_shapes),
        cmocka_unit_test(test_binary_ops_broadcast_other_over_rows),
        cmocka_unit_test(test_binary_ops_on_transposed_self_match_reference),
        cmocka_unit_test(test_binary_ops_accept_0_dim_and_empty_operands),
        cmocka_unit_test(test_maximum_and_minimum_propagate_nan),
        cmocka_unit_test(test_maximum_of_int64_stays_int64),
        cmocka_unit_test(test_remainder_takes_the_sign_of_other),
        cmocka_unit_test(test_ternary_ops_match_reference),
        cmocka_unit_test(test_where_and_masked_fill_select_by_bool_mask),
        cmocka_unit_test(test_scalar_comparisons_compare_as_double),
        cmocka_unit_test(test_comparisons_of_nan_are_false_except_ne),
        cmocka_unit_test(test_comparisons_of_bool_and_int64_operands),
        cmocka_unit_test(test_comparisons_reject_shapes_that_do_not_broadcast),
        cmocka_unit_test(test_binary_math_rejects_integer_operands),
        cmocka_unit_test(test_div_with_rounding_modes),
        cmocka_unit_test(test_integer_div_and_remainder_follow_python),
        cmocka_unit_test(test_integer_division_promotes_mixed_operands),
        cmocka_unit_test(test_integer_division_by_zero_is_an_error),
        cmocka_unit_test(test_comparisons_of_inputs_that_require_grad_do_not_require_grad),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
