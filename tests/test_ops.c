/*
 * test_ops.c - forward values of the ops against naive float64 loops
 * written here, independently of the kernels; and each family's
 * bad-input messages.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_unary_math.h"
#include "yagrad/ops_trigonometric.h"
#include "yagrad/ops_activations.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_softmax.h"
#include "yagrad/ops_losses.h"

typedef yg_status (*unary_fn)(const yg_tensor *, yg_tensor **);

static double ref_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double ref_relu(double x) { return x > 0 ? x : 0; }
static double ref_neg(double x) { return -x; }

static void check_unary(unary_fn op, double (*ref)(double), double lo, double hi, yg_dtype dtype)
{
    const int64_t s[] = {5, 7};
    yg_tensor *x = yg_test_rand(dtype, s, 2, lo, hi, 7), *y = NULL;
    double *xv = yg_test_values(x), expected[35];
    double tol = dtype == YG_FLOAT32 ? 1e-6 : 1e-14;
    for (int i = 0; i < 35; i++)
        expected[i] = ref(xv[i]);
    YG_CHECK(op(x, &y));
    assert_int_equal(yg_tensor_dtype(y), dtype);
    YG_EXPECT_CLOSE(y, s, 2, expected, tol, tol);
    free(xv);
    yg_release(y);
    yg_release(x);
}

static void test_unary_ops_match_libm(void **state)
{
    (void)state;
    for (int d = 0; d < 2; d++) {
        yg_dtype dt = d ? YG_FLOAT64 : YG_FLOAT32;
        check_unary(yg_exp, exp, -3, 3, dt);
        check_unary(yg_log, log, 0.1, 5, dt);
        check_unary(yg_tanh, tanh, -3, 3, dt);
        check_unary(yg_sigmoid, ref_sigmoid, -5, 5, dt);
        check_unary(yg_relu, ref_relu, -1, 1, dt);
        check_unary(yg_neg, ref_neg, -1, 1, dt);
    }
}

static void test_add_broadcasts_row_over_matrix_with_alpha(void **state)
{
    const int64_t ms[] = {2, 3}, rs[] = {3};
    const double mv[] = {1, 2, 3, 4, 5, 6}, rv[] = {10, 20, 30};
    const double expected[] = {21, 42, 63, 24, 45, 66};
    yg_tensor *m = yg_test_tensor(YG_FLOAT32, ms, 2, mv), *r = yg_test_tensor(YG_FLOAT32, rs, 1, rv);
    yg_tensor *y = NULL;
    (void)state;
    YG_CHECK(yg_add(m, r, 2.0, &y));
    YG_EXPECT_CLOSE(y, ms, 2, expected, 0, 0);
    yg_release(y);
    yg_release(m);
    yg_release(r);
}

static void test_binary_ops_on_transposed_views_match_contiguous(void **state)
{
    const int64_t s[] = {4, 3}, ts[] = {3, 4};
    yg_tensor *a = yg_test_rand(YG_FLOAT64, s, 2, -1, 1, 1), *b = yg_test_rand(YG_FLOAT64, ts, 2, -1, 1, 2);
    yg_tensor *at = NULL, *y = NULL;
    double *av, *bv, expected[12];
    (void)state;
    YG_CHECK(yg_t(a, &at));
    assert_false(yg_tensor_is_contiguous(at));
    av = yg_test_values(a);
    bv = yg_test_values(b);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            expected[i * 4 + j] = av[j * 3 + i] / bv[i * 4 + j];
    YG_CHECK(yg_div(at, b, &y));
    YG_EXPECT_CLOSE(y, ts, 2, expected, 1e-15, 1e-15);
    free(av);
    free(bv);
    yg_release(y);
    yg_release(at);
    yg_release(a);
    yg_release(b);
}

static void test_mixed_dtypes_promote_to_float64(void **state)
{
    const int64_t s[] = {2};
    const double v[] = {1.5, 2.5}, expected[] = {3, 5};
    yg_tensor *a = yg_test_tensor(YG_FLOAT32, s, 1, v), *b = yg_test_tensor(YG_FLOAT64, s, 1, v);
    yg_tensor *y = NULL;
    (void)state;
    YG_CHECK(yg_add(a, b, 1.0, &y));
    assert_int_equal(yg_tensor_dtype(y), YG_FLOAT64);
    YG_EXPECT_CLOSE(y, s, 1, expected, 0, 0);
    yg_release(y);
    yg_release(a);
    yg_release(b);
}

static void test_integer_add_stays_integer(void **state)
{
    const int64_t s[] = {3};
    const double v[] = {1, 2, 3}, expected[] = {3, 6, 9};
    yg_tensor *a = yg_test_tensor(YG_INT64, s, 1, v), *y = NULL;
    (void)state;
    YG_CHECK(yg_add(a, a, 2.0, &y));
    assert_int_equal(yg_tensor_dtype(y), YG_INT64);
    YG_EXPECT_CLOSE(y, s, 1, expected, 0, 0);
    yg_release(y);
    yg_release(a);
}

static void test_pow_matches_libm(void **state)
{
    const int64_t s[] = {6};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 1, 0.1, 3, 3), *y = NULL;
    double *xv = yg_test_values(x), expected[6];
    (void)state;
    for (int i = 0; i < 6; i++)
        expected[i] = pow(xv[i], 2.5);
    YG_CHECK(yg_pow_scalar(x, 2.5, &y));
    YG_EXPECT_CLOSE(y, s, 1, expected, 1e-14, 1e-14);
    free(xv);
    yg_release(y);
    yg_release(x);
}

static void test_sum_and_mean_over_dims(void **state)
{
    const int64_t s[] = {2, 3}, s0[] = {3}, s1k[] = {2, 1};
    const double v[] = {1, 2, 3, 4, 5, 6};
    const double sum0[] = {5, 7, 9}, mean1[] = {2, 5}, all[] = {21};
    const int64_t d0[] = {0}, d1[] = {-1};
    yg_tensor *x = yg_test_tensor(YG_FLOAT32, s, 2, v), *y = NULL;
    (void)state;
    YG_CHECK(yg_sum_dim(x, d0, 1, false, &y));
    YG_EXPECT_CLOSE(y, s0, 1, sum0, 0, 0);
    yg_release(y);
    YG_CHECK(yg_mean_dim(x, d1, 1, true, &y));
    YG_EXPECT_CLOSE(y, s1k, 2, mean1, 0, 0);
    yg_release(y);
    YG_CHECK(yg_sum(x, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, all, 0, 0);
    yg_release(y);
    yg_release(x);
}

static void test_sum_dim_rejects_out_of_range_dim(void **state)
{
    const int64_t s[] = {2, 3}, d[] = {2};
    yg_tensor *x = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 2, YG_FLOAT32, &x));
    YG_EXPECT_ERROR(yg_sum_dim(x, d, 1, false, &y), YG_ERR_INDEX, "sum", "dim 2 out of range");
    assert_null(y);
    yg_release(x);
}

static void naive_mm(const double *a, const double *b, double *c, int m, int k, int n)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double acc = 0;
            for (int p = 0; p < k; p++)
                acc += a[i * k + p] * b[p * n + j];
            c[i * n + j] = acc;
        }
}

static void test_mm_matches_naive_loops_in_both_dtypes(void **state)
{
    const int64_t as[] = {17, 33}, bs[] = {33, 9}, cs[] = {17, 9};
    (void)state;
    for (int d = 0; d < 2; d++) {
        yg_dtype dt = d ? YG_FLOAT64 : YG_FLOAT32;
        yg_tensor *a = yg_test_rand(dt, as, 2, -1, 1, 5), *b = yg_test_rand(dt, bs, 2, -1, 1, 6);
        yg_tensor *c = NULL;
        double *av = yg_test_values(a), *bv = yg_test_values(b), expected[17 * 9];
        naive_mm(av, bv, expected, 17, 33, 9);
        YG_CHECK(yg_mm(a, b, &c));
        YG_EXPECT_CLOSE(c, cs, 2, expected, d ? 1e-13 : 1e-5, d ? 1e-13 : 1e-5);
        free(av);
        free(bv);
        yg_release(c);
        yg_release(a);
        yg_release(b);
    }
}

/* Products with one row or one column (matrix-vector: gemv) against the
 * loops, with each operand plain, transposed (a transposed view) or a
 * column of a wider matrix, in both dtypes, and added into by addmm. */
static void test_mm_with_one_row_or_column_matches_naive_loops(void **state)
{
    const int64_t shapes[][3] = {{1, 300, 70}, {40, 300, 1}, {1, 5, 1}};
    (void)state;
    for (int d = 0; d < 2; d++)
        for (int sh = 0; sh < 3; sh++)
            for (int form = 0; form < 4; form++) {
                yg_dtype dt = d ? YG_FLOAT64 : YG_FLOAT32;
                int64_t m = shapes[sh][0], k = shapes[sh][1], n = shapes[sh][2];
                int64_t as[2] = {m, k}, bs[2] = {k, n}, ast[2] = {k, m}, bst[2] = {n, k}, cs[2] = {m, n};
                yg_tensor *a = NULL, *b = NULL, *src = NULL, *c = NULL, *bias = NULL, *c2 = NULL;
                /* form bit 0: a is a transposed view; bit 1: b is */
                if (form & 1) {
                    src = yg_test_rand(dt, ast, 2, -1, 1, 7);
                    YG_CHECK(yg_transpose(src, 0, 1, &a));
                    yg_release(src);
                } else {
                    a = yg_test_rand(dt, as, 2, -1, 1, 7);
                }
                if (form & 2) {
                    src = yg_test_rand(dt, bst, 2, -1, 1, 8);
                    YG_CHECK(yg_transpose(src, 0, 1, &b));
                    yg_release(src);
                } else {
                    b = yg_test_rand(dt, bs, 2, -1, 1, 8);
                }
                double *av = yg_test_values(a), *bv = yg_test_values(b);
                double *expected = malloc((size_t)(m * n) * sizeof *expected);
                double *plus = malloc((size_t)(m * n) * sizeof *plus);
                naive_mm(av, bv, expected, (int)m, (int)k, (int)n);
                YG_CHECK(yg_mm(a, b, &c));
                YG_EXPECT_CLOSE(c, cs, 2, expected, d ? 1e-12 : 1e-4, d ? 1e-12 : 1e-4);
                /* beta 0.5 on an existing value: 0.5 * 1 + 2 * a @ b */
                YG_CHECK(yg_tensor_full(cs, 2, 1, dt, &bias));
                for (int64_t i = 0; i < m * n; i++)
                    plus[i] = 0.5 + 2 * expected[i];
                YG_CHECK(yg_addmm(bias, a, b, 0.5, 2, &c2));
                YG_EXPECT_CLOSE(c2, cs, 2, plus, d ? 1e-12 : 1e-4, d ? 1e-12 : 1e-4);
                free(av);
                free(bv);
                free(expected);
                free(plus);
                yg_release(a);
                yg_release(b);
                yg_release(c);
                yg_release(c2);
                yg_release(bias);
            }
}

static void test_mm_rejects_mismatched_inner_dims(void **state)
{
    const int64_t as[] = {2, 3}, bs[] = {4, 5};
    yg_tensor *a = NULL, *b = NULL, *c = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(as, 2, YG_FLOAT32, &a));
    YG_CHECK(yg_tensor_zeros(bs, 2, YG_FLOAT32, &b));
    YG_EXPECT_ERROR(yg_mm(a, b, &c), YG_ERR_SHAPE, "mm:", "[2, 3]", "[4, 5]");
    assert_null(c);
    yg_release(a);
    yg_release(b);
}

static void test_mm_rejects_mixed_dtypes(void **state)
{
    const int64_t s[] = {2, 2};
    yg_tensor *a = NULL, *b = NULL, *c = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 2, YG_FLOAT32, &a));
    YG_CHECK(yg_tensor_zeros(s, 2, YG_FLOAT64, &b));
    YG_EXPECT_ERROR(yg_mm(a, b, &c), YG_ERR_DTYPE, "mm:", "float32", "float64");
    assert_null(c);
    yg_release(a);
    yg_release(b);
}

static void test_mul_rejects_shapes_that_do_not_broadcast(void **state)
{
    const int64_t as[] = {2, 3}, bs[] = {4};
    yg_tensor *a = NULL, *b = NULL, *c = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(as, 2, YG_FLOAT32, &a));
    YG_CHECK(yg_tensor_zeros(bs, 1, YG_FLOAT32, &b));
    YG_EXPECT_ERROR(yg_mul(a, b, &c), YG_ERR_SHAPE, "mul: cannot broadcast self [2, 3] with other [4]");
    assert_null(c);
    yg_release(a);
    yg_release(b);
}

static void test_exp_rejects_integer_input(void **state)
{
    const int64_t s[] = {2};
    yg_tensor *a = NULL, *c = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 1, YG_INT64, &a));
    YG_EXPECT_ERROR(yg_exp(a, &c), YG_ERR_DTYPE, "exp: unsupported dtype int64 for self");
    assert_null(c);
    yg_release(a);
}

static void test_ops_reject_null_inputs(void **state)
{
    yg_tensor *c = NULL;
    (void)state;
    YG_EXPECT_ERROR(yg_mul(NULL, NULL, &c), YG_ERR_INVALID_ARGUMENT, "mul: self is undefined");
    YG_EXPECT_ERROR(yg_neg(NULL, NULL), YG_ERR_INVALID_ARGUMENT, "neg: out-parameter");
}

static void test_log_softmax_matches_naive_loops(void **state)
{
    const int64_t s[] = {3, 4};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 2, -3, 3, 9), *y = NULL;
    double *xv = yg_test_values(x), expected[12];
    (void)state;
    for (int i = 0; i < 3; i++) {
        double z = 0;
        for (int j = 0; j < 4; j++)
            z += exp(xv[i * 4 + j]);
        for (int j = 0; j < 4; j++)
            expected[i * 4 + j] = xv[i * 4 + j] - log(z);
    }
    YG_CHECK(yg_log_softmax(x, -1, &y));
    YG_EXPECT_CLOSE(y, s, 2, expected, 1e-14, 1e-14);
    free(xv);
    yg_release(y);
    yg_release(x);
}

static void test_nll_loss_averages_picked_log_probs(void **state)
{
    const int64_t s[] = {3, 2}, ts[] = {3};
    const double lp[] = {-0.1, -2, -3, -0.5, -1, -1}, tv[] = {0, 1, -100};
    const double expected[] = {(0.1 + 0.5) / 2};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 2, lp), *t = yg_test_tensor(YG_INT64, ts, 1, tv);
    yg_tensor *y = NULL;
    (void)state;
    YG_CHECK(yg_nll_loss(x, t, NULL, YG_REDUCTION_MEAN, -100, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, expected, 1e-15, 1e-15);
    yg_release(y);
    yg_release(x);
    yg_release(t);
}

static void test_nll_loss_rejects_target_out_of_bounds(void **state)
{
    const int64_t s[] = {2, 5}, ts[] = {2};
    const double tv[] = {0, 7};
    yg_tensor *x = NULL, *t = yg_test_tensor(YG_INT64, ts, 1, tv), *y = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 2, YG_FLOAT32, &x));
    YG_EXPECT_ERROR(yg_nll_loss(x, t, NULL, YG_REDUCTION_MEAN, -100, &y), YG_ERR_INDEX, "nll_loss:", "7", "5 classes");
    assert_null(y);
    yg_release(x);
    yg_release(t);
}

static void test_linear_matches_naive_loops(void **state)
{
    const int64_t xs[] = {4, 3}, ws[] = {2, 3}, bs[] = {2}, ys[] = {4, 2};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, xs, 2, -1, 1, 1), *w = yg_test_rand(YG_FLOAT64, ws, 2, -1, 1, 2);
    yg_tensor *b = yg_test_rand(YG_FLOAT64, bs, 1, -1, 1, 3), *y = NULL;
    double *xv = yg_test_values(x), *wv = yg_test_values(w), *bv = yg_test_values(b), expected[8];
    (void)state;
    for (int i = 0; i < 4; i++)
        for (int o = 0; o < 2; o++) {
            double acc = bv[o];
            for (int k = 0; k < 3; k++)
                acc += xv[i * 3 + k] * wv[o * 3 + k];
            expected[i * 2 + o] = acc;
        }
    YG_CHECK(yg_linear(x, w, b, &y));
    YG_EXPECT_CLOSE(y, ys, 2, expected, 1e-14, 1e-14);
    free(xv);
    free(wv);
    free(bv);
    yg_release(y);
    yg_release(x);
    yg_release(w);
    yg_release(b);
}

static void test_linear_prefixes_inner_errors_with_its_name(void **state)
{
    const int64_t xs[] = {4, 3}, ws[] = {2, 5};
    yg_tensor *x = NULL, *w = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(xs, 2, YG_FLOAT32, &x));
    YG_CHECK(yg_tensor_zeros(ws, 2, YG_FLOAT32, &w));
    YG_EXPECT_ERROR(yg_linear(x, w, NULL, &y), YG_ERR_SHAPE, "linear: ", "[4, 3]");
    assert_null(y);
    yg_release(x);
    yg_release(w);
}

static void test_transpose_shares_storage(void **state)
{
    const int64_t s[] = {2, 3};
    yg_tensor *x = NULL, *t = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 2, YG_FLOAT32, &x));
    YG_CHECK(yg_transpose(x, 0, 1, &t));
    assert_ptr_equal(yg_tensor_data(x), yg_tensor_data(t));
    assert_int_equal(yg_tensor_sizes(t)[0], 3);
    assert_int_equal(yg_tensor_strides(t)[0], 1);
    yg_release(t);
    yg_release(x);
}

static void test_view_of_transposed_tensor_is_refused_but_reshape_copies(void **state)
{
    const int64_t s[] = {2, 3}, flat[] = {6};
    const double v[] = {1, 2, 3, 4, 5, 6}, expected[] = {1, 4, 2, 5, 3, 6};
    yg_tensor *x = yg_test_tensor(YG_FLOAT32, s, 2, v), *t = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_t(x, &t));
    YG_EXPECT_ERROR(yg_view(t, flat, 1, &y), YG_ERR_SHAPE, "view:", "reshape");
    assert_null(y);
    YG_CHECK(yg_reshape(t, flat, 1, &y));
    YG_EXPECT_CLOSE(y, flat, 1, expected, 0, 0);
    yg_release(y);
    yg_release(t);
    yg_release(x);
}

static void test_expand_broadcasts_without_copying(void **state)
{
    const int64_t s[] = {3, 1}, to[] = {2, 3, 4};
    yg_tensor *x = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 2, YG_FLOAT32, &x));
    YG_CHECK(yg_expand(x, to, 3, &y));
    assert_int_equal(yg_tensor_strides(y)[0], 0);
    assert_int_equal(yg_tensor_strides(y)[2], 0);
    assert_ptr_equal(yg_tensor_data(x), yg_tensor_data(y));
    yg_release(y);
    yg_release(x);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary_ops_match_libm),
        cmocka_unit_test(test_add_broadcasts_row_over_matrix_with_alpha),
        cmocka_unit_test(test_binary_ops_on_transposed_views_match_contiguous),
        cmocka_unit_test(test_mixed_dtypes_promote_to_float64),
        cmocka_unit_test(test_integer_add_stays_integer),
        cmocka_unit_test(test_pow_matches_libm),
        cmocka_unit_test(test_sum_and_mean_over_dims),
        cmocka_unit_test(test_sum_dim_rejects_out_of_range_dim),
        cmocka_unit_test(test_mm_matches_naive_loops_in_both_dtypes),
        cmocka_unit_test(test_mm_with_one_row_or_column_matches_naive_loops),
        cmocka_unit_test(test_mm_rejects_mismatched_inner_dims),
        cmocka_unit_test(test_mm_rejects_mixed_dtypes),
        cmocka_unit_test(test_mul_rejects_shapes_that_do_not_broadcast),
        cmocka_unit_test(test_exp_rejects_integer_input),
        cmocka_unit_test(test_ops_reject_null_inputs),
        cmocka_unit_test(test_log_softmax_matches_naive_loops),
        cmocka_unit_test(test_nll_loss_averages_picked_log_probs),
        cmocka_unit_test(test_nll_loss_rejects_target_out_of_bounds),
        cmocka_unit_test(test_linear_matches_naive_loops),
        cmocka_unit_test(test_linear_prefixes_inner_errors_with_its_name),
        cmocka_unit_test(test_transpose_shares_storage),
        cmocka_unit_test(test_view_of_transposed_tensor_is_refused_but_reshape_copies),
        cmocka_unit_test(test_expand_broadcasts_without_copying),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
