/*
 * test_ops_attention.c - flash_attention, the tiled attention kernel, and
 * scaled_dot_product_attention's use of it: forward and gradients against
 * the ops path (scaled_dot_product_attention with an all-true bool mask,
 * which materialises the scores), at sizes spanning several 128-row tiles
 * with a ragged last one, in float32 and float64; and its refusals.
 * gradcheck and gradgradcheck of the op are the OpInfo table's
 * (tests/opinfo/samples_derivatives_more.c).
 */
#include "testutil.h"
#include "yagrad/autograd.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_attention.h"
#include "yagrad/ops_layers.h"
#include "yagrad/ops_sums.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Asserts |a - b| <= tol (1 + |b|) elementwise, printing the worst. */
static void expect_near(const char *what, const yg_tensor *a, const yg_tensor *b, double tol) {
    int64_t n = yg_tensor_numel(b);
    assert_int_equal(yg_tensor_numel(a), n);
    double *x = yg_test_values(a), *y = yg_test_values(b), worst = 0;
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs(x[i] - y[i]) / (1 + fabs(y[i]));
        if (!(e <= worst)) {
            worst = e;
            at = i;
        }
    }
    if (!(worst <= tol))
        fail_msg("%s: element %lld is %.9g, expected %.9g (relative error %.3g > %.3g)",
                 what,
                 (long long)at,
                 x[at],
                 y[at],
                 worst,
                 tol);
    free(x);
    free(y);
}

/* Output and the gradients of sum(output * w) through flash_attention
 * (scaled_dot_product_attention without a mask) and through the ops
 * (the same with an all-true mask), for q [2, 3, L, E], k [2, 3, S, E],
 * v [2, 3, S, Ev]. */
static void
compare_paths(yg_dtype dt, bool causal, int64_t L, int64_t S, int64_t E, int64_t Ev, double tol) {
    const int64_t qs[] = {2, 3, L, E}, ks[] = {2, 3, S, E}, vs[] = {2, 3, S, Ev},
                  os[] = {2, 3, L, Ev}, ms[] = {L, S};
    yg_tensor *in[3] = {yg_test_rand(dt, qs, 4, -2, 2, 11),
                        yg_test_rand(dt, ks, 4, -2, 2, 12),
                        yg_test_rand(dt, vs, 4, -1, 1, 13)};
    yg_tensor *w = yg_test_rand(dt, os, 4, -1, 1, 14), *mask = NULL;
    yg_tensor *y[2] = {NULL, NULL}, *g[2][3] = {{NULL}};
    char what[96];

    YG_CHECK(yg_tensor_full(ms, 2, 1, YG_BOOL, &mask));
    for (int i = 0; i < 3; i++)
        YG_CHECK(yg_tensor_set_requires_grad(in[i], true));
    for (int path = 0; path < 2; path++) {
        YG_CHECK(yg_scaled_dot_product_attention(
            in[0], in[1], in[2], path == 0 ? NULL : mask, causal, NULL, &y[path]));
        const yg_tensor *outs[1] = {y[path]}, *gos[1] = {w};
        YG_CHECK(
            yg_grad(outs, 1, gos, (const yg_tensor *const *)in, 3, false, false, false, g[path]));
    }
    snprintf(what,
             sizeof what,
             "%s L=%lld S=%lld causal=%d output",
             yg_dtype_name(dt),
             (long long)L,
             (long long)S,
             causal);
    expect_near(what, y[0], y[1], tol);
    const char *names[3] = {"grad_query", "grad_key", "grad_value"};
    for (int i = 0; i < 3; i++) {
        snprintf(what,
                 sizeof what,
                 "%s L=%lld S=%lld causal=%d %s",
                 yg_dtype_name(dt),
                 (long long)L,
                 (long long)S,
                 causal,
                 names[i]);
        expect_near(what, g[0][i], g[1][i], tol);
    }
    for (int p = 0; p < 2; p++) {
        yg_release(y[p]);
        for (int i = 0; i < 3; i++)
            yg_release(g[p][i]);
    }
    for (int i = 0; i < 3; i++)
        yg_release(in[i]);
    yg_release(w);
    yg_release(mask);
}

static void test_flash_attention_matches_ops_float64(void **state) {
    (void)state;
    compare_paths(YG_FLOAT64, true, 300, 300, 64, 64, 1e-12);
    compare_paths(YG_FLOAT64, false, 200, 200, 64, 64, 1e-12);
    compare_paths(YG_FLOAT64, false, 70, 131, 24, 40, 1e-12);
    compare_paths(YG_FLOAT64, true, 131, 70, 24, 40, 1e-12);
    compare_paths(YG_FLOAT64, true, 70, 260, 5, 3, 1e-12);
    compare_paths(YG_FLOAT64, true, 260, 131, 5, 3, 1e-12);
}

static void test_flash_attention_matches_ops_float32(void **state) {
    (void)state;
    compare_paths(YG_FLOAT32, true, 300, 300, 64, 64, 2e-5);
    compare_paths(YG_FLOAT32, false, 200, 200, 64, 64, 2e-5);
    compare_paths(YG_FLOAT32, true, 131, 70, 24, 40, 2e-5);
    compare_paths(YG_FLOAT32, false, 70, 260, 24, 40, 2e-5);
}

/* Empty sizes: no key (output 0), no query, E = 0 (every score 0: the
 * mean of the values seen), Ev = 0; as the ops compute them. */
static void test_flash_attention_matches_ops_on_empty_sizes(void **state) {
    (void)state;
    compare_paths(YG_FLOAT64, true, 5, 0, 4, 3, 1e-12);
    compare_paths(YG_FLOAT64, false, 5, 0, 4, 3, 1e-12);
    compare_paths(YG_FLOAT64, false, 0, 5, 4, 3, 1e-12);
    compare_paths(YG_FLOAT64, true, 6, 6, 0, 3, 1e-12);
    compare_paths(YG_FLOAT64, false, 4, 5, 3, 0, 1e-12);
}

/* flash_attention's logsumexp is each row's log(sum(exp(scores))). */
static void test_flash_attention_logsumexp_is_the_rows_log_sum_exp(void **state) {
    const int64_t qs[] = {1, 3, 2}, ks[] = {1, 4, 2}, vs[] = {1, 4, 1}, ls[] = {1, 3};
    yg_tensor *q = yg_test_rand(YG_FLOAT64, qs, 3, -1, 1, 1),
              *k = yg_test_rand(YG_FLOAT64, ks, 3, -1, 1, 2),
              *v = yg_test_rand(YG_FLOAT64, vs, 3, -1, 1, 3), *o = NULL, *lse = NULL;
    double *qv = yg_test_values(q), *kv = yg_test_values(k), e[3];
    const double scale = 0.5;
    (void)state;
    for (int i = 0; i < 3; i++) {
        double z = 0;
        for (int j = 0; j <= i; j++) /* causal: keys 0..i */
            z += exp(scale * (qv[2 * i] * kv[2 * j] + qv[2 * i + 1] * kv[2 * j + 1]));
        e[i] = log(z);
    }
    YG_CHECK(yg_flash_attention(q, k, v, true, &scale, &o, &lse));
    YG_EXPECT_CLOSE(lse, ls, 2, e, 1e-14, 1e-14);
    free(qv);
    free(kv);
    yg_release(q);
    yg_release(k);
    yg_release(v);
    yg_release(o);
    yg_release(lse);
}

static void test_flash_attention_rejects_bad_inputs(void **state) {
    const int64_t q4[] = {2, 3, 4}, k5[] = {2, 5, 4}, kE[] = {2, 5, 3}, kb[] = {1, 5, 4},
                  v5[] = {2, 5, 6}, v6[] = {2, 6, 6}, q1[] = {4};
    yg_tensor *q = yg_test_rand(YG_FLOAT32, q4, 3, -1, 1, 1),
              *k = yg_test_rand(YG_FLOAT32, k5, 3, -1, 1, 2),
              *v = yg_test_rand(YG_FLOAT32, v5, 3, -1, 1, 3);
    yg_tensor *ke = yg_test_rand(YG_FLOAT32, kE, 3, -1, 1, 4),
              *kbt = yg_test_rand(YG_FLOAT32, kb, 3, -1, 1, 5),
              *vs = yg_test_rand(YG_FLOAT32, v6, 3, -1, 1, 6),
              *qd = yg_test_rand(YG_FLOAT64, q4, 3, -1, 1, 7),
              *q1t = yg_test_rand(YG_FLOAT32, q1, 1, -1, 1, 8), *qi = NULL, *o = NULL, *lse = NULL;
    (void)state;
    YG_CHECK(yg_tensor_full(q4, 3, 1, YG_INT64, &qi));
    YG_EXPECT_ERROR(yg_flash_attention(q, ke, v, false, NULL, &o, &lse),
                    YG_ERR_SHAPE,
                    "flash_attention: key [2, 5, 3] must have query [2, 3, 4]'s last dim E = 4");
    assert_null(o);
    assert_null(lse);
    YG_EXPECT_ERROR(yg_flash_attention(q, kbt, v, false, NULL, &o, &lse),
                    YG_ERR_SHAPE,
                    "flash_attention: query [2, 3, 4], key [1, 5, 4] and value [2, 5, 6] must "
                    "have the same batch dims");
    YG_EXPECT_ERROR(yg_flash_attention(q, k, vs, false, NULL, &o, &lse),
                    YG_ERR_SHAPE,
                    "flash_attention: value [2, 6, 6] must have key [2, 5, 4]'s S = 5 rows");
    YG_EXPECT_ERROR(yg_flash_attention(qi, qi, qi, false, NULL, &o, &lse),
                    YG_ERR_DTYPE,
                    "flash_attention",
                    "int64");
    YG_EXPECT_ERROR(yg_flash_attention(qd, k, v, false, NULL, &o, &lse),
                    YG_ERR_DTYPE,
                    "flash_attention",
                    "float64, float32 and float32");
    YG_EXPECT_ERROR(yg_flash_attention(q1t, k, v, false, NULL, &o, &lse),
                    YG_ERR_SHAPE,
                    "flash_attention: expected query [..., L, E]",
                    "got [4], [2, 5, 4] and [2, 5, 6]");
    assert_null(o);
    assert_null(lse);
    yg_release(q);
    yg_release(k);
    yg_release(v);
    yg_release(ke);
    yg_release(kbt);
    yg_release(vs);
    yg_release(qd);
    yg_release(q1t);
    yg_release(qi);
}

/* scaled_dot_product_attention keeps broadcasting batch dims (its ops
 * path) where flash_attention would refuse them. */
static void test_scaled_dot_product_attention_still_broadcasts_batch_dims(void **state) {
    const int64_t qs[] = {2, 3, 4}, ks[] = {1, 5, 4}, vs[] = {1, 5, 2}, os[] = {2, 3, 2};
    yg_tensor *q = yg_test_rand(YG_FLOAT64, qs, 3, -1, 1, 1),
              *k = yg_test_rand(YG_FLOAT64, ks, 3, -1, 1, 2),
              *v = yg_test_rand(YG_FLOAT64, vs, 3, -1, 1, 3), *y = NULL;
    (void)state;
    YG_CHECK(yg_scaled_dot_product_attention(q, k, v, NULL, true, NULL, &y));
    assert_int_equal(yg_tensor_ndim(y), 3);
    for (int d = 0; d < 3; d++)
        assert_int_equal(yg_tensor_size(y, d), os[d]);
    yg_release(q);
    yg_release(k);
    yg_release(v);
    yg_release(y);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flash_attention_matches_ops_float64),
        cmocka_unit_test(test_flash_attention_matches_ops_float32),
        cmocka_unit_test(test_flash_attention_matches_ops_on_empty_sizes),
        cmocka_unit_test(test_flash_attention_logsumexp_is_the_rows_log_sum_exp),
        cmocka_unit_test(test_flash_attention_rejects_bad_inputs),
        cmocka_unit_test(test_scaled_dot_product_attention_still_broadcasts_batch_dims),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
