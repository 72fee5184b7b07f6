/*
 * test_ops_pad.c - reflect and replicate padding (reflection_pad,
 * replication_pad and the mode-selecting pad) against naive float64 loops
 * written here: 1-d, 2-d and 3-d padding with and without a batch dim,
 * non-contiguous and empty inputs, other dtypes, where the gradient
 * accumulates, and every error message.  Gradients to second order are
 * checked by test_gradcheck.c.
 */
#include "testutil.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_padding.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The input index read by output index o of a dim of size n padded by lo
 * before: reflected (bouncing off both ends until inside) or clamped. */
static int64_t naive_source(int64_t o, int64_t lo, int64_t n, bool reflect) {
    int64_t i = o - lo;
    if (!reflect)
        return i < 0 ? 0 : i > n - 1 ? n - 1 : i;
    while (i < 0 || i >= n)
        i = i < 0 ? -i : 2 * (n - 1) - i;
    return i;
}

/* y = pad(x) for a contiguous x (values xv) of sizes, padding the last
 * pad_len / 2 dims; writes the output sizes into os.  Returns numel. */
static int64_t naive_pad(const double *xv,
                         const int64_t *sizes,
                         int64_t nd,
                         const int64_t *pad,
                         int64_t pad_len,
                         bool reflect,
                         int64_t *os,
                         double *y) {
    int64_t lo[8] = {0}, numel = 1, idx[8] = {0};
    for (int64_t d = 0; d < nd; d++)
        os[d] = sizes[d];
    for (int64_t i = 0; i < pad_len / 2; i++) {
        lo[nd - 1 - i] = pad[2 * i];
        os[nd - 1 - i] += pad[2 * i] + pad[2 * i + 1];
    }
    for (int64_t d = 0; d < nd; d++)
        numel *= os[d];
    for (int64_t e = 0; e < numel; e++) {
        int64_t rem = e, src = 0, stride = 1;
        for (int64_t d = nd - 1; d >= 0; d--) {
            idx[d] = rem % os[d];
            rem /= os[d];
        }
        for (int64_t d = nd - 1; d >= 0; d--) {
            src += naive_source(idx[d], lo[d], sizes[d], reflect) * stride;
            stride *= sizes[d];
        }
        y[e] = xv[src];
    }
    return numel;
}

/* Checks reflection_pad or replication_pad (and pad with that mode) of
 * a random tensor of sizes and dtype against naive_pad. */
static void check_mode(yg_dtype dtype,
                       const int64_t *sizes,
                       int64_t nd,
                       const int64_t *pad,
                       int64_t pad_len,
                       bool reflect) {
    int64_t os[8];
    yg_tensor *x = yg_test_rand(dtype, sizes, nd, -5, 5, 9), *y = NULL, *z = NULL;
    double *xv = yg_test_values(x), *e = calloc(4096, sizeof(double));
    naive_pad(xv, sizes, nd, pad, pad_len, reflect, os, e);
    if (reflect)
        YG_CHECK(yg_reflection_pad(x, pad, pad_len, &y));
    else
        YG_CHECK(yg_replication_pad(x, pad, pad_len, &y));
    YG_EXPECT_CLOSE(y, os, nd, e, 0, 0);
    assert_int_equal(yg_tensor_dtype(y), dtype);
    YG_CHECK(yg_pad(x, pad, pad_len, reflect ? YG_PAD_MODE_REFLECT : YG_PAD_MODE_REPLICATE, 0, &z));
    YG_EXPECT_CLOSE(z, os, nd, e, 0, 0);
    free(xv);
    free(e);
    yg_release(x);
    yg_release(y);
    yg_release(z);
}

static void test_reflection_pad_matches_naive_loops_for_1d_2d_3d(void **state) {
    const int64_t s1[] = {2, 5}, p1[] = {2, 4}, b1[] = {2, 3, 5}, q1[] = {0, 1};
    const int64_t s2[] = {2, 3, 4, 5}, p2[] = {1, 2, 3, 0}, c2[] = {3, 4, 5}, q2[] = {4, 4, 0, 3};
    const int64_t s3[] = {2, 3, 4, 5}, p3[] = {1, 1, 2, 3, 0, 2}, b3[] = {1, 2, 3, 2, 4};
    const int64_t q3[] = {3, 2, 1, 1, 2, 0};
    (void)state;
    check_mode(YG_FLOAT64, s1, 2, p1, 2, true);
    check_mode(YG_INT64, s1, 2, p1, 2, true);
    check_mode(YG_FLOAT64, b1, 3, q1, 2, true);
    check_mode(YG_FLOAT64, s2, 4, p2, 4, true);
    check_mode(YG_FLOAT32, c2, 3, q2, 4, true);
    check_mode(YG_FLOAT64, s3, 4, p3, 6, true);
    check_mode(YG_FLOAT64, b3, 5, q3, 6, true);
}

static void test_replication_pad_matches_naive_loops_for_1d_2d_3d(void **state) {
    const int64_t s1[] = {2, 3}, p1[] = {5, 4}, s2[] = {1, 2, 1, 3}, p2[] = {2, 0, 3, 3};
    const int64_t s3[] = {2, 2, 3, 2}, p3[] = {1, 3, 0, 2, 2, 1};
    (void)state;
    check_mode(YG_FLOAT64, s1, 2, p1, 2, false);
    check_mode(YG_FLOAT64, s2, 4, p2, 4, false);
    check_mode(YG_FLOAT32, s3, 4, p3, 6, false);
    /* any dtype is copied as is (int64 reflect: the test above) */
    check_mode(YG_INT64, s2, 4, p2, 4, false);
    check_mode(YG_INT64, s3, 4, p3, 6, false);
}

/* A [N, W, C] tensor permuted to [N, C, W], padded in W. */
static void test_mode_pad_of_a_non_contiguous_input(void **state) {
    const int64_t s[] = {2, 5, 3}, perm[] = {0, 2, 1}, ps[] = {2, 3, 5}, pad[] = {3, 2};
    yg_tensor *base = yg_test_rand(YG_FLOAT64, s, 3, -1, 1, 4), *x = NULL, *y = NULL;
    double *bv = yg_test_values(base), xv[30], e[2 * 3 * 10];
    int64_t os[3];
    (void)state;
    YG_CHECK(yg_permute(base, perm, 3, &x));
    assert_false(yg_tensor_is_contiguous(x));
    for (int n = 0; n < 2; n++)
        for (int c = 0; c < 3; c++)
            for (int w = 0; w < 5; w++)
                xv[(n * 3 + c) * 5 + w] = bv[(n * 5 + w) * 3 + c];
    for (int mode = 0; mode < 2; mode++) {
        naive_pad(xv, ps, 3, pad, 2, mode == 0, os, e);
        if (mode == 0)
            YG_CHECK(yg_reflection_pad(x, pad, 2, &y));
        else
            YG_CHECK(yg_replication_pad(x, pad, 2, &y));
        YG_EXPECT_CLOSE(y, os, 3, e, 0, 0);
        yg_release(y);
    }
    free(bv);
    yg_release(base);
    yg_release(x);
}

static void test_mode_pad_of_an_empty_batch_is_empty(void **state) {
    const int64_t s[] = {0, 2, 5}, pad[] = {1, 2}, os[] = {0, 2, 8};
    yg_tensor *x = NULL, *y = NULL, *g = NULL, *gy = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 3, YG_FLOAT64, &x));
    YG_CHECK(yg_reflection_pad(x, pad, 2, &y));
    YG_EXPECT_CLOSE(y, os, 3, NULL, 0, 0);
    yg_release(y);
    YG_CHECK(yg_replication_pad(x, pad, 2, &y));
    YG_EXPECT_CLOSE(y, os, 3, NULL, 0, 0);
    YG_CHECK(yg_tensor_zeros(os, 3, YG_FLOAT64, &gy));
    YG_CHECK(yg_reflection_pad_backward(gy, s, 3, pad, 2, &g));
    YG_EXPECT_CLOSE(g, s, 3, NULL, 0, 0);
    yg_release(g);
    yg_release(gy);
    yg_release(y);
    yg_release(x);
}

/* x0 x1 x2 padded by (2, 2): reflect reads x2 x1 x0 x1 x2 x1 x0,
 * replicate x0 x0 x0 x1 x2 x2 x2; the gradient of a weighted sum adds
 * every weight into the source it read. */
static void test_mode_pad_gradient_accumulates_on_the_sources(void **state) {
    const int64_t s[] = {1, 1, 3}, pad[] = {2, 2}, os[] = {1, 1, 7};
    const double x0[] = {1, 2, 3}, w[] = {1, 10, 100, 1000, 10000, 100000, 1000000};
    const double reflect_g[] = {100 + 1000000, 10 + 1000 + 100000, 1 + 10000};
    const double replicate_g[] = {1 + 10 + 100, 1000, 10000 + 100000 + 1000000};
    (void)state;
    for (int mode = 0; mode < 2; mode++) {
        yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 3, x0);
        yg_tensor *wt = yg_test_tensor(YG_FLOAT64, os, 3, w);
        yg_tensor *y = NULL, *g = NULL;
        YG_CHECK(yg_tensor_set_requires_grad(x, true));
        YG_CHECK(yg_pad(x, pad, 2, mode == 0 ? YG_PAD_MODE_REFLECT : YG_PAD_MODE_REPLICATE, 0, &y));
        YG_CHECK(yg_backward(y, wt, false));
        YG_CHECK(yg_tensor_grad(x, &g));
        YG_EXPECT_CLOSE(g, s, 3, mode == 0 ? reflect_g : replicate_g, 0, 0);
        yg_release(g);
        yg_release(y);
        yg_release(wt);
        yg_release(x);
    }
}

static void test_pad_constant_mode_is_constant_pad_nd(void **state) {
    const int64_t s[] = {2, 3}, pad[] = {1, -1, 0, 2}, os[] = {4, 3};
    const double x0[] = {1, 2, 3, 4, 5, 6};
    const double e[] = {7, 1, 2, 7, 4, 5, 7, 7, 7, 7, 7, 7};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 2, x0), *y = NULL;
    (void)state;
    YG_CHECK(yg_pad(x, pad, 4, YG_PAD_MODE_CONSTANT, 7, &y));
    YG_EXPECT_CLOSE(y, os, 2, e, 0, 0);
    yg_release(y);
    yg_release(x);
}

static void test_mode_pad_rejects_bad_arguments_with_messages(void **state) {
    const int64_t s[] = {2, 3, 3}, p_big[] = {1, 1, 3, 1}, p_neg[] = {1, -1}, p3[] = {1, 1, 1};
    const int64_t p8[] = {1, 1, 1, 1, 1, 1, 1, 1}, p6[] = {1, 1, 1, 1, 1, 1}, p2[] = {1, 1};
    const int64_t s1[] = {4}, e[] = {2, 0}, gs[] = {2, 3, 4};
    yg_tensor *x = NULL, *v = NULL, *em = NULL, *g = NULL, *gi = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 3, YG_FLOAT64, &x));
    YG_CHECK(yg_tensor_zeros(s1, 1, YG_FLOAT64, &v));
    YG_CHECK(yg_tensor_zeros(e, 2, YG_FLOAT64, &em));
    YG_CHECK(yg_tensor_zeros(gs, 3, YG_FLOAT64, &g));
    YG_CHECK(yg_tensor_zeros(gs, 3, YG_INT64, &gi));
    YG_EXPECT_ERROR(yg_pad(x, p_big, 4, YG_PAD_MODE_REFLECT, 0, &y), YG_ERR_SHAPE,
                    "pad: reflection_pad: reflect pad (3, 1) of dim 1 must be less than its "
                    "size 3 (pad [1, 1, 3, 1], self [2, 3, 3])");
    assert_null(y);
    YG_EXPECT_ERROR(yg_reflection_pad(x, p_neg, 2, &y), YG_ERR_INVALID_ARGUMENT,
                    "reflection_pad: reflect pad [1, -1] has a negative amount");
    YG_EXPECT_ERROR(yg_replication_pad(x, p3, 3, &y), YG_ERR_INVALID_ARGUMENT,
                    "replication_pad: replicate pad [1, 1, 1] must have 2, 4 or 6 entries "
                    "(1-d, 2-d or 3-d padding)");
    YG_EXPECT_ERROR(yg_pad(x, p8, 8, YG_PAD_MODE_REPLICATE, 0, &y), YG_ERR_INVALID_ARGUMENT,
                    "pad: replication_pad: replicate pad [1, 1, 1, 1, 1, 1, 1, 1] must have 2, "
                    "4 or 6 entries");
    YG_EXPECT_ERROR(yg_reflection_pad(x, p6, 6, &y), YG_ERR_SHAPE,
                    "reflection_pad: 3-d reflect padding needs self of 4 or 5 dims, got "
                    "[2, 3, 3]");
    YG_EXPECT_ERROR(yg_replication_pad(v, p2, 2, &y), YG_ERR_SHAPE,
                    "replication_pad: 1-d replicate padding needs self of 2 or 3 dims, got [4]");
    YG_EXPECT_ERROR(yg_replication_pad(em, p2, 2, &y), YG_ERR_SHAPE,
                    "replication_pad: replicate pad (1, 1) of dim 1 needs a non-empty dim, got "
                    "size 0 (pad [1, 1], self [2, 0])");
    YG_EXPECT_ERROR(yg_pad(x, p2, 2, (yg_pad_mode)3, 0, &y), YG_ERR_INVALID_ARGUMENT,
                    "pad: mode must be constant (0), reflect (1) or replicate (2), not 3");
    YG_EXPECT_ERROR(yg_reflection_pad(x, NULL, 2, &y), YG_ERR_INVALID_ARGUMENT,
                    "reflection_pad: pad is NULL with length 2");
    /* the backward: grad_output must have the padded sizes and be floating */
    YG_EXPECT_ERROR(yg_reflection_pad_backward(g, s, 3, p2, 2, &y), YG_ERR_SHAPE,
                    "reflection_pad_backward: grad_output [2, 3, 4] does not match self_sizes "
                    "[2, 3, 3] padded by [1, 1]");
    YG_EXPECT_ERROR(yg_replication_pad_backward(gi, s, 3, p2, 2, &y), YG_ERR_DTYPE,
                    "replication_pad_backward: unsupported dtype int64 for grad_output");
    assert_null(y);
    yg_release(x);
    yg_release(v);
    yg_release(em);
    yg_release(g);
    yg_release(gi);
}

/* Pads whose sum overflows int64 (found by review: a [1, 1] result
 * before). */
static void test_replicate_pads_that_overflow_are_refused(void **state) {
    (void)state;
    const int64_t s[] = {1, 3}, pad[] = {INT64_MAX, INT64_MAX};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, s, 2, -1, 1, 6), *y = NULL;
    YG_EXPECT_ERROR(yg_replication_pad(x, pad, 2, &y), YG_ERR_SHAPE,
                    "replication_pad: pad (9223372036854775807, 9223372036854775807) of dim 1"
                    " is too large");
    assert_null(y);
    yg_release(x);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replicate_pads_that_overflow_are_refused),
        cmocka_unit_test(test_reflection_pad_matches_naive_loops_for_1d_2d_3d),
        cmocka_unit_test(test_replication_pad_matches_naive_loops_for_1d_2d_3d),
        cmocka_unit_test(test_mode_pad_of_a_non_contiguous_input),
        cmocka_unit_test(test_mode_pad_of_an_empty_batch_is_empty),
        cmocka_unit_test(test_mode_pad_gradient_accumulates_on_the_sources),
        cmocka_unit_test(test_pad_constant_mode_is_constant_pad_nd),
        cmocka_unit_test(test_mode_pad_rejects_bad_arguments_with_messages),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
