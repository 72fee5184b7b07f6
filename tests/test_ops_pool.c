/*
 * test_ops_pool.c - max_pool1d/2d/3d, avg_pool1d/2d/3d, adaptive average
 * pooling (1d/2d/3d), adaptive_max_pool2d and upsample_nearest2d against
 * naive loops written here (windows walked with explicit bounds checks),
 * in float32 and float64 and on non-contiguous inputs, the gradient
 * routing of max pooling, and the messages for bad geometry.
 */
#include "testutil.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_pooling.h"
#include "yagrad/ops_average_pooling.h"
#include "yagrad/ops_adaptive_average_pooling.h"
#include "yagrad/ops_resampling.h"
#include "yagrad/ops_dtype_conversion.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Window (oy, ox) of a single H x W plane, by brute force: max or mean
 * over in-bounds elements; for the mean, divisor counts padding when
 * include_pad (clipped to input + padding). */
static double naive_window(const double *x,
                           int H,
                           int W,
                           int oy,
                           int ox,
                           int k,
                           int s,
                           int p,
                           int d,
                           bool is_max,
                           bool include_pad) {
    double acc = is_max ? -INFINITY : 0;
    int n = 0, npad = 0;
    for (int ky = 0; ky < k; ky++)
        for (int kx = 0; kx < k; kx++) {
            int y = oy * s - p + ky * d, xx = ox * s - p + kx * d;
            if (y < H + p && xx < W + p)
                npad++;
            if (y < 0 || y >= H || xx < 0 || xx >= W)
                continue;
            n++;
            acc = is_max ? fmax(acc, x[y * W + xx]) : acc + x[y * W + xx];
        }
    return is_max ? acc : acc / (include_pad ? npad : n);
}

static void test_max_pool2d_matches_naive_windows(void **state) {
    const int64_t s[] = {2, 3, 7, 6}, k[] = {3}, st[] = {2}, p[] = {1}, d[] = {1};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, s, 4, -1, 1, 3), *y = NULL;
    double *xv = yg_test_values(x), e[2 * 3 * 4 * 3];
    const int64_t os[] = {2, 3, 4, 3};
    (void)state;
    for (int pl = 0; pl < 6; pl++)
        for (int oy = 0; oy < 4; oy++)
            for (int ox = 0; ox < 3; ox++)
                e[(pl * 4 + oy) * 3 + ox] =
                    naive_window(xv + pl * 42, 7, 6, oy, ox, 3, 2, 1, 1, true, false);
    YG_CHECK(yg_max_pool2d(x, k, 1, st, 1, p, 1, d, 1, false, &y));
    YG_EXPECT_CLOSE(y, os, 4, e, 0, 0);
    yg_release(y);
    free(xv);
    yg_release(x);
}

static void test_max_pool2d_with_dilation_and_ceil_mode(void **state) {
    const int64_t s[] = {1, 8, 8}, k[] = {2}, st[] = {3}, p[] = {0}, d[] = {2}, os[] = {1, 3, 3};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 3, -1, 1, 4), *y = NULL;
    double *xv = yg_test_values(x), e[9];
    (void)state;
    /* (8 - 2 - 1) / 3 + 1 = 2 rounded down, 3 with ceil_mode */
    for (int oy = 0; oy < 3; oy++)
        for (int ox = 0; ox < 3; ox++)
            e[oy * 3 + ox] = naive_window(xv, 8, 8, oy, ox, 2, 3, 0, 2, true, false);
    YG_CHECK(yg_max_pool2d(x, k, 1, st, 1, p, 1, d, 1, true, &y));
    YG_EXPECT_CLOSE(y, os, 3, e, 0, 0);
    yg_release(y);
    free(xv);
    yg_release(x);
}

static void test_max_pool2d_gradient_goes_to_the_first_maximum(void **state) {
    const int64_t s[] = {1, 1, 2, 4}, k[] = {2}, p[] = {0}, d[] = {1};
    const double v[] = {1, 5, 2, 2, 5, 0, 2, 1}, expected[] = {0, 1, 1, 0, 0, 0, 0, 0};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 4, v), *y = NULL, *sum = NULL, *g = NULL;
    (void)state;
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_max_pool2d(x, k, 1, NULL, 0, p, 1, d, 1, false, &y));
    YG_CHECK(yg_sum(y, &sum));
    YG_CHECK(yg_backward(sum, NULL, false));
    YG_CHECK(yg_tensor_grad(x, &g));
    YG_EXPECT_CLOSE(g, s, 4, expected, 0, 0);
    yg_release(g);
    yg_release(sum);
    yg_release(y);
    yg_release(x);
}

static void test_avg_pool2d_counts_padding_as_asked(void **state) {
    const int64_t s[] = {2, 5, 5}, k[] = {3}, st[] = {2}, p[] = {1}, os[] = {2, 3, 3};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 3, -1, 1, 5), *y = NULL;
    double *xv = yg_test_values(x), inc[18], exc[18];
    (void)state;
    for (int pl = 0; pl < 2; pl++)
        for (int oy = 0; oy < 3; oy++)
            for (int ox = 0; ox < 3; ox++) {
                inc[(pl * 3 + oy) * 3 + ox] =
                    naive_window(xv + pl * 25, 5, 5, oy, ox, 3, 2, 1, 1, false, true);
                exc[(pl * 3 + oy) * 3 + ox] =
                    naive_window(xv + pl * 25, 5, 5, oy, ox, 3, 2, 1, 1, false, false);
            }
    YG_CHECK(yg_avg_pool2d(x, k, 1, st, 1, p, 1, false, true, &y));
    YG_EXPECT_CLOSE(y, os, 3, inc, 1e-15, 1e-15);
    yg_release(y);
    YG_CHECK(yg_avg_pool2d(x, k, 1, st, 1, p, 1, false, false, &y));
    YG_EXPECT_CLOSE(y, os, 3, exc, 1e-15, 1e-15);
    yg_release(y);
    free(xv);
    yg_release(x);
}

static void test_adaptive_avg_pool2d_averages_overlapping_cells(void **state) {
    const int64_t s[] = {1, 5, 7}, o[] = {3, 4}, os[] = {1, 3, 4};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, s, 3, -1, 1, 6), *y = NULL;
    double *xv = yg_test_values(x), e[12];
    (void)state;
    for (int oy = 0; oy < 3; oy++)
        for (int ox = 0; ox < 4; ox++) {
            int y0 = (int)floor(oy * 5.0 / 3), y1 = (int)ceil((oy + 1) * 5.0 / 3);
            int x0 = (int)floor(ox * 7.0 / 4), x1 = (int)ceil((ox + 1) * 7.0 / 4);
            double acc = 0;
            for (int yy = y0; yy < y1; yy++)
                for (int xx = x0; xx < x1; xx++)
                    acc += xv[yy * 7 + xx];
            e[oy * 4 + ox] = acc / ((y1 - y0) * (x1 - x0));
        }
    YG_CHECK(yg_adaptive_avg_pool2d(x, o, 2, &y));
    YG_EXPECT_CLOSE(y, os, 3, e, 1e-6, 1e-6);
    yg_release(y);
    free(xv);
    yg_release(x);
}

static void test_upsample_nearest2d_copies_the_nearest_source(void **state) {
    const int64_t s[] = {1, 1, 2, 3}, o[] = {3, 5}, os[] = {1, 1, 3, 5};
    const double v[] = {1, 2, 3, 4, 5, 6};
    /* rows 0,0,1 (floor(i 2/3)); columns 0,0,1,1,2 (floor(j 3/5)) */
    const double e[] = {1, 1, 2, 2, 3, 1, 1, 2, 2, 3, 4, 4, 5, 5, 6};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 4, v), *y = NULL;
    (void)state;
    YG_CHECK(yg_upsample_nearest2d(x, o, 2, &y));
    YG_EXPECT_CLOSE(y, os, 4, e, 0, 0);
    yg_release(y);
    yg_release(x);
}

static void test_pooling_rejects_bad_geometry(void **state) {
    const int64_t s4[] = {1, 1, 2, 2}, s2[] = {4, 4}, k3[] = {3}, k2[] = {2}, p2[] = {2},
                  p0[] = {0};
    const int64_t bad[] = {0, 2}, d1[] = {1};
    yg_tensor *x = NULL, *m = NULL, *i = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s4, 4, YG_FLOAT32, &x));
    YG_CHECK(yg_tensor_zeros(s2, 2, YG_FLOAT32, &m));
    YG_CHECK(yg_tensor_zeros(s4, 4, YG_INT64, &i));
    YG_EXPECT_ERROR(yg_max_pool2d(x, k3, 1, NULL, 0, p0, 1, d1, 1, false, &y),
                    YG_ERR_SHAPE,
                    "max_pool2d: max_pool2d_with_indices: input of 2 x 2 is too small for the "
                    "window");
    assert_null(y);
    YG_EXPECT_ERROR(
        yg_max_pool2d(m, k2, 1, NULL, 0, p0, 1, d1, 1, false, &y),
        YG_ERR_SHAPE,
        "max_pool2d: max_pool2d_with_indices: expected self of 3 or 4 dims ([C, H, W] or "
        "[N, C, H, W]), got [4, 4]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_avg_pool2d(x, k2, 1, NULL, 0, p2, 1, false, true, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "avg_pool2d: padding [2, 2] must be at most half of kernel_size");
    assert_null(y);
    YG_EXPECT_ERROR(yg_adaptive_avg_pool2d(x, bad, 2, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "adaptive_avg_pool2d: output_size must be at least 1, got [0, 2]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_upsample_nearest2d(i, k2, 1, &y),
                    YG_ERR_DTYPE,
                    "upsample_nearest2d: unsupported dtype int64 for self");
    assert_null(y);
    yg_release(x);
    yg_release(m);
    yg_release(i);
}

/* ---- max pooling with indices (nn-ops) ---- */

/* The first maximum of window (oy, ox) of an H x W plane and its position
 * y W + x, by brute force over the window in row-major order. */
static void naive_argmax(const double *x,
                         int64_t H,
                         int64_t W,
                         int64_t oy,
                         int64_t ox,
                         const int64_t k[2],
                         const int64_t s[2],
                         const int64_t p[2],
                         const int64_t d[2],
                         double *value,
                         double *index) {
    *value = -INFINITY;
    *index = -1;
    for (int64_t ky = 0; ky < k[0]; ky++)
        for (int64_t kx = 0; kx < k[1]; kx++) {
            int64_t y = oy * s[0] - p[0] + ky * d[0], xx = ox * s[1] - p[1] + kx * d[1];
            if (y < 0 || y >= H || xx < 0 || xx >= W)
                continue;
            if (*index < 0 || x[y * W + xx] > *value) {
                *value = x[y * W + xx];
                *index = (double)(y * W + xx);
            }
        }
}

/* Checks max_pool2d_with_indices of x (whose values, row-major, are xv
 * over planes of H x W) against naive_argmax for the output sizes os. */
static void expect_max_pool2d(const yg_tensor *x,
                              const double *xv,
                              const int64_t *os,
                              int64_t nd,
                              const int64_t k[2],
                              const int64_t s[2],
                              const int64_t p[2],
                              const int64_t d[2],
                              bool ceil_mode) {
    const int64_t *is = yg_tensor_sizes(x);
    int64_t H = is[nd - 2], W = is[nd - 1], oh = os[nd - 2], ow = os[nd - 1], planes = 1;
    yg_tensor *v = NULL, *i = NULL, *y = NULL;
    for (int64_t dd = 0; dd < nd - 2; dd++)
        planes *= is[dd];
    double *ev = calloc((size_t)(planes * oh * ow), sizeof(double));
    double *ei = calloc((size_t)(planes * oh * ow), sizeof(double));
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++)
                naive_argmax(xv + pl * H * W, H, W, oy, ox, k, s, p, d,
                             &ev[(pl * oh + oy) * ow + ox], &ei[(pl * oh + oy) * ow + ox]);
    YG_CHECK(yg_max_pool2d_with_indices(x, k, 2, s, 2, p, 2, d, 2, ceil_mode, &v, &i));
    YG_EXPECT_CLOSE(v, os, nd, ev, 0, 0);
    YG_EXPECT_CLOSE(i, os, nd, ei, 0, 0);
    assert_int_equal(yg_tensor_dtype(i), YG_INT64);
    assert_int_equal(yg_tensor_dtype(v), yg_tensor_dtype(x));
    /* max_pool2d gives the same values */
    YG_CHECK(yg_max_pool2d(x, k, 2, s, 2, p, 2, d, 2, ceil_mode, &y));
    YG_EXPECT_CLOSE(y, os, nd, ev, 0, 0);
    free(ev);
    free(ei);
    yg_release(v);
    yg_release(i);
    yg_release(y);
}

static void test_max_pool2d_with_indices_matches_naive_values_and_positions(void **state) {
    const int64_t s4[] = {2, 3, 7, 6}, o4[] = {2, 3, 4, 3}, s3[] = {1, 8, 8}, o3[] = {1, 3, 3};
    const int64_t k3[] = {3, 3}, st2[] = {2, 2}, p1[] = {1, 1}, d1[] = {1, 1};
    const int64_t k2[] = {2, 2}, st3[] = {3, 3}, p0[] = {0, 0}, d2[] = {2, 2};
    const int64_t sb[] = {1, 1, 5, 7}, ob[] = {1, 1, 5, 4}, kr[] = {1, 3}, sr[] = {1, 2},
                  pr[] = {0, 1}, dr[] = {1, 1};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s4, 4, -1, 1, 3);
    double *xv = yg_test_values(x);
    (void)state;
    expect_max_pool2d(x, xv, o4, 4, k3, st2, p1, d1, false);
    free(xv);
    yg_release(x);
    /* dilation 2 with ceil_mode: (8 - 2 - 1) / 3 + 1 rounded up is 3 */
    x = yg_test_rand(YG_FLOAT32, s3, 3, -1, 1, 4);
    xv = yg_test_values(x);
    expect_max_pool2d(x, xv, o3, 3, k2, st3, p0, d2, true);
    free(xv);
    yg_release(x);
    /* batch of one, a rectangular window and padding in one dim */
    x = yg_test_rand(YG_FLOAT64, sb, 4, -1, 1, 5);
    xv = yg_test_values(x);
    expect_max_pool2d(x, xv, ob, 4, kr, sr, pr, dr, false);
    free(xv);
    yg_release(x);
}

/* A [N, C, W, H] tensor transposed to [N, C, H, W]. */
static void test_max_pool2d_with_indices_of_a_transposed_input(void **state) {
    const int64_t s[] = {2, 2, 5, 6}, k[] = {2, 3}, st[] = {2, 2},
                  p[] = {1, 1}, d[] = {1, 1};
    yg_tensor *base = yg_test_rand(YG_FLOAT64, s, 4, -1, 1, 6), *x = NULL;
    double *bv = yg_test_values(base), xv[2 * 2 * 6 * 5];
    (void)state;
    YG_CHECK(yg_transpose(base, -1, -2, &x));
    assert_false(yg_tensor_is_contiguous(x));
    /* x[n][c][h][w] = base[n][c][w][h]; x is [2, 2, 6, 5] */
    for (int pl = 0; pl < 4; pl++)
        for (int h = 0; h < 6; h++)
            for (int w = 0; w < 5; w++)
                xv[(pl * 6 + h) * 5 + w] = bv[(pl * 5 + w) * 6 + h];
    const int64_t os[] = {2, 2, 4, 3};
    expect_max_pool2d(x, xv, os, 4, k, st, p, d, false);
    free(bv);
    yg_release(base);
    yg_release(x);
}

/* 1-d pooling against a naive loop over L, with padding, dilation and
 * ceil_mode, and on a non-contiguous input. */
static void test_max_pool1d_with_indices_matches_naive_loops(void **state) {
    const int64_t s[] = {2, 3, 10}, k[] = {3}, st[] = {2}, p[] = {1}, d[] = {2};
    /* (10 + 2 - 2 (3 - 1) - 1) / 2 + 1 = 4, ceil: 5 (window 4 starts at 7 < 10 + 1) */
    const int64_t os[] = {2, 3, 5};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 3, -1, 1, 7), *v = NULL, *i = NULL, *y = NULL;
    double *xv = yg_test_values(x), ev[30], ei[30];
    (void)state;
    for (int pl = 0; pl < 6; pl++)
        for (int o = 0; o < 5; o++) {
            double best = -INFINITY, at = -1;
            for (int kk = 0; kk < 3; kk++) {
                int l = o * 2 - 1 + kk * 2;
                if (l >= 0 && l < 10 && (at < 0 || xv[pl * 10 + l] > best)) {
                    best = xv[pl * 10 + l];
                    at = l;
                }
            }
            ev[pl * 5 + o] = best;
            ei[pl * 5 + o] = at;
        }
    YG_CHECK(yg_max_pool1d_with_indices(x, k, 1, st, 1, p, 1, d, 1, true, &v, &i));
    YG_EXPECT_CLOSE(v, os, 3, ev, 0, 0);
    YG_EXPECT_CLOSE(i, os, 3, ei, 0, 0);
    YG_CHECK(yg_max_pool1d(x, k, 1, st, 1, p, 1, d, 1, true, &y));
    YG_EXPECT_CLOSE(y, os, 3, ev, 0, 0);
    yg_release(v);
    yg_release(i);
    yg_release(y);
    /* [C, L] = a column slice of a [L, C] matrix, default stride */
    const int64_t ms[] = {6, 2}, ts[] = {2, 3};
    yg_tensor *m = yg_test_rand(YG_FLOAT64, ms, 2, -1, 1, 8), *t = NULL;
    double *mv = yg_test_values(m), tv[6], ti[6];
    const int64_t k2[] = {2}, p0[] = {0}, d1[] = {1};
    YG_CHECK(yg_t(m, &t));
    for (int c = 0; c < 2; c++)
        for (int o = 0; o < 3; o++) {
            double a = mv[(2 * o) * 2 + c], b = mv[(2 * o + 1) * 2 + c];
            tv[c * 3 + o] = b > a ? b : a;
            ti[c * 3 + o] = b > a ? 2 * o + 1 : 2 * o;
        }
    YG_CHECK(yg_max_pool1d_with_indices(t, k2, 1, NULL, 0, p0, 1, d1, 1, false, &v, &i));
    YG_EXPECT_CLOSE(v, ts, 2, tv, 0, 0);
    YG_EXPECT_CLOSE(i, ts, 2, ti, 0, 0);
    yg_release(v);
    yg_release(i);
    yg_release(t);
    yg_release(m);
    free(mv);
    free(xv);
    yg_release(x);
}

/* values carry the gradient, to the recorded positions; indices carry
 * none, and the gradient of a tie goes to the first maximum only. */
static void test_max_pool_indices_route_the_gradient(void **state) {
    const int64_t s[] = {1, 1, 2, 4}, k[] = {2}, p[] = {0}, d[] = {1};
    const double x0[] = {1, 5, 2, 2, 5, 0, 2, 1}, expected[] = {0, 3, 2, 0, 0, 0, 0, 0};
    const double ei[] = {1, 2}, w[] = {3, 2};
    const int64_t os[] = {1, 1, 1, 2};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 4, x0), *v = NULL, *i = NULL, *g = NULL;
    yg_tensor *wt = yg_test_tensor(YG_FLOAT64, os, 4, w);
    (void)state;
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_max_pool2d_with_indices(x, k, 1, NULL, 0, p, 1, d, 1, false, &v, &i));
    assert_true(yg_tensor_requires_grad(v));
    assert_false(yg_tensor_requires_grad(i));
    YG_EXPECT_CLOSE(i, os, 4, ei, 0, 0);
    YG_CHECK(yg_backward(v, wt, false));
    YG_CHECK(yg_tensor_grad(x, &g));
    YG_EXPECT_CLOSE(g, s, 4, expected, 0, 0);
    yg_release(g);
    yg_release(v);
    yg_release(i);
    yg_release(wt);
    yg_release(x);
}

/* The windows inside the plane run the per-capability kernel
 * (cpu/vec/pool_loops.c): against a plain reference, with ties (small
 * integers) and NaNs (the first NaN wins, ties go to the first maximum),
 * rows wider than a vector, float32 and float64, 2x2/2 and 3x3/2. */
static void test_max_pool_of_inner_windows_matches_a_reference(void **state) {
    enum { P = 3, H = 9, W = 37 };
    (void)state;
    double *xv = malloc(sizeof(double) * P * H * W);
    assert_non_null(xv);
    for (int i = 0; i < P * H * W; i++)
        xv[i] = i % 23 == 5 || i % 29 == 7 ? NAN : (double)((i * 7) % 5);
    const int64_t xs[] = {1, P, H, W};
    for (int f = 0; f < 2; f++) {
        yg_tensor *x0 = yg_test_tensor(YG_FLOAT64, xs, 4, xv), *x = NULL;
        YG_CHECK(yg_to_dtype(x0, f == 0 ? YG_FLOAT32 : YG_FLOAT64, false, &x));
        for (int c = 0; c < 2; c++) {
            const int64_t k = c == 0 ? 2 : 3, st = 2, k2[] = {k, k}, s2[] = {st, st};
            const int64_t p0[] = {0}, d1[] = {1};
            const int64_t oh = (H - k) / st + 1, ow = (W - k) / st + 1;
            yg_tensor *v = NULL, *i = NULL, *vd = NULL;
            YG_CHECK(yg_max_pool2d_with_indices(x, k2, 2, s2, 2, p0, 1, d1, 1, false, &v, &i));
            YG_CHECK(yg_to_dtype(v, YG_FLOAT64, false, &vd));
            const double *got = yg_tensor_data(vd);
            const int64_t *at = yg_tensor_data(i);
            for (int64_t pl = 0; pl < P; pl++)
                for (int64_t y = 0; y < oh; y++)
                    for (int64_t xx = 0; xx < ow; xx++) {
                        const double *plane = xv + pl * H * W;
                        int64_t best = -1;
                        for (int64_t a = 0; a < k; a++)
                            for (int64_t b = 0; b < k; b++) {
                                int64_t q = (y * st + a) * W + xx * st + b;
                                if (best < 0 || (!isnan(plane[best]) &&
                                                 (isnan(plane[q]) || plane[q] > plane[best])))
                                    best = q;
                            }
                        const int64_t o = (pl * oh + y) * ow + xx;
                        assert_int_equal(at[o], best);
                        if (isnan(plane[best]))
                            assert_true(isnan(got[o]));
                        else
                            assert_true(got[o] == plane[best]);
                    }
            yg_release(v);
            yg_release(i);
            yg_release(vd);
        }
        yg_release(x0);
        yg_release(x);
    }
    free(xv);
}

static void test_max_pool_with_indices_rejects_bad_arguments(void **state) {
    const int64_t s3[] = {1, 2, 5}, s1[] = {5}, s4[] = {1, 1, 1, 1}, k2[] = {2, 2}, k1[] = {1};
    const int64_t p0[] = {0}, p1[] = {1}, d1[] = {1}, d2[] = {2}, sz[] = {1, 1, 2, 4};
    const int64_t g2[] = {1, 1, 1, 2}, g3[] = {1, 1, 1, 3}, bad_sizes[] = {2, 1, 2, 4};
    yg_tensor *x = NULL, *v1 = NULL, *iv = NULL, *v = NULL, *i = NULL, *y = NULL, *t = NULL;
    yg_tensor *g = NULL, *gi = NULL, *gb = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s3, 3, YG_FLOAT64, &x));
    YG_CHECK(yg_tensor_zeros(s1, 1, YG_FLOAT64, &v1));
    YG_CHECK(yg_tensor_zeros(s3, 3, YG_INT64, &iv));
    YG_CHECK(yg_tensor_zeros(s4, 4, YG_FLOAT64, &t));
    YG_EXPECT_ERROR(yg_max_pool1d_with_indices(x, k2, 2, NULL, 0, p0, 1, d1, 1, false, &v, &i),
                    YG_ERR_INVALID_ARGUMENT,
                    "max_pool1d_with_indices: kernel_size must have 1 entry, got [2, 2]");
    assert_null(v);
    assert_null(i);
    YG_EXPECT_ERROR(yg_max_pool1d(x, k1, 1, k2, 2, p0, 1, d1, 1, false, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "max_pool1d: max_pool1d_with_indices: stride must have 1 entry, got [2, 2]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_max_pool1d(v1, k1, 1, NULL, 0, p0, 1, d1, 1, false, &y),
                    YG_ERR_SHAPE,
                    "max_pool1d: max_pool1d_with_indices: expected self of 2 or 3 dims ([C, L] "
                    "or [N, C, L]), got [5]");
    YG_EXPECT_ERROR(yg_max_pool1d_with_indices(iv, k1, 1, NULL, 0, p0, 1, d1, 1, false, &v, &i),
                    YG_ERR_DTYPE, "max_pool2d_with_indices: unsupported dtype int64 for self");
    YG_EXPECT_ERROR(yg_max_pool1d_with_indices(x, k1, 1, NULL, 0, p1, 1, d1, 1, false, &v, &i),
                    YG_ERR_INVALID_ARGUMENT, "padding [0, 1] must be at most half of kernel_size");
    /* a 1 x 1 input, kernel 2, padding 1, dilation 2: the one window reads
     * -1 and 1, neither of them inside */
    YG_EXPECT_ERROR(yg_max_pool2d_with_indices(t, k2, 2, NULL, 0, p1, 1, d2, 1, false, &v, &i),
                    YG_ERR_SHAPE,
                    "max_pool2d_with_indices: window (0, 0) covers only padding of the 1 x 1 "
                    "input");
    assert_null(v);
    assert_null(i);
    /* the backward checks grad_output against indices and self_sizes */
    YG_CHECK(yg_tensor_zeros(g2, 4, YG_FLOAT64, &g));
    YG_CHECK(yg_tensor_zeros(g3, 4, YG_INT64, &gi));
    YG_EXPECT_ERROR(yg_max_pool2d_with_indices_backward(g, gi, sz, 4, &gb), YG_ERR_SHAPE,
                    "max_pool2d_with_indices_backward: expected grad_output and indices of one "
                    "shape [..., oh, ow]",
                    "got grad_output [1, 1, 1, 2] and indices [1, 1, 1, 3]");
    yg_release(gi);
    YG_CHECK(yg_tensor_zeros(g2, 4, YG_INT64, &gi));
    YG_EXPECT_ERROR(yg_max_pool2d_with_indices_backward(g, gi, bad_sizes, 4, &gb), YG_ERR_SHAPE,
                    "leading dims are those of self_sizes [2, 1, 2, 4]");
    assert_null(gb);
    yg_release(g);
    yg_release(gi);
    yg_release(t);
    yg_release(x);
    yg_release(v1);
    yg_release(iv);
}

static void test_pool_to_ops_reject_sizes_of_another_input(void **state) {
    /* adaptive_avg_pool2d_to / upsample_nearest2d_to take the result's full
     * sizes: the leading dims must be self's */
    const int64_t s[] = {1, 2, 2, 2}, other[] = {1, 3, 4, 4}, short_sizes[] = {4, 4};
    const double v[8] = {0};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 4, v), *y = NULL;
    (void)state;
    YG_EXPECT_ERROR(yg_adaptive_avg_pool2d_to(x, other, 4, &y),
                    YG_ERR_SHAPE,
                    "adaptive_avg_pool2d_to: expected sizes [..., oh, ow] whose leading dims are "
                    "those of self [1, 2, 2, 2], got [1, 3, 4, 4]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_upsample_nearest2d_to(x, short_sizes, 2, &y),
                    YG_ERR_SHAPE,
                    "upsample_nearest2d_to: expected sizes [..., oh, ow] whose leading dims are "
                    "those of self [1, 2, 2, 2], got [4, 4]");
    assert_null(y);
    yg_release(x);
}

/* ---- 3-d and 1-d pooling, adaptive pooling: naive n-d loops ----
 * One plane is [D, H, W] (D = H = 1 for 1-d); the reference walks every
 * window with explicit bounds checks, in float64, and is run for each
 * option combination in float32 and float64, on contiguous inputs and on
 * inputs whose last two dims are transposed in storage. */

typedef struct nd_case {
    int64_t k[3], s[3], p[3], d[3];
    bool ceil_mode, count_include_pad;
    int64_t divisor;
} nd_case;

/* PyTorch's pooling_output_shape. */
static int64_t nd_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
    int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
    int64_t o = num / s + 1;
    if (ceil_mode && (o - 1) * s >= in + p)
        o--;
    return o;
}

/* A tensor of sizes with random values; transposed: its last two dims
 * swapped in storage (a non-contiguous view). */
static yg_tensor *
nd_input(yg_dtype dt, const int64_t *sizes, int64_t nd, bool transposed, uint64_t seed) {
    int64_t bs[YG_MAX_DIMS];
    yg_tensor *base, *x = NULL;
    memcpy(bs, sizes, sizeof(int64_t) * (size_t)nd);
    if (!transposed)
        return yg_test_rand(dt, sizes, nd, -1, 1, seed);
    bs[nd - 1] = sizes[nd - 2];
    bs[nd - 2] = sizes[nd - 1];
    base = yg_test_rand(dt, bs, nd, -1, 1, seed);
    YG_CHECK(yg_transpose(base, -1, -2, &x));
    assert_false(yg_tensor_is_contiguous(x));
    yg_release(base);
    return x;
}

/* Max (is_max) or average of every window of every plane of xv (planes
 * of in[3]) into ev (and flat positions into ei); sizes of one output
 * plane into o[3]. */
static void naive_pool_nd(const double *xv,
                          int64_t planes,
                          const int64_t in[3],
                          const nd_case *c,
                          bool is_max,
                          int64_t o[3],
                          double *ev,
                          double *ei) {
    for (int i = 0; i < 3; i++)
        o[i] = nd_out(in[i], c->k[i], c->s[i], c->p[i], c->d[i], c->ceil_mode);
    int64_t at = 0;
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t oz = 0; oz < o[0]; oz++)
            for (int64_t oy = 0; oy < o[1]; oy++)
                for (int64_t ox = 0; ox < o[2]; ox++, at++) {
                    double best = -INFINITY, sum = 0;
                    int64_t arg = -1, n = 0, npad = 1;
                    const int64_t oc[3] = {oz, oy, ox};
                    for (int i = 0; i < 3; i++) {
                        /* window cells inside input + padding */
                        int64_t lo = oc[i] * c->s[i] - c->p[i], hi = lo + c->k[i];
                        npad *= (hi < in[i] + c->p[i] ? hi : in[i] + c->p[i]) - lo;
                    }
                    for (int64_t a = 0; a < c->k[0]; a++)
                        for (int64_t b = 0; b < c->k[1]; b++)
                            for (int64_t e = 0; e < c->k[2]; e++) {
                                int64_t z = oz * c->s[0] - c->p[0] + a * c->d[0];
                                int64_t y = oy * c->s[1] - c->p[1] + b * c->d[1];
                                int64_t x = ox * c->s[2] - c->p[2] + e * c->d[2];
                                if (z < 0 || z >= in[0] || y < 0 || y >= in[1] || x < 0 ||
                                    x >= in[2])
                                    continue;
                                int64_t pos = (z * in[1] + y) * in[2] + x;
                                double v = xv[pl * in[0] * in[1] * in[2] + pos];
                                n++;
                                sum += v;
                                if (v > best) {
                                    best = v;
                                    arg = pos;
                                }
                            }
                    if (is_max) {
                        ev[at] = best;
                        ei[at] = (double)arg;
                    } else {
                        ev[at] = sum / (double)(c->divisor             ? c->divisor
                                                : c->count_include_pad ? npad
                                                                       : n);
                    }
                }
}

/* Output sizes: the leading dims of sizes, then the last nsp of o[3]. */
static void out_sizes(const int64_t *sizes, int64_t nd, int nsp, const int64_t o[3], int64_t *os) {
    for (int64_t i = 0; i < nd - nsp; i++)
        os[i] = sizes[i];
    for (int i = 0; i < nsp; i++)
        os[nd - nsp + i] = o[3 - nsp + i];
}

static const yg_dtype nd_dtypes[] = {YG_FLOAT32, YG_FLOAT64};

static void test_max_pool3d_matches_naive_windows_for_each_option(void **state) {
    const nd_case cases[] = {
        {{2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, false, true, 0},
        {{3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, true, true, 0},
        {{3, 2, 2}, {1, 2, 3}, {1, 0, 1}, {2, 1, 2}, false, true, 0},
        {{2, 3, 2}, {2, 1, 2}, {1, 1, 0}, {1, 2, 1}, true, true, 0},
    };
    const int64_t sizes[] = {2, 2, 5, 6, 7}, nb[] = {3, 5, 6, 7};
    (void)state;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int di = 0; di < 2; di++)
            for (int tr = 0; tr < 2; tr++)
                for (int batched = 0; batched < 2; batched++) {
                    const nd_case *c = &cases[ci];
                    const int64_t *sz = batched ? sizes : nb;
                    int64_t nd = batched ? 5 : 4, o[3], os[5], planes = batched ? 4 : 3;
                    const int64_t in[3] = {5, 6, 7};
                    yg_tensor *x = nd_input(nd_dtypes[di], sz, nd, tr, 10 + ci), *v = NULL,
                              *i = NULL, *y = NULL;
                    double *xv = yg_test_values(x), ev[4 * 6 * 7 * 8], ei[4 * 6 * 7 * 8];
                    naive_pool_nd(xv, planes, in, c, true, o, ev, ei);
                    out_sizes(sz, nd, 3, o, os);
                    YG_CHECK(yg_max_pool3d_with_indices(
                        x, c->k, 3, c->s, 3, c->p, 3, c->d, 3, c->ceil_mode, &v, &i));
                    YG_EXPECT_CLOSE(v, os, nd, ev, 0, 0);
                    YG_EXPECT_CLOSE(i, os, nd, ei, 0, 0);
                    assert_int_equal(yg_tensor_dtype(v), nd_dtypes[di]);
                    assert_int_equal(yg_tensor_dtype(i), YG_INT64);
                    YG_CHECK(yg_max_pool3d(x, c->k, 3, NULL, 0, c->p, 3, c->d, 3, false, &y));
                    yg_release(y);
                    yg_release(v);
                    yg_release(i);
                    free(xv);
                    yg_release(x);
                }
}

static void test_avg_pool3d_matches_naive_windows_for_each_option(void **state) {
    const nd_case cases[] = {
        {{2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, false, true, 0},
        {{3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, false, true, 0},
        {{3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, false, false, 0},
        {{3, 2, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, true, true, 0},
        {{3, 2, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, true, false, 0},
        {{2, 3, 2}, {1, 2, 3}, {0, 1, 1}, {1, 1, 1}, true, true, 7},
        {{2, 2, 2}, {3, 1, 2}, {1, 0, 1}, {1, 1, 1}, false, false, -3},
    };
    const int64_t sizes[] = {2, 2, 5, 6, 7};
    const int64_t in[3] = {5, 6, 7};
    (void)state;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int di = 0; di < 2; di++)
            for (int tr = 0; tr < 2; tr++) {
                const nd_case *c = &cases[ci];
                int64_t o[3], os[5];
                yg_tensor *x = nd_input(nd_dtypes[di], sizes, 5, tr, 20 + ci), *y = NULL;
                double *xv = yg_test_values(x), ev[4 * 6 * 7 * 8], ei[1];
                double tol = nd_dtypes[di] == YG_FLOAT32 ? 1e-6 : 1e-14;
                naive_pool_nd(xv, 4, in, c, false, o, ev, ei);
                out_sizes(sizes, 5, 3, o, os);
                YG_CHECK(yg_avg_pool3d(x,
                                       c->k,
                                       3,
                                       c->s,
                                       3,
                                       c->p,
                                       3,
                                       c->ceil_mode,
                                       c->count_include_pad,
                                       c->divisor != 0 ? &(int64_t){c->divisor} : NULL,
                                       &y));
                YG_EXPECT_CLOSE(y, os, 5, ev, tol, tol);
                assert_int_equal(yg_tensor_dtype(y), nd_dtypes[di]);
                yg_release(y);
                free(xv);
                yg_release(x);
            }
}

static void test_avg_pool1d_matches_naive_windows_for_each_option(void **state) {
    const nd_case cases[] = {
        {{1, 1, 3}, {1, 1, 2}, {0, 0, 1}, {1, 1, 1}, false, true, 0},
        {{1, 1, 3}, {1, 1, 2}, {0, 0, 1}, {1, 1, 1}, false, false, 0},
        {{1, 1, 2}, {1, 1, 2}, {0, 0, 1}, {1, 1, 1}, true, true, 0},
        {{1, 1, 4}, {1, 1, 3}, {0, 0, 2}, {1, 1, 1}, true, false, 0},
    };
    const int64_t sizes[] = {3, 4, 9}, in[3] = {1, 1, 9};
    (void)state;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int di = 0; di < 2; di++)
            for (int tr = 0; tr < 2; tr++) {
                const nd_case *c = &cases[ci];
                int64_t o[3], os[3];
                yg_tensor *x = nd_input(nd_dtypes[di], sizes, 3, tr, 30 + ci), *y = NULL;
                double *xv = yg_test_values(x), ev[12 * 10], ei[1];
                double tol = nd_dtypes[di] == YG_FLOAT32 ? 1e-6 : 1e-14;
                naive_pool_nd(xv, 12, in, c, false, o, ev, ei);
                out_sizes(sizes, 3, 1, o, os);
                YG_CHECK(yg_avg_pool1d(x,
                                       c->k + 2,
                                       1,
                                       c->s + 2,
                                       1,
                                       c->p + 2,
                                       1,
                                       c->ceil_mode,
                                       c->count_include_pad,
                                       &y));
                YG_EXPECT_CLOSE(y, os, 3, ev, tol, tol);
                yg_release(y);
                free(xv);
                yg_release(x);
            }
}

/* Adaptive cell i of n over L: [floor(i L / n), ceil((i + 1) L / n)). */
static void naive_adaptive_nd(const double *xv,
                              int64_t planes,
                              const int64_t in[3],
                              const int64_t o[3],
                              bool is_max,
                              double *ev,
                              double *ei) {
    int64_t at = 0;
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t a = 0; a < o[0]; a++)
            for (int64_t b = 0; b < o[1]; b++)
                for (int64_t e = 0; e < o[2]; e++, at++) {
                    const int64_t oc[3] = {a, b, e};
                    int64_t lo[3], hi[3];
                    for (int i = 0; i < 3; i++) {
                        lo[i] = (int64_t)floor((double)(oc[i] * in[i]) / (double)o[i]);
                        hi[i] = (int64_t)ceil((double)((oc[i] + 1) * in[i]) / (double)o[i]);
                    }
                    double sum = 0, best = -INFINITY;
                    int64_t n = 0, arg = -1;
                    for (int64_t z = lo[0]; z < hi[0]; z++)
                        for (int64_t y = lo[1]; y < hi[1]; y++)
                            for (int64_t x = lo[2]; x < hi[2]; x++) {
                                int64_t pos = (z * in[1] + y) * in[2] + x;
                                double v = xv[pl * in[0] * in[1] * in[2] + pos];
                                sum += v;
                                n++;
                                if (v > best) {
                                    best = v;
                                    arg = pos;
                                }
                            }
                    ev[at] = is_max ? best : sum / (double)n;
                    if (ei != NULL)
                        ei[at] = (double)arg;
                }
}

static void test_adaptive_pools_match_naive_cells(void **state) {
    const int64_t s3[] = {2, 2, 5, 4, 7}, o3[] = {3, 2, 4}, s1[] = {2, 3, 7}, o1[] = {4};
    const int64_t s2[] = {2, 5, 7}, o2[] = {3, 4}, o2s[] = {2};
    (void)state;
    for (int di = 0; di < 2; di++)
        for (int tr = 0; tr < 2; tr++) {
            double tol = nd_dtypes[di] == YG_FLOAT32 ? 1e-6 : 1e-14, ev[256], ei[256];
            yg_tensor *x = nd_input(nd_dtypes[di], s3, 5, tr, 40), *y = NULL, *i = NULL;
            double *xv = yg_test_values(x);
            const int64_t in3[3] = {5, 4, 7}, out3[3] = {3, 2, 4}, os3[] = {2, 2, 3, 2, 4};
            naive_adaptive_nd(xv, 4, in3, out3, false, ev, NULL);
            YG_CHECK(yg_adaptive_avg_pool3d(x, o3, 3, &y));
            YG_EXPECT_CLOSE(y, os3, 5, ev, tol, tol);
            yg_release(y);
            free(xv);
            yg_release(x);

            x = nd_input(nd_dtypes[di], s1, 3, tr, 41);
            xv = yg_test_values(x);
            const int64_t in1[3] = {1, 1, 7}, out1[3] = {1, 1, 4}, os1[] = {2, 3, 4};
            naive_adaptive_nd(xv, 6, in1, out1, false, ev, NULL);
            YG_CHECK(yg_adaptive_avg_pool1d(x, o1, 1, &y));
            YG_EXPECT_CLOSE(y, os1, 3, ev, tol, tol);
            yg_release(y);
            free(xv);
            yg_release(x);

            /* adaptive_max_pool2d: overlapping cells (5 -> 3), and one
             * entry meaning both dims */
            x = nd_input(nd_dtypes[di], s2, 3, tr, 42);
            xv = yg_test_values(x);
            const int64_t in2[3] = {1, 5, 7}, out2[3] = {1, 3, 4}, os2[] = {2, 3, 4};
            naive_adaptive_nd(xv, 2, in2, out2, true, ev, ei);
            YG_CHECK(yg_adaptive_max_pool2d(x, o2, 2, &y, &i));
            YG_EXPECT_CLOSE(y, os2, 3, ev, 0, 0);
            YG_EXPECT_CLOSE(i, os2, 3, ei, 0, 0);
            yg_release(y);
            yg_release(i);
            const int64_t out2s[3] = {1, 2, 2}, os2s[] = {2, 2, 2};
            naive_adaptive_nd(xv, 2, in2, out2s, true, ev, ei);
            YG_CHECK(yg_adaptive_max_pool2d(x, o2s, 1, &y, &i));
            YG_EXPECT_CLOSE(y, os2s, 3, ev, 0, 0);
            YG_EXPECT_CLOSE(i, os2s, 3, ei, 0, 0);
            yg_release(y);
            yg_release(i);
            free(xv);
            yg_release(x);
        }
}

/* The gradient of adaptive_max_pool2d and max_pool3d goes to each cell's
 * maximum (summed where cells overlap). */
static void test_adaptive_max_and_max_pool3d_gradients_go_to_the_maxima(void **state) {
    const int64_t s[] = {1, 1, 3, 3}, o[] = {2};
    const double v[] = {1, 9, 2, 3, 4, 5, 8, 6, 7};
    /* cells [0, 2) and [1, 3) per dim overlap in the middle row and
     * column: the maxima are 9 at (0, 1) for both top cells, 8 at (2, 0)
     * and 7 at (2, 2) */
    const double expected[] = {0, 2, 0, 0, 0, 0, 1, 0, 1};
    const int64_t s3[] = {1, 2, 2, 2}, k[] = {2};
    const double v3[] = {1, 2, 3, 4, 8, 5, 6, 7}, e3[] = {0, 0, 0, 0, 1, 0, 0, 0};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 4, v), *y = NULL, *i = NULL, *sum = NULL,
              *g = NULL;
    (void)state;
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_adaptive_max_pool2d(x, o, 1, &y, &i));
    YG_CHECK(yg_sum(y, &sum));
    YG_CHECK(yg_backward(sum, NULL, false));
    YG_CHECK(yg_tensor_grad(x, &g));
    YG_EXPECT_CLOSE(g, s, 4, expected, 0, 0);
    yg_release(g);
    yg_release(sum);
    yg_release(y);
    yg_release(i);
    yg_release(x);

    x = yg_test_tensor(YG_FLOAT64, s3, 4, v3);
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_max_pool3d(
        x, k, 1, NULL, 0, (const int64_t[]){0}, 1, (const int64_t[]){1}, 1, false, &y));
    YG_CHECK(yg_sum(y, &sum));
    YG_CHECK(yg_backward(sum, NULL, false));
    YG_CHECK(yg_tensor_grad(x, &g));
    YG_EXPECT_CLOSE(g, s3, 4, e3, 0, 0);
    yg_release(g);
    yg_release(sum);
    yg_release(y);
    yg_release(x);
}

static void test_new_pools_reject_bad_arguments(void **state) {
    const int64_t s5[] = {1, 1, 2, 3, 3}, s2[] = {2, 3}, s3[] = {1, 2, 5}, k1[] = {1}, k2[] = {2};
    const int64_t k22[] = {2, 2}, k4[] = {4}, st0[] = {0}, p0[] = {0}, p2[] = {2}, d1[] = {1};
    const int64_t o0[] = {0}, o123[] = {1, 2, 3}, gsz[] = {1, 1, 1, 1, 2};
    yg_tensor *x = NULL, *x2 = NULL, *x1 = NULL, *xi = NULL, *y = NULL, *i = NULL, *g = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s5, 5, YG_FLOAT32, &x));
    YG_CHECK(yg_tensor_zeros(s2, 2, YG_FLOAT64, &x2));
    YG_CHECK(yg_tensor_zeros(s3, 3, YG_FLOAT64, &x1));
    YG_CHECK(yg_tensor_zeros(s5, 5, YG_INT64, &xi));
    YG_EXPECT_ERROR(yg_max_pool3d_with_indices(x, k22, 2, NULL, 0, p0, 1, d1, 1, false, &y, &i),
                    YG_ERR_INVALID_ARGUMENT,
                    "max_pool3d_with_indices: kernel_size must have 1 or 3 entries, got [2, 2]");
    assert_null(y);
    assert_null(i);
    YG_EXPECT_ERROR(yg_max_pool3d(x, k1, 1, st0, 1, p0, 1, d1, 1, false, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "max_pool3d: ",
                    "max_pool3d_with_indices: stride must be at least 1, got [0]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_avg_pool3d(x, k2, 1, NULL, 0, p2, 1, false, true, NULL, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "avg_pool3d: padding [2, 2, 2] must be at most half of kernel_size");
    YG_EXPECT_ERROR(yg_avg_pool3d(x, k2, 1, NULL, 0, p0, 1, false, true, &(int64_t){0}, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "avg_pool3d: divisor_override must not be 0");
    YG_EXPECT_ERROR(
        yg_avg_pool3d_backward(x, (const int64_t[]){1, 1, 4, 4, 4}, 5, k2, 1, NULL, 0, p0, 1, false,
                               true, &(int64_t){0}, &y),
        YG_ERR_INVALID_ARGUMENT,
        "avg_pool3d_backward: divisor_override must not be 0");
    YG_EXPECT_ERROR(yg_avg_pool3d(x2, k2, 1, NULL, 0, p0, 1, false, true, NULL, &y),
                    YG_ERR_SHAPE,
                    "avg_pool3d: expected self of 4 or 5 dims ([C, D, H, W] or [N, C, D, H, W]), "
                    "got [2, 3]");
    YG_EXPECT_ERROR(yg_avg_pool3d(xi, k2, 1, NULL, 0, p0, 1, false, true, NULL, &y),
                    YG_ERR_DTYPE,
                    "avg_pool3d: unsupported dtype int64 for self");
    YG_EXPECT_ERROR(yg_avg_pool3d(x, k4, 1, NULL, 0, p0, 1, false, true, NULL, &y),
                    YG_ERR_SHAPE,
                    "avg_pool3d: input of 2 x 3 x 3 is too small for the window (output would "
                    "be 0 x 0 x 0)");
    assert_null(y);
    YG_EXPECT_ERROR(yg_avg_pool1d(x1, k22, 2, NULL, 0, p0, 1, false, true, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "avg_pool1d: kernel_size must have 1 entry, got [2, 2]");
    YG_EXPECT_ERROR(yg_avg_pool1d(x, k2, 1, NULL, 0, p0, 1, false, true, &y),
                    YG_ERR_SHAPE,
                    "avg_pool1d: expected self of 2 or 3 dims ([C, L] or [N, C, L]), got "
                    "[1, 1, 2, 3, 3]");
    YG_EXPECT_ERROR(yg_adaptive_avg_pool3d(x, o0, 1, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "adaptive_avg_pool3d: output_size must be at least 1, got [0]");
    YG_EXPECT_ERROR(yg_adaptive_avg_pool1d(x1, o123, 3, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "adaptive_avg_pool1d: output_size must have 1 entry, got [1, 2, 3]");
    YG_EXPECT_ERROR(yg_adaptive_max_pool2d(x1, o123, 3, &y, &i),
                    YG_ERR_INVALID_ARGUMENT,
                    "adaptive_max_pool2d: output_size must have 1 or 2 entries, got [1, 2, 3]");
    assert_null(y);
    assert_null(i);
    YG_EXPECT_ERROR(yg_adaptive_max_pool2d(x, k2, 1, &y, &i),
                    YG_ERR_SHAPE,
                    "adaptive_max_pool2d: expected self of 3 or 4 dims");
    {
        const int64_t se[] = {2, 0, 3};
        yg_tensor *xe = NULL;
        YG_CHECK(yg_tensor_zeros(se, 3, YG_FLOAT64, &xe));
        YG_EXPECT_ERROR(yg_adaptive_max_pool2d(xe, k2, 1, &y, &i),
                        YG_ERR_SHAPE,
                        "adaptive_max_pool2d: expected non-empty planes, got self [2, 0, 3]");
        assert_null(y);
        assert_null(i);
        yg_release(xe);
    }
    /* the backward checks grad_output against the pooled output */
    YG_CHECK(yg_tensor_zeros(gsz, 5, YG_FLOAT32, &g));
    YG_EXPECT_ERROR(yg_avg_pool3d_backward(g, s5, 5, k2, 1, NULL, 0, p0, 1, false, true, NULL, &y),
                    YG_ERR_SHAPE,
                    "avg_pool3d_backward: grad_output [1, 1, 1, 1, 2] does not match the pooled "
                    "output (1 x 1 x 1 per plane)");
    assert_null(y);
    yg_release(g);
    yg_release(x);
    yg_release(x2);
    yg_release(x1);
    yg_release(xi);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_max_pool2d_matches_naive_windows),
        cmocka_unit_test(test_max_pool2d_with_dilation_and_ceil_mode),
        cmocka_unit_test(test_max_pool2d_gradient_goes_to_the_first_maximum),
        cmocka_unit_test(test_avg_pool2d_counts_padding_as_asked),
        cmocka_unit_test(test_adaptive_avg_pool2d_averages_overlapping_cells),
        cmocka_unit_test(test_upsample_nearest2d_copies_the_nearest_source),
        cmocka_unit_test(test_pooling_rejects_bad_geometry),
        cmocka_unit_test(test_max_pool2d_with_indices_matches_naive_values_and_positions),
        cmocka_unit_test(test_max_pool2d_with_indices_of_a_transposed_input),
        cmocka_unit_test(test_max_pool1d_with_indices_matches_naive_loops),
        cmocka_unit_test(test_max_pool_indices_route_the_gradient),
        cmocka_unit_test(test_max_pool_of_inner_windows_matches_a_reference),
        cmocka_unit_test(test_max_pool_with_indices_rejects_bad_arguments),
        cmocka_unit_test(test_pool_to_ops_reject_sizes_of_another_input),
        cmocka_unit_test(test_max_pool3d_matches_naive_windows_for_each_option),
        cmocka_unit_test(test_avg_pool3d_matches_naive_windows_for_each_option),
        cmocka_unit_test(test_avg_pool1d_matches_naive_windows_for_each_option),
        cmocka_unit_test(test_adaptive_pools_match_naive_cells),
        cmocka_unit_test(test_adaptive_max_and_max_pool3d_gradients_go_to_the_maxima),
        cmocka_unit_test(test_new_pools_reject_bad_arguments),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
