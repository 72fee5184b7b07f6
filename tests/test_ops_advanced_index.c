/*
 * test_ops_advanced_index.c - self[indices] (index) and index_put /
 * index_put_: int64 and bool indices, NULL entries (kept dims),
 * broadcasting indices, where the indexed dims land, negative indices,
 * non-contiguous and 0-dim / empty operands, accumulation of repeated
 * indices, the gradients, and the messages of bad input.  Expected
 * values come from naive loops written here.
 */
#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_slicing.h"
#include "yagrad/ops_advanced_indexing.h"

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

static yg_tensor *ints(const int64_t *sizes, int64_t ndim, const int64_t *values) {
    yg_tensor *t = NULL;
    YG_CHECK(yg_tensor_from_data(values, sizes, ndim, YG_INT64, &t));
    return t;
}

static yg_tensor *bools(const int64_t *sizes, int64_t ndim, const bool *values) {
    yg_tensor *t = NULL;
    YG_CHECK(yg_tensor_from_data(values, sizes, ndim, YG_BOOL, &t));
    return t;
}

static void test_index_picks_rows_with_repeats_and_negative_indices(void **state) {
    const int64_t s[] = {4, 3}, is[] = {2, 2}, iv[] = {3, 0, -1, 1}, rs[] = {2, 2, 3};
    yg_tensor *x = iota(s, 2), *i = ints(is, 2, iv), *y = NULL;
    const yg_tensor *list[] = {i};
    double want[12];
    (void)state;
    for (int b = 0; b < 4; b++) {
        int64_t row = iv[b] < 0 ? iv[b] + 4 : iv[b];
        for (int j = 0; j < 3; j++)
            want[b * 3 + j] = (double)(row * 3 + j);
    }
    YG_CHECK(yg_index(x, list, 1, &y));
    YG_EXPECT_CLOSE(y, rs, 3, want, 0, 0);
    yg_release(y);
    yg_release(i);
    yg_release(x);
}

static void test_adjacent_indexed_dims_are_replaced_in_place(void **state) {
    /* x[:, i1, i2] of [2, 3, 4] with i1, i2 of [2]: [2, 2] */
    const int64_t s[] = {2, 3, 4}, is[] = {2}, v1[] = {2, 0}, v2[] = {1, -1}, rs[] = {2, 2};
    yg_tensor *x = iota(s, 3), *i1 = ints(is, 1, v1), *i2 = ints(is, 1, v2), *y = NULL;
    const yg_tensor *list[] = {NULL, i1, i2};
    double want[4];
    (void)state;
    for (int n = 0; n < 2; n++)
        for (int b = 0; b < 2; b++)
            want[n * 2 + b] = (double)(n * 12 + v1[b] * 4 + (v2[b] + 4) % 4);
    YG_CHECK(yg_index(x, list, 3, &y));
    YG_EXPECT_CLOSE(y, rs, 2, want, 0, 0);
    yg_release(y);
    yg_release(i2);
    yg_release(i1);
    yg_release(x);
}

static void test_separated_indexed_dims_put_the_broadcast_shape_first(void **state) {
    /* x[i0, :, i2] of [3, 4, 5], i0 [2, 1] and i2 [3] broadcast to [2, 3]:
     * the result is [2, 3, 4] */
    const int64_t s[] = {3, 4, 5}, s0[] = {2, 1}, v0[] = {2, -3}, s2[] = {3}, v2[] = {4, 0, -2};
    const int64_t rs[] = {2, 3, 4};
    yg_tensor *x = iota(s, 3), *i0 = ints(s0, 2, v0), *i2 = ints(s2, 1, v2), *y = NULL;
    const yg_tensor *list[] = {i0, NULL, i2};
    double want[24];
    (void)state;
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 3; b++)
            for (int j = 0; j < 4; j++)
                want[(a * 3 + b) * 4 + j] =
                    (double)(((v0[a] + 3) % 3) * 20 + j * 5 + (v2[b] + 5) % 5);
    YG_CHECK(yg_index(x, list, 3, &y));
    YG_EXPECT_CLOSE(y, rs, 3, want, 0, 0);
    yg_release(y);
    yg_release(i2);
    yg_release(i0);
    yg_release(x);
}

static void test_bool_masks_index_their_true_positions(void **state) {
    const int64_t s[] = {3, 4, 2}, ms[] = {3, 4}, m1[] = {4}, rs[] = {5, 2}, r1[] = {3, 2, 2};
    const bool mv[] = {1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 1}, v1[] = {0, 1, 0, 1};
    yg_tensor *x = iota(s, 3), *m = bools(ms, 2, mv), *mk = bools(m1, 1, v1), *y = NULL;
    const yg_tensor *list[] = {m}, *list1[] = {NULL, mk};
    double want[12];
    int k = 0;
    (void)state;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 4; b++)
            for (int c = 0; mv[a * 4 + b] && c < 2; c++)
                want[k++] = (double)(a * 8 + b * 2 + c);
    YG_CHECK(yg_index(x, list, 1, &y));
    YG_EXPECT_CLOSE(y, rs, 2, want, 0, 0);
    yg_release(y);
    /* A 1-D mask over dim 1 after a kept dim. */
    k = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 4; b++)
            for (int c = 0; v1[b] && c < 2; c++)
                want[k++] = (double)(a * 8 + b * 2 + c);
    YG_CHECK(yg_index(x, list1, 2, &y));
    YG_EXPECT_CLOSE(y, r1, 3, want, 0, 0);
    yg_release(y);
    yg_release(mk);
    yg_release(m);
    yg_release(x);
}

static void test_index_reads_a_transposed_self(void **state) {
    const int64_t s[] = {3, 4}, is[] = {3}, iv[] = {1, 3, 1}, rs[] = {3, 3};
    yg_tensor *x = iota(s, 2), *xt = NULL, *i = ints(is, 1, iv), *y = NULL;
    const yg_tensor *list[] = {i};
    double want[9];
    (void)state;
    YG_CHECK(yg_t(x, &xt)); /* [4, 3], element (r, c) = c * 4 + r */
    for (int b = 0; b < 3; b++)
        for (int c = 0; c < 3; c++)
            want[b * 3 + c] = (double)(c * 4 + iv[b]);
    YG_CHECK(yg_index(xt, list, 1, &y));
    YG_EXPECT_CLOSE(y, rs, 2, want, 0, 0);
    yg_release(y);
    yg_release(i);
    yg_release(xt);
    yg_release(x);
}

static void test_0_dim_and_empty_indices(void **state) {
    const int64_t s[] = {4, 3}, rs[] = {3}, es[] = {0}, ers[] = {0, 3}, two = 2;
    yg_tensor *x = iota(s, 2), *i0 = ints(NULL, 0, &two), *empty = ints(es, 1, NULL), *y = NULL;
    yg_tensor *scalar = NULL;
    const yg_tensor *l0[] = {i0}, *le[] = {empty};
    const double row2[] = {6, 7, 8};
    double seven = 7, got;
    (void)state;
    /* A 0-dim index removes its dim, as select does. */
    YG_CHECK(yg_index(x, l0, 1, &y));
    YG_EXPECT_CLOSE(y, rs, 1, row2, 0, 0);
    yg_release(y);
    YG_CHECK(yg_index(x, le, 1, &y));
    YG_EXPECT_CLOSE(y, ers, 2, NULL, 0, 0);
    yg_release(y);
    /* No indices: a copy of self, even a 0-dim one. */
    YG_CHECK(yg_tensor_scalar(7.0, YG_FLOAT64, &scalar));
    YG_CHECK(yg_index(scalar, NULL, 0, &y));
    YG_CHECK(yg_tensor_item(y, &got));
    assert_true(got == seven && yg_tensor_ndim(y) == 0);
    assert_ptr_not_equal(yg_tensor_data(y), yg_tensor_data(scalar));
    yg_release(y);
    yg_release(scalar);
    yg_release(empty);
    yg_release(i0);
    yg_release(x);
}

static void test_index_put_writes_or_adds_broadcast_values(void **state) {
    const int64_t s[] = {4, 3}, is[] = {3}, iv[] = {1, -3, 3}, vs[] = {3};
    const double vv[] = {10, 20, 30};
    yg_tensor *x = iota(s, 2), *i = ints(is, 1, iv), *v = yg_test_tensor(YG_FLOAT64, vs, 1, vv);
    yg_tensor *y = NULL;
    const yg_tensor *list[] = {i};
    double want[12];
    (void)state;
    /* rows 1 (twice: -3 wraps to 1) and 3 get [10, 20, 30] */
    for (int k = 0; k < 12; k++)
        want[k] = k;
    for (int b = 0; b < 3; b++)
        for (int j = 0; j < 3; j++)
            want[((iv[b] + 4) % 4) * 3 + j] = vv[j];
    YG_CHECK(yg_index_put(x, list, 1, v, false, &y));
    YG_EXPECT_CLOSE(y, s, 2, want, 0, 0);
    yg_release(y);
    /* accumulate: row 1 gets the values twice */
    for (int k = 0; k < 12; k++)
        want[k] = k;
    for (int b = 0; b < 3; b++)
        for (int j = 0; j < 3; j++)
            want[((iv[b] + 4) % 4) * 3 + j] += vv[j];
    YG_CHECK(yg_index_put(x, list, 1, v, true, &y));
    YG_EXPECT_CLOSE(y, s, 2, want, 0, 0);
    yg_release(y);
    /* self is unchanged by the out-of-place form */
    for (int k = 0; k < 12; k++)
        want[k] = k;
    YG_EXPECT_CLOSE(x, s, 2, want, 0, 0);
    yg_release(v);
    yg_release(i);
    yg_release(x);
}

static void test_index_put_in_place_writes_through_a_transposed_view(void **state) {
    const int64_t s[] = {3, 4}, is[] = {2}, rv[] = {0, 2}, cv[] = {1, 2};
    yg_tensor *x = iota(s, 2), *xt = NULL, *r = ints(is, 1, rv), *c = ints(is, 1, cv);
    yg_tensor *v = NULL, *same = NULL;
    const yg_tensor *list[] = {r, c};
    double want[12];
    (void)state;
    YG_CHECK(yg_tensor_scalar(-1.0, YG_FLOAT64, &v));
    YG_CHECK(yg_t(x, &xt)); /* [4, 3]: xt[r][c] is x[c][r] */
    YG_CHECK(yg_index_put_(xt, list, 2, v, false, &same));
    assert_ptr_equal(same, xt);
    for (int k = 0; k < 12; k++)
        want[k] = k;
    for (int b = 0; b < 2; b++)
        want[cv[b] * 4 + rv[b]] = -1;
    YG_EXPECT_CLOSE(x, s, 2, want, 0, 0);
    yg_release(same);
    yg_release(v);
    yg_release(c);
    yg_release(r);
    yg_release(xt);
    yg_release(x);
}

static void test_index_gradient_adds_up_repeated_positions(void **state) {
    const int64_t s[] = {4, 2}, is[] = {4}, iv[] = {1, 3, 1, -3};
    yg_tensor *x = iota(s, 2), *i = ints(is, 1, iv), *y = NULL, *loss = NULL, *g = NULL;
    const yg_tensor *list[] = {i};
    const double want[] = {0, 0, 3, 3, 0, 0, 1, 1};
    (void)state;
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_index(x, list, 1, &y));
    YG_CHECK(yg_sum(y, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    YG_CHECK(yg_tensor_grad(x, &g));
    YG_EXPECT_CLOSE(g, s, 2, want, 0, 0);
    yg_release(g);
    yg_release(loss);
    yg_release(y);
    yg_release(i);
    yg_release(x);
}

static void test_index_put_gradient_masks_overwritten_positions(void **state) {
    /* y = index_put_(narrow(2 x, 0, 1, 3), rows, v): x's gradient is 2
     * except at the overwritten rows; v's is the number of times each of
     * its rows was written. */
    const int64_t s[] = {4, 2}, is[] = {2}, iv[] = {0, 2}, vs[] = {1, 2};
    yg_tensor *x = iota(s, 2), *i = ints(is, 1, iv), *v = iota(vs, 2), *base = NULL, *view = NULL;
    yg_tensor *same = NULL, *loss = NULL, *g = NULL;
    const yg_tensor *list[] = {i};
    const double gx[] = {2, 2, 0, 0, 2, 2, 0, 0}, gv[] = {2, 2};
    (void)state;
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_tensor_set_requires_grad(v, true));
    YG_CHECK(yg_mul_scalar(x, 2.0, &base));
    YG_CHECK(yg_narrow(base, 0, 1, 3, &view)); /* rows 1..3; indices 0, 2 -> rows 1, 3 */
    YG_CHECK(yg_index_put_(view, list, 1, v, false, &same));
    YG_CHECK(yg_sum(base, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    YG_CHECK(yg_tensor_grad(x, &g));
    YG_EXPECT_CLOSE(g, s, 2, gx, 0, 0);
    yg_release(g);
    YG_CHECK(yg_tensor_grad(v, &g));
    YG_EXPECT_CLOSE(g, vs, 2, gv, 0, 0);
    yg_release(g);
    yg_release(loss);
    yg_release(same);
    yg_release(view);
    yg_release(base);
    yg_release(v);
    yg_release(i);
    yg_release(x);
}

static void test_bad_indices_fail_naming_op_dim_value_and_size(void **state) {
    const int64_t s[] = {4, 3}, is[] = {2}, oob[] = {1, 4}, neg[] = {-5, 0}, fs[] = {2};
    const int64_t ms[] = {3, 3}, s3[] = {3};
    const double fv[] = {0, 1};
    const bool mv[9] = {0};
    yg_tensor *x = iota(s, 2), *i_oob = ints(is, 1, oob), *i_neg = ints(is, 1, neg);
    yg_tensor *f = yg_test_tensor(YG_FLOAT32, fs, 1, fv), *m = bools(ms, 2, mv);
    yg_tensor *i3 = ints(s3, 1, (const int64_t[]){0, 1, 2}), *i2 = ints(is, 1, (const int64_t[]){0, 1}), *y = NULL;
    const yg_tensor *l_oob[] = {i_oob}, *l_neg[] = {NULL, i_neg}, *l_f[] = {f}, *l_m[] = {m};
    const yg_tensor *l_many[] = {NULL, NULL, i3}, *l_bc[] = {i2, i3};
    (void)state;
    YG_EXPECT_ERROR(yg_index(x, l_oob, 1, &y),
                    YG_ERR_INDEX,
                    "index: index 4 is out of bounds for dim 0 with size 4");
    assert_null(y);
    YG_EXPECT_ERROR(yg_index(x, l_neg, 2, &y),
                    YG_ERR_INDEX,
                    "index: index -5 is out of bounds for dim 1 with size 3");
    YG_EXPECT_ERROR(yg_index(x, l_f, 1, &y),
                    YG_ERR_DTYPE,
                    "index: indices[0] has dtype float32; expected int64 or bool");
    YG_EXPECT_ERROR(
        yg_index(x, l_m, 1, &y), YG_ERR_SHAPE, "index: mask indices[0] [3, 3] does not match self [4, 3] at dim 0");
    YG_EXPECT_ERROR(yg_index(x, l_many, 3, &y),
                    YG_ERR_INDEX,
                    "index: too many indices for self [4, 3]: indices[2] would index dim 2");
    YG_EXPECT_ERROR(yg_index(x, l_bc, 2, &y),
                    YG_ERR_SHAPE,
                    "index: the indices cannot be broadcast together: [2] and [3]");
    YG_EXPECT_ERROR(yg_index(x, NULL, 2, &y), YG_ERR_INVALID_ARGUMENT, "index: indices is NULL");
    YG_EXPECT_ERROR(yg_index(NULL, l_oob, 1, &y), YG_ERR_INVALID_ARGUMENT, "index: self");
    assert_null(y);
    yg_release(i2);
    yg_release(i3);
    yg_release(m);
    yg_release(f);
    yg_release(i_neg);
    yg_release(i_oob);
    yg_release(x);
}

static void test_bad_values_fail_before_index_put_writes(void **state) {
    const int64_t s[] = {4, 3}, is[] = {2}, iv[] = {0, 9}, ok[] = {0, 1}, vs[] = {2, 2};
    yg_tensor *x = iota(s, 2), *i_bad = ints(is, 1, iv), *i_ok = ints(is, 1, ok);
    yg_tensor *v = iota(vs, 2), *vf = NULL, *y = NULL, *leaf = iota(s, 2), *one = NULL;
    const yg_tensor *l_bad[] = {i_bad}, *l_ok[] = {i_ok};
    double want[12];
    (void)state;
    for (int k = 0; k < 12; k++)
        want[k] = k;
    YG_CHECK(yg_tensor_scalar(1.0, YG_FLOAT32, &vf));
    YG_EXPECT_ERROR(yg_index_put_(x, l_ok, 1, v, false, &y),
                    YG_ERR_SHAPE,
                    "index_put_: values [2, 2] cannot be broadcast to the indexed shape [2, 3]");
    YG_EXPECT_ERROR(yg_index_put_(x, l_bad, 1, v, true, &y),
                    YG_ERR_INDEX,
                    "index_put_: index 9 is out of bounds for dim 0 with size 4");
    YG_EXPECT_ERROR(yg_index_put(x, l_ok, 1, vf, false, &y),
                    YG_ERR_DTYPE,
                    "index_put: values has dtype float32 but self has float64");
    assert_null(y);
    YG_EXPECT_CLOSE(x, s, 2, want, 0, 0);
    /* A leaf that requires grad may not be written. */
    YG_CHECK(yg_tensor_set_requires_grad(leaf, true));
    YG_CHECK(yg_tensor_scalar(1.0, YG_FLOAT64, &one));
    YG_EXPECT_ERROR(yg_index_put_(leaf, l_ok, 1, one, false, &y),
                    YG_ERR_AUTOGRAD,
                    "index_put_: in-place operation on a leaf tensor that requires grad");
    yg_release(one);
    yg_release(leaf);
    yg_release(vf);
    yg_release(v);
    yg_release(i_ok);
    yg_release(i_bad);
    yg_release(x);
}

static void test_bad_index_lists_fail_before_autograd_records(void **state) {
    const int64_t s[] = {4, 3}, is[] = {2}, iv[] = {0, 1};
    yg_tensor *x = iota(s, 2), *base = NULL, *one = NULL, *y = NULL, *i = ints(is, 1, iv);
    yg_tensor *loss = NULL;
    const yg_tensor *list[] = {i};
    (void)state;
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_mul_scalar(x, 1.0, &base));
    YG_CHECK(yg_tensor_scalar(1.0, YG_FLOAT64, &one));
    YG_EXPECT_ERROR(yg_index_put_(base, NULL, 2, one, false, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "index_put_: indices is NULL with indices_len 2");
    YG_EXPECT_ERROR(yg_index(base, list, -1, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "index: indices is given with indices_len -1");
    assert_null(y);
    /* The saved indices are freed by the first backward. */
    YG_CHECK(yg_index(base, list, 1, &y));
    YG_CHECK(yg_sum(y, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    YG_EXPECT_ERROR(yg_backward(loss, NULL, false), YG_ERR_AUTOGRAD, "a second time");
    yg_release(loss);
    yg_release(y);
    yg_release(i);
    yg_release(one);
    yg_release(base);
    yg_release(x);
}

/* self used as its own index: the writes must not change the positions
 * read after them (found by review: an out-of-bounds write before). */
static void test_index_put_reads_indices_that_alias_self_before_writing(void **state) {
    (void)state;
    const int64_t s2[] = {2};
    const double pos[] = {1, 0}, hundred[] = {100};
    yg_tensor *self = yg_test_tensor(YG_INT64, s2, 1, pos);
    yg_tensor *v = yg_test_tensor(YG_INT64, NULL, 0, hundred), *out = NULL;
    const yg_tensor *idx[1] = {self};
    YG_CHECK(yg_index_put_(self, idx, 1, v, false, &out));
    const double want[] = {100, 100};
    YG_EXPECT_CLOSE(self, s2, 1, want, 0, 0);
    yg_release(out);
    yg_release(v);
    yg_release(self);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_put_reads_indices_that_alias_self_before_writing),
        cmocka_unit_test(test_index_picks_rows_with_repeats_and_negative_indices),
        cmocka_unit_test(test_adjacent_indexed_dims_are_replaced_in_place),
        cmocka_unit_test(test_separated_indexed_dims_put_the_broadcast_shape_first),
        cmocka_unit_test(test_bool_masks_index_their_true_positions),
        cmocka_unit_test(test_index_reads_a_transposed_self),
        cmocka_unit_test(test_0_dim_and_empty_indices),
        cmocka_unit_test(test_index_put_writes_or_adds_broadcast_values),
        cmocka_unit_test(test_index_put_in_place_writes_through_a_transposed_view),
        cmocka_unit_test(test_index_gradient_adds_up_repeated_positions),
        cmocka_unit_test(test_index_put_gradient_masks_overwritten_positions),
        cmocka_unit_test(test_bad_indices_fail_naming_op_dim_value_and_size),
        cmocka_unit_test(test_bad_values_fail_before_index_put_writes),
        cmocka_unit_test(test_bad_index_lists_fail_before_autograd_records),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
