/*
 * test_ops_conv.c - the convolutions (conv1d/2d/3d, their string-padding
 * overloads, conv_transpose1d/2d/3d, convolution, convolution_dispatch,
 * convolution_backward) against a naive float64 convolution written here
 * (seven nested loops over batch, output channel, output position and
 * kernel, with explicit bounds checks) and its gradients; the validation
 * messages; the backend selection of yagrad/conv.h; and tracing.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include "conv_cases.h"
#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_activations.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_padding.h"
#include "yagrad/ops_convolution.h"
#include "yagrad/ops_convolution_general.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The ordinary convolution A behind a case: x side [n, cx, X], y side
 * [n, cy, Y], weight [cy, cx / G, K] (3-d, leading size-1 dims). */
typedef struct naive_geom {
    int64_t cx, cy, X[3], Y[3], k[3], s[3], p[3], d[3];
} naive_geom;

static naive_geom geom_of(const conv_case *c) {
    naive_geom g;
    int off = 3 - c->nsp;
    g.cx = c->transposed ? c->cout : c->cin;
    g.cy = c->transposed ? c->cin : c->cout;
    for (int i = 0; i < 3; i++) {
        bool real = i >= off;
        int j = i - off;
        int64_t in = real ? c->in[j] : 1, k = real ? c->k[j] : 1;
        g.k[i] = k;
        g.s[i] = real ? c->s[j] : 1;
        g.p[i] = real ? c->p[j] : 0;
        g.d[i] = real ? c->d[j] : 1;
        int64_t span = g.d[i] * (k - 1) + 1;
        if (c->transposed) {
            g.Y[i] = in;
            g.X[i] = (in - 1) * g.s[i] - 2 * g.p[i] + span + (real ? c->op[j] : 0);
        } else {
            g.X[i] = in;
            g.Y[i] = (in + 2 * g.p[i] - span) / g.s[i] + 1;
        }
    }
    return g;
}

static int64_t prod3(const int64_t *v) {
    return v[0] * v[1] * v[2];
}

/* out = conv(in) (+ b) and, for v = the gradient of out, the gradients
 * of sum(out v) in in, w and b; every array float64, zeroed by the caller. */
static void naive(const conv_case *c, const double *in, const double *w, const double *b,
                  const double *v, double *out, double *g_in, double *g_w, double *g_b) {
    naive_geom g = geom_of(c);
    int64_t G = c->groups, cxg = g.cx / G, cyg = g.cy / G, Q = prod3(g.X), P = prod3(g.Y);
    int64_t K = prod3(g.k);
    for (int64_t n = 0; n < c->n; n++)
        for (int64_t oc = 0; oc < g.cy; oc++)
            for (int64_t o = 0; o < P; o++)
                for (int64_t ic = 0; ic < cxg; ic++)
                    for (int64_t kk = 0; kk < K; kk++) {
                        int64_t o0 = o / (g.Y[1] * g.Y[2]), o1 = o / g.Y[2] % g.Y[1], o2 = o % g.Y[2];
                        int64_t k0 = kk / (g.k[1] * g.k[2]), k1 = kk / g.k[2] % g.k[1], k2 = kk % g.k[2];
                        int64_t i0 = o0 * g.s[0] - g.p[0] + k0 * g.d[0];
                        int64_t i1 = o1 * g.s[1] - g.p[1] + k1 * g.d[1];
                        int64_t i2 = o2 * g.s[2] - g.p[2] + k2 * g.d[2];
                        if (i0 < 0 || i0 >= g.X[0] || i1 < 0 || i1 >= g.X[1] || i2 < 0 || i2 >= g.X[2])
                            continue;
                        int64_t xc = oc / cyg * cxg + ic;
                        int64_t xi = (n * g.cx + xc) * Q + (i0 * g.X[1] + i1) * g.X[2] + i2;
                        int64_t yi = (n * g.cy + oc) * P + o;
                        int64_t wi = (oc * cxg + ic) * K + kk;
                        if (!c->transposed) {
                            out[yi] += w[wi] * in[xi];
                            g_in[xi] += w[wi] * v[yi];
                            g_w[wi] += v[yi] * in[xi];
                        } else {
                            out[xi] += w[wi] * in[yi];
                            g_in[yi] += w[wi] * v[xi];
                            g_w[wi] += in[yi] * v[xi];
                        }
                    }
    if (!c->bias)
        return;
    int64_t oc_n = c->cout, pos = c->transposed ? Q : P;
    for (int64_t n = 0; n < c->n; n++)
        for (int64_t oc = 0; oc < oc_n; oc++)
            for (int64_t i = 0; i < pos; i++) {
                out[(n * oc_n + oc) * pos + i] += b[oc];
                g_b[oc] += v[(n * oc_n + oc) * pos + i];
            }
}

/* Runs case c through its front end (conv<N>d or conv_transpose<N>d). */
static yg_status run_front(const conv_case *c, const yg_tensor *x, const yg_tensor *w,
                           const yg_tensor *b, yg_tensor **y) {
    int n = c->nsp;
    if (c->transposed) {
        if (n == 1)
            return yg_conv_transpose1d(x, w, b, c->s, 1, c->p, 1, c->op, 1, c->groups, c->d, 1, y);
        if (n == 2)
            return yg_conv_transpose2d(x, w, b, c->s, 2, c->p, 2, c->op, 2, c->groups, c->d, 2, y);
        return yg_conv_transpose3d(x, w, b, c->s, 3, c->p, 3, c->op, 3, c->groups, c->d, 3, y);
    }
    if (n == 1)
        return yg_conv1d(x, w, b, c->s, 1, c->p, 1, c->d, 1, c->groups, y);
    if (n == 2)
        return yg_conv2d(x, w, b, c->s, 2, c->p, 2, c->d, 2, c->groups, y);
    return yg_conv3d(x, w, b, c->s, 3, c->p, 3, c->d, 3, c->groups, y);
}

static int64_t numel(const int64_t *s, int nd) {
    int64_t m = 1;
    for (int i = 0; i < nd; i++)
        m *= s[i];
    return m;
}

static void expect_grad(yg_tensor *t, const int64_t *sizes, int nd, const double *ref, double tol) {
    yg_tensor *g = NULL;
    YG_CHECK(yg_tensor_grad(t, &g));
    YG_EXPECT_CLOSE(g, sizes, nd, ref, tol, tol);
    yg_release(g);
}

static void check_case(const conv_case *c, yg_dtype dtype, uint64_t seed) {
    int64_t xs[5], ws[5], bs[1], ys[5];
    int nd = case_sizes(c, xs, ws, bs);
    naive_geom g = geom_of(c);
    double tol = dtype == YG_FLOAT64 ? 1e-10 : 2e-4;
    yg_tensor *x = yg_test_rand(dtype, xs, nd, -1, 1, seed);
    yg_tensor *w = yg_test_rand(dtype, ws, nd, -1, 1, seed + 1);
    yg_tensor *b = c->bias ? yg_test_rand(dtype, bs, 1, -1, 1, seed + 2) : NULL;
    yg_tensor *y = NULL, *v = NULL, *yv = NULL, *loss = NULL;

    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_tensor_set_requires_grad(w, true));
    if (b != NULL)
        YG_CHECK(yg_tensor_set_requires_grad(b, true));
    YG_CHECK(run_front(c, x, w, b, &y));
    ys[0] = c->n;
    ys[1] = c->cout;
    for (int i = 0; i < c->nsp; i++)
        ys[2 + i] = c->transposed ? g.X[3 - c->nsp + i] : g.Y[3 - c->nsp + i];
    v = yg_test_rand(dtype, ys, nd, -1, 1, seed + 3);
    YG_CHECK(yg_mul(y, v, &yv));
    YG_CHECK(yg_sum(yv, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));

    double *xd = yg_test_values(x), *wd = yg_test_values(w), *vd = yg_test_values(v);
    double *bd = b != NULL ? yg_test_values(b) : NULL;
    int64_t ny = numel(ys, nd), nx = numel(xs, nd), nw = numel(ws, nd);
    double *out = calloc((size_t)ny, sizeof(double)), *gx = calloc((size_t)nx, sizeof(double));
    double *gw = calloc((size_t)nw, sizeof(double)), *gb = calloc((size_t)c->cout, sizeof(double));
    naive(c, xd, wd, bd, vd, out, gx, gw, gb);
    YG_EXPECT_CLOSE(y, ys, nd, out, tol, tol);
    expect_grad(x, xs, nd, gx, tol);
    expect_grad(w, ws, nd, gw, tol);
    if (b != NULL)
        expect_grad(b, bs, 1, gb, tol);
    free(xd);
    free(wd);
    free(vd);
    free(bd);
    free(out);
    free(gx);
    free(gw);
    free(gb);
    yg_release(x);
    yg_release(w);
    yg_release(b);
    yg_release(y);
    yg_release(v);
    yg_release(yv);
    yg_release(loss);
}

static void test_conv_forward_and_gradients_match_naive_loops_in_float64(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i], YG_FLOAT64, 100 + 10 * i);
}

static void test_conv_forward_and_gradients_match_naive_loops_in_float32(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i], YG_FLOAT32, 300 + 10 * i);
}

/* A batch large enough for images on several threads (and BLAS threads
 * inside), against the naive loops. */
static void test_conv_of_a_large_batch_matches_naive_loops(void **state) {
    (void)state;
    const conv_case big[] = {
        {2, 8, 6, 8, {12, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, 1, false, true},
        {2, 8, 8, 8, {12, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, 8, false, true},
        {2, 8, 8, 4, {6, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 1, true, true},
    };
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
        check_case(&big[i], YG_FLOAT64, 700 + 10 * i);
}

static void test_conv_of_a_transposed_input_matches_contiguous(void **state) {
    (void)state;
    const int64_t xs[] = {2, 3, 6, 5}, ws[] = {4, 3, 3, 3}, one[] = {1, 1};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, xs, 4, -1, 1, 1), *w = yg_test_rand(YG_FLOAT64, ws, 4, -1, 1, 2);
    yg_tensor *xt = NULL, *xtc = NULL, *xtt = NULL, *y1 = NULL, *y2 = NULL;
    YG_CHECK(yg_transpose(x, 2, 3, &xt));
    YG_CHECK(yg_contiguous(xt, &xtc));
    YG_CHECK(yg_conv2d(xt, w, NULL, one, 2, one, 2, one, 2, 1, &y1));
    YG_CHECK(yg_conv2d(xtc, w, NULL, one, 2, one, 2, one, 2, 1, &y2));
    double *v2 = yg_test_values(y2);
    YG_EXPECT_CLOSE(y1, yg_tensor_sizes(y2), 4, v2, 1e-12, 1e-12);
    free(v2);
    yg_release(x);
    yg_release(w);
    yg_release(xt);
    yg_release(xtc);
    yg_release(xtt);
    yg_release(y1);
    yg_release(y2);
}

static void test_conv2d_padding_same_equals_explicit_padding(void **state) {
    (void)state;
    const int64_t xs[] = {1, 2, 5, 6}, ws[] = {3, 2, 3, 4}, one[] = {1, 1}, pad[] = {1, 1};
    const int64_t zero[] = {0, 0}, extra[] = {0, 1, 0, 0};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, xs, 4, -1, 1, 5), *w = yg_test_rand(YG_FLOAT64, ws, 4, -1, 1, 6);
    yg_tensor *same = NULL, *valid = NULL, *xp = NULL, *ref = NULL, *ref_valid = NULL;
    YG_CHECK(yg_conv2d_padding(x, w, NULL, one, 2, YG_CONV_PADDING_SAME, one, 2, 1, &same));
    /* kernel 3x4: total pads 2 and 3, the odd one's extra on the right */
    YG_CHECK(yg_constant_pad_nd(x, extra, 4, 0, &xp));
    YG_CHECK(yg_conv2d(xp, w, NULL, one, 2, pad, 2, one, 2, 1, &ref));
    double *r = yg_test_values(ref);
    YG_EXPECT_CLOSE(same, yg_tensor_sizes(ref), 4, r, 1e-12, 1e-12);
    assert_int_equal(yg_tensor_size(same, 3), 6);
    YG_CHECK(yg_conv2d_padding(x, w, NULL, one, 2, YG_CONV_PADDING_VALID, one, 2, 1, &valid));
    YG_CHECK(yg_conv2d(x, w, NULL, one, 2, zero, 2, one, 2, 1, &ref_valid));
    double *rv = yg_test_values(ref_valid);
    YG_EXPECT_CLOSE(valid, yg_tensor_sizes(ref_valid), 4, rv, 1e-12, 1e-12);
    free(r);
    free(rv);
    yg_tensor *y1 = NULL, *y3 = NULL;
    const int64_t xs1[] = {1, 2, 7}, ws1[] = {2, 2, 3}, xs3[] = {1, 1, 3, 3, 3}, ws3[] = {1, 1, 3, 3, 3};
    yg_tensor *x1 = yg_test_rand(YG_FLOAT64, xs1, 3, -1, 1, 7), *w1 = yg_test_rand(YG_FLOAT64, ws1, 3, -1, 1, 8);
    yg_tensor *x3 = yg_test_rand(YG_FLOAT64, xs3, 5, -1, 1, 9), *w3 = yg_test_rand(YG_FLOAT64, ws3, 5, -1, 1, 10);
    YG_CHECK(yg_conv1d_padding(x1, w1, NULL, one, 1, YG_CONV_PADDING_SAME, one, 1, 1, &y1));
    assert_int_equal(yg_tensor_size(y1, 2), 7);
    YG_CHECK(yg_conv3d_padding(x3, w3, NULL, (const int64_t[]){1, 1, 1}, 3, YG_CONV_PADDING_SAME, (const int64_t[]){1, 1, 1}, 3, 1, &y3));
    assert_int_equal(yg_tensor_size(y3, 4), 3);
    yg_release(y1);
    y1 = NULL;
    YG_EXPECT_ERROR(yg_conv2d_padding(x, w, NULL, (const int64_t[]){2, 2}, 2, YG_CONV_PADDING_SAME, one, 2, 1, &y1),
                    YG_ERR_INVALID_ARGUMENT, "conv2d: padding same needs stride 1", NULL);
    assert_null(y1);
    YG_EXPECT_ERROR(yg_conv2d_padding(x, w, NULL, one, 2, (yg_conv_padding)-1, one, 2, 1, &y1),
                    YG_ERR_INVALID_ARGUMENT, "conv2d: padding must be valid (0) or same (1), not -1", NULL);
    yg_release(x);
    yg_release(w);
    yg_release(xp);
    yg_release(same);
    yg_release(valid);
    yg_release(ref);
    yg_release(ref_valid);
    yg_release(x1);
    yg_release(w1);
    yg_release(x3);
    yg_release(w3);
    yg_release(y3);
}

/* convolution_backward computes only what output_mask asks for, and its
 * three gradients equal the fused ones of convolution_dispatch's node. */
static void test_convolution_backward_computes_only_the_masked_gradients(void **state) {
    (void)state;
    const int64_t xs[] = {2, 4, 5, 5}, ws[] = {6, 2, 3, 3}, gs[] = {2, 6, 5, 5}, one[] = {1, 1};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, xs, 4, -1, 1, 11), *w = yg_test_rand(YG_FLOAT64, ws, 4, -1, 1, 12);
    yg_tensor *go = yg_test_rand(YG_FLOAT64, gs, 4, -1, 1, 13);
    yg_tensor *gi = NULL, *gw = NULL, *gb = NULL, *y = NULL;
    const bool only_weight[3] = {false, true, false};
    YG_CHECK(yg_convolution_backward(go, x, w, one, 2, one, 2, one, 2, false, one, 2, 2, only_weight, &gi, &gw, &gb));
    assert_null(gi);
    assert_non_null(gw);
    assert_null(gb);
    yg_release(gw);
    const bool all[3] = {true, true, true};
    YG_CHECK(yg_convolution_backward(go, x, w, one, 2, one, 2, one, 2, false, one, 2, 2, all, &gi, &gw, &gb));
    assert_int_equal(yg_tensor_size(gb, 0), 6);
    YG_CHECK(yg_convolution_dispatch(x, w, NULL, one, 2, one, 2, one, 2, false, one, 2, 2, false, false, true, &y));
    yg_tensor *y2 = NULL;
    YG_CHECK(yg_convolution(x, w, NULL, one, 2, one, 2, one, 2, false, one, 2, 2, &y2));
    yg_release(y2);
    yg_release(gi);
    yg_release(gw);
    yg_release(gb);
    YG_EXPECT_ERROR(yg_convolution_backward(x, x, w, one, 2, one, 2, one, 2, false, one, 2, 2, all, &gi, &gw, &gb),
                    YG_ERR_SHAPE, "convolution_backward: expected grad_output of the output's sizes [2, 6, 5, 5], got [2, 4, 5, 5]", NULL);
    yg_release(x);
    yg_release(w);
    yg_release(go);
    yg_release(y);
}

/* Each validation error: its status and a message naming the argument
 * and the values; the outputs stay NULL. */
static void test_conv_rejects_bad_arguments_with_messages(void **state) {
    (void)state;
    const int64_t xs[] = {8, 4, 32, 32}, ws[] = {64, 3, 3, 3}, one[] = {1, 1}, zero[] = {0, 0};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, xs, 4, -1, 1, 1), *w = yg_test_rand(YG_FLOAT32, ws, 4, -1, 1, 2);
    yg_tensor *y = NULL;
    YG_EXPECT_ERROR(yg_conv2d(x, w, NULL, one, 2, zero, 2, one, 2, 1, &y), YG_ERR_SHAPE,
                    "conv2d: weight of sizes [64, 3, 3, 3] expects input with 3 channels (groups 1), got input [8, 4, 32, 32]", NULL);
    assert_null(y);
    const int64_t ws2[] = {64, 4, 3}, ws3[] = {6, 4, 3, 3}, ws4[] = {4, 4, 3, 3}, xs2[] = {1, 4, 2, 2};
    yg_tensor *w2 = yg_test_rand(YG_FLOAT32, ws2, 3, -1, 1, 3), *w3 = yg_test_rand(YG_FLOAT32, ws3, 4, -1, 1, 4);
    yg_tensor *w4 = yg_test_rand(YG_FLOAT64, ws4, 4, -1, 1, 5), *w5 = yg_test_rand(YG_FLOAT32, ws4, 4, -1, 1, 5);
    yg_tensor *small = yg_test_rand(YG_FLOAT32, xs2, 4, -1, 1, 6);
    YG_EXPECT_ERROR(yg_conv2d(x, w2, NULL, one, 2, zero, 2, one, 2, 1, &y), YG_ERR_SHAPE,
                    "conv2d: expected weight with 4 dims for input [8, 4, 32, 32], got weight of sizes [64, 4, 3]", NULL);
    YG_EXPECT_ERROR(yg_conv2d(x, w5, NULL, one, 2, (const int64_t[]){-1, 0}, 2, one, 2, 1, &y),
                    YG_ERR_INVALID_ARGUMENT, "conv2d: padding [-1, 0] must be non-negative", NULL);
    YG_EXPECT_ERROR(yg_conv2d(x, w5, NULL, zero, 2, zero, 2, one, 2, 1, &y),
                    YG_ERR_INVALID_ARGUMENT, "conv2d: stride [0, 0] must be at least 1", NULL);
    YG_EXPECT_ERROR(yg_conv2d(x, w5, NULL, one, 2, zero, 2, zero, 2, 1, &y),
                    YG_ERR_INVALID_ARGUMENT, "conv2d: dilation [0, 0] must be at least 1", NULL);
    YG_EXPECT_ERROR(yg_conv2d(x, w5, NULL, one, 2, zero, 2, one, 2, 0, &y),
                    YG_ERR_INVALID_ARGUMENT, "conv2d: groups 0 must be at least 1", NULL);
    YG_EXPECT_ERROR(yg_conv2d(x, w3, NULL, one, 2, zero, 2, one, 2, 4, &y), YG_ERR_SHAPE,
                    "conv2d: weight of sizes [6, 4, 3, 3] has 6 output channels, not divisible by groups 4", NULL);
    YG_EXPECT_ERROR(yg_conv2d(x, w4, NULL, one, 2, zero, 2, one, 2, 1, &y), YG_ERR_DTYPE,
                    "conv2d: expected weight of input's dtype float32, got float64", NULL);
    YG_EXPECT_ERROR(yg_conv2d(small, w5, NULL, one, 2, zero, 2, one, 2, 1, &y), YG_ERR_SHAPE,
                    "conv2d: output sizes [0, 0] would be smaller than 1", NULL);
    YG_EXPECT_ERROR(yg_conv2d(x, w5, w5, one, 2, zero, 2, one, 2, 1, &y), YG_ERR_SHAPE,
                    "conv2d: expected bias of sizes [4]", NULL);
    YG_EXPECT_ERROR(yg_conv_transpose2d(x, w5, NULL, one, 2, zero, 2, one, 2, 1, one, 2, &y),
                    YG_ERR_INVALID_ARGUMENT, "conv_transpose2d: output_padding [1, 1] must be smaller than stride [1, 1]", NULL);
    YG_EXPECT_ERROR(yg_conv1d(x, w5, NULL, one, 1, zero, 1, one, 1, 1, &y), YG_ERR_SHAPE,
                    "conv1d: expected input with 3 dims [N, C, L], got input [8, 4, 32, 32]", NULL);
    assert_null(y);
    yg_release(x);
    yg_release(w);
    yg_release(w2);
    yg_release(w3);
    yg_release(w4);
    yg_release(w5);
    yg_release(small);
}

static void test_conv_of_an_empty_batch_gives_an_empty_result_and_gradients(void **state) {
    (void)state;
    const int64_t xs[] = {0, 3, 5, 5}, ws[] = {4, 3, 3, 3}, one[] = {1, 1};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, xs, 4, -1, 1, 1), *w = yg_test_rand(YG_FLOAT64, ws, 4, -1, 1, 2);
    yg_tensor *y = NULL, *s = NULL, *gw = NULL;
    YG_CHECK(yg_tensor_set_requires_grad(w, true));
    YG_CHECK(yg_conv2d(x, w, NULL, one, 2, one, 2, one, 2, 1, &y));
    assert_int_equal(yg_tensor_size(y, 0), 0);
    assert_int_equal(yg_tensor_size(y, 1), 4);
    YG_CHECK(yg_sum(y, &s));
    YG_CHECK(yg_backward(s, NULL, false));
    YG_CHECK(yg_tensor_grad(w, &gw));
    double zeros[4 * 3 * 3 * 3] = {0};
    YG_EXPECT_CLOSE(gw, ws, 4, zeros, 0, 0);
    yg_release(x);
    yg_release(w);
    yg_release(y);
    yg_release(s);
    yg_release(gw);
}

static void test_conv_backend_is_observable_and_forcible(void **state) {
    (void)state;
    const int64_t xs[] = {1, 2, 4, 4}, ws[] = {2, 2, 3, 3}, one[] = {1, 1};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, xs, 4, -1, 1, 1), *w = yg_test_rand(YG_FLOAT32, ws, 4, -1, 1, 2);
    yg_tensor *y = NULL;
    bool onednn = yg_conv_backend_available(YG_CONV_BACKEND_ONEDNN);
    bool cudnn = yg_conv_backend_available(YG_CONV_BACKEND_CUDNN);
    assert_true(yg_conv_backend_available(YG_CONV_BACKEND_NATIVE));
    assert_string_equal(yg_conv_backend_name(YG_CONV_BACKEND_CUDNN), "cudnn");
    /* float32 runs on oneDNN when it is built (test_conv_onednn.c has the rest) */
    YG_CHECK(yg_conv2d(x, w, NULL, one, 2, one, 2, one, 2, 1, &y));
    assert_int_equal(yg_conv_last_backend(), onednn ? YG_CONV_BACKEND_ONEDNN : YG_CONV_BACKEND_NATIVE);
    assert_string_equal(yg_conv_last_note(), ""); /* ran where chosen: nothing to note */
    yg_release(y);
    y = NULL;
    YG_CHECK(yg_conv_force_backend(YG_CONV_BACKEND_ONEDNN));
    assert_int_equal(yg_conv_forced_backend(), YG_CONV_BACKEND_ONEDNN);
    if (!onednn) {
        YG_EXPECT_ERROR(yg_conv2d(x, w, NULL, one, 2, one, 2, one, 2, 1, &y), YG_ERR_NOT_IMPLEMENTED,
                        "conv2d: ", "backend onednn: built without oneDNN", NULL);
        assert_null(y);
    }
    YG_CHECK(yg_conv_force_backend(YG_CONV_BACKEND_NATIVE));
    YG_CHECK(yg_conv2d(x, w, NULL, one, 2, one, 2, one, 2, 1, &y));
    yg_release(y);
    y = NULL;
    YG_EXPECT_ERROR(yg_conv_force_backend((yg_conv_backend)42), YG_ERR_INVALID_ARGUMENT, "42 is no backend", NULL);
    YG_CHECK(yg_conv_force_backend(YG_CONV_BACKEND_NONE));
    /* the environment variable, read at every call */
    setenv("YG_CONV_BACKEND", "cudnn", 1);
    if (cudnn)
        YG_EXPECT_ERROR(yg_conv2d(x, w, NULL, one, 2, one, 2, one, 2, 1, &y), YG_ERR_DEVICE,
                        "conv2d: ", "backend cudnn: needs cuda tensors, got input on cpu", NULL);
    else
        YG_EXPECT_ERROR(yg_conv2d(x, w, NULL, one, 2, one, 2, one, 2, 1, &y), YG_ERR_NOT_IMPLEMENTED,
                        "backend cudnn: built without cuDNN", NULL);
    assert_null(y);
    setenv("YG_CONV_BACKEND", "fast", 1);
    YG_EXPECT_ERROR(yg_conv2d(x, w, NULL, one, 2, one, 2, one, 2, 1, &y), YG_ERR_INVALID_ARGUMENT,
                    "YG_CONV_BACKEND 'fast' names no backend", NULL);
    setenv("YG_CONV_BACKEND", "native", 1);
    YG_CHECK(yg_conv2d(x, w, NULL, one, 2, one, 2, one, 2, 1, &y));
    assert_int_equal(yg_conv_last_backend(), YG_CONV_BACKEND_NATIVE);
    unsetenv("YG_CONV_BACKEND");
    yg_release(y);
    yg_release(x);
    yg_release(w);
}

static yg_status conv_relu(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    const int64_t one[] = {1, 1};
    yg_tensor *h = NULL;
    (void)n_in;
    (void)n_out;
    yg_status st = yg_conv2d(in[0], ctx, NULL, one, 2, one, 2, one, 2, 1, &h);
    if (st == YG_OK)
        st = yg_relu(h, &out[0]);
    yg_release(h);
    return st;
}

static void test_trace_records_conv2d_as_one_node_and_the_interpreter_runs_it(void **state) {
    (void)state;
    const int64_t xs[] = {2, 3, 6, 6}, ws[] = {4, 3, 3, 3};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, xs, 4, -1, 1, 1), *w = yg_test_rand(YG_FLOAT32, ws, 4, -1, 1, 2);
    yg_tensor *eager = NULL, *y = NULL;
    yg_trace_result *r = NULL;
    YG_CHECK(yg_trace(conv_relu, w, &x, 1, 1, NULL, &r));
    int convs = 0;
    for (yg_ir_node *n = yg_graph_first_node(r->graph); n != NULL; n = yg_ir_node_next(n)) {
        assert_true(strstr(yg_ir_node_kind(n), "convolution") == NULL);
        convs += strcmp(yg_ir_node_kind(n), "conv2d") == 0;
    }
    assert_int_equal(convs, 1);
    YG_CHECK(conv_relu(w, &x, 1, &eager, 1));
    yg_tensor *in[2] = {x, r->params[0]};
    YG_CHECK(yg_graph_run(r->graph, in, 2, &y, 1));
    double *e = yg_test_values(eager);
    YG_EXPECT_CLOSE(y, yg_tensor_sizes(eager), 4, e, 1e-6, 1e-6);
    free(e);
    yg_trace_result_release(r);
    yg_release(x);
    yg_release(w);
    yg_release(eager);
    yg_release(y);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_forward_and_gradients_match_naive_loops_in_float64),
        cmocka_unit_test(test_conv_forward_and_gradients_match_naive_loops_in_float32),
        cmocka_unit_test(test_conv_of_a_large_batch_matches_naive_loops),
        cmocka_unit_test(test_conv_of_a_transposed_input_matches_contiguous),
        cmocka_unit_test(test_conv2d_padding_same_equals_explicit_padding),
        cmocka_unit_test(test_convolution_backward_computes_only_the_masked_gradients),
        cmocka_unit_test(test_conv_rejects_bad_arguments_with_messages),
        cmocka_unit_test(test_conv_of_an_empty_batch_gives_an_empty_result_and_gradients),
        cmocka_unit_test(test_conv_backend_is_observable_and_forcible),
        cmocka_unit_test(test_trace_records_conv2d_as_one_node_and_the_interpreter_runs_it),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
