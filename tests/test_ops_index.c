/*
 * test_ops_index.c - the ops that address elements through an index
 * tensor (index_select, gather, scatter, scatter.value, scatter_add and
 * the gradients of index_select and gather) and tril/triu, against naive
 * loops written here; and their bad-index messages.
 */
#include "testutil.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_indexing.h"
#include "yagrad/ops_layers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static yg_tensor *index_tensor(const int64_t *sizes, int64_t ndim, const double *values) {
    return yg_test_tensor(YG_INT64, sizes, ndim, values);
}

static void test_index_select_picks_rows_and_columns(void **state) {
    const int64_t s[] = {3, 4}, is[] = {4}, r[] = {4, 4}, c[] = {3, 4};
    const double iv[] = {2, 0, 2, 1};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, s, 2, -1, 1, 3), *idx = index_tensor(is, 1, iv);
    yg_tensor *y = NULL, *xt = NULL;
    double *xv = yg_test_values(x), rows[16], cols[12];
    (void)state;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            rows[i * 4 + j] = xv[(int)iv[i] * 4 + j];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            cols[i * 4 + j] = xv[i * 4 + (int)iv[j]];
    YG_CHECK(yg_index_select(x, 0, idx, &y));
    YG_EXPECT_CLOSE(y, r, 2, rows, 0, 0);
    yg_release(y);
    YG_CHECK(yg_index_select(x, -1, idx, &y));
    YG_EXPECT_CLOSE(y, c, 2, cols, 0, 0);
    yg_release(y);
    /* The same rows from a transposed view of the transpose. */
    YG_CHECK(yg_t(x, &xt));
    YG_CHECK(yg_index_select(xt, 1, idx, &y));
    {
        double tr[16];
        const int64_t ts[] = {4, 4};
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                tr[i * 4 + j] = rows[j * 4 + i];
        YG_EXPECT_CLOSE(y, ts, 2, tr, 0, 0);
    }
    yg_release(y);
    free(xv);
    yg_release(xt);
    yg_release(idx);
    yg_release(x);
}

static void test_index_select_backward_adds_repeated_rows(void **state) {
    const int64_t gs[] = {3, 2}, is[] = {3}, ss[] = {4, 2};
    const double gv[] = {1, 2, 3, 4, 5, 6}, iv[] = {3, 0, 3};
    const double expected[] = {3, 4, 0, 0, 0, 0, 6, 8};
    yg_tensor *g = yg_test_tensor(YG_FLOAT64, gs, 2, gv), *idx = index_tensor(is, 1, iv), *y = NULL;
    (void)state;
    YG_CHECK(yg_index_select_backward(g, ss, 2, 0, idx, &y));
    YG_EXPECT_CLOSE(y, ss, 2, expected, 0, 0);
    yg_release(y);
    yg_release(idx);
    yg_release(g);
}

static void test_index_select_rejects_bad_index(void **state) {
    const int64_t s[] = {3, 4}, is[] = {2};
    const double bad[] = {0, 3}, neg[] = {-1, 0};
    yg_tensor *x = NULL, *idx = index_tensor(is, 1, bad), *fidx = NULL, *y = NULL,
              *n = index_tensor(is, 1, neg);
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 2, YG_FLOAT32, &x));
    YG_CHECK(yg_tensor_zeros(is, 1, YG_FLOAT32, &fidx));
    YG_EXPECT_ERROR(yg_index_select(x, 0, idx, &y),
                    YG_ERR_INDEX,
                    "index_select: index 3 out of range for dim 0 of size 3");
    assert_null(y);
    YG_EXPECT_ERROR(
        yg_index_select(x, 0, n, &y), YG_ERR_INDEX, "index_select: index -1 out of range");
    assert_null(y);
    YG_EXPECT_ERROR(yg_index_select(x, 0, fidx, &y),
                    YG_ERR_DTYPE,
                    "index_select: expected index of dtype int64, got float32");
    assert_null(y);
    yg_release(n);
    yg_release(fidx);
    yg_release(idx);
    yg_release(x);
}

static void test_gather_reads_along_dim(void **state) {
    const int64_t s[] = {3, 4}, is[] = {2, 3};
    const double iv[] = {0, 2, 1, 2, 2, 0};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 2, -1, 1, 5), *idx = index_tensor(is, 2, iv),
              *y = NULL;
    double *xv = yg_test_values(x), d0[6], d1[6];
    (void)state;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) {
            d0[i * 3 + j] = xv[(int)iv[i * 3 + j] * 4 + j]; /* out[i][j] = x[idx[i][j]][j] */
            d1[i * 3 + j] = xv[i * 4 + (int)iv[i * 3 + j]]; /* out[i][j] = x[i][idx[i][j]] */
        }
    YG_CHECK(yg_gather(x, 0, idx, &y));
    YG_EXPECT_CLOSE(y, is, 2, d0, 0, 0);
    yg_release(y);
    YG_CHECK(yg_gather(x, 1, idx, &y));
    YG_EXPECT_CLOSE(y, is, 2, d1, 0, 0);
    yg_release(y);
    free(xv);
    yg_release(idx);
    yg_release(x);
}

static void test_scatter_writes_and_scatter_add_accumulates(void **state) {
    const int64_t s[] = {3, 2}, is[] = {2, 2};
    const double xv[] = {1, 1, 1, 1, 1, 1}, iv[] = {2, 0, 2, 1}, src[] = {10, 20, 30, 40};
    /* dim 0: out[idx[i][j]][j] = src[i][j]; row 2 col 0 is written twice */
    const double added[] = {1, 21, 1, 41, 41, 1}, valued[] = {1, -5, 1, -5, -5, 1};
    yg_tensor *x = yg_test_tensor(YG_FLOAT32, s, 2, xv), *idx = index_tensor(is, 2, iv);
    yg_tensor *sv = yg_test_tensor(YG_FLOAT32, is, 2, src), *y = NULL;
    double *yv;
    (void)state;
    YG_CHECK(yg_scatter_add(x, 0, idx, sv, &y));
    YG_EXPECT_CLOSE(y, s, 2, added, 0, 0);
    yg_release(y);
    YG_CHECK(yg_scatter_value(x, 0, idx, -5, &y));
    YG_EXPECT_CLOSE(y, s, 2, valued, 0, 0);
    yg_release(y);
    YG_CHECK(yg_scatter(x, 0, idx, sv, &y));
    yv = yg_test_values(y);
    assert_true(yv[1] == 20 && yv[3] == 40 && yv[0] == 1 && yv[2] == 1 && yv[5] == 1);
    assert_true(yv[4] == 10 || yv[4] == 30); /* written twice: either value */
    free(yv);
    yg_release(y);
    /* self is not modified. */
    YG_EXPECT_CLOSE(x, s, 2, xv, 0, 0);
    yg_release(sv);
    yg_release(idx);
    yg_release(x);
}

static void test_gather_backward_sums_repeated_positions(void **state) {
    const int64_t gs[] = {2, 2}, ss[] = {2, 3};
    const double gv[] = {1, 2, 3, 4}, iv[] = {1, 1, 0, 2}, expected[] = {0, 3, 0, 3, 0, 4};
    yg_tensor *g = yg_test_tensor(YG_FLOAT64, gs, 2, gv), *idx = index_tensor(gs, 2, iv), *y = NULL;
    (void)state;
    YG_CHECK(yg_gather_backward(g, ss, 2, 1, idx, &y));
    YG_EXPECT_CLOSE(y, ss, 2, expected, 0, 0);
    yg_release(y);
    yg_release(idx);
    yg_release(g);
}

static void test_gather_and_scatter_reject_mismatched_shapes(void **state) {
    const int64_t s[] = {2, 3}, big[] = {3, 3}, flat[] = {2};
    const double zeros[9] = {0}, bad[] = {0, 0, 0, 0, 2, 0};
    yg_tensor *x = NULL, *ib = index_tensor(big, 2, zeros), *ifl = index_tensor(flat, 1, zeros);
    yg_tensor *ibad = index_tensor(s, 2, bad), *src = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 2, YG_FLOAT32, &x));
    YG_CHECK(yg_tensor_zeros(s, 2, YG_FLOAT64, &src));
    YG_EXPECT_ERROR(yg_gather(x, 1, ib, &y),
                    YG_ERR_SHAPE,
                    "gather: index [3, 3] is larger than self [2, 3] in dim 0");
    assert_null(y);
    YG_EXPECT_ERROR(yg_gather(x, 0, ifl, &y),
                    YG_ERR_SHAPE,
                    "gather: index [2] must have as many dims as self [2, 3]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_gather(x, 0, ibad, &y),
                    YG_ERR_INDEX,
                    "gather: index 2 out of range for dim 0 of size 2");
    assert_null(y);
    YG_EXPECT_ERROR(yg_scatter_add(x, 0, ibad, src, &y),
                    YG_ERR_DTYPE,
                    "scatter_add: expected src of dtype float32 (that of self), got float64");
    assert_null(y);
    yg_release(src);
    yg_release(ibad);
    yg_release(ifl);
    yg_release(ib);
    yg_release(x);
}

static void test_tril_and_triu_keep_a_triangle_of_each_matrix(void **state) {
    const int64_t s[] = {2, 3, 4};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 3, 1, 2, 8), *y = NULL;
    double *xv = yg_test_values(x);
    (void)state;
    for (int diag = -2; diag <= 2; diag++) {
        double lo[24], up[24];
        for (int b = 0; b < 2; b++)
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 4; j++) {
                    int k = (b * 3 + i) * 4 + j;
                    lo[k] = j - i <= diag ? xv[k] : 0;
                    up[k] = j - i >= diag ? xv[k] : 0;
                }
        YG_CHECK(yg_tril(x, diag, &y));
        YG_EXPECT_CLOSE(y, s, 3, lo, 0, 0);
        yg_release(y);
        YG_CHECK(yg_triu(x, diag, &y));
        YG_EXPECT_CLOSE(y, s, 3, up, 0, 0);
        yg_release(y);
    }
    YG_EXPECT_ERROR(yg_tril(NULL, 0, &y), YG_ERR_INVALID_ARGUMENT, "tril: self is undefined");
    {
        const int64_t v[] = {3};
        yg_tensor *vec = NULL;
        YG_CHECK(yg_tensor_zeros(v, 1, YG_FLOAT32, &vec));
        YG_EXPECT_ERROR(
            yg_triu(vec, 0, &y), YG_ERR_SHAPE, "triu: expected self with at least 2 dims, got [3]");
        assert_null(y);
        yg_release(vec);
    }
    free(xv);
    yg_release(x);
}

/* embedding_backward and index_select_backward over contiguous float32
 * run rows or column slices in parallel (large enough here): each element
 * must add its terms in index order, as a plain loop does, so the results
 * equal the loop's to the bit; repeated rows and padding_idx included. */
static void test_index_adds_of_large_rows_match_a_plain_loop(void **state) {
    enum { N = 300, D = 200, V = 50, B = 4, K = 50, M = 300 };
    (void)state;
    int64_t ids[N], kidx[K];
    for (int i = 0; i < N; i++)
        ids[i] = (i * 37) % V;
    for (int i = 0; i < K; i++)
        kidx[i] = (i * 13) % 20;
    yg_tensor *g = yg_test_rand(YG_FLOAT32, (const int64_t[]){N, D}, 2, -1, 1, 5);
    yg_tensor *idx = NULL, *kix = NULL, *out = NULL;
    YG_CHECK(yg_tensor_from_data(ids, (const int64_t[]){N}, 1, YG_INT64, &idx));
    YG_CHECK(yg_tensor_from_data(kidx, (const int64_t[]){K}, 1, YG_INT64, &kix));
    YG_CHECK(yg_embedding_backward(g, idx, (const int64_t[]){V, D}, 2, 7, &out));
    float *want = calloc(V * D, sizeof *want);
    const float *gv = yg_tensor_data(g);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < D && ids[i] != 7; j++)
            want[ids[i] * D + j] += gv[i * D + j];
    assert_memory_equal(yg_tensor_data(out), want, sizeof(float) * V * D);
    yg_release(out);
    free(want);
    /* index_select_backward along dim 1 (rows of the outer dim in
     * parallel) and along dim 0 (column slices) */
    yg_tensor *g3 = yg_test_rand(YG_FLOAT32, (const int64_t[]){B, K, M}, 3, -1, 1, 6);
    const float *g3v = yg_tensor_data(g3);
    YG_CHECK(yg_index_select_backward(g3, (const int64_t[]){B, 20, M}, 3, 1, kix, &out));
    want = calloc(B * 20 * M, sizeof *want);
    for (int b = 0; b < B; b++)
        for (int k = 0; k < K; k++)
            for (int m = 0; m < M; m++)
                want[(b * 20 + kidx[k]) * M + m] += g3v[(b * K + k) * M + m];
    assert_memory_equal(yg_tensor_data(out), want, sizeof(float) * B * 20 * M);
    yg_release(out);
    free(want);
    yg_tensor *g2 = yg_test_rand(YG_FLOAT32, (const int64_t[]){K, M * B}, 2, -1, 1, 7);
    const float *g2v = yg_tensor_data(g2);
    YG_CHECK(yg_index_select_backward(g2, (const int64_t[]){20, M * B}, 2, 0, kix, &out));
    want = calloc(20 * M * B, sizeof *want);
    for (int k = 0; k < K; k++)
        for (int m = 0; m < M * B; m++)
            want[kidx[k] * M * B + m] += g2v[k * M * B + m];
    assert_memory_equal(yg_tensor_data(out), want, sizeof(float) * 20 * M * B);
    yg_release(out);
    free(want);
    yg_release(g);
    yg_release(g2);
    yg_release(g3);
    yg_release(idx);
    yg_release(kix);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_select_picks_rows_and_columns),
        cmocka_unit_test(test_index_select_backward_adds_repeated_rows),
        cmocka_unit_test(test_index_select_rejects_bad_index),
        cmocka_unit_test(test_gather_reads_along_dim),
        cmocka_unit_test(test_scatter_writes_and_scatter_add_accumulates),
        cmocka_unit_test(test_gather_backward_sums_repeated_positions),
        cmocka_unit_test(test_gather_and_scatter_reject_mismatched_shapes),
        cmocka_unit_test(test_tril_and_triu_keep_a_triangle_of_each_matrix),
        cmocka_unit_test(test_index_adds_of_large_rows_match_a_plain_loop),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
