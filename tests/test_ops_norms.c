/*
 * test_ops_norms.c - the fused norm kernels (native_layer_norm,
 * native_batch_norm and their backward) against naive float64 loops
 * written here: outputs and statistics, in float32 and float64, with and
 * without weight and bias, small inputs and inputs large enough to run on
 * several threads, non-contiguous inputs; the three gradients of the
 * fused backward kernels, and the agreement of the composite backward's
 * two ways (fused kernel without a graph, differentiable ops with one);
 * and the kernels' own messages.
 *
 * layer_norm and batch_norm (the public composites) keep their tests in
 * test_ops_nn.c and test_ops_batch_norm.c; gradcheck and gradgradcheck of
 * the derivative entries run on the OpInfo rows (tests/opinfo/).
 */
#include "testutil.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_norms.h"
#include "yagrad/ops_norms_backward.h"
#include "yagrad/ops_dtype_conversion.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const bool all3[3] = {true, true, true};

/* ---- naive references over float64 values ---- */

/* rows of m values: y, and mean and rstd per row (w, b nullable). */
static void naive_layer_norm(const double *x, int64_t rows, int64_t m, const double *w,
                             const double *b, double eps, double *y, double *mean, double *rstd) {
    for (int64_t r = 0; r < rows; r++) {
        double mu = 0, var = 0;
        for (int64_t j = 0; j < m; j++)
            mu += x[r * m + j];
        mu /= (double)m;
        for (int64_t j = 0; j < m; j++)
            var += (x[r * m + j] - mu) * (x[r * m + j] - mu);
        var /= (double)m;
        mean[r] = mu;
        rstd[r] = 1 / sqrt(var + eps);
        for (int64_t j = 0; j < m; j++)
            y[r * m + j] = (x[r * m + j] - mu) * rstd[r] * (w ? w[j] : 1) + (b ? b[j] : 0);
    }
}

/* The three gradients of layer_norm over rows of m (w nullable): the
 * definition, gi = rstd (gw - mean(gw) - xhat mean(gw xhat)). */
static void naive_layer_norm_backward(const double *g, const double *x, int64_t rows, int64_t m,
                                      const double *w, double eps, double *gi, double *gw,
                                      double *gb) {
    double *y = malloc(sizeof(double) * (size_t)(rows * m));
    double *mean = malloc(sizeof(double) * (size_t)rows), *rstd = malloc(sizeof(double) * (size_t)rows);
    naive_layer_norm(x, rows, m, NULL, NULL, eps, y, mean, rstd); /* y = xhat */
    for (int64_t j = 0; j < m; j++)
        gw[j] = gb[j] = 0;
    for (int64_t r = 0; r < rows; r++) {
        double a = 0, c = 0;
        for (int64_t j = 0; j < m; j++) {
            double gwj = g[r * m + j] * (w ? w[j] : 1);
            a += gwj / (double)m;
            c += gwj * y[r * m + j] / (double)m;
            gw[j] += g[r * m + j] * y[r * m + j];
            gb[j] += g[r * m + j];
        }
        for (int64_t j = 0; j < m; j++)
            gi[r * m + j] = rstd[r] * (g[r * m + j] * (w ? w[j] : 1) - a - y[r * m + j] * c);
    }
    free(y);
    free(mean);
    free(rstd);
}

/* [N, C, L]: y, and the mean and invstd each channel used. */
static void naive_batch_norm(const double *x, int64_t n, int64_t c, int64_t l, const double *w,
                             const double *b, const double *rm, const double *rv, bool training,
                             double eps, double *y, double *mean, double *invstd) {
    for (int64_t ch = 0; ch < c; ch++) {
        double mu = 0, var = 0, count = (double)(n * l);
        if (training) {
            for (int64_t i = 0; i < n; i++)
                for (int64_t k = 0; k < l; k++)
                    mu += x[(i * c + ch) * l + k] / count;
            for (int64_t i = 0; i < n; i++)
                for (int64_t k = 0; k < l; k++)
                    var += (x[(i * c + ch) * l + k] - mu) * (x[(i * c + ch) * l + k] - mu) / count;
        } else {
            mu = rm[ch];
            var = rv[ch];
        }
        mean[ch] = mu;
        invstd[ch] = 1 / sqrt(var + eps);
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < l; k++)
                y[(i * c + ch) * l + k] = (x[(i * c + ch) * l + k] - mu) * invstd[ch] *
                                              (w ? w[ch] : 1) +
                                          (b ? b[ch] : 0);
    }
}

static void naive_batch_norm_backward(const double *g, const double *x, int64_t n, int64_t c,
                                      int64_t l, const double *w, const double *mean,
                                      const double *invstd, bool training, double *gi,
                                      double *gw, double *gb) {
    double count = (double)(n * l);
    for (int64_t ch = 0; ch < c; ch++) {
        double sg = 0, sgx = 0, wc = w ? w[ch] : 1;
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < l; k++) {
                int64_t e = (i * c + ch) * l + k;
                sg += g[e];
                sgx += g[e] * (x[e] - mean[ch]) * invstd[ch];
            }
        gw[ch] = sgx;
        gb[ch] = sg;
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < l; k++) {
                int64_t e = (i * c + ch) * l + k;
                double xhat = (x[e] - mean[ch]) * invstd[ch];
                gi[e] = training ? wc * invstd[ch] * (g[e] - sg / count - xhat * sgx / count)
                                 : wc * invstd[ch] * g[e];
            }
    }
}

/* Tolerances: float64 to rounding; float32 to its precision. */
static double tol(yg_dtype d) {
    return d == YG_FLOAT64 ? 1e-11 : 2e-5;
}

static double *dalloc(int64_t n) {
    return calloc((size_t)n + 1, sizeof(double));
}

/* ---- native_layer_norm ---- */

/* input of sizes (nd dims), normalized over the last len dims. */
static void check_layer_norm(yg_dtype dt, const int64_t *sizes, int64_t nd, int64_t len,
                             bool affine, bool transposed) {
    int64_t rows = 1, m = 1, stat[8];
    for (int64_t d = 0; d < nd; d++) {
        *(d < nd - len ? &rows : &m) *= sizes[d];
        stat[d] = d < nd - len ? sizes[d] : 1;
    }
    const int64_t *ns = sizes + nd - len;
    yg_tensor *x = yg_test_rand(dt, sizes, nd, -2, 3, 101), *xt = NULL, *xin = x;
    yg_tensor *w = yg_test_rand(dt, ns, len, 0.5, 1.5, 102), *b = yg_test_rand(dt, ns, len, -1, 1, 103);
    yg_tensor *g = yg_test_rand(dt, sizes, nd, -1, 1, 104);
    yg_tensor *y = NULL, *mean = NULL, *rstd = NULL, *gi = NULL, *gw = NULL, *gb = NULL;
    double *xv = yg_test_values(x), *wv = yg_test_values(w), *bv = yg_test_values(b);
    double *gv = yg_test_values(g);
    double *ey = dalloc(rows * m), *em = dalloc(rows), *er = dalloc(rows);
    double *egi = dalloc(rows * m), *egw = dalloc(m), *egb = dalloc(m);

    if (transposed) {
        /* the same values through a non-contiguous view: x^T^T of a
         * contiguous transposed copy */
        yg_tensor *t = NULL;
        YG_CHECK(yg_transpose(x, 0, 1, &t));
        YG_CHECK(yg_contiguous(t, &xt));
        yg_release(t);
        YG_CHECK(yg_transpose(xt, 0, 1, &t));
        yg_release(xt);
        xt = t;
        assert_false(yg_tensor_is_contiguous(xt));
        xin = xt;
    }
    naive_layer_norm(xv, rows, m, affine ? wv : NULL, affine ? bv : NULL, 1e-5, ey, em, er);
    YG_CHECK(yg_native_layer_norm(xin, ns, len, affine ? w : NULL, affine ? b : NULL, 1e-5, &y,
                                  &mean, &rstd));
    YG_EXPECT_CLOSE(y, sizes, nd, ey, tol(dt), tol(dt));
    YG_EXPECT_CLOSE(mean, stat, nd, em, tol(dt), tol(dt));
    YG_EXPECT_CLOSE(rstd, stat, nd, er, tol(dt), tol(dt));
    assert_int_equal(yg_tensor_dtype(y), dt);

    naive_layer_norm_backward(gv, xv, rows, m, affine ? wv : NULL, 1e-5, egi, egw, egb);
    YG_CHECK(yg_native_layer_norm_backward_fused(g, xin, mean, rstd, affine ? w : NULL, ns, len,
                                                 all3, &gi, &gw, &gb));
    YG_EXPECT_CLOSE(gi, sizes, nd, egi, tol(dt), tol(dt));
    /* the column sums add up to rows terms of size ~1 */
    YG_EXPECT_CLOSE(gw, ns, len, egw, tol(dt) * (double)rows, tol(dt));
    YG_EXPECT_CLOSE(gb, ns, len, egb, tol(dt) * (double)rows, tol(dt));
    yg_release(gi);
    yg_release(gw);
    yg_release(gb);
    /* only what the mask asks for */
    YG_CHECK(yg_native_layer_norm_backward_fused(g, xin, mean, rstd, affine ? w : NULL, ns, len,
                                                 (const bool[3]){false, true, false}, &gi, &gw,
                                                 &gb));
    assert_null(gi);
    assert_null(gb);
    YG_EXPECT_CLOSE(gw, ns, len, egw, tol(dt) * (double)rows, tol(dt));
    yg_release(gw);
    free(xv), free(wv), free(bv), free(gv), free(ey), free(em), free(er), free(egi), free(egw),
        free(egb);
    yg_release(x);
    yg_release(xt);
    yg_release(w);
    yg_release(b);
    yg_release(g);
    yg_release(y);
    yg_release(mean);
    yg_release(rstd);
}

static void test_native_layer_norm_and_its_backward_match_naive_loops_in_both_dtypes(void **state) {
    const int64_t s2[] = {5, 7}, s3[] = {3, 4, 6};
    (void)state;
    for (int d = 0; d < 2; d++) {
        yg_dtype dt = d == 0 ? YG_FLOAT64 : YG_FLOAT32;
        check_layer_norm(dt, s2, 2, 1, true, false);
        check_layer_norm(dt, s2, 2, 1, false, false);
        check_layer_norm(dt, s3, 3, 2, true, false);
        check_layer_norm(dt, s3, 3, 1, false, false);
    }
}

/* 64 x 1024 = 65536 elements: over the threading threshold, so rows and
 * the per-thread column sums of grad_weight and grad_bias are split. */
static void test_native_layer_norm_on_threads_matches_naive_loops(void **state) {
    const int64_t s[] = {64, 1024}, s3[] = {3, 50, 300};
    (void)state;
    check_layer_norm(YG_FLOAT64, s, 2, 1, true, false);
    check_layer_norm(YG_FLOAT32, s, 2, 1, true, false);
    check_layer_norm(YG_FLOAT32, s3, 3, 1, false, false);
}

static void test_native_layer_norm_of_a_non_contiguous_input_matches_naive_loops(void **state) {
    const int64_t s[] = {6, 5}, s3[] = {4, 3, 5};
    (void)state;
    check_layer_norm(YG_FLOAT64, s, 2, 1, true, true);
    check_layer_norm(YG_FLOAT32, s3, 3, 2, true, true);
}

/* The composite backward computes the same three gradients with a graph
 * (differentiable ops) as without one (the fused kernel). */
static void test_native_layer_norm_backward_agrees_with_and_without_a_graph(void **state) {
    const int64_t s[] = {3, 4, 5}, ns[] = {4, 5};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 3, -2, 2, 7), *w = yg_test_rand(YG_FLOAT64, ns, 2, 0.5, 1.5, 8);
    yg_tensor *g = yg_test_rand(YG_FLOAT64, s, 3, -1, 1, 9);
    yg_tensor *y = NULL, *mean = NULL, *rstd = NULL, *a[3] = {0}, *b[3] = {0};
    (void)state;
    YG_CHECK(yg_native_layer_norm(x, ns, 2, w, NULL, 1e-5, &y, &mean, &rstd));
    YG_CHECK(yg_native_layer_norm_backward(g, x, mean, rstd, w, ns, 2, 1e-5, all3, &a[0], &a[1], &a[2]));
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_native_layer_norm_backward(g, x, mean, rstd, w, ns, 2, 1e-5, all3, &b[0], &b[1], &b[2]));
    assert_true(yg_tensor_requires_grad(b[0]));
    assert_false(yg_tensor_requires_grad(a[0]));
    for (int i = 0; i < 3; i++) {
        double *av = yg_test_values(a[i]);
        YG_EXPECT_CLOSE(b[i], yg_tensor_sizes(a[i]), yg_tensor_ndim(a[i]), av, 1e-12, 1e-12);
        free(av);
        yg_release(a[i]);
        yg_release(b[i]);
    }
    yg_release(x), yg_release(w), yg_release(g), yg_release(y), yg_release(mean), yg_release(rstd);
}

/* layer_norm keeps the promotion of the composition it replaced: a
 * float32 input with float64 weight gives float64. */
static void test_layer_norm_of_float32_input_with_float64_weight_is_float64(void **state) {
    const int64_t s[] = {2, 3}, ns[] = {3};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, s, 2, -1, 1, 3), *w = yg_test_rand(YG_FLOAT64, ns, 1, 1, 2, 4);
    yg_tensor *y = NULL;
    (void)state;
    YG_CHECK(yg_layer_norm(x, ns, 1, w, NULL, 1e-5, &y));
    assert_int_equal(yg_tensor_dtype(y), YG_FLOAT64);
    yg_release(x), yg_release(w), yg_release(y);
}

/* ---- native_batch_norm ---- */

static void check_batch_norm(yg_dtype dt, const int64_t *sizes, int64_t nd, bool training,
                             bool affine, bool transposed) {
    int64_t n = sizes[0], c = sizes[1], l = 1, cs[1] = {sizes[1]};
    for (int64_t d = 2; d < nd; d++)
        l *= sizes[d];
    int64_t numel = n * c * l;
    yg_tensor *x = yg_test_rand(dt, sizes, nd, -2, 3, 201), *xt = NULL, *xin = x;
    yg_tensor *w = yg_test_rand(dt, cs, 1, 0.5, 1.5, 202), *b = yg_test_rand(dt, cs, 1, -1, 1, 203);
    yg_tensor *rm = yg_test_rand(YG_FLOAT64, cs, 1, -0.5, 0.5, 204);
    yg_tensor *rv = yg_test_rand(YG_FLOAT32, cs, 1, 0.5, 2, 205);
    yg_tensor *g = yg_test_rand(dt, sizes, nd, -1, 1, 206);
    yg_tensor *y = NULL, *sm = NULL, *si = NULL, *gi = NULL, *gw = NULL, *gb = NULL;
    double *xv = yg_test_values(x), *wv = yg_test_values(w), *bv = yg_test_values(b);
    double *rmv = yg_test_values(rm), *rvv = yg_test_values(rv), *gv = yg_test_values(g);
    double *ey = dalloc(numel), *em = dalloc(c), *ei = dalloc(c), *egi = dalloc(numel);
    double *egw = dalloc(c), *egb = dalloc(c), *erm = dalloc(c), *erv = dalloc(c);

    if (transposed) {
        yg_tensor *t = NULL;
        YG_CHECK(yg_transpose(x, 0, 1, &t));
        YG_CHECK(yg_contiguous(t, &xt));
        yg_release(t);
        YG_CHECK(yg_transpose(xt, 0, 1, &t));
        yg_release(xt);
        xt = t;
        xin = xt;
    }
    naive_batch_norm(xv, n, c, l, affine ? wv : NULL, affine ? bv : NULL, rmv, rvv, training,
                     1e-5, ey, em, ei);
    for (int64_t ch = 0; ch < c; ch++) {
        erm[ch] = training ? 0.9 * rmv[ch] + 0.1 * em[ch] : rmv[ch];
        double var = 1 / (ei[ch] * ei[ch]) - 1e-5;
        erv[ch] = training ? 0.9 * rvv[ch] + 0.1 * var * (double)(n * l) / (double)(n * l - 1)
                           : rvv[ch];
    }
    YG_CHECK(yg_native_batch_norm(xin, affine ? w : NULL, affine ? b : NULL, rm, rv, training, 0.1,
                                  1e-5, &y, &sm, &si));
    YG_EXPECT_CLOSE(y, sizes, nd, ey, tol(dt), tol(dt));
    YG_EXPECT_CLOSE(sm, cs, 1, em, tol(dt), tol(dt));
    YG_EXPECT_CLOSE(si, cs, 1, ei, tol(dt), tol(dt));
    YG_EXPECT_CLOSE(rm, cs, 1, erm, tol(dt), tol(dt));
    YG_EXPECT_CLOSE(rv, cs, 1, erv, 1e-6, 1e-6); /* float32 state */
    naive_batch_norm_backward(gv, xv, n, c, l, affine ? wv : NULL, em, ei, training, egi, egw, egb);
    YG_CHECK(yg_native_batch_norm_backward_fused(g, xin, affine ? w : NULL, sm, si, training, all3,
                                                 &gi, &gw, &gb));
    YG_EXPECT_CLOSE(gi, sizes, nd, egi, tol(dt), tol(dt));
    YG_EXPECT_CLOSE(gw, cs, 1, egw, tol(dt) * (double)(n * l), tol(dt));
    YG_EXPECT_CLOSE(gb, cs, 1, egb, tol(dt) * (double)(n * l), tol(dt));
    free(xv), free(wv), free(bv), free(rmv), free(rvv), free(gv), free(ey), free(em), free(ei);
    free(egi), free(egw), free(egb), free(erm), free(erv);
    yg_release(x), yg_release(xt), yg_release(w), yg_release(b), yg_release(rm), yg_release(rv);
    yg_release(g), yg_release(y), yg_release(sm), yg_release(si), yg_release(gi), yg_release(gw);
    yg_release(gb);
}

static void test_native_batch_norm_and_its_backward_match_naive_loops_for_2d_to_5d(void **state) {
    const int64_t s2[] = {6, 3}, s3[] = {3, 4, 5}, s4[] = {2, 3, 4, 5}, s5[] = {2, 2, 3, 2, 3};
    (void)state;
    for (int d = 0; d < 2; d++) {
        yg_dtype dt = d == 0 ? YG_FLOAT64 : YG_FLOAT32;
        for (int training = 0; training < 2; training++) {
            check_batch_norm(dt, s2, 2, training, true, false);
            check_batch_norm(dt, s3, 3, training, false, false);
            check_batch_norm(dt, s4, 4, training, true, false);
            check_batch_norm(dt, s5, 5, training, true, false);
        }
    }
}

/* 8 x 16 x 32 x 32 = 131072 elements: channels split over threads. */
static void test_native_batch_norm_on_threads_matches_naive_loops(void **state) {
    const int64_t s[] = {8, 16, 32, 32}, s2[] = {4096, 16};
    (void)state;
    check_batch_norm(YG_FLOAT32, s, 4, true, true, false);
    check_batch_norm(YG_FLOAT64, s, 4, false, true, false);
    check_batch_norm(YG_FLOAT32, s2, 2, true, true, false);
}

static void test_native_batch_norm_of_a_non_contiguous_input_matches_naive_loops(void **state) {
    const int64_t s[] = {4, 3, 5};
    (void)state;
    check_batch_norm(YG_FLOAT64, s, 3, true, true, true);
    check_batch_norm(YG_FLOAT32, s, 3, false, true, true);
}

static void test_native_batch_norm_backward_agrees_with_and_without_a_graph(void **state) {
    const int64_t s[] = {3, 2, 4, 2}, cs[] = {2};
    (void)state;
    for (int training = 0; training < 2; training++) {
        yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 4, -2, 2, 17), *w = yg_test_rand(YG_FLOAT64, cs, 1, 0.5, 1.5, 18);
        yg_tensor *rm = yg_test_rand(YG_FLOAT64, cs, 1, -1, 1, 19), *rv = yg_test_rand(YG_FLOAT64, cs, 1, 0.5, 2, 20);
        yg_tensor *g = yg_test_rand(YG_FLOAT64, s, 4, -1, 1, 21);
        yg_tensor *y = NULL, *sm = NULL, *si = NULL, *a[3] = {0}, *b[3] = {0};
        YG_CHECK(yg_native_batch_norm(x, w, NULL, rm, rv, training, 0.1, 1e-5, &y, &sm, &si));
        YG_CHECK(yg_native_batch_norm_backward(g, x, w, sm, si, training, 1e-5, all3, &a[0], &a[1], &a[2]));
        YG_CHECK(yg_tensor_set_requires_grad(g, true));
        YG_CHECK(yg_native_batch_norm_backward(g, x, w, sm, si, training, 1e-5, all3, &b[0], &b[1], &b[2]));
        assert_true(yg_tensor_requires_grad(b[0]));
        for (int i = 0; i < 3; i++) {
            double *av = yg_test_values(a[i]);
            YG_EXPECT_CLOSE(b[i], yg_tensor_sizes(a[i]), yg_tensor_ndim(a[i]), av, 1e-12, 1e-12);
            free(av);
            yg_release(a[i]);
            yg_release(b[i]);
        }
        yg_release(x), yg_release(w), yg_release(rm), yg_release(rv), yg_release(g);
        yg_release(y), yg_release(sm), yg_release(si);
    }
}

/* ---- messages ---- */

static void test_native_norms_reject_bad_arguments_with_messages(void **state) {
    const int64_t s[] = {2, 3, 4}, ns[] = {4}, c3[] = {3}, c4[] = {4};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 3, -1, 1, 1), *x32 = yg_test_rand(YG_FLOAT32, s, 3, -1, 1, 1);
    yg_tensor *w3 = yg_test_rand(YG_FLOAT64, c3, 1, 0.5, 1, 2), *w4 = yg_test_rand(YG_FLOAT32, c4, 1, 0.5, 1, 3);
    yg_tensor *i64 = NULL, *y = NULL, *m = NULL, *r = NULL, *gi = NULL, *gw = NULL, *gb = NULL;
    (void)state;
    YG_CHECK(yg_to_dtype(x, YG_INT64, false, &i64));
    YG_EXPECT_ERROR(yg_native_layer_norm(x, c3, 1, NULL, NULL, 1e-5, &y, &m, &r), YG_ERR_SHAPE,
                    "native_layer_norm: expected input whose trailing sizes are normalized_shape "
                    "[3], got [2, 3, 4]");
    assert_null(y);
    assert_null(m);
    assert_null(r);
    YG_EXPECT_ERROR(yg_native_layer_norm(x, ns, 1, w4, NULL, 1e-5, &y, &m, &r), YG_ERR_DTYPE,
                    "native_layer_norm: expected weight of input's dtype float64, got float32");
    YG_EXPECT_ERROR(yg_native_layer_norm(x, ns, 1, NULL, w3, 1e-5, &y, &m, &r), YG_ERR_SHAPE,
                    "native_layer_norm: expected bias of normalized_shape [4], got [3]");
    YG_EXPECT_ERROR(yg_native_layer_norm(i64, ns, 1, NULL, NULL, 1e-5, &y, &m, &r), YG_ERR_DTYPE,
                    "native_layer_norm: unsupported dtype int64 for input");
    YG_EXPECT_ERROR(yg_native_layer_norm_backward_fused(x32, x, x, x, NULL, ns, 1, all3, &gi, &gw, &gb),
                    YG_ERR_DTYPE, "native_layer_norm_backward_fused: expected grad_out of input's dtype float64, got float32");
    YG_EXPECT_ERROR(yg_native_layer_norm_backward_fused(x, x, x, x, NULL, ns, 1, all3, &gi, &gw, &gb),
                    YG_ERR_SHAPE, "native_layer_norm_backward_fused: expected mean of 6 elements (one per row), got [2, 3, 4]");
    assert_null(gi);
    assert_null(gw);
    assert_null(gb);
    YG_EXPECT_ERROR(yg_native_batch_norm(x, w4, NULL, NULL, NULL, true, 0.1, 1e-5, &y, &m, &r), YG_ERR_SHAPE,
                    "native_batch_norm: expected weight of sizes [3] (the channels of input [2, 3, 4]), got [4]");
    YG_EXPECT_ERROR(yg_native_batch_norm(x, NULL, NULL, NULL, NULL, false, 0.1, 1e-5, &y, &m, &r),
                    YG_ERR_INVALID_ARGUMENT,
                    "native_batch_norm: running_mean and running_var are required when not training");
    YG_EXPECT_ERROR(yg_native_batch_norm(w3, NULL, NULL, NULL, NULL, true, 0.1, 1e-5, &y, &m, &r), YG_ERR_SHAPE,
                    "native_batch_norm: expected input of 2 to 5 dims [N, C, *], got [3]");
    YG_EXPECT_ERROR(yg_native_batch_norm_backward_fused(x, x, NULL, w3, x, true, all3, &gi, &gw, &gb),
                    YG_ERR_SHAPE, "native_batch_norm_backward_fused: expected save_invstd of 3 elements (one per channel), got [2, 3, 4]");
    assert_null(y);
    assert_null(gi);
    yg_release(x), yg_release(x32), yg_release(w3), yg_release(w4), yg_release(i64);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_native_layer_norm_and_its_backward_match_naive_loops_in_both_dtypes),
        cmocka_unit_test(test_native_layer_norm_on_threads_matches_naive_loops),
        cmocka_unit_test(test_native_layer_norm_of_a_non_contiguous_input_matches_naive_loops),
        cmocka_unit_test(test_native_layer_norm_backward_agrees_with_and_without_a_graph),
        cmocka_unit_test(test_layer_norm_of_float32_input_with_float64_weight_is_float64),
        cmocka_unit_test(test_native_batch_norm_and_its_backward_match_naive_loops_for_2d_to_5d),
        cmocka_unit_test(test_native_batch_norm_on_threads_matches_naive_loops),
        cmocka_unit_test(test_native_batch_norm_of_a_non_contiguous_input_matches_naive_loops),
        cmocka_unit_test(test_native_batch_norm_backward_agrees_with_and_without_a_graph),
        cmocka_unit_test(test_native_norms_reject_bad_arguments_with_messages),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
