/*
 * test_conv_onednn.c - the oneDNN convolution backend (conv/onednn.c)
 * against the native one: every case of the shared shape table
 * (conv_cases.h) and a few with enough channels for oneDNN's blocked
 * layouts, forward and every gradient, with the backend forced to onednn
 * and then to native; the automatic choice (onednn for float32, native
 * for float64 and empty batches); a forced onednn on float64; and the
 * primitive cache.
 *
 * float32 tolerance: atol 1e-4 + rtol 1e-4, for the different summation
 * orders of oneDNN's kernels (blocked, vectorised over channels) and of
 * im2col + gemm; the values are sums of up to a few hundred products of
 * numbers in [-1, 1].
 *
 * In a build without oneDNN every test here is skipped (cmocka skip(),
 * with the reason printed); test_ops_conv.c checks that forcing onednn
 * there fails with "built without oneDNN".
 */
#include "conv_cases.h"
#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_convolution.h"
#include "yagrad/ops_convolution_general.h"

#include <stdio.h>
#include <stdlib.h>

#define TOL 1e-4

static void skip_without_onednn(void) {
    if (!yg_conv_backend_available(YG_CONV_BACKEND_ONEDNN))
        yg_test_skip("yagrad was built without oneDNN (install libdnnl-dev and reconfigure)");
}

/* Cases with 16 to 48 channels, where oneDNN picks blocked layouts. */
static const conv_case blocked[] = {
    /* nsp, n, cin, cout, in, k, s, p, d, op, groups, transposed, bias */
    {2, 2, 32, 32, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, 1, false, true},
    {2, 3, 16, 48, {8, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {0}, 1, false, false},
    {2, 2, 32, 32, {7, 7}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {0}, 2, false, true},
    {2, 2, 32, 32, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, 32, false, true}, /* depthwise */
    {2, 2, 64, 16, {6, 6}, {1, 1}, {1, 1}, {0, 0}, {1, 1}, {0}, 1, false, true},  /* 1x1 */
    {1, 2, 16, 32, {20}, {5}, {2}, {2}, {1}, {0}, 1, false, true},
    {3, 2, 16, 16, {4, 5, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0}, 1, false, true},
    {2, 2, 32, 16, {5, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 1, true, true},
    {2, 2, 32, 32, {5, 4}, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {0, 1}, 2, true, false},
};

/* The output and the gradients of sum(y * v) in x, w (and b) of case c
 * run through convolution (test_ops_conv.c runs the front ends) on
 * backend, as float64 arrays (free each); checks which backend ran. */
typedef struct run_result {
    double *y, *gx, *gw, *gb;
} run_result;

static run_result run_on(const conv_case *c, yg_conv_backend backend, uint64_t seed, int64_t *ys) {
    int64_t xs[5], ws[5], bs[1];
    int nd = case_sizes(c, xs, ws, bs);
    yg_tensor *x = yg_test_rand(YG_FLOAT32, xs, nd, -1, 1, seed);
    yg_tensor *w = yg_test_rand(YG_FLOAT32, ws, nd, -1, 1, seed + 1);
    yg_tensor *b = c->bias ? yg_test_rand(YG_FLOAT32, bs, 1, -1, 1, seed + 2) : NULL;
    yg_tensor *y = NULL, *v = NULL, *yv = NULL, *loss = NULL, *g = NULL;
    run_result r = {0};

    YG_CHECK(yg_conv_force_backend(backend));
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_tensor_set_requires_grad(w, true));
    if (b != NULL)
        YG_CHECK(yg_tensor_set_requires_grad(b, true));
    YG_CHECK(yg_convolution(x,
                            w,
                            b,
                            c->s,
                            c->nsp,
                            c->p,
                            c->nsp,
                            c->d,
                            c->nsp,
                            c->transposed,
                            c->op,
                            c->nsp,
                            c->groups,
                            &y));
    assert_int_equal(yg_conv_last_backend(), backend);
    for (int i = 0; i < nd; i++)
        ys[i] = yg_tensor_size(y, i);
    v = yg_test_rand(YG_FLOAT32, ys, nd, -1, 1, seed + 3);
    YG_CHECK(yg_mul(y, v, &yv));
    YG_CHECK(yg_sum(yv, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    assert_int_equal(yg_conv_last_backend(), backend);
    r.y = yg_test_values(y);
    YG_CHECK(yg_tensor_grad(x, &g));
    r.gx = yg_test_values(g);
    yg_release(g);
    YG_CHECK(yg_tensor_grad(w, &g));
    r.gw = yg_test_values(g);
    yg_release(g);
    if (b != NULL) {
        YG_CHECK(yg_tensor_grad(b, &g));
        r.gb = yg_test_values(g);
        yg_release(g);
    }
    YG_CHECK(yg_conv_force_backend(YG_CONV_BACKEND_NONE));
    yg_release(x);
    yg_release(w);
    yg_release(b);
    yg_release(y);
    yg_release(v);
    yg_release(yv);
    yg_release(loss);
    return r;
}

static void
expect_close(const double *got, const double *want, int64_t n, const char *what, size_t ci) {
    for (int64_t i = 0; i < n; i++) {
        double err = got[i] - want[i];
        if (err < 0)
            err = -err;
        if (err > TOL + TOL * (want[i] < 0 ? -want[i] : want[i]))
            fail_msg("case %zu: onednn %s[%lld] = %.8g, native %.8g",
                     ci,
                     what,
                     (long long)i,
                     got[i],
                     want[i]);
    }
}

static void free_result(run_result *r) {
    free(r->y);
    free(r->gx);
    free(r->gw);
    free(r->gb);
}

static void check_against_native(const conv_case *c, size_t ci, uint64_t seed) {
    int64_t xs[5], ws[5], bs[1], ys[5], ys2[5];
    int nd = case_sizes(c, xs, ws, bs);
    int64_t ny = 1, nx = 1, nw = 1;
    run_result o = run_on(c, YG_CONV_BACKEND_ONEDNN, seed, ys);
    run_result n = run_on(c, YG_CONV_BACKEND_NATIVE, seed, ys2);

    for (int i = 0; i < nd; i++) {
        assert_int_equal(ys[i], ys2[i]);
        ny *= ys[i];
        nx *= xs[i];
        nw *= ws[i];
    }
    expect_close(o.y, n.y, ny, "output", ci);
    expect_close(o.gx, n.gx, nx, "grad_input", ci);
    expect_close(o.gw, n.gw, nw, "grad_weight", ci);
    if (c->bias)
        expect_close(o.gb, n.gb, c->cout, "grad_bias", ci);
    free_result(&o);
    free_result(&n);
}

static void test_onednn_matches_native_on_every_case_of_the_table(void **state) {
    (void)state;
    skip_without_onednn();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_against_native(&cases[i], i, 500 + 10 * i);
}

static void test_onednn_matches_native_with_blocked_layouts(void **state) {
    (void)state;
    skip_without_onednn();
    for (size_t i = 0; i < sizeof blocked / sizeof blocked[0]; i++)
        check_against_native(&blocked[i], i, 700 + 10 * i);
}

static void
test_onednn_is_chosen_for_float32_and_native_for_float64_and_empty_batches(void **state) {
    (void)state;
    const int64_t xs[] = {2, 3, 6, 6}, ws[] = {4, 3, 3, 3}, empty[] = {0, 3, 6, 6}, one[] = {1, 1};
    yg_tensor *x32, *w32, *x64, *w64, *e32, *y = NULL;

    skip_without_onednn();
    x32 = yg_test_rand(YG_FLOAT32, xs, 4, -1, 1, 1);
    w32 = yg_test_rand(YG_FLOAT32, ws, 4, -1, 1, 2);
    x64 = yg_test_rand(YG_FLOAT64, xs, 4, -1, 1, 1);
    w64 = yg_test_rand(YG_FLOAT64, ws, 4, -1, 1, 2);
    e32 = yg_test_rand(YG_FLOAT32, empty, 4, -1, 1, 3);
    YG_CHECK(yg_conv2d(x32, w32, NULL, one, 2, one, 2, one, 2, 1, &y));
    assert_int_equal(yg_conv_last_backend(), YG_CONV_BACKEND_ONEDNN);
    yg_release(y);
    YG_CHECK(yg_conv2d(x64, w64, NULL, one, 2, one, 2, one, 2, 1, &y));
    assert_int_equal(yg_conv_last_backend(), YG_CONV_BACKEND_NATIVE);
    yg_release(y);
    YG_CHECK(yg_conv2d(e32, w32, NULL, one, 2, one, 2, one, 2, 1, &y));
    assert_int_equal(yg_conv_last_backend(), YG_CONV_BACKEND_NATIVE);
    yg_release(y);
    y = NULL;
    /* forced onednn never falls back: float64 fails, naming why */
    YG_CHECK(yg_conv_force_backend(YG_CONV_BACKEND_ONEDNN));
    YG_EXPECT_ERROR(yg_conv2d(x64, w64, NULL, one, 2, one, 2, one, 2, 1, &y),
                    YG_ERR_NOT_IMPLEMENTED,
                    "conv2d: ",
                    "backend onednn: float64: oneDNN has no float64 convolution",
                    NULL);
    assert_null(y);
    YG_CHECK(yg_conv_force_backend(YG_CONV_BACKEND_NONE));
    yg_release(x32);
    yg_release(w32);
    yg_release(x64);
    yg_release(w64);
    yg_release(e32);
}

static void test_onednn_primitive_cache_is_hit_on_repeated_calls(void **state) {
    (void)state;
    /* a shape no other test here uses, so the first call misses */
    const int64_t xs[] = {3, 5, 13, 11}, ws[] = {7, 5, 3, 3}, one[] = {1, 1};
    int64_t h0, m0, e0, h1, m1, e1, h2, m2, e2;
    yg_tensor *x, *w, *y = NULL;

    skip_without_onednn();
    x = yg_test_rand(YG_FLOAT32, xs, 4, -1, 1, 1);
    w = yg_test_rand(YG_FLOAT32, ws, 4, -1, 1, 2);
    yg_conv_onednn_cache_stats(&h0, &m0, &e0);
    YG_CHECK(yg_conv2d(x, w, NULL, one, 2, one, 2, one, 2, 1, &y));
    yg_release(y);
    yg_conv_onednn_cache_stats(&h1, &m1, &e1);
    assert_int_equal(m1, m0 + 1);
    assert_int_equal(h1, h0);
    for (int i = 0; i < 3; i++) {
        YG_CHECK(yg_conv2d(x, w, NULL, one, 2, one, 2, one, 2, 1, &y));
        yg_release(y);
    }
    yg_conv_onednn_cache_stats(&h2, &m2, &e2);
    assert_int_equal(m2, m1);
    assert_int_equal(h2, h1 + 3);
    assert_true(e2 >= 1 && e2 == e1);
    yg_release(x);
    yg_release(w);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_onednn_matches_native_on_every_case_of_the_table),
        cmocka_unit_test(test_onednn_matches_native_with_blocked_layouts),
        cmocka_unit_test(
            test_onednn_is_chosen_for_float32_and_native_for_float64_and_empty_batches),
        cmocka_unit_test(test_onednn_primitive_cache_is_hit_on_repeated_calls),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
