/*
 * test_options.c - the short forms yg_<op>_opt (yagrad/options.h): with
 * NULL options they equal the full form called with every default; a set
 * member replaces just that default; a bad member fails with the full
 * form's message.
 */
#include "testutil.h"
#include "yagrad/ops_convolution.h"
#include "yagrad/ops_losses.h"
#include "yagrad/ops_norms.h"
#include "yagrad/ops_pooling.h"
#include "yagrad/ops_creation.h"
#include "yagrad/ops_dtype_conversion.h"
#include "yagrad/ops_random.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void expect_same(const yg_tensor *a, const yg_tensor *b) {
    assert_int_equal(yg_tensor_ndim(a), yg_tensor_ndim(b));
    for (int d = 0; d < yg_tensor_ndim(a); d++)
        assert_int_equal(yg_tensor_sizes(a)[d], yg_tensor_sizes(b)[d]);
    double *x = yg_test_values(a), *y = yg_test_values(b);
    for (int64_t i = 0; i < yg_tensor_numel(a); i++)
        assert_true(x[i] == y[i]); /* the same computation: bit for bit */
    free(x);
    free(y);
}

static void test_null_options_are_the_defaults(void **state) {
    (void)state;
    int64_t sx[4] = {2, 3, 8, 8}, sw[4] = {4, 3, 3, 3}, k[2] = {2, 2}, zero[2] = {0, 0},
            one[2] = {1, 1}, st[2] = {2, 2}, dim[1] = {8};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, sx, 4, -1, 1, 1),
              *w = yg_test_rand(YG_FLOAT64, sw, 4, -1, 1, 2), *a = NULL, *b = NULL;
    YG_CHECK(yg_max_pool2d(x, k, 2, NULL, 0, zero, 1, one, 1, false, &a));
    YG_CHECK(yg_max_pool2d_opt(x, k, 2, NULL, &b));
    expect_same(a, b);
    yg_release(a);
    yg_release(b);
    YG_CHECK(yg_conv2d(x, w, NULL, one, 2, zero, 2, one, 2, 1, &a));
    YG_CHECK(yg_conv2d_opt(x, w, NULL, &b));
    expect_same(a, b);
    yg_release(a);
    yg_release(b);
    /* A zeroed struct is NULL. */
    YG_CHECK(yg_conv2d_opt(x, w, &(yg_conv2d_options){0}, &b));
    YG_CHECK(yg_conv2d(x, w, NULL, one, 2, zero, 2, one, 2, 1, &a));
    expect_same(a, b);
    yg_release(a);
    yg_release(b);
    /* Set members replace their defaults only. */
    YG_CHECK(yg_conv2d(x, w, NULL, st, 2, one, 2, one, 2, 1, &a));
    YG_CHECK(yg_conv2d_opt(
        x, w, &(yg_conv2d_options){.stride = YG_INTS(2, 2), .padding = YG_INTS(1, 1)}, &b));
    expect_same(a, b);
    yg_release(a);
    yg_release(b);
    YG_CHECK(yg_max_pool2d(x, k, 2, one, 2, zero, 1, one, 1, true, &a));
    YG_CHECK(yg_max_pool2d_opt(
        x, k, 2, &(yg_max_pool2d_options){.stride = YG_INTS(1, 1), .ceil_mode = YG_SET(true)}, &b));
    expect_same(a, b);
    yg_release(a);
    yg_release(b);
    /* A float member (layer_norm: weight, bias, eps). */
    YG_CHECK(yg_layer_norm(x, dim, 1, NULL, NULL, 1e-3, &a));
    YG_CHECK(yg_layer_norm_opt(x, dim, 1, &(yg_layer_norm_options){.eps = YG_SET(1e-3)}, &b));
    expect_same(a, b);
    yg_release(a);
    yg_release(b);
    yg_release(x);
    yg_release(w);
}

/* Nullable Tensor members, state tensors written in place, a float set. */
static void test_tensor_and_state_members(void **state) {
    (void)state;
    int64_t sx[2] = {6, 3}, sc[1] = {3}, st[1] = {6};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, sx, 2, -1, 1, 3),
              *g = yg_test_rand(YG_FLOAT64, sc, 1, 0.5, 2, 4),
              *bb = yg_test_rand(YG_FLOAT64, sc, 1, -1, 1, 5), *m1 = NULL, *v1 = NULL, *m2 = NULL,
              *v2 = NULL, *a = NULL, *b = NULL;
    YG_CHECK(yg_tensor_zeros(sc, 1, YG_FLOAT64, &m1));
    YG_CHECK(yg_tensor_zeros(sc, 1, YG_FLOAT64, &m2));
    YG_CHECK(yg_tensor_full(sc, 1, 1.0, YG_FLOAT64, &v1));
    YG_CHECK(yg_tensor_full(sc, 1, 1.0, YG_FLOAT64, &v2));
    YG_CHECK(yg_batch_norm(x, g, bb, m1, v1, true, 0.1, 1e-3, &a));
    YG_CHECK(yg_batch_norm_opt(x,
                               &(yg_batch_norm_options){.weight = g,
                                                        .bias = bb,
                                                        .running_mean = m2,
                                                        .running_var = v2,
                                                        .training = YG_SET(true),
                                                        .eps = YG_SET(1e-3)},
                               &b));
    expect_same(a, b);
    expect_same(m1, m2); /* the state moved the same way */
    expect_same(v1, v2);
    yg_release(a);
    yg_release(b);
    /* cross_entropy: ints set and unset. */
    yg_tensor *t = NULL;
    const double tv[6] = {0, 2, 1, 1, 0, 2};
    t = yg_test_tensor(YG_FLOAT64, st, 1, tv);
    yg_tensor *ti = NULL;
    YG_CHECK(yg_to_dtype(t, YG_INT64, false, &ti));
    YG_CHECK(yg_cross_entropy(x, ti, NULL, 2, -100, &a));
    YG_CHECK(yg_cross_entropy_opt(x, ti, &(yg_cross_entropy_options){.reduction = YG_SET(YG_REDUCTION_SUM)}, &b));
    expect_same(a, b);
    yg_release(a);
    yg_release(b);
    YG_CHECK(yg_cross_entropy(x, ti, NULL, 1, -100, &a));
    YG_CHECK(yg_cross_entropy_opt(x, ti, NULL, &b));
    expect_same(a, b);
    yg_release(a);
    yg_release(b);
    yg_release(t);
    yg_release(ti);
    yg_release(x);
    yg_release(g);
    yg_release(bb);
    yg_release(m1);
    yg_release(m2);
    yg_release(v1);
    yg_release(v2);
}

/* An enum member, pointer members (dtype) and a generator. */
static void test_enum_dtype_and_generator_members(void **state) {
    (void)state;
    int64_t sx[4] = {1, 2, 6, 6}, sw[4] = {3, 2, 3, 3}, one[2] = {1, 1}, sz[2] = {3, 4};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, sx, 4, -1, 1, 7),
              *w = yg_test_rand(YG_FLOAT64, sw, 4, -1, 1, 8), *a = NULL, *b = NULL;
    YG_CHECK(yg_conv2d_padding(x, w, NULL, one, 2, YG_CONV_PADDING_SAME, one, 2, 1, &a));
    YG_CHECK(yg_conv2d_padding_opt(x, w, &(yg_conv2d_padding_options){.padding = YG_SET(YG_CONV_PADDING_SAME)}, &b));
    expect_same(a, b);
    assert_int_equal(yg_tensor_sizes(b)[3], 6); /* same, not the default valid */
    yg_release(a);
    yg_release(b);
    YG_CHECK(yg_conv2d_padding_opt(x, w, NULL, &b));
    assert_int_equal(yg_tensor_sizes(b)[3], 4); /* valid */
    yg_release(b);
    YG_CHECK(yg_zeros_opt(sz, 2, &(yg_zeros_options){.dtype = &(yg_dtype){YG_INT64}}, &a));
    assert_int_equal(yg_tensor_dtype(a), YG_INT64);
    yg_release(a);
    YG_CHECK(yg_zeros_opt(sz, 2, NULL, &a));
    assert_int_equal(yg_tensor_dtype(a), YG_FLOAT32);
    yg_release(a);
    yg_generator *g1 = NULL, *g2 = NULL;
    YG_CHECK(yg_generator_create(42, &g1));
    YG_CHECK(yg_generator_create(42, &g2));
    YG_CHECK(yg_rand(sz, 2, g1, NULL, NULL, &a));
    YG_CHECK(yg_rand_opt(sz, 2, &(yg_rand_options){.generator = g2}, &b));
    expect_same(a, b);
    yg_release(a);
    yg_release(b);
    yg_generator_release(g1);
    yg_generator_release(g2);
    yg_release(x);
    yg_release(w);
}

/* A bad member is the full form's error, with its message. */
static void test_bad_members_fail_as_the_full_form(void **state) {
    (void)state;
    int64_t sx[4] = {1, 1, 4, 4}, k[2] = {2, 2};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, sx, 4, -1, 1, 6), *y = NULL;
    char want[512];
    const int64_t three[3] = {1, 1, 1};
    assert_int_not_equal(yg_max_pool2d(x, k, 2, three, 3, NULL, 0, NULL, 0, false, &y), YG_OK);
    snprintf(want, sizeof want, "%s", yg_last_error());
    yg_status st = yg_max_pool2d_opt(
        x, k, 2, &(yg_max_pool2d_options){.stride = YG_INTS(1, 1, 1), .padding = {.set = true},
                                          .dilation = {.set = true}},
        &y);
    assert_int_not_equal(st, YG_OK);
    assert_string_equal(yg_last_error(), want);
    assert_null(y);
    yg_release(x);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_options_are_the_defaults),
        cmocka_unit_test(test_tensor_and_state_members),
        cmocka_unit_test(test_enum_dtype_and_generator_members),
        cmocka_unit_test(test_bad_members_fail_as_the_full_form),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
