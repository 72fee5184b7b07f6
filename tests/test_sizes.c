/*
 * test_sizes.c - size arithmetic that would overflow int64 (issue 18):
 * creation, views and reductions given sizes whose products, strides or
 * offsets do not fit.  Each either gives a valid tensor or fails with
 * YG_ERR_SHAPE and a message naming the op and the sizes; none may reach
 * undefined behaviour (the asan preset runs these under UBSan).
 */
#include "testutil.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_slicing.h"
#include "yagrad/ops_padding.h"
#include "yagrad/ops_indexing.h"
#include "yagrad/ops_convolution.h"
#include "yagrad/ops_resampling.h"
#include "yagrad/ops_creation.h"

#include <stdint.h>

/* The sizes of issue 18's reproducer: 0 elements, but the product of the
 * other sizes, 36854775808 * 922337200 * 3, overflows int64. */
static const int64_t issue18[4] = {36854775808LL, 0, 922337200, 3};

/* Sizes whose contiguous strides cannot be represented: the stride of
 * dim 0 would be 2^62 * 4. */
static const int64_t huge_strides[4] = {2, 0, INT64_C(1) << 62, 4};

static void assert_issue18_geometry(const yg_tensor *t) {
    const int64_t strides[4] = {2767011600LL, 2767011600LL, 3, 1};
    assert_int_equal(yg_tensor_ndim(t), 4);
    assert_int_equal(yg_tensor_numel(t), 0);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(yg_tensor_sizes(t)[i], issue18[i]);
        assert_int_equal(yg_tensor_strides(t)[i], strides[i]);
    }
}

/* Issue 18: zeros with the reproducer's sizes overflowed a stride. */
static void test_zeros_with_issue_18_sizes_is_an_empty_tensor(void **state) {
    const yg_dtype f = YG_FLOAT32;
    yg_tensor *a = NULL, *b = NULL, *c = NULL;
    (void)state;
    YG_CHECK(yg_zeros(issue18, 4, &f, NULL, &a));
    assert_issue18_geometry(a);
    YG_CHECK(yg_empty(issue18, 4, &f, NULL, &b));
    assert_issue18_geometry(b);
    YG_CHECK(yg_tensor_zeros(issue18, 4, YG_FLOAT64, &c));
    assert_issue18_geometry(c);
    yg_release(c);
    yg_release(b);
    yg_release(a);
}

static void test_zeros_refuses_sizes_whose_strides_overflow(void **state) {
    const yg_dtype f = YG_FLOAT32;
    yg_tensor *t = (yg_tensor *)0x1;
    (void)state;
    YG_EXPECT_ERROR(yg_zeros(huge_strides, 4, &f, NULL, &t),
                    YG_ERR_SHAPE,
                    "zeros: the contiguous strides of sizes [2, 0, 4611686018427387904, 4] "
                    "overflow int64");
    assert_null(t);
    t = (yg_tensor *)0x1;
    YG_EXPECT_ERROR(yg_empty(huge_strides, 4, &f, NULL, &t),
                    YG_ERR_SHAPE,
                    "empty:",
                    "[2, 0, 4611686018427387904, 4]",
                    "overflow int64");
    assert_null(t);
    t = (yg_tensor *)0x1;
    YG_EXPECT_ERROR(yg_tensor_empty(huge_strides, 4, YG_INT64, &t),
                    YG_ERR_SHAPE,
                    "empty:",
                    "[2, 0, 4611686018427387904, 4]");
    assert_null(t);
}

static void test_zeros_refuses_sizes_with_too_many_elements(void **state) {
    const int64_t sizes[3] = {36854775808LL, 922337200, 3};
    yg_tensor *t = (yg_tensor *)0x1;
    (void)state;
    YG_EXPECT_ERROR(yg_zeros(sizes, 3, NULL, NULL, &t),
                    YG_ERR_SHAPE,
                    "zeros: size [36854775808, 922337200, 3] has more than 2^59 elements");
    assert_null(t);
}

static void test_view_of_an_empty_tensor_takes_issue_18_sizes(void **state) {
    const int64_t empty[1] = {0};
    const int64_t reordered[4] = {36854775808LL, 922337200, 3, 0};
    const int64_t inferred[4] = {-1, 36854775808LL, 922337200, 3};
    yg_tensor *t = NULL, *v = NULL, *w = NULL;
    (void)state;
    YG_CHECK(yg_tensor_empty(empty, 1, YG_FLOAT32, &t));
    YG_CHECK(yg_view(t, issue18, 4, &v));
    assert_issue18_geometry(v);
    /* The zero last: the product of the others is computed first. */
    YG_CHECK(yg_view(t, reordered, 4, &w));
    assert_int_equal(yg_tensor_numel(w), 0);
    yg_release(w);
    w = (yg_tensor *)0x1;
    YG_EXPECT_ERROR(yg_view(t, huge_strides, 4, &w),
                    YG_ERR_SHAPE,
                    "view: the contiguous strides of sizes [2, 0, 4611686018427387904, 4] "
                    "overflow int64");
    assert_null(w);
    w = (yg_tensor *)0x1;
    YG_EXPECT_ERROR(yg_view(t, inferred, 4, &w),
                    YG_ERR_SHAPE,
                    "view: size [-1, 36854775808, 922337200, 3] is invalid for input [0]");
    assert_null(w);
    yg_release(v);
    yg_release(t);
}

static void test_expand_refuses_a_result_with_too_many_elements(void **state) {
    const int64_t one[1] = {1};
    const int64_t to[3] = {36854775808LL, 922337200, 3};
    yg_tensor *t = NULL, *e = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(one, 1, YG_FLOAT32, &t));
    e = (yg_tensor *)0x1;
    YG_EXPECT_ERROR(yg_expand(t, to, 3, &e),
                    YG_ERR_SHAPE,
                    "expand: sizes [36854775808, 922337200, 3] has more than 2^59 elements");
    assert_null(e);
    /* With a 0 among them the same sizes are a valid (empty) view. */
    YG_CHECK(yg_expand(t, issue18, 4, &e));
    assert_int_equal(yg_tensor_numel(e), 0);
    yg_release(e);
    yg_release(t);
}

static void test_slice_with_a_huge_step_keeps_one_element(void **state) {
    const int64_t sizes[1] = {5};
    const double values[5] = {1, 2, 3, 4, 5}, first[1] = {1}, none[1] = {0};
    const int64_t one[1] = {1}, zero[1] = {0};
    yg_tensor *t = yg_test_tensor(YG_FLOAT64, sizes, 1, values), *s = NULL;
    (void)state;
    YG_CHECK(yg_slice(t, 0, 0, INT64_MAX, INT64_MAX, &s));
    YG_EXPECT_CLOSE(s, one, 1, first, 0, 0);
    yg_release(s);
    /* An empty slice starting at the end. */
    YG_CHECK(yg_slice(t, 0, INT64_MAX, INT64_MAX, INT64_MAX, &s));
    YG_EXPECT_CLOSE(s, zero, 1, none, 0, 0);
    yg_release(s);
    yg_release(t);
}

static void test_reducing_an_empty_tensor_refuses_a_result_too_large(void **state) {
    const int64_t dim1[1] = {1}, dim0[1] = {0};
    yg_tensor *t = NULL, *r = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(issue18, 4, YG_FLOAT32, &t));
    r = (yg_tensor *)0x1;
    YG_EXPECT_ERROR(
        yg_sum_dim(t, dim1, 1, false, &r), YG_ERR_SHAPE, "sum", "[36854775808, 922337200, 3]");
    assert_null(r);
    /* Reducing a dim that is not the 0 leaves an empty result. */
    YG_CHECK(yg_sum_dim(t, dim0, 1, false, &r));
    assert_int_equal(yg_tensor_numel(r), 0);
    yg_release(r);
    yg_release(t);
}

/* A huge empty dim: triu walked its batch row by row (fuzz_ops). */
static void test_triu_of_an_empty_tensor_with_a_huge_batch_returns_at_once(void **state) {
    const int64_t sizes[3] = {INT64_MAX, 0, 4};
    yg_tensor *t = NULL, *r = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(sizes, 3, YG_FLOAT32, &t));
    YG_CHECK(yg_triu(t, INT64_MAX, &r));
    assert_int_equal(yg_tensor_numel(r), 0);
    assert_int_equal(yg_tensor_sizes(r)[0], INT64_MAX);
    yg_release(r);
    yg_release(t);
}

/* An empty slice of an empty tensor keeps its strides: stride * step
 * would overflow but reaches no element (fuzz_ops). */
static void test_slice_of_an_empty_tensor_with_a_huge_stride(void **state) {
    const int64_t sizes[3] = {4, INT64_MAX, 0};
    yg_tensor *t = NULL, *s = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(sizes, 3, YG_FLOAT32, &t));
    assert_int_equal(yg_tensor_strides(t)[0], INT64_MAX);
    YG_CHECK(yg_slice(t, 0, 0, INT64_MAX, 2, &s));
    assert_int_equal(yg_tensor_sizes(s)[0], 2);
    assert_int_equal(yg_tensor_numel(s), 0);
    yg_release(s);
    yg_release(t);
}

static void test_constant_pad_nd_refuses_pads_beyond_2_59(void **state) {
    const int64_t sizes[1] = {3}, pad[2] = {INT64_MIN, 0};
    yg_tensor *t = NULL, *r = (yg_tensor *)0x1;
    (void)state;
    YG_CHECK(yg_tensor_zeros(sizes, 1, YG_FLOAT32, &t));
    YG_EXPECT_ERROR(yg_constant_pad_nd(t, pad, 2, 0, &r),
                    YG_ERR_SHAPE,
                    "constant_pad_nd: pad [-9223372036854775808, 0] has an entry beyond 2^59");
    assert_null(r);
    r = (yg_tensor *)0x1;
    YG_EXPECT_ERROR(yg_constant_pad_nd_backward(t, pad, 2, &r),
                    YG_ERR_SHAPE,
                    "constant_pad_nd_backward: pad [-9223372036854775808, 0] has an entry "
                    "beyond 2^59");
    assert_null(r);
    yg_release(t);
}

static void test_conv2d_refuses_a_stride_beyond_2_59(void **state) {
    const int64_t in_sizes[4] = {1, 1, 4, 4}, w_sizes[4] = {1, 1, 2, 2};
    const int64_t stride[2] = {INT64_C(1) << 62, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1};
    yg_tensor *x = NULL, *w = NULL, *y = (yg_tensor *)0x1;
    (void)state;
    YG_CHECK(yg_tensor_zeros(in_sizes, 4, YG_FLOAT32, &x));
    YG_CHECK(yg_tensor_zeros(w_sizes, 4, YG_FLOAT32, &w));
    YG_EXPECT_ERROR(yg_conv2d(x, w, NULL, stride, 2, padding, 2, dilation, 2, 1, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "conv2d:",
                    "stride [4611686018427387904, 1] must be at most 2^59");
    assert_null(y);
    yg_release(w);
    yg_release(x);
}

static void test_pixel_shuffle_refuses_a_factor_whose_square_overflows(void **state) {
    const int64_t sizes[4] = {1, 4, 2, 2};
    yg_tensor *x = NULL, *y = (yg_tensor *)0x1;
    (void)state;
    YG_CHECK(yg_tensor_zeros(sizes, 4, YG_FLOAT32, &x));
    YG_EXPECT_ERROR(yg_pixel_shuffle(x, INT64_C(1) << 32, &y),
                    YG_ERR_SHAPE,
                    "pixel_shuffle: channels of self [1, 4, 2, 2] must be divisible by "
                    "upscale_factor^2, and upscale_factor 4294967296 squared overflows int64");
    assert_null(y);
    yg_release(x);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zeros_with_issue_18_sizes_is_an_empty_tensor),
        cmocka_unit_test(test_zeros_refuses_sizes_whose_strides_overflow),
        cmocka_unit_test(test_zeros_refuses_sizes_with_too_many_elements),
        cmocka_unit_test(test_view_of_an_empty_tensor_takes_issue_18_sizes),
        cmocka_unit_test(test_expand_refuses_a_result_with_too_many_elements),
        cmocka_unit_test(test_slice_with_a_huge_step_keeps_one_element),
        cmocka_unit_test(test_reducing_an_empty_tensor_refuses_a_result_too_large),
        cmocka_unit_test(test_triu_of_an_empty_tensor_with_a_huge_batch_returns_at_once),
        cmocka_unit_test(test_slice_of_an_empty_tensor_with_a_huge_stride),
        cmocka_unit_test(test_constant_pad_nd_refuses_pads_beyond_2_59),
        cmocka_unit_test(test_conv2d_refuses_a_stride_beyond_2_59),
        cmocka_unit_test(test_pixel_shuffle_refuses_a_factor_whose_square_overflows),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
