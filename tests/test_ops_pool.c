/*
 * test_ops_pool.c - max_pool2d, avg_pool2d, adaptive_avg_pool2d and
 * upsample_nearest2d against naive loops written here (windows walked
 * with explicit bounds checks), max_pool2d's gradient routing, and the
 * messages for bad geometry.
 */
#include "testutil.h"

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
                    "max_pool2d: input of 2 x 2 is too small for the window");
    assert_null(y);
    YG_EXPECT_ERROR(
        yg_max_pool2d(m, k2, 1, NULL, 0, p0, 1, d1, 1, false, &y),
        YG_ERR_SHAPE,
        "max_pool2d: expected self of 3 or 4 dims ([C, H, W] or [N, C, H, W]), got [4, 4]");
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

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_max_pool2d_matches_naive_windows),
        cmocka_unit_test(test_max_pool2d_with_dilation_and_ceil_mode),
        cmocka_unit_test(test_max_pool2d_gradient_goes_to_the_first_maximum),
        cmocka_unit_test(test_avg_pool2d_counts_padding_as_asked),
        cmocka_unit_test(test_adaptive_avg_pool2d_averages_overlapping_cells),
        cmocka_unit_test(test_upsample_nearest2d_copies_the_nearest_source),
        cmocka_unit_test(test_pooling_rejects_bad_geometry),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
