/*
 * test_ops_creation.c - zeros, ones, full, empty, arange, linspace, eye and
 * the *_like ops: values against naive loops written here, default dtypes,
 * explicit dtypes and devices, empty and 0-dim results, results that never
 * require grad, and the messages for bad arguments.
 */
#include "testutil.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_creation.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const yg_dtype f32 = YG_FLOAT32, f64 = YG_FLOAT64, i64 = YG_INT64, b8 = YG_BOOL;
static const yg_device cpu = YG_CPU, cuda = YG_CUDA;

/* Asserts t has dtype dt, the given sizes, and every element equal to v. */
static void expect_all(const yg_tensor *t, yg_dtype dt, const int64_t *sizes, int64_t ndim,
                       double v)
{
    int64_t n = 1;
    for (int64_t d = 0; d < ndim; d++)
        n *= sizes[d];
    double *e = malloc((size_t)(n > 0 ? n : 1) * sizeof *e);
    for (int64_t i = 0; i < n; i++)
        e[i] = v;
    assert_int_equal(yg_tensor_dtype(t), dt);
    assert_int_equal(yg_tensor_device(t), YG_CPU);
    assert_false(yg_tensor_requires_grad(t));
    YG_EXPECT_CLOSE(t, sizes, ndim, e, 0, 0);
    free(e);
}

static void test_zeros_ones_full_fill_every_element(void **state)
{
    const int64_t s[] = {2, 3, 4};
    yg_tensor *t = NULL;
    (void)state;
    YG_CHECK(yg_zeros(s, 3, NULL, NULL, &t));
    expect_all(t, YG_FLOAT32, s, 3, 0.0);
    yg_release(t);
    YG_CHECK(yg_ones(s, 3, &f64, &cpu, &t));
    expect_all(t, YG_FLOAT64, s, 3, 1.0);
    yg_release(t);
    YG_CHECK(yg_full(s, 2, -2.5, NULL, NULL, &t));
    expect_all(t, YG_FLOAT32, s, 2, -2.5);
    yg_release(t);
    /* int64 truncates toward zero, as a C conversion does */
    YG_CHECK(yg_full(s, 3, -7.9, &i64, NULL, &t));
    expect_all(t, YG_INT64, s, 3, -7.0);
    yg_release(t);
    YG_CHECK(yg_full(s, 1, 0.5, &b8, NULL, &t));
    expect_all(t, YG_BOOL, s, 1, 1.0);
    yg_release(t);
    YG_CHECK(yg_ones(s, 2, &i64, NULL, &t));
    expect_all(t, YG_INT64, s, 2, 1.0);
    yg_release(t);
}

static void test_creation_makes_zero_dim_and_empty_tensors(void **state)
{
    const int64_t empty[] = {3, 0, 2};
    yg_tensor *t = NULL;
    double v = 0;
    (void)state;
    YG_CHECK(yg_full(NULL, 0, 4.0, NULL, NULL, &t));
    assert_int_equal(yg_tensor_ndim(t), 0);
    YG_CHECK(yg_tensor_item(t, &v));
    assert_true(v == 4.0);
    yg_release(t);
    YG_CHECK(yg_zeros(empty, 3, NULL, NULL, &t));
    assert_int_equal(yg_tensor_numel(t), 0);
    assert_int_equal(yg_tensor_ndim(t), 3);
    assert_int_equal(yg_tensor_size(t, 1), 0);
    yg_release(t);
    YG_CHECK(yg_empty(empty, 3, &f64, NULL, &t));
    assert_int_equal(yg_tensor_numel(t), 0);
    assert_int_equal(yg_tensor_dtype(t), YG_FLOAT64);
    yg_release(t);
    YG_CHECK(yg_arange_start(3, 3, 1, NULL, NULL, &t));
    assert_int_equal(yg_tensor_numel(t), 0);
    yg_release(t);
    YG_CHECK(yg_linspace(0, 1, 0, NULL, NULL, &t));
    assert_int_equal(yg_tensor_numel(t), 0);
    yg_release(t);
    YG_CHECK(yg_eye_m(0, 3, NULL, NULL, &t));
    assert_int_equal(yg_tensor_numel(t), 0);
    assert_int_equal(yg_tensor_size(t, 1), 3);
    yg_release(t);
}

static void test_empty_has_the_requested_shape_and_dtype(void **state)
{
    const int64_t s[] = {4, 5};
    yg_tensor *t = NULL;
    (void)state;
    YG_CHECK(yg_empty(s, 2, NULL, NULL, &t));
    assert_int_equal(yg_tensor_dtype(t), YG_FLOAT32);
    assert_int_equal(yg_tensor_numel(t), 20);
    assert_true(yg_tensor_is_contiguous(t));
    assert_false(yg_tensor_requires_grad(t));
    yg_release(t);
    YG_CHECK(yg_empty(s, 1, &b8, NULL, &t));
    assert_int_equal(yg_tensor_dtype(t), YG_BOOL);
    assert_int_equal(yg_tensor_numel(t), 4);
    yg_release(t);
}

/* Expects t to be [start + i * step for i < n] of dtype dt. */
static void expect_range(const yg_tensor *t, yg_dtype dt, double start, double step, int64_t n,
                         double atol)
{
    double *e = malloc((size_t)(n > 0 ? n : 1) * sizeof *e);
    for (int64_t i = 0; i < n; i++) {
        e[i] = start + (double)i * step;
        if (dt == YG_INT64)
            e[i] = trunc(e[i]);
    }
    assert_int_equal(yg_tensor_dtype(t), dt);
    YG_EXPECT_CLOSE(t, &n, 1, e, atol, 0);
    free(e);
}

static void test_arange_counts_like_python_range(void **state)
{
    yg_tensor *t = NULL;
    (void)state;
    /* integers give int64 */
    YG_CHECK(yg_arange(5, NULL, NULL, &t));
    expect_range(t, YG_INT64, 0, 1, 5, 0);
    yg_release(t);
    YG_CHECK(yg_arange_start(-3, 8, 3, NULL, NULL, &t));
    expect_range(t, YG_INT64, -3, 3, 4, 0); /* -3 0 3 6 */
    yg_release(t);
    YG_CHECK(yg_arange_start(5, -5, -4, NULL, NULL, &t));
    expect_range(t, YG_INT64, 5, -4, 3, 0); /* 5 1 -3 */
    yg_release(t);
    /* a fractional bound or step gives float32; the length is
     * ceil((end - start) / step) */
    YG_CHECK(yg_arange_start(0, 1, 0.25, NULL, NULL, &t));
    expect_range(t, YG_FLOAT32, 0, 0.25, 4, 0);
    yg_release(t);
    YG_CHECK(yg_arange(2.5, NULL, NULL, &t));
    expect_range(t, YG_FLOAT32, 0, 1, 3, 0);
    yg_release(t);
    YG_CHECK(yg_arange_start(1, 2, 0.1, &f64, NULL, &t));
    expect_range(t, YG_FLOAT64, 1, 0.1, 10, 1e-15);
    yg_release(t);
    /* an explicit dtype wins over the inferred one */
    YG_CHECK(yg_arange(4, &f64, &cpu, &t));
    expect_range(t, YG_FLOAT64, 0, 1, 4, 0);
    yg_release(t);
    YG_CHECK(yg_arange_start(0, 2, 0.5, &i64, NULL, &t));
    expect_range(t, YG_INT64, 0, 0.5, 4, 0); /* 0 0 1 1 */
    yg_release(t);
}

static void test_linspace_hits_both_ends(void **state)
{
    yg_tensor *t = NULL;
    double e[7];
    const int64_t n7 = 7, n1 = 1;
    (void)state;
    for (int i = 0; i < 7; i++)
        e[i] = -1.0 + 3.0 * i / 6.0;
    YG_CHECK(yg_linspace(-1, 2, 7, NULL, NULL, &t));
    assert_int_equal(yg_tensor_dtype(t), YG_FLOAT32);
    YG_EXPECT_CLOSE(t, &n7, 1, e, 1e-6, 0);
    yg_release(t);
    YG_CHECK(yg_linspace(-1, 2, 7, &f64, NULL, &t));
    YG_EXPECT_CLOSE(t, &n7, 1, e, 1e-15, 0);
    double *v = yg_test_values(t);
    assert_true(v[0] == -1.0 && v[6] == 2.0);
    free(v);
    yg_release(t);
    /* decreasing */
    for (int i = 0; i < 7; i++)
        e[i] = 10.0 - 10.0 * i / 6.0;
    YG_CHECK(yg_linspace(10, 0, 7, &f64, NULL, &t));
    YG_EXPECT_CLOSE(t, &n7, 1, e, 1e-14, 0);
    yg_release(t);
    e[0] = 3.0;
    YG_CHECK(yg_linspace(3, 9, 1, &f64, NULL, &t));
    YG_EXPECT_CLOSE(t, &n1, 1, e, 0, 0);
    yg_release(t);
}

static void test_eye_has_ones_on_the_main_diagonal(void **state)
{
    yg_tensor *t = NULL;
    const int64_t s33[] = {3, 3}, s24[] = {2, 4}, s42[] = {4, 2};
    double e[16];
    (void)state;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            e[i * 3 + j] = i == j;
    YG_CHECK(yg_eye(3, NULL, NULL, &t));
    assert_int_equal(yg_tensor_dtype(t), YG_FLOAT32);
    YG_EXPECT_CLOSE(t, s33, 2, e, 0, 0);
    yg_release(t);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++)
            e[i * 4 + j] = i == j;
    YG_CHECK(yg_eye_m(2, 4, &i64, NULL, &t));
    assert_int_equal(yg_tensor_dtype(t), YG_INT64);
    YG_EXPECT_CLOSE(t, s24, 2, e, 0, 0);
    yg_release(t);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 2; j++)
            e[i * 2 + j] = i == j;
    YG_CHECK(yg_eye_m(4, 2, &b8, NULL, &t));
    assert_int_equal(yg_tensor_dtype(t), YG_BOOL);
    YG_EXPECT_CLOSE(t, s42, 2, e, 0, 0);
    yg_release(t);
}

static void test_like_ops_default_to_self_dtype_and_shape(void **state)
{
    const int64_t s[] = {2, 3};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 2, -1, 1, 5), *t = NULL, *sl = NULL;
    (void)state;
    /* self may require grad: only its metadata is read */
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_zeros_like(x, NULL, NULL, &t));
    expect_all(t, YG_FLOAT64, s, 2, 0.0);
    yg_release(t);
    YG_CHECK(yg_ones_like(x, &f32, NULL, &t));
    expect_all(t, YG_FLOAT32, s, 2, 1.0);
    yg_release(t);
    YG_CHECK(yg_full_like(x, 3.0, &i64, &cpu, &t));
    expect_all(t, YG_INT64, s, 2, 3.0);
    yg_release(t);
    YG_CHECK(yg_empty_like(x, NULL, NULL, &t));
    assert_int_equal(yg_tensor_dtype(t), YG_FLOAT64);
    assert_int_equal(yg_tensor_numel(t), 6);
    assert_false(yg_tensor_requires_grad(t));
    yg_release(t);
    /* a transposed (non-contiguous) self gives a contiguous result of its
     * sizes */
    const int64_t st[] = {3, 2};
    YG_CHECK(yg_t(x, &sl));
    YG_CHECK(yg_full_like(sl, -1.0, NULL, NULL, &t));
    expect_all(t, YG_FLOAT64, st, 2, -1.0);
    assert_true(yg_tensor_is_contiguous(t));
    yg_release(t);
    yg_release(sl);
    yg_release(x);
}

static void test_creation_ops_refuse_devices_they_cannot_use(void **state)
{
    const int64_t s[] = {2};
    const yg_device bogus = (yg_device)7;
    yg_tensor *t = NULL, *x = NULL;
    (void)state;
    YG_EXPECT_ERROR(yg_eye(2, NULL, &bogus, &t), YG_ERR_DEVICE, "eye: invalid device 7");
    assert_null(t);
    /* Every creation op has a CUDA kernel; without a GPU, making the
     * tensor there says why (eye's values are made on the host, then
     * copied). */
    if (!yg_cuda_is_available()) {
        YG_EXPECT_ERROR(yg_eye(2, NULL, &cuda, &t), YG_ERR_DEVICE, "eye: to_device: cuda: ");
        assert_null(t);
        YG_EXPECT_ERROR(yg_zeros(s, 1, NULL, &cuda, &t), YG_ERR_DEVICE, "zeros: cuda: ");
        assert_null(t);
        YG_CHECK(yg_ones(s, 1, NULL, NULL, &x));
        YG_EXPECT_ERROR(yg_zeros_like(x, NULL, &cuda, &t), YG_ERR_DEVICE,
                        "zeros_like: zeros: cuda: ");
        assert_null(t);
        yg_release(x);
    }
}

static void test_creation_ops_reject_bad_arguments(void **state)
{
    const int64_t neg[] = {2, -3}, nine[] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, s[] = {2};
    const yg_dtype bogus = (yg_dtype)9;
    yg_tensor *t = NULL;
    (void)state;
    YG_EXPECT_ERROR(yg_zeros(neg, 2, NULL, NULL, &t), YG_ERR_SHAPE,
                    "zeros: negative size -3 in size [2, -3]");
    assert_null(t);
    YG_EXPECT_ERROR(yg_ones(nine, 9, NULL, NULL, &t), YG_ERR_SHAPE,
                    "ones: size has 9 dims (at most 8)");
    YG_EXPECT_ERROR(yg_full(s, 1, 1.0, &bogus, NULL, &t), YG_ERR_DTYPE, "full: invalid dtype 9");
    YG_EXPECT_ERROR(yg_full(s, 1, 1e30, &i64, NULL, &t), YG_ERR_INVALID_ARGUMENT,
                    "full: fill_value 1e+30 is out of range for int64");
    YG_EXPECT_ERROR(yg_full(s, 1, NAN, &i64, NULL, &t), YG_ERR_INVALID_ARGUMENT,
                    "full: fill_value nan is out of range for int64");
    YG_EXPECT_ERROR(yg_empty(neg, 2, NULL, NULL, &t), YG_ERR_SHAPE, "empty: negative size -3");
    YG_EXPECT_ERROR(yg_arange_start(0, 5, 0, NULL, NULL, &t), YG_ERR_INVALID_ARGUMENT,
                    "arange: step must be nonzero");
    YG_EXPECT_ERROR(yg_arange_start(5, 0, 1, NULL, NULL, &t), YG_ERR_INVALID_ARGUMENT,
                    "arange: start 5 and end 0 are inconsistent with the sign of step 1");
    YG_EXPECT_ERROR(yg_arange(INFINITY, NULL, NULL, &t), YG_ERR_INVALID_ARGUMENT,
                    "arange: start 0, end inf and step 1 must be finite");
    YG_EXPECT_ERROR(yg_arange_start(0, 1e300, 1e-300, NULL, NULL, &t), YG_ERR_INVALID_ARGUMENT,
                    "arange: start 0, end 1e+300, step 1e-300 give too many elements");
    YG_EXPECT_ERROR(yg_linspace(0, 1, -2, NULL, NULL, &t), YG_ERR_INVALID_ARGUMENT,
                    "linspace: steps -2 must be >= 0");
    YG_EXPECT_ERROR(yg_eye_m(2, -1, NULL, NULL, &t), YG_ERR_INVALID_ARGUMENT,
                    "eye: n 2 and m -1 must be >= 0");
    YG_EXPECT_ERROR(yg_eye(-4, NULL, NULL, &t), YG_ERR_INVALID_ARGUMENT,
                    "eye: n -4 and m -4 must be >= 0");
    YG_EXPECT_ERROR(yg_zeros_like(NULL, NULL, NULL, &t), YG_ERR_INVALID_ARGUMENT,
                    "zeros_like: self is undefined");
    YG_EXPECT_ERROR(yg_zeros(s, 1, NULL, NULL, NULL), YG_ERR_INVALID_ARGUMENT,
                    "zeros: out-parameter out is NULL");
    assert_null(t);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zeros_ones_full_fill_every_element),
        cmocka_unit_test(test_creation_makes_zero_dim_and_empty_tensors),
        cmocka_unit_test(test_empty_has_the_requested_shape_and_dtype),
        cmocka_unit_test(test_arange_counts_like_python_range),
        cmocka_unit_test(test_linspace_hits_both_ends),
        cmocka_unit_test(test_eye_has_ones_on_the_main_diagonal),
        cmocka_unit_test(test_like_ops_default_to_self_dtype_and_shape),
        cmocka_unit_test(test_creation_ops_refuse_devices_they_cannot_use),
        cmocka_unit_test(test_creation_ops_reject_bad_arguments),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
