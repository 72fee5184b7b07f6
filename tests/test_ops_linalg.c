/*
 * test_ops_linalg.c - bmm, batched and broadcasting matmul, dot, mv,
 * outer, addmm and baddbmm against naive float64 loops written here; the
 * gradients of the composite ones through autograd against the same
 * loops' derivatives; and their shape messages.
 */
#include "cpu/cpu.h"
#include "meta/matmul.h"
#include "meta/meta.h"
#include "testutil.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_slicing.h"
#include "yagrad/ops_views.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* c[b] = a[b] @ d[b] for row-major [nb, m, k] and [nb, k, n]; a batch
 * stride of 0 broadcasts one matrix over the batch. */
static void naive_bmm(const double *a,
                      int64_t astride,
                      const double *d,
                      int64_t dstride,
                      double *c,
                      int nb,
                      int m,
                      int k,
                      int n) {
    for (int b = 0; b < nb; b++)
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double acc = 0;
                for (int p = 0; p < k; p++)
                    acc += a[b * astride + i * k + p] * d[b * dstride + p * n + j];
                c[(b * m + i) * n + j] = acc;
            }
}

static void test_bmm_matches_naive_loops_in_both_dtypes(void **state) {
    const int64_t as[] = {3, 5, 4}, bs[] = {3, 4, 6}, cs[] = {3, 5, 6};
    (void)state;
    for (int d = 0; d < 2; d++) {
        yg_dtype dt = d ? YG_FLOAT64 : YG_FLOAT32;
        yg_tensor *a = yg_test_rand(dt, as, 3, -1, 1, 1), *b = yg_test_rand(dt, bs, 3, -1, 1, 2);
        yg_tensor *c = NULL;
        double *av = yg_test_values(a), *bv = yg_test_values(b), expected[90];
        naive_bmm(av, 20, bv, 24, expected, 3, 5, 4, 6);
        YG_CHECK(yg_bmm(a, b, &c));
        YG_EXPECT_CLOSE(c, cs, 3, expected, d ? 1e-14 : 1e-5, d ? 1e-14 : 1e-5);
        free(av);
        free(bv);
        yg_release(c);
        yg_release(a);
        yg_release(b);
    }
}

static void test_bmm_reads_strided_batches_in_place(void **state) {
    /* self = permute of a [5, 3, 4] tensor to [3, 5, 4]: batches strided. */
    const int64_t base[] = {5, 3, 4}, perm[] = {1, 0, 2}, bs[] = {3, 4, 2}, cs[] = {3, 5, 2};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, base, 3, -1, 1, 3), *a = NULL, *c = NULL;
    yg_tensor *b = yg_test_rand(YG_FLOAT64, bs, 3, -1, 1, 4);
    double *av, *bv, expected[30];
    (void)state;
    YG_CHECK(yg_permute(x, perm, 3, &a));
    av = yg_test_values(a);
    bv = yg_test_values(b);
    naive_bmm(av, 20, bv, 8, expected, 3, 5, 4, 2);
    YG_CHECK(yg_bmm(a, b, &c));
    YG_EXPECT_CLOSE(c, cs, 3, expected, 1e-14, 1e-14);
    free(av);
    free(bv);
    yg_release(c);
    yg_release(a);
    yg_release(b);
    yg_release(x);
}

static void test_matmul_broadcasts_batch_dims(void **state) {
    /* [2, 1, 3, 4] @ [5, 4, 2] -> [2, 5, 3, 2] */
    const int64_t as[] = {2, 1, 3, 4}, bs[] = {5, 4, 2}, cs[] = {2, 5, 3, 2};
    yg_tensor *a = yg_test_rand(YG_FLOAT64, as, 4, -1, 1, 5),
              *b = yg_test_rand(YG_FLOAT64, bs, 3, -1, 1, 6);
    yg_tensor *c = NULL;
    double *av = yg_test_values(a), *bv = yg_test_values(b), expected[60];
    (void)state;
    for (int i = 0; i < 2; i++)
        naive_bmm(av + i * 12, 0, bv, 8, expected + i * 30, 5, 3, 4, 2);
    YG_CHECK(yg_matmul(a, b, &c));
    YG_EXPECT_CLOSE(c, cs, 4, expected, 1e-14, 1e-14);
    free(av);
    free(bv);
    yg_release(c);
    yg_release(a);
    yg_release(b);
}

static void test_matmul_of_vectors_and_batches_drops_the_vector_dims(void **state) {
    const int64_t vs[] = {4}, bs[] = {3, 4, 2}, ms[] = {3, 2, 4}, r1[] = {3, 2}, r2[] = {3, 2};
    yg_tensor *v = yg_test_rand(YG_FLOAT64, vs, 1, -1, 1, 7),
              *b = yg_test_rand(YG_FLOAT64, bs, 3, -1, 1, 8);
    yg_tensor *m = yg_test_rand(YG_FLOAT64, ms, 3, -1, 1, 9), *c = NULL;
    double *vv = yg_test_values(v), *bv = yg_test_values(b), *mv = yg_test_values(m), e1[6], e2[6];
    (void)state;
    naive_bmm(vv, 0, bv, 8, e1, 3, 1, 4, 2); /* [4] @ [3, 4, 2] -> [3, 2] */
    naive_bmm(mv, 8, vv, 0, e2, 3, 2, 4, 1); /* [3, 2, 4] @ [4] -> [3, 2] */
    YG_CHECK(yg_matmul(v, b, &c));
    YG_EXPECT_CLOSE(c, r1, 2, e1, 1e-14, 1e-14);
    yg_release(c);
    YG_CHECK(yg_matmul(m, v, &c));
    YG_EXPECT_CLOSE(c, r2, 2, e2, 1e-14, 1e-14);
    yg_release(c);
    free(vv);
    free(bv);
    free(mv);
    yg_release(v);
    yg_release(b);
    yg_release(m);
}

static void test_batched_matmul_backward_sums_over_broadcast_batches(void **state) {
    /* d/dA of sum(A @ B) with A [3, 4] broadcast over B's batch of 5:
     * row i of dA is sum over batches and columns of B[b][p][j]. */
    const int64_t as[] = {3, 4}, bs[] = {5, 4, 2};
    yg_tensor *a = yg_test_rand(YG_FLOAT64, as, 2, -1, 1, 1),
              *b = yg_test_rand(YG_FLOAT64, bs, 3, -1, 1, 2);
    yg_tensor *c = NULL, *s = NULL, *g = NULL;
    double *bv = yg_test_values(b), expected[12];
    (void)state;
    YG_CHECK(yg_tensor_set_requires_grad(a, true));
    YG_CHECK(yg_matmul(a, b, &c));
    YG_CHECK(yg_sum(c, &s));
    YG_CHECK(yg_backward(s, NULL, false));
    YG_CHECK(yg_tensor_grad(a, &g));
    for (int i = 0; i < 3; i++)
        for (int p = 0; p < 4; p++) {
            double acc = 0;
            for (int bb = 0; bb < 5; bb++)
                for (int j = 0; j < 2; j++)
                    acc += bv[bb * 8 + p * 2 + j];
            expected[i * 4 + p] = acc;
        }
    YG_EXPECT_CLOSE(g, as, 2, expected, 1e-13, 1e-13);
    free(bv);
    yg_release(g);
    yg_release(s);
    yg_release(c);
    yg_release(a);
    yg_release(b);
}

static void test_dot_mv_and_outer_match_naive_loops(void **state) {
    const int64_t vs[] = {4}, ws[] = {3}, ms[] = {3, 4}, os[] = {4, 3};
    yg_tensor *v = yg_test_rand(YG_FLOAT64, vs, 1, -1, 1, 1),
              *u = yg_test_rand(YG_FLOAT64, vs, 1, -1, 1, 2);
    yg_tensor *w = yg_test_rand(YG_FLOAT64, ws, 1, -1, 1, 3),
              *m = yg_test_rand(YG_FLOAT64, ms, 2, -1, 1, 4);
    yg_tensor *y = NULL;
    double *vv = yg_test_values(v), *uv = yg_test_values(u), *wv = yg_test_values(w),
           *mv = yg_test_values(m);
    double dot = 0, mvv[3], outer[12];
    (void)state;
    for (int i = 0; i < 4; i++)
        dot += vv[i] * uv[i];
    for (int i = 0; i < 3; i++) {
        mvv[i] = 0;
        for (int j = 0; j < 4; j++)
            mvv[i] += mv[i * 4 + j] * vv[j];
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            outer[i * 3 + j] = vv[i] * wv[j];
    YG_CHECK(yg_dot(v, u, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, &dot, 1e-15, 1e-15);
    yg_release(y);
    YG_CHECK(yg_mv(m, v, &y));
    YG_EXPECT_CLOSE(y, ws, 1, mvv, 1e-15, 1e-15);
    yg_release(y);
    YG_CHECK(yg_outer(v, w, &y));
    YG_EXPECT_CLOSE(y, os, 2, outer, 0, 0);
    yg_release(y);
    YG_EXPECT_ERROR(yg_dot(v, w, &y),
                    YG_ERR_SHAPE,
                    "dot: expected 1-D tensors of equal length, got self [4] and tensor [3]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_mv(v, v, &y), YG_ERR_SHAPE, "mv: expected a 2-D self and a 1-D vec");
    assert_null(y);
    free(vv);
    free(uv);
    free(wv);
    free(mv);
    yg_release(v);
    yg_release(u);
    yg_release(w);
    yg_release(m);
}

static void test_addmm_and_baddbmm_scale_and_add(void **state) {
    const int64_t as[] = {2, 3}, bs[] = {3, 2}, rs[] = {2}, cs[] = {2, 2};
    const int64_t b1s[] = {2, 2, 3}, b2s[] = {2, 3, 2}, bc[] = {2, 2, 2};
    yg_tensor *a = yg_test_rand(YG_FLOAT64, as, 2, -1, 1, 1),
              *b = yg_test_rand(YG_FLOAT64, bs, 2, -1, 1, 2);
    yg_tensor *bias = yg_test_rand(YG_FLOAT64, rs, 1, -1, 1, 3), *y = NULL, *nan = NULL;
    yg_tensor *b1 = yg_test_rand(YG_FLOAT64, b1s, 3, -1, 1, 4),
              *b2 = yg_test_rand(YG_FLOAT64, b2s, 3, -1, 1, 5);
    double *av = yg_test_values(a), *bv = yg_test_values(b), *rv = yg_test_values(bias);
    double *b1v = yg_test_values(b1), *b2v = yg_test_values(b2), prod[4], e[4], bprod[8], be[8];
    (void)state;
    naive_bmm(av, 0, bv, 0, prod, 1, 2, 3, 2);
    for (int i = 0; i < 4; i++)
        e[i] = 0.5 * rv[i % 2] + 2 * prod[i];
    YG_CHECK(yg_addmm(bias, a, b, 0.5, 2, &y));
    YG_EXPECT_CLOSE(y, cs, 2, e, 1e-15, 1e-15);
    yg_release(y);
    /* beta 0: self is not read, so its NaN does not reach the result. */
    YG_CHECK(yg_tensor_full(cs, 2, NAN, YG_FLOAT64, &nan));
    YG_CHECK(yg_addmm(nan, a, b, 0, 1, &y));
    YG_EXPECT_CLOSE(y, cs, 2, prod, 1e-15, 1e-15);
    yg_release(y);
    naive_bmm(b1v, 6, b2v, 6, bprod, 2, 2, 3, 2);
    for (int i = 0; i < 8; i++)
        be[i] = -1 * rv[i % 2] + 0.5 * bprod[i];
    YG_CHECK(yg_baddbmm(bias, b1, b2, -1, 0.5, &y));
    YG_EXPECT_CLOSE(y, bc, 3, be, 1e-15, 1e-15);
    yg_release(y);
    YG_EXPECT_ERROR(yg_addmm(b1, a, b, 1, 1, &y),
                    YG_ERR_SHAPE,
                    "addmm: self [2, 2, 3] does not broadcast to the product's shape [2, 2]");
    assert_null(y);
    free(av);
    free(bv);
    free(rv);
    free(b1v);
    free(b2v);
    yg_release(nan);
    yg_release(a);
    yg_release(b);
    yg_release(bias);
    yg_release(b1);
    yg_release(b2);
}

static void test_bmm_and_matmul_reject_mismatched_shapes(void **state) {
    const int64_t as[] = {2, 3, 4}, bs[] = {3, 4, 2}, cs[] = {2, 5, 2}, ms[] = {2, 3};
    yg_tensor *a = NULL, *b = NULL, *c = NULL, *m = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(as, 3, YG_FLOAT32, &a));
    YG_CHECK(yg_tensor_zeros(bs, 3, YG_FLOAT32, &b));
    YG_CHECK(yg_tensor_zeros(cs, 3, YG_FLOAT32, &c));
    YG_CHECK(yg_tensor_zeros(ms, 2, YG_FLOAT32, &m));
    YG_EXPECT_ERROR(
        yg_bmm(a, b, &y), YG_ERR_SHAPE, "bmm: batch sizes differ: self [2, 3, 4], mat2 [3, 4, 2]");
    assert_null(y);
    YG_EXPECT_ERROR(
        yg_bmm(a, c, &y), YG_ERR_SHAPE, "bmm: cannot multiply self [2, 3, 4] by mat2 [2, 5, 2]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_bmm(m, m, &y),
                    YG_ERR_SHAPE,
                    "bmm: expected 3-D tensors, got self [2, 3] and mat2 [2, 3]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_matmul(a, b, &y),
                    YG_ERR_SHAPE,
                    "matmul: batch dims: cannot broadcast self [2] with other [3]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_matmul(m, c, &y),
                    YG_ERR_SHAPE,
                    "matmul: cannot multiply self [2, 3] by other [2, 5, 2]");
    assert_null(y);
    yg_release(a);
    yg_release(b);
    yg_release(c);
    yg_release(m);
}

/* Operand pairs for bmm: [0] contiguous; [1] column-major matrices (a
 * transposed view); [2] one matrix for the whole batch (expand: batch
 * stride 0) times transposed matrices; [3] every other entry of a batch
 * (batch stride 24) times matrices with no unit stride (copied); [4] a
 * batch of one. */
static void bmm_case(int c, yg_dtype dt, yg_tensor **self, yg_tensor **mat2) {
    const int64_t s534[] = {5, 3, 4}, s542[] = {5, 4, 2}, s543[] = {5, 4, 3}, s134[] = {1, 3, 4};
    const int64_t s524[] = {5, 2, 4}, s1034[] = {10, 3, 4}, s544[] = {5, 4, 4}, s142[] = {1, 4, 2};
    yg_tensor *a = NULL, *b = NULL;
    *self = *mat2 = NULL;
    switch (c) {
    case 0:
        *self = yg_test_rand(dt, s534, 3, -1, 1, 61);
        *mat2 = yg_test_rand(dt, s542, 3, -1, 1, 62);
        break;
    case 1:
        a = yg_test_rand(dt, s543, 3, -1, 1, 63);
        YG_CHECK(yg_transpose(a, 1, 2, self));
        *mat2 = yg_test_rand(dt, s542, 3, -1, 1, 64);
        break;
    case 2:
        a = yg_test_rand(dt, s134, 3, -1, 1, 65);
        YG_CHECK(yg_expand(a, s534, 3, self));
        b = yg_test_rand(dt, s524, 3, -1, 1, 66);
        YG_CHECK(yg_transpose(b, 1, 2, mat2));
        break;
    case 3:
        a = yg_test_rand(dt, s1034, 3, -1, 1, 67);
        YG_CHECK(yg_slice(a, 0, 0, 10, 2, self));
        b = yg_test_rand(dt, s544, 3, -1, 1, 68);
        YG_CHECK(yg_slice(b, 2, 0, 4, 2, mat2));
        break;
    default:
        a = yg_test_rand(dt, s134, 3, -1, 1, 69);
        *self = yg_retain(a);
        *mat2 = yg_test_rand(dt, s142, 3, -1, 1, 70);
        break;
    }
    yg_release(a);
    yg_release(b);
}

static int batched_calls;

static yg_status test_gemm(const char *op, const yg_tensor *out, bool ta, bool tb, int64_t m,
                           int64_t n, int64_t k, const void *a, int64_t lda, const void *b,
                           int64_t ldb, void *c, int64_t ldc) {
    (void)op;
    yg__cpu_gemm(out->dtype, ta, tb, m, n, k, a, lda, b, ldb, 0.0, c, ldc);
    return YG_OK;
}

/* A batched gemm as a device's would be: every entry from the strides. */
static yg_status test_gemm_batched(const char *op, const yg_tensor *out, bool ta, bool tb,
                                   int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
                                   int64_t stride_a, const void *b, int64_t ldb, int64_t stride_b,
                                   void *c, int64_t ldc, int64_t stride_c, int64_t batch) {
    size_t es = yg_dtype_size(out->dtype);
    (void)op;
    batched_calls++;
    for (int64_t i = 0; i < batch; i++)
        yg__cpu_gemm(out->dtype, ta, tb, m, n, k, (const char *)a + (size_t)(i * stride_a) * es,
                     lda, (const char *)b + (size_t)(i * stride_b) * es, ldb, 0.0,
                     (char *)c + (size_t)(i * stride_c) * es, ldc);
    return YG_OK;
}

/* Issue 28, item 12: the walk that hands bmm to a batched gemm (cuBLAS's
 * strided-batched calls on a GPU) passes the batch strides, transpose
 * flags and leading dims that give the per-entry walk's values, in one
 * call where both operands allow it and per entry where one needs a copy
 * or the batch has one entry. */
static void test_bmm_batched_walk_matches_the_per_entry_walk(void **state) {
    (void)state;
    const int want_calls[] = {1, 1, 1, 0, 0};
    for (int f = 0; f < 2; f++) {
        yg_dtype dt = f == 0 ? YG_FLOAT32 : YG_FLOAT64;
        for (int c = 0; c < 5; c++) {
            yg_tensor *self = NULL, *mat2 = NULL, *want = NULL, *got = NULL;
            bmm_case(c, dt, &self, &mat2);
            YG_CHECK(yg_bmm(self, mat2, &want));
            YG_CHECK(yg__meta_bmm(self, mat2, &got));
            batched_calls = 0;
            YG_CHECK(yg__matmul_fill_batched("bmm", self, mat2, got, test_gemm, test_gemm_batched));
            assert_int_equal(batched_calls, want_calls[c]);
            double *v = yg_test_values(want);
            YG_EXPECT_CLOSE(got, yg_tensor_sizes(want), 3, v, 0, 0);
            free(v);
            yg_release(self);
            yg_release(mat2);
            yg_release(want);
            yg_release(got);
        }
    }
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bmm_matches_naive_loops_in_both_dtypes),
        cmocka_unit_test(test_bmm_reads_strided_batches_in_place),
        cmocka_unit_test(test_matmul_broadcasts_batch_dims),
        cmocka_unit_test(test_matmul_of_vectors_and_batches_drops_the_vector_dims),
        cmocka_unit_test(test_batched_matmul_backward_sums_over_broadcast_batches),
        cmocka_unit_test(test_dot_mv_and_outer_match_naive_loops),
        cmocka_unit_test(test_addmm_and_baddbmm_scale_and_add),
        cmocka_unit_test(test_bmm_and_matmul_reject_mismatched_shapes),
        cmocka_unit_test(test_bmm_batched_walk_matches_the_per_entry_walk),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
