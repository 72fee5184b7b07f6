/*
 * test_ops_split.c - the ops returning Tensor[]: split, split_with_sizes,
 * chunk and unbind.  Values are checked against indices worked out here;
 * the pieces are views (they share self's storage and version counter);
 * in-place writes to them are refused naming the op when autograd is
 * involved; gradients reach self even when only some pieces are used; and
 * bad input fails with messages naming the op and the values.
 */
#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_inplace_arithmetic.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_join_split.h"

#include <stdlib.h>
#include <string.h>

/* A float64 tensor of sizes holding 0, 1, 2, ... in row-major order. */
static yg_tensor *iota(const int64_t *sizes, int64_t ndim) {
    int64_t n = 1;
    for (int64_t i = 0; i < ndim; i++)
        n *= sizes[i];
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)i;
    yg_tensor *t = yg_test_tensor(YG_FLOAT64, sizes, ndim, v);
    free(v);
    return t;
}

/* Checks piece against rows [start, start + len) of dim d of a row-major
 * [r, c] iota (d 0 or 1), read with naive index arithmetic. */
static void expect_piece_2d(const yg_tensor *piece, int64_t r, int64_t c, int64_t d,
                            int64_t start, int64_t len) {
    int64_t sizes[2] = {d == 0 ? len : r, d == 1 ? len : c};
    double *want = malloc((size_t)(sizes[0] * sizes[1] + 1) * sizeof *want);
    for (int64_t i = 0; i < sizes[0]; i++)
        for (int64_t j = 0; j < sizes[1]; j++)
            want[i * sizes[1] + j] = d == 0 ? (double)((start + i) * c + j)
                                            : (double)(i * c + start + j);
    YG_EXPECT_CLOSE(piece, sizes, 2, want, 0, 0);
    free(want);
}

static void test_split_cuts_views_with_a_shorter_last_piece(void **state) {
    const int64_t s[] = {5, 3};
    yg_tensor *x = iota(s, 2), **outs = NULL;
    int64_t n = 0;
    (void)state;
    YG_CHECK(yg_split(x, 2, 0, &outs, &n));
    assert_int_equal(n, 3);
    expect_piece_2d(outs[0], 5, 3, 0, 0, 2);
    expect_piece_2d(outs[1], 5, 3, 0, 2, 2);
    expect_piece_2d(outs[2], 5, 3, 0, 4, 1);
    /* Views: each piece starts inside self's storage. */
    assert_ptr_equal(yg_tensor_data(outs[1]), (double *)yg_tensor_data(x) + 6);
    yg_release_list(outs, n);
    /* Negative dim, and a split_size larger than the dim: the whole dim. */
    YG_CHECK(yg_split(x, 7, -1, &outs, &n));
    assert_int_equal(n, 1);
    expect_piece_2d(outs[0], 5, 3, 1, 0, 3);
    yg_release_list(outs, n);
    yg_release(x);
}

static void test_split_reads_a_transposed_self(void **state) {
    const int64_t s[] = {3, 5};
    yg_tensor *x = iota(s, 2), *xt = NULL, **outs = NULL;
    int64_t n = 0;
    (void)state;
    YG_CHECK(yg_t(x, &xt)); /* [5, 3], element (i, j) = j * 5 + i */
    YG_CHECK(yg_split(xt, 2, 0, &outs, &n));
    assert_int_equal(n, 3);
    for (int64_t p = 0; p < n; p++) {
        int64_t len = p < 2 ? 2 : 1, sizes[] = {len, 3};
        double want[6];
        for (int64_t i = 0; i < len; i++)
            for (int64_t j = 0; j < 3; j++)
                want[i * 3 + j] = (double)(j * 5 + 2 * p + i);
        YG_EXPECT_CLOSE(outs[p], sizes, 2, want, 0, 0);
    }
    yg_release_list(outs, n);
    yg_release(xt);
    yg_release(x);
}

static void test_chunk_gives_pieces_of_ceil_size_divided_by_chunks(void **state) {
    const int64_t s[] = {2, 5}, s6[] = {6, 1};
    yg_tensor *x = iota(s, 2), *y = iota(s6, 2), **outs = NULL;
    int64_t n = 0;
    (void)state;
    /* 5 in 4 chunks: pieces of 2, 2, 1 (three, not four). */
    YG_CHECK(yg_chunk(x, 4, 1, &outs, &n));
    assert_int_equal(n, 3);
    expect_piece_2d(outs[0], 2, 5, 1, 0, 2);
    expect_piece_2d(outs[1], 2, 5, 1, 2, 2);
    expect_piece_2d(outs[2], 2, 5, 1, 4, 1);
    yg_release_list(outs, n);
    /* 6 in 3 chunks divides evenly; more chunks than elements gives one
     * element per piece. */
    YG_CHECK(yg_chunk(y, 3, -2, &outs, &n));
    assert_int_equal(n, 3);
    expect_piece_2d(outs[2], 6, 1, 0, 4, 2);
    yg_release_list(outs, n);
    YG_CHECK(yg_chunk(y, 10, 0, &outs, &n));
    assert_int_equal(n, 6);
    expect_piece_2d(outs[5], 6, 1, 0, 5, 1);
    yg_release_list(outs, n);
    yg_release(y);
    yg_release(x);
}

static void test_split_with_sizes_allows_empty_pieces(void **state) {
    const int64_t s[] = {2, 5}, sizes[] = {1, 0, 4};
    yg_tensor *x = iota(s, 2), **outs = NULL;
    int64_t n = 0;
    (void)state;
    YG_CHECK(yg_split_with_sizes(x, sizes, 3, 1, &outs, &n));
    assert_int_equal(n, 3);
    expect_piece_2d(outs[0], 2, 5, 1, 0, 1);
    expect_piece_2d(outs[1], 2, 5, 1, 1, 0);
    expect_piece_2d(outs[2], 2, 5, 1, 1, 4);
    yg_release_list(outs, n);
    yg_release(x);
}

static void test_unbind_removes_the_dim(void **state) {
    const int64_t s[] = {2, 3, 4}, ps[] = {2, 4};
    yg_tensor *x = iota(s, 3), **outs = NULL;
    int64_t n = 0;
    double want[8];
    (void)state;
    YG_CHECK(yg_unbind(x, 1, &outs, &n));
    assert_int_equal(n, 3);
    for (int64_t p = 0; p < 3; p++) {
        for (int64_t i = 0; i < 2; i++)
            for (int64_t k = 0; k < 4; k++)
                want[i * 4 + k] = (double)(i * 12 + p * 4 + k);
        YG_EXPECT_CLOSE(outs[p], ps, 2, want, 0, 0);
    }
    yg_release_list(outs, n);
    /* A 1-D self unbinds into 0-dim tensors. */
    const int64_t s1[] = {3};
    yg_tensor *v = iota(s1, 1);
    YG_CHECK(yg_unbind(v, -1, &outs, &n));
    assert_int_equal(n, 3);
    double two = 2;
    YG_EXPECT_CLOSE(outs[2], NULL, 0, &two, 0, 0);
    yg_release_list(outs, n);
    yg_release(v);
    yg_release(x);
}

static void test_size_0_dims_give_one_empty_piece_or_no_pieces(void **state) {
    const int64_t s[] = {0, 3}, es[] = {0, 3};
    yg_tensor *x = NULL, **outs = NULL;
    int64_t n = -1;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 2, YG_FLOAT64, &x));
    YG_CHECK(yg_split(x, 2, 0, &outs, &n));
    assert_int_equal(n, 1);
    YG_EXPECT_CLOSE(outs[0], es, 2, NULL, 0, 0);
    yg_release_list(outs, n);
    /* split_size 0 is allowed for a dim of size 0 only. */
    YG_CHECK(yg_split(x, 0, 0, &outs, &n));
    assert_int_equal(n, 1);
    yg_release_list(outs, n);
    YG_CHECK(yg_chunk(x, 3, 0, &outs, &n));
    assert_int_equal(n, 1);
    yg_release_list(outs, n);
    /* unbind of a dim of size 0: an empty list, even with grad. */
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_unbind(x, 0, &outs, &n));
    assert_int_equal(n, 0);
    yg_release_list(outs, n);
    yg_release(x);
}

static void test_split_family_rejects_bad_arguments(void **state) {
    const int64_t s[] = {2, 5}, bad_sum[] = {2, 2}, negative[] = {6, -1};
    yg_tensor *x = iota(s, 2), *scalar = NULL, **outs = NULL;
    int64_t n = 7;
    (void)state;
    YG_CHECK(yg_tensor_scalar(1.0, YG_FLOAT64, &scalar));
    YG_EXPECT_ERROR(
        yg_chunk(x, 0, 0, &outs, &n), YG_ERR_INVALID_ARGUMENT, "chunk: chunks must be positive, got 0");
    assert_null(outs);
    assert_int_equal(n, 0);
    YG_EXPECT_ERROR(yg_chunk(x, -2, 0, &outs, &n), YG_ERR_INVALID_ARGUMENT, "got -2");
    YG_EXPECT_ERROR(yg_split(x, -1, 1, &outs, &n),
                    YG_ERR_INVALID_ARGUMENT,
                    "split: split_size -1 must be positive for dim 1 of size 5");
    YG_EXPECT_ERROR(yg_split(x, 0, 0, &outs, &n), YG_ERR_INVALID_ARGUMENT, "split_size 0");
    YG_EXPECT_ERROR(yg_split(x, 1, 2, &outs, &n), YG_ERR_INDEX, "split: dim 2 out of range");
    YG_EXPECT_ERROR(yg_unbind(x, -3, &outs, &n), YG_ERR_INDEX, "unbind: dim -3 out of range");
    YG_EXPECT_ERROR(yg_unbind(scalar, 0, &outs, &n), YG_ERR_SHAPE, "unbind:", "0-dim self");
    YG_EXPECT_ERROR(yg_split_with_sizes(x, bad_sum, 2, 1, &outs, &n),
                    YG_ERR_SHAPE,
                    "split_with_sizes: split_sizes [2, 2] sum to 4 but dim 1 of self [2, 5] has "
                    "size 5");
    YG_EXPECT_ERROR(yg_split_with_sizes(x, negative, 2, 1, &outs, &n),
                    YG_ERR_INVALID_ARGUMENT,
                    "split_with_sizes: split_sizes [6, -1] has a negative entry");
    assert_null(outs);
    YG_EXPECT_ERROR(yg_split(x, 1, 0, NULL, &n), YG_ERR_INVALID_ARGUMENT, "split: out-parameter out");
    YG_EXPECT_ERROR(yg_split(x, 1, 0, &outs, NULL), YG_ERR_INVALID_ARGUMENT, "out_len is NULL");
    YG_EXPECT_ERROR(yg_split(NULL, 1, 0, &outs, &n), YG_ERR_INVALID_ARGUMENT, "split: self");
    yg_release(scalar);
    yg_release(x);
}

static void test_pieces_share_storage_and_version_with_the_base(void **state) {
    const int64_t s[] = {4, 2}, ps[] = {2, 2};
    yg_tensor *x = iota(s, 2), *base = NULL, **outs = NULL, *sq = NULL, *loss = NULL;
    yg_tensor *same = NULL, *one = NULL;
    int64_t n = 0;
    (void)state;
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_mul_scalar(x, 1.0, &base)); /* a non-leaf the test may write */
    YG_CHECK(yg_chunk(base, 2, 0, &outs, &n));
    /* Writing through the base shows in the pieces. */
    YG_CHECK(yg_tensor_scalar(10.0, YG_FLOAT64, &one));
    YG_CHECK(yg_mul(outs[1], outs[1], &sq)); /* saves piece 1 for backward */
    YG_CHECK(yg_add_(base, one, 1.0, &same));
    const double want[] = {14, 15, 16, 17};
    YG_EXPECT_CLOSE(outs[1], ps, 2, want, 0, 0);
    /* ... and bumps the version the pieces share: the saved piece is stale. */
    YG_CHECK(yg_sum(sq, &loss));
    YG_EXPECT_ERROR(yg_backward(loss, NULL, false),
                    YG_ERR_AUTOGRAD,
                    "modified by an in-place operation");
    yg_release(loss);
    yg_release(sq);
    yg_release(same);
    yg_release(one);
    yg_release_list(outs, n);
    yg_release(base);
    yg_release(x);
}

static void test_inplace_on_a_piece_is_refused_naming_the_op(void **state) {
    const int64_t s[] = {4, 2}, ps[] = {2, 2};
    yg_tensor *x = iota(s, 2), *base = NULL, **outs = NULL, *same = NULL;
    int64_t n = 0;
    (void)state;
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_mul_scalar(x, 1.0, &base));
    YG_CHECK(yg_chunk(base, 2, 0, &outs, &n));
    YG_EXPECT_ERROR(yg_mul_scalar_(outs[0], 2.0, &same),
                    YG_ERR_AUTOGRAD,
                    "mul_: self is one of several views returned by chunk");
    assert_null(same);
    yg_release_list(outs, n);
    YG_CHECK(yg_unbind(base, 1, &outs, &n));
    YG_EXPECT_ERROR(yg_mul_scalar_(outs[1], 2.0, &same),
                    YG_ERR_AUTOGRAD,
                    "views returned by unbind");
    yg_release_list(outs, n);
    yg_release(base);
    /* Without autograd the write is allowed and lands in the base. */
    YG_CHECK(yg_tensor_set_requires_grad(x, false));
    YG_CHECK(yg_split(x, 2, 0, &outs, &n));
    YG_CHECK(yg_mul_scalar_(outs[1], -1.0, &same));
    const double want[] = {-4, -5, -6, -7};
    YG_EXPECT_CLOSE(outs[1], ps, 2, want, 0, 0);
    const double xv[] = {0, 1, 2, 3, -4, -5, -6, -7};
    YG_EXPECT_CLOSE(x, s, 2, xv, 0, 0);
    yg_release(same);
    yg_release_list(outs, n);
    yg_release(x);
}

static void test_gradients_reach_self_when_only_some_pieces_are_used(void **state) {
    const int64_t s[] = {4, 2};
    yg_tensor *x = iota(s, 2), **outs = NULL, *a = NULL, *sa = NULL, *sb = NULL, *loss = NULL;
    yg_tensor *g = NULL;
    int64_t n = 0;
    (void)state;
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_split(x, 1, 0, &outs, &n));
    assert_int_equal(n, 4);
    assert_true(yg_tensor_requires_grad(outs[2]));
    /* loss = 3 sum(piece 1) + sum(piece 3): pieces 0 and 2 get no gradient */
    YG_CHECK(yg_mul_scalar(outs[1], 3.0, &a));
    YG_CHECK(yg_sum(a, &sa));
    YG_CHECK(yg_sum(outs[3], &sb));
    YG_CHECK(yg_add(sa, sb, 1.0, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    YG_CHECK(yg_tensor_grad(x, &g));
    const double want[] = {0, 0, 3, 3, 0, 0, 1, 1};
    YG_EXPECT_CLOSE(g, s, 2, want, 0, 0);
    yg_release(g);
    yg_release(loss);
    yg_release(sb);
    yg_release(sa);
    yg_release(a);
    yg_release_list(outs, n);
    yg_release(x);
}

static void test_release_list_accepts_null(void **state) {
    (void)state;
    yg_release_list(NULL, 3);
    yg_release_list(NULL, 0);
}

/* Sizes whose sum wraps around int64 must not pass as summing to the dim
 * (found by review: views far past the storage before). */
static void test_split_sizes_that_overflow_are_refused(void **state) {
    (void)state;
    const int64_t s4[] = {4}, sizes[] = {INT64_MAX, INT64_MAX, 6};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, s4, 1, -1, 1, 5), **pieces = NULL;
    int64_t n = -1;
    YG_EXPECT_ERROR(yg_split_with_sizes(x, sizes, 3, 0, &pieces, &n), YG_ERR_SHAPE,
                    "split_with_sizes: split_sizes [9223372036854775807, 9223372036854775807, 6]"
                    " sum past int64, not to dim 0 of self [4] (size 4)");
    assert_null(pieces);
    YG_CHECK(yg_split(x, INT64_MAX, 0, &pieces, &n));
    assert_int_equal(n, 1);
    assert_int_equal(yg_tensor_sizes(pieces[0])[0], 4);
    yg_release_list(pieces, n);
    yg_release(x);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_sizes_that_overflow_are_refused),
        cmocka_unit_test(test_split_cuts_views_with_a_shorter_last_piece),
        cmocka_unit_test(test_split_reads_a_transposed_self),
        cmocka_unit_test(test_chunk_gives_pieces_of_ceil_size_divided_by_chunks),
        cmocka_unit_test(test_split_with_sizes_allows_empty_pieces),
        cmocka_unit_test(test_unbind_removes_the_dim),
        cmocka_unit_test(test_size_0_dims_give_one_empty_piece_or_no_pieces),
        cmocka_unit_test(test_split_family_rejects_bad_arguments),
        cmocka_unit_test(test_pieces_share_storage_and_version_with_the_base),
        cmocka_unit_test(test_inplace_on_a_piece_is_refused_naming_the_op),
        cmocka_unit_test(test_gradients_reach_self_when_only_some_pieces_are_used),
        cmocka_unit_test(test_release_list_accepts_null),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
