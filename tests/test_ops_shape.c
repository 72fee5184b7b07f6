/*
 * test_ops_shape.c - the shape ops added after the skeleton: squeeze,
 * permute, select, slice, narrow, flatten, contiguous, repeat, flip and
 * constant_pad_nd, against values worked out here; which of them are
 * views (sharing storage) and which copy; and their bad-input messages.
 */
#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_slicing.h"
#include "yagrad/ops_join_split.h"
#include "yagrad/ops_padding.h"
#include "yagrad/ops_dtype_conversion.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A [2, 3, 4] float64 tensor holding 0..23. */
static yg_tensor *iota_234(void) {
    const int64_t s[] = {2, 3, 4};
    double v[24];
    for (int i = 0; i < 24; i++)
        v[i] = i;
    return yg_test_tensor(YG_FLOAT64, s, 3, v);
}

static void test_squeeze_removes_size_1_dims_as_a_view(void **state) {
    const int64_t s[] = {1, 3, 1, 2}, all[] = {3, 2}, d2[] = {1, 3, 2};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, s, 4, -1, 1, 1), *y = NULL;
    double *xv = yg_test_values(x);
    (void)state;
    YG_CHECK(yg_squeeze(x, &y));
    YG_EXPECT_CLOSE(y, all, 2, xv, 0, 0);
    assert_ptr_equal(yg_tensor_data(y), yg_tensor_data(x));
    yg_release(y);
    YG_CHECK(yg_squeeze_dim(x, -2, &y));
    YG_EXPECT_CLOSE(y, d2, 3, xv, 0, 0);
    yg_release(y);
    /* A dim whose size is not 1 is left alone. */
    YG_CHECK(yg_squeeze_dim(x, 1, &y));
    YG_EXPECT_CLOSE(y, s, 4, xv, 0, 0);
    yg_release(y);
    YG_EXPECT_ERROR(yg_squeeze_dim(x, 4, &y), YG_ERR_INDEX, "squeeze:", "dim 4 out of range");
    assert_null(y);
    free(xv);
    yg_release(x);
}

static void test_permute_moves_dims_without_copying(void **state) {
    const int64_t dims[] = {2, 0, 1}, ps[] = {4, 2, 3};
    yg_tensor *x = iota_234(), *y = NULL;
    double expected[24];
    (void)state;
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++)
                expected[(k * 2 + i) * 3 + j] = i * 12 + j * 4 + k;
    YG_CHECK(yg_permute(x, dims, 3, &y));
    YG_EXPECT_CLOSE(y, ps, 3, expected, 0, 0);
    assert_ptr_equal(yg_tensor_data(y), yg_tensor_data(x));
    yg_release(y);
    yg_release(x);
}

static void test_permute_rejects_a_non_permutation(void **state) {
    const int64_t twice[] = {0, 0, 1}, short_[] = {0, 1};
    yg_tensor *x = iota_234(), *y = NULL;
    (void)state;
    YG_EXPECT_ERROR(yg_permute(x, twice, 3, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "permute: dim 0 appears more than once in dims [0, 0, 1]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_permute(x, short_, 2, &y),
                    YG_ERR_SHAPE,
                    "permute: dims [0, 1] has 2 entries but self [2, 3, 4] has 3 dims");
    assert_null(y);
    yg_release(x);
}

static void test_select_and_slice_pick_elements_as_views(void **state) {
    const int64_t ss[] = {2, 4}, sl[] = {2, 2, 4};
    yg_tensor *x = iota_234(), *y = NULL;
    double sel[8], sli[16];
    (void)state;
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++) {
            sel[i * 4 + k] = i * 12 + 2 * 4 + k;   /* select(dim 1, index -1) */
            sli[(i * 2 + 0) * 4 + k] = i * 12 + k; /* slice(dim 1, 0, end, 2): rows 0, 2 */
            sli[(i * 2 + 1) * 4 + k] = i * 12 + 8 + k;
        }
    YG_CHECK(yg_select(x, 1, -1, &y));
    YG_EXPECT_CLOSE(y, ss, 2, sel, 0, 0);
    yg_release(y);
    YG_CHECK(yg_slice(x, 1, 0, INT64_MAX, 2, &y));
    YG_EXPECT_CLOSE(y, sl, 3, sli, 0, 0);
    assert_ptr_equal(yg_tensor_data(y), yg_tensor_data(x));
    yg_release(y);
    yg_release(x);
}

static void test_slice_clamps_bounds_like_python(void **state) {
    const int64_t s[] = {5}, two[] = {2}, none[] = {0};
    const double v[] = {0, 1, 2, 3, 4}, last2[] = {3, 4};
    yg_tensor *x = yg_test_tensor(YG_INT64, s, 1, v), *y = NULL;
    (void)state;
    YG_CHECK(yg_slice(x, 0, -2, 100, 1, &y));
    YG_EXPECT_CLOSE(y, two, 1, last2, 0, 0);
    yg_release(y);
    YG_CHECK(yg_slice(x, 0, 4, 2, 1, &y));
    YG_EXPECT_CLOSE(y, none, 1, v, 0, 0);
    yg_release(y);
    YG_EXPECT_ERROR(yg_slice(x, 0, 0, 5, 0, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "slice: step must be positive, got 0");
    assert_null(y);
    yg_release(x);
}

static void test_select_rejects_out_of_range_index(void **state) {
    yg_tensor *x = iota_234(), *y = NULL;
    (void)state;
    YG_EXPECT_ERROR(yg_select(x, 1, 3, &y),
                    YG_ERR_INDEX,
                    "select: index 3 out of range for dim 1 of size 3 in self [2, 3, 4]");
    assert_null(y);
    yg_release(x);
}

static void test_narrow_is_a_checked_slice(void **state) {
    const int64_t ns[] = {2, 3, 2};
    yg_tensor *x = iota_234(), *y = NULL;
    double expected[12];
    (void)state;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 2; k++)
                expected[(i * 3 + j) * 2 + k] = i * 12 + j * 4 + 1 + k;
    YG_CHECK(yg_narrow(x, -1, 1, 2, &y));
    YG_EXPECT_CLOSE(y, ns, 3, expected, 0, 0);
    yg_release(y);
    YG_EXPECT_ERROR(yg_narrow(x, 2, 3, 2, &y),
                    YG_ERR_INDEX,
                    "narrow: start 3 + length 2 exceeds dim 2 of size 4");
    assert_null(y);
    yg_release(x);
}

static void test_flatten_merges_a_range_of_dims(void **state) {
    const int64_t all[] = {24}, mid[] = {6, 4}, one[] = {1};
    yg_tensor *x = iota_234(), *y = NULL, *z = NULL;
    double *xv = yg_test_values(x);
    (void)state;
    YG_CHECK(yg_flatten(x, 0, -1, &y));
    YG_EXPECT_CLOSE(y, all, 1, xv, 0, 0);
    yg_release(y);
    YG_CHECK(yg_flatten(x, 0, 1, &y));
    YG_EXPECT_CLOSE(y, mid, 2, xv, 0, 0);
    yg_release(y);
    YG_CHECK(yg_tensor_scalar(7, YG_FLOAT32, &z));
    YG_CHECK(yg_flatten(z, 0, -1, &y));
    {
        const double seven[] = {7};
        YG_EXPECT_CLOSE(y, one, 1, seven, 0, 0);
    }
    yg_release(y);
    YG_EXPECT_ERROR(yg_flatten(x, 2, 1, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "flatten: start_dim 2 comes after end_dim 1");
    assert_null(y);
    free(xv);
    yg_release(z);
    yg_release(x);
}

static void test_contiguous_copies_only_non_contiguous_tensors(void **state) {
    const int64_t ts[] = {4, 3, 2};
    yg_tensor *x = iota_234(), *t = NULL, *y = NULL;
    double expected[24];
    (void)state;
    YG_CHECK(yg_contiguous(x, &y));
    assert_ptr_equal(y, x);
    yg_release(y);
    YG_CHECK(yg_transpose(x, 0, 2, &t));
    YG_CHECK(yg_contiguous(t, &y));
    assert_true(yg_tensor_is_contiguous(y));
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 2; i++)
                expected[(k * 3 + j) * 2 + i] = i * 12 + j * 4 + k;
    YG_EXPECT_CLOSE(y, ts, 3, expected, 0, 0);
    yg_release(y);
    yg_release(t);
    yg_release(x);
}

static void test_repeat_tiles_along_each_dim(void **state) {
    const int64_t s[] = {2, 2}, reps[] = {2, 1, 3}, rs[] = {2, 2, 6};
    const double v[] = {1, 2, 3, 4};
    const double row0[] = {1, 2, 1, 2, 1, 2}, row1[] = {3, 4, 3, 4, 3, 4};
    yg_tensor *x = yg_test_tensor(YG_FLOAT32, s, 2, v), *y = NULL;
    double expected[24];
    (void)state;
    for (int r = 0; r < 2; r++) {
        memcpy(expected + r * 12, row0, sizeof row0);
        memcpy(expected + r * 12 + 6, row1, sizeof row1);
    }
    YG_CHECK(yg_repeat(x, reps, 3, &y));
    YG_EXPECT_CLOSE(y, rs, 3, expected, 0, 0);
    yg_release(y);
    YG_EXPECT_ERROR(yg_repeat(x, reps, 1, &y), YG_ERR_SHAPE, "repeat: repeats [2]");
    assert_null(y);
    yg_release(x);
}

static void test_flip_reverses_the_given_dims(void **state) {
    const int64_t dims[] = {0, 2}, s[] = {2, 3, 4};
    yg_tensor *x = iota_234(), *t = NULL, *y = NULL;
    double expected[24];
    (void)state;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 4; k++)
                expected[(i * 3 + j) * 4 + k] = (1 - i) * 12 + j * 4 + (3 - k);
    YG_CHECK(yg_flip(x, dims, 2, &y));
    YG_EXPECT_CLOSE(y, s, 3, expected, 0, 0);
    assert_true(yg_tensor_data(y) != yg_tensor_data(x));
    yg_release(y);
    /* A non-contiguous input: flip of t(t(x)) seen through a permute. */
    {
        const int64_t p[] = {0, 1, 2};
        YG_CHECK(yg_permute(x, p, 3, &t));
        YG_CHECK(yg_flip(t, dims, 2, &y));
        YG_EXPECT_CLOSE(y, s, 3, expected, 0, 0);
        yg_release(y);
        yg_release(t);
    }
    YG_EXPECT_ERROR(yg_flip(x, (const int64_t[]){1, -2}, 2, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "flip: dim 1 appears more than once");
    assert_null(y);
    yg_release(x);
}

static void test_constant_pad_nd_pads_and_crops(void **state) {
    const int64_t s[] = {2, 2}, pad[] = {1, 0, 0, 1}, ps[] = {3, 3}, crop[] = {-1, 1},
                  cs[] = {2, 2};
    const double v[] = {1, 2, 3, 4};
    const double padded[] = {9, 1, 2, 9, 3, 4, 9, 9, 9}, cropped[] = {2, 9, 4, 9};
    yg_tensor *x = yg_test_tensor(YG_INT64, s, 2, v), *y = NULL;
    (void)state;
    YG_CHECK(yg_constant_pad_nd(x, pad, 4, 9, &y));
    assert_int_equal(yg_tensor_dtype(y), YG_INT64);
    YG_EXPECT_CLOSE(y, ps, 2, padded, 0, 0);
    yg_release(y);
    YG_CHECK(yg_constant_pad_nd(x, crop, 2, 9, &y));
    YG_EXPECT_CLOSE(y, cs, 2, cropped, 0, 0);
    yg_release(y);
    YG_EXPECT_ERROR(yg_constant_pad_nd(x, pad, 3, 0, &y),
                    YG_ERR_SHAPE,
                    "constant_pad_nd: pad [1, 0, 0] must have an even length");
    assert_null(y);
    YG_EXPECT_ERROR(yg_constant_pad_nd(x, (const int64_t[]){-2, -1}, 2, 0, &y),
                    YG_ERR_SHAPE,
                    "constant_pad_nd:",
                    "below size 0");
    assert_null(y);
    yg_release(x);
}

static void test_cat_joins_along_dim_and_promotes(void **state) {
    const int64_t as[] = {2, 2}, bs[] = {2, 3}, cs[] = {2, 5}, rs[] = {4, 2};
    const double av[] = {1, 2, 3, 4}, bv[] = {5, 6, 7, 8, 9, 10};
    const double e1[] = {1, 2, 5, 6, 7, 3, 4, 8, 9, 10}, e0[] = {1, 2, 3, 4, 1, 2, 3, 4};
    yg_tensor *a = yg_test_tensor(YG_FLOAT32, as, 2, av),
              *b = yg_test_tensor(YG_FLOAT64, bs, 2, bv);
    yg_tensor *y = NULL;
    (void)state;
    {
        const yg_tensor *ts[] = {a, b};
        YG_CHECK(yg_cat(ts, 2, -1, &y));
        assert_int_equal(yg_tensor_dtype(y), YG_FLOAT64);
        YG_EXPECT_CLOSE(y, cs, 2, e1, 0, 0);
        yg_release(y);
        YG_EXPECT_ERROR(yg_cat(ts, 2, 0, &y),
                        YG_ERR_SHAPE,
                        "cat: tensor 1 [2, 3] does not match tensor 0 [2, 2] outside dim 0");
        assert_null(y);
    }
    {
        const yg_tensor *ts[] = {a, a};
        YG_CHECK(yg_cat(ts, 2, 0, &y));
        YG_EXPECT_CLOSE(y, rs, 2, e0, 0, 0);
        yg_release(y);
    }
    YG_EXPECT_ERROR(
        yg_cat(NULL, 0, 0, &y), YG_ERR_INVALID_ARGUMENT, "cat: expected at least one tensor");
    yg_release(a);
    yg_release(b);
}

/* cat of n pieces allocates the result's storage once (the former
 * composite summed n zero-padded copies: about 2n allocations). */
static void test_cat_allocates_the_result_once(void **state) {
    enum { N = 50 };
    const int64_t ps[] = {2, 1};
    yg_tensor *pieces[N], *y = NULL;
    yg_allocator_stats before, after;
    (void)state;
    for (int i = 0; i < N; i++) {
        const double v[] = {i, -i};
        pieces[i] = yg_test_tensor(YG_FLOAT64, ps, 2, v);
        YG_CHECK(yg_tensor_set_requires_grad(pieces[i], true));
    }
    yg_allocator_get_stats(&before);
    YG_CHECK(yg_cat((const yg_tensor *const *)pieces, N, 1, &y));
    yg_allocator_get_stats(&after);
    assert_int_equal(after.num_allocs - before.num_allocs, 1);
    {
        const int64_t ys[] = {2, N};
        double e[2 * N];
        for (int i = 0; i < N; i++) {
            e[i] = i;
            e[N + i] = -i;
        }
        YG_EXPECT_CLOSE(y, ys, 2, e, 0, 0);
    }
    yg_release(y);
    for (int i = 0; i < N; i++)
        yg_release(pieces[i]);
}

/* A tensor of dtype dt holding values (converted from float64). */
static yg_tensor *
typed_tensor(yg_dtype dt, const int64_t *sizes, int64_t ndim, const double *values) {
    yg_tensor *t = yg_test_tensor(YG_FLOAT64, sizes, ndim, values), *out = NULL;
    YG_CHECK(yg_to_copy(t, dt, &out));
    yg_release(t);
    return out;
}

/* Every dtype, a transposed and an empty piece, checked against values
 * placed by hand (a naive loop over the expected layout). */
static void test_cat_every_dtype_with_noncontiguous_and_empty_pieces(void **state) {
    const yg_dtype dtypes[] = {
        YG_FLOAT32, YG_FLOAT64, YG_INT64, YG_BOOL, YG_INT32, YG_FLOAT16, YG_BFLOAT16};
    const int64_t as[] = {3, 2}, bs[] = {2, 0}, cs[] = {2, 1}, ys[] = {2, 4};
    const double av[] = {1, 0, 2, 3, 0, 4}; /* [3, 2], transposed to [2, 3] */
    const double cv[] = {5, 0};
    (void)state;
    for (size_t k = 0; k < sizeof dtypes / sizeof dtypes[0]; k++) {
        yg_dtype dt = dtypes[k];
        yg_tensor *a = typed_tensor(dt, as, 2, av), *b = typed_tensor(dt, bs, 2, NULL),
                  *c = typed_tensor(dt, cs, 2, cv), *at = NULL, *y = NULL;
        double e[8];
        YG_CHECK(yg_transpose(a, 0, 1, &at));
        const yg_tensor *ts[] = {at, b, c};
        YG_CHECK(yg_cat(ts, 3, 1, &y));
        assert_int_equal(yg_tensor_dtype(y), dt);
        for (int r = 0; r < 2; r++) {
            for (int j = 0; j < 3; j++)
                e[r * 4 + j] = av[j * 2 + r];
            e[r * 4 + 3] = cv[r];
        }
        if (dt == YG_BOOL)
            for (int i = 0; i < 8; i++)
                e[i] = e[i] != 0;
        YG_EXPECT_CLOSE(y, ys, 2, e, 0, 0);
        yg_release(y);
        yg_release(at);
        yg_release(a);
        yg_release(b);
        yg_release(c);
    }
}

/* Mixed dtypes promote as in PyTorch: bool and int32 give int32, int64
 * and float16 give float16. */
static void test_cat_promotes_mixed_dtypes(void **state) {
    const int64_t s[] = {2};
    const double v[] = {1, 0};
    yg_tensor *b = typed_tensor(YG_BOOL, s, 1, v), *i32 = typed_tensor(YG_INT32, s, 1, v),
              *i64 = typed_tensor(YG_INT64, s, 1, v), *h = typed_tensor(YG_FLOAT16, s, 1, v),
              *y = NULL;
    (void)state;
    {
        const yg_tensor *ts[] = {b, i32};
        const int64_t ys[] = {4};
        const double e[] = {1, 0, 1, 0};
        YG_CHECK(yg_cat(ts, 2, 0, &y));
        assert_int_equal(yg_tensor_dtype(y), YG_INT32);
        YG_EXPECT_CLOSE(y, ys, 1, e, 0, 0);
        yg_release(y);
    }
    {
        const yg_tensor *ts[] = {i64, h};
        YG_CHECK(yg_cat(ts, 2, 0, &y));
        assert_int_equal(yg_tensor_dtype(y), YG_FLOAT16);
        yg_release(y);
    }
    {
        const yg_tensor *ts[] = {b};
        YG_EXPECT_ERROR(
            yg_cat(ts, 1, 1, &y), YG_ERR_INDEX, "cat: dim 1 out of range for tensors of 1 dims");
        assert_null(y);
    }
    yg_release(b);
    yg_release(i32);
    yg_release(i64);
    yg_release(h);
}

/* Pieces that need no gradient (an int64 one, a float one without
 * requires_grad) get none; the one that does gets its slot of grad. */
static void test_cat_gives_gradients_only_to_pieces_that_require_grad(void **state) {
    const int64_t s1[] = {1, 2}, s2[] = {2, 2}, ws[] = {4, 2};
    const double v1[] = {1, 2}, v2[] = {3, 4, 5, 6}, w[] = {1, 2, 3, 4, 5, 6, 7, 8};
    yg_tensor *a = yg_test_tensor(YG_FLOAT64, s1, 2, v1), *b = yg_test_tensor(YG_INT64, s1, 2, v1),
              *c = yg_test_tensor(YG_FLOAT64, s2, 2, v2),
              *wt = yg_test_tensor(YG_FLOAT64, ws, 2, w), *y = NULL, *p = NULL, *sum = NULL,
              *g = NULL;
    (void)state;
    YG_CHECK(yg_tensor_set_requires_grad(c, true));
    {
        const yg_tensor *ts[] = {a, b, c};
        YG_CHECK(yg_cat(ts, 3, 0, &y));
    }
    assert_int_equal(yg_tensor_dtype(y), YG_FLOAT64);
    assert_true(yg_tensor_requires_grad(y));
    YG_CHECK(yg_mul(y, wt, &p));
    YG_CHECK(yg_sum(p, &sum));
    YG_CHECK(yg_backward(sum, NULL, false));
    YG_CHECK(yg_tensor_grad(c, &g));
    {
        const double e[] = {5, 6, 7, 8};
        YG_EXPECT_CLOSE(g, s2, 2, e, 0, 0);
    }
    yg_release(g);
    g = NULL;
    YG_CHECK(yg_tensor_grad(a, &g));
    assert_null(g);
    yg_release(sum);
    yg_release(p);
    yg_release(y);
    yg_release(wt);
    yg_release(c);
    yg_release(b);
    yg_release(a);
}

static void test_cat_and_stack_pass_gradients_back_to_each_input(void **state) {
    const int64_t as[] = {2}, bs[] = {3};
    const double av[] = {1, 2}, bv[] = {3, 4, 5}, w[] = {1, 2, 3, 4, 5};
    yg_tensor *a = yg_test_tensor(YG_FLOAT64, as, 1, av),
              *b = yg_test_tensor(YG_FLOAT64, bs, 1, bv);
    const int64_t ws[] = {5};
    yg_tensor *wt = yg_test_tensor(YG_FLOAT64, ws, 1, w), *y = NULL, *p = NULL, *s = NULL,
              *g = NULL;
    (void)state;
    YG_CHECK(yg_tensor_set_requires_grad(a, true));
    YG_CHECK(yg_tensor_set_requires_grad(b, true));
    {
        const yg_tensor *ts[] = {a, b};
        YG_CHECK(yg_cat(ts, 2, 0, &y));
    }
    YG_CHECK(yg_mul(y, wt, &p));
    YG_CHECK(yg_sum(p, &s));
    YG_CHECK(yg_backward(s, NULL, false));
    YG_CHECK(yg_tensor_grad(a, &g));
    {
        const double e[] = {1, 2};
        YG_EXPECT_CLOSE(g, as, 1, e, 0, 0);
    }
    yg_release(g);
    YG_CHECK(yg_tensor_grad(b, &g));
    {
        const double e[] = {3, 4, 5};
        YG_EXPECT_CLOSE(g, bs, 1, e, 0, 0);
    }
    yg_release(g);
    yg_release(s);
    yg_release(p);
    yg_release(y);
    /* stack: a new dim */
    {
        const yg_tensor *ts[] = {b, b};
        const int64_t ss[] = {3, 2};
        const double e[] = {3, 3, 4, 4, 5, 5};
        YG_CHECK(yg_stack(ts, 2, 1, &y));
        YG_EXPECT_CLOSE(y, ss, 2, e, 0, 0);
        yg_release(y);
        const yg_tensor *bad[] = {a, b};
        YG_EXPECT_ERROR(yg_stack(bad, 2, 0, &y),
                        YG_ERR_SHAPE,
                        "stack: tensor 1 [3] does not have the sizes of tensor 0 [2]");
        assert_null(y);
    }
    yg_release(wt);
    yg_release(a);
    yg_release(b);
}

/* repeats x size past int64 (found by review: signed overflow before). */
static void test_repeat_refuses_sizes_that_overflow(void **state) {
    (void)state;
    const int64_t s[] = {4}, reps[] = {((int64_t)1 << 62) + 1};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, s, 1, -1, 1, 7), *y = NULL;
    YG_EXPECT_ERROR(yg_repeat(x, reps, 1, &y), YG_ERR_SHAPE,
                    "repeat: repeats [4611686018427387905]: 4611686018427387905 x 4 elements"
                    " along dim 0 do not fit in int64");
    assert_null(y);
    yg_release(x);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repeat_refuses_sizes_that_overflow),
        cmocka_unit_test(test_squeeze_removes_size_1_dims_as_a_view),
        cmocka_unit_test(test_permute_moves_dims_without_copying),
        cmocka_unit_test(test_permute_rejects_a_non_permutation),
        cmocka_unit_test(test_select_and_slice_pick_elements_as_views),
        cmocka_unit_test(test_slice_clamps_bounds_like_python),
        cmocka_unit_test(test_select_rejects_out_of_range_index),
        cmocka_unit_test(test_narrow_is_a_checked_slice),
        cmocka_unit_test(test_flatten_merges_a_range_of_dims),
        cmocka_unit_test(test_contiguous_copies_only_non_contiguous_tensors),
        cmocka_unit_test(test_repeat_tiles_along_each_dim),
        cmocka_unit_test(test_flip_reverses_the_given_dims),
        cmocka_unit_test(test_constant_pad_nd_pads_and_crops),
        cmocka_unit_test(test_cat_joins_along_dim_and_promotes),
        cmocka_unit_test(test_cat_allocates_the_result_once),
        cmocka_unit_test(test_cat_every_dtype_with_noncontiguous_and_empty_pieces),
        cmocka_unit_test(test_cat_promotes_mixed_dtypes),
        cmocka_unit_test(test_cat_gives_gradients_only_to_pieces_that_require_grad),
        cmocka_unit_test(test_cat_and_stack_pass_gradients_back_to_each_input),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
