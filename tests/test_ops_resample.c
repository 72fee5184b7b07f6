/*
 * test_ops_resample.c - upsample_bilinear2d (both align_corners settings,
 * output sizes or scales, up and down), its gradient, pixel_shuffle,
 * pixel_unshuffle and channel_shuffle against naive float64 loops written
 * here, in float32 and float64 and on non-contiguous inputs, with known
 * answers from PyTorch for the interpolation and the messages of every
 * validation error.
 */
#include "testutil.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_resampling.h"
#include "yagrad/ops_slicing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const yg_dtype dtypes[] = {YG_FLOAT32, YG_FLOAT64};

/* A tensor of sizes with random values; transposed: its last two dims
 * swapped in storage (a non-contiguous view). */
static yg_tensor *
input(yg_dtype dt, const int64_t *sizes, int64_t nd, bool transposed, uint64_t seed) {
    int64_t bs[YG_MAX_DIMS];
    yg_tensor *base, *x = NULL;
    if (!transposed)
        return yg_test_rand(dt, sizes, nd, -1, 1, seed);
    memcpy(bs, sizes, sizeof(int64_t) * (size_t)nd);
    bs[nd - 1] = sizes[nd - 2];
    bs[nd - 2] = sizes[nd - 1];
    base = yg_test_rand(dt, bs, nd, -1, 1, seed);
    YG_CHECK(yg_transpose(base, -1, -2, &x));
    assert_false(yg_tensor_is_contiguous(x));
    yg_release(base);
    return x;
}

/* The source coordinate of output index i along a dim, by PyTorch's
 * area_pixel_compute_source_index, split into (lo, hi, weight of hi). */
static void source(int64_t i,
                   int64_t in,
                   int64_t out,
                   bool align,
                   double scale,
                   int64_t *lo,
                   int64_t *hi,
                   double *w) {
    double src;
    if (align) {
        src = out > 1 ? (double)i * (double)(in - 1) / (double)(out - 1) : 0;
    } else {
        double r = scale > 0 ? 1 / scale : (double)in / (double)out;
        src = r * ((double)i + 0.5) - 0.5;
        if (src < 0)
            src = 0;
    }
    *lo = (int64_t)src < in - 1 ? (int64_t)src : in - 1;
    *hi = *lo + 1 < in ? *lo + 1 : *lo;
    *w = fmin(fmax(src - (double)*lo, 0), 1);
}

/* Bilinear interpolation of planes of ih x iw into oh x ow. */
static void naive_bilinear(const double *x,
                           int64_t planes,
                           int64_t ih,
                           int64_t iw,
                           int64_t oh,
                           int64_t ow,
                           bool align,
                           double sh,
                           double sw,
                           double *y) {
    for (int64_t p = 0; p < planes; p++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++) {
                int64_t y0, y1, x0, x1;
                double wy, wx;
                source(i, ih, oh, align, sh, &y0, &y1, &wy);
                source(j, iw, ow, align, sw, &x0, &x1, &wx);
                const double *pl = x + p * ih * iw;
                y[(p * oh + i) * ow + j] =
                    (1 - wy) * ((1 - wx) * pl[y0 * iw + x0] + wx * pl[y0 * iw + x1]) +
                    wy * ((1 - wx) * pl[y1 * iw + x0] + wx * pl[y1 * iw + x1]);
            }
}

/* The adjoint: each output gradient spread over its four sources. */
static void naive_bilinear_backward(const double *g,
                                    int64_t planes,
                                    int64_t ih,
                                    int64_t iw,
                                    int64_t oh,
                                    int64_t ow,
                                    bool align,
                                    double *gx) {
    memset(gx, 0, sizeof(double) * (size_t)(planes * ih * iw));
    for (int64_t p = 0; p < planes; p++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++) {
                int64_t y0, y1, x0, x1;
                double wy, wx, v = g[(p * oh + i) * ow + j];
                source(i, ih, oh, align, 0, &y0, &y1, &wy);
                source(j, iw, ow, align, 0, &x0, &x1, &wx);
                double *pl = gx + p * ih * iw;
                pl[y0 * iw + x0] += (1 - wy) * (1 - wx) * v;
                pl[y0 * iw + x1] += (1 - wy) * wx * v;
                pl[y1 * iw + x0] += wy * (1 - wx) * v;
                pl[y1 * iw + x1] += wy * wx * v;
            }
}

static void test_upsample_bilinear2d_matches_naive_interpolation(void **state) {
    /* (oh, ow, scale_h, scale_w): up, down, same, 1 x 1, and sizes from
     * scales (output_size []: floor(5 * 1.7) = 8, floor(6 * 0.75) = 4) */
    const double cases[][4] = {
        {9, 11, 0, 0},
        {3, 4, 0, 0},
        {5, 6, 0, 0},
        {1, 1, 0, 0},
        {7, 2, 0, 0},
        {8, 4, 1.7, 0.75},
    };
    const int64_t sizes[] = {2, 3, 5, 6};
    (void)state;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int align = 0; align < 2; align++)
            for (int di = 0; di < 2; di++)
                for (int tr = 0; tr < 2; tr++) {
                    int64_t oh = (int64_t)cases[ci][0], ow = (int64_t)cases[ci][1];
                    double sh = cases[ci][2], sw = cases[ci][3];
                    const int64_t os[] = {2, 3, oh, ow}, o2[] = {oh, ow};
                    double tol = dtypes[di] == YG_FLOAT32 ? 1e-6 : 1e-14, e[6 * 9 * 11];
                    yg_tensor *x = input(dtypes[di], sizes, 4, tr, 50 + ci), *y = NULL;
                    double *xv = yg_test_values(x);
                    naive_bilinear(xv, 6, 5, 6, oh, ow, align, sh, sw, e);
                    if (sh > 0)
                        YG_CHECK(yg_upsample_bilinear2d(x, NULL, 0, align, (sh) > 0 ? &(double){sh} : NULL, (sw) > 0 ? &(double){sw} : NULL, &y));
                    else
                        YG_CHECK(yg_upsample_bilinear2d(x, o2, 2, align, NULL, NULL, &y));
                    YG_EXPECT_CLOSE(y, os, 4, e, tol, tol);
                    assert_int_equal(yg_tensor_dtype(y), dtypes[di]);
                    yg_release(y);
                    /* output_size and scales together: the size is
                     * output_size, the mapping uses the scales */
                    if (sh > 0) {
                        YG_CHECK(yg_upsample_bilinear2d(x, o2, 2, align, (sh) > 0 ? &(double){sh} : NULL, (sw) > 0 ? &(double){sw} : NULL, &y));
                        YG_EXPECT_CLOSE(y, os, 4, e, tol, tol);
                        yg_release(y);
                    }
                    free(xv);
                    yg_release(x);
                }
}

/* Known answers: torch.nn.functional.interpolate of [[0, 1], [2, 3]]
 * (mode="bilinear") to 3 x 3 with align_corners=True and to 4 x 4 with
 * align_corners=False. */
static void test_upsample_bilinear2d_gives_pytorch_known_answers(void **state) {
    const int64_t s[] = {1, 1, 2, 2}, o3[] = {3}, o4[] = {4}, s3[] = {1, 1, 3, 3},
                  s4[] = {1, 1, 4, 4};
    const double v[] = {0, 1, 2, 3};
    const double e3[] = {0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3};
    const double e4[] = {
        0, 0.25, 0.75, 1, 0.5, 0.75, 1.25, 1.5, 1.5, 1.75, 2.25, 2.5, 2, 2.25, 2.75, 3};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 4, v), *y = NULL;
    (void)state;
    YG_CHECK(yg_upsample_bilinear2d(x, o3, 1, true, NULL, NULL, &y));
    YG_EXPECT_CLOSE(y, s3, 4, e3, 1e-15, 0);
    yg_release(y);
    YG_CHECK(yg_upsample_bilinear2d(x, o4, 1, false, NULL, NULL, &y));
    YG_EXPECT_CLOSE(y, s4, 4, e4, 1e-15, 0);
    yg_release(y);
    /* scale_factor=2 gives the same mapping as size 4 */
    YG_CHECK(yg_upsample_bilinear2d(x, NULL, 0, false, &(double){2.0}, &(double){2.0}, &y));
    YG_EXPECT_CLOSE(y, s4, 4, e4, 1e-15, 0);
    yg_release(y);
    yg_release(x);
}

static void test_upsample_bilinear2d_gradient_is_the_naive_adjoint(void **state) {
    const int64_t sizes[] = {2, 4, 5}, o[] = {7, 3};
    (void)state;
    for (int align = 0; align < 2; align++)
        for (int di = 0; di < 2; di++) {
            const int64_t gs[] = {2, 7, 3};
            double tol = dtypes[di] == YG_FLOAT32 ? 1e-6 : 1e-14, e[40];
            yg_tensor *x = input(dtypes[di], sizes, 3, false, 60), *y = NULL, *g = NULL, *gx = NULL,
                      *gb = NULL;
            /* a non-contiguous grad_output */
            g = input(dtypes[di], gs, 3, true, 61);
            double *gv = yg_test_values(g);
            naive_bilinear_backward(gv, 2, 4, 5, 7, 3, align, e);
            YG_CHECK(yg_tensor_set_requires_grad(x, true));
            YG_CHECK(yg_upsample_bilinear2d(x, o, 2, align, NULL, NULL, &y));
            YG_CHECK(yg_backward(y, g, false));
            YG_CHECK(yg_tensor_grad(x, &gx));
            YG_EXPECT_CLOSE(gx, sizes, 3, e, tol, tol);
            YG_CHECK(yg_upsample_bilinear2d_backward(g, sizes, 3, align, NULL, NULL, &gb));
            YG_EXPECT_CLOSE(gb, sizes, 3, e, tol, tol);
            free(gv);
            yg_release(gb);
            yg_release(gx);
            yg_release(g);
            yg_release(y);
            yg_release(x);
        }
}

static void test_pixel_shuffle_and_unshuffle_match_naive_loops(void **state) {
    const int64_t r = 2, sizes[] = {2, 12, 3, 4}, os[] = {2, 3, 6, 8};
    (void)state;
    for (int di = 0; di < 2; di++)
        for (int tr = 0; tr < 2; tr++) {
            yg_tensor *x = input(dtypes[di], sizes, 4, tr, 70), *y = NULL, *back = NULL;
            double *xv = yg_test_values(x), e[2 * 12 * 3 * 4];
            /* out[n][c][h r + i][w r + j] = in[n][c r^2 + i r + j][h][w] */
            for (int64_t n = 0; n < 2; n++)
                for (int64_t c = 0; c < 3; c++)
                    for (int64_t h = 0; h < 6; h++)
                        for (int64_t w = 0; w < 8; w++) {
                            int64_t ic = c * r * r + (h % r) * r + w % r;
                            e[((n * 3 + c) * 6 + h) * 8 + w] =
                                xv[((n * 12 + ic) * 3 + h / r) * 4 + w / r];
                        }
            YG_CHECK(yg_pixel_shuffle(x, r, &y));
            YG_EXPECT_CLOSE(y, os, 4, e, 0, 0);
            YG_CHECK(yg_pixel_unshuffle(y, r, &back));
            YG_EXPECT_CLOSE(back, sizes, 4, xv, 0, 0);
            yg_release(back);
            yg_release(y);
            /* unshuffle of a non-contiguous input: the inverse loop */
            yg_tensor *z = input(dtypes[di], os, 4, tr, 71);
            double *zv = yg_test_values(z);
            for (int64_t n = 0; n < 2; n++)
                for (int64_t c = 0; c < 12; c++)
                    for (int64_t h = 0; h < 3; h++)
                        for (int64_t w = 0; w < 4; w++) {
                            int64_t oc = c / (r * r), i = c % (r * r) / r, j = c % r;
                            e[((n * 12 + c) * 3 + h) * 4 + w] =
                                zv[((n * 3 + oc) * 6 + h * r + i) * 8 + w * r + j];
                        }
            YG_CHECK(yg_pixel_unshuffle(z, r, &y));
            YG_EXPECT_CLOSE(y, sizes, 4, e, 0, 0);
            yg_release(y);
            free(zv);
            yg_release(z);
            free(xv);
            yg_release(x);
        }
}

static void test_channel_shuffle_matches_naive_loops(void **state) {
    const int64_t g = 3, sizes[] = {2, 6, 4, 5};
    (void)state;
    for (int di = 0; di < 2; di++)
        for (int tr = 0; tr < 2; tr++) {
            yg_tensor *x = input(dtypes[di], sizes, 4, tr, 80), *y = NULL;
            double *xv = yg_test_values(x), e[2 * 6 * 20];
            /* channel k g + j of the result is channel j (C / g) + k of self */
            for (int64_t n = 0; n < 2; n++)
                for (int64_t c = 0; c < 6; c++) {
                    int64_t src = (c % g) * (6 / g) + c / g;
                    for (int64_t i = 0; i < 20; i++)
                        e[(n * 6 + c) * 20 + i] = xv[(n * 6 + src) * 20 + i];
                }
            YG_CHECK(yg_channel_shuffle(x, g, &y));
            YG_EXPECT_CLOSE(y, sizes, 4, e, 0, 0);
            yg_release(y);
            free(xv);
            yg_release(x);
        }
}

/* interpolate is the upsample op its mode names, with size or scale. */
static void test_interpolate_is_the_upsample_op_of_its_mode(void **state) {
    const int64_t s[] = {2, 3, 4, 5}, to[] = {7, 3}, scaled[] = {10, 12};
    const int64_t s_to[] = {2, 3, 7, 3}, s_scaled[] = {2, 3, 10, 12}, s_six[] = {2, 3, 6, 6};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 4, -1, 1, 3), *x3 = NULL;
    yg_tensor *a = NULL, *b = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_interpolate(x, to, 2, NULL, YG_INTERPOLATION_MODE_NEAREST, false, &a));
    YG_CHECK(yg_upsample_nearest2d(x, to, 2, &b));
    double *va = yg_test_values(b);
    YG_EXPECT_CLOSE(a, s_to, 4, va, 0, 0);
    free(va);
    yg_release(a);
    yg_release(b);
    /* nearest by scale: the output size floor(in * 2.5), mapped by in / out */
    YG_CHECK(yg_interpolate_opt(x, &(yg_interpolate_options){.scale_factor = YG_SET(2.5)}, &a));
    YG_CHECK(yg_upsample_nearest2d(x, scaled, 2, &b));
    va = yg_test_values(b);
    YG_EXPECT_CLOSE(a, s_scaled, 4, va, 0, 0);
    free(va);
    yg_release(a);
    yg_release(b);
    /* bilinear by scale passes the scale on (coordinates by 1 / scale) */
    YG_CHECK(yg_interpolate(x, NULL, 0, &(double){2.5}, YG_INTERPOLATION_MODE_BILINEAR, false, &a));
    YG_CHECK(yg_upsample_bilinear2d(x, NULL, 0, false, &(double){2.5}, &(double){2.5}, &b));
    va = yg_test_values(b);
    YG_EXPECT_CLOSE(a, s_scaled, 4, va, 0, 0);
    free(va);
    yg_release(a);
    yg_release(b);
    YG_CHECK(yg_interpolate(x, (const int64_t[]){6}, 1, NULL, YG_INTERPOLATION_MODE_BILINEAR, true, &a));
    YG_CHECK(yg_upsample_bilinear2d(x, (const int64_t[]){6, 6}, 2, true, NULL, NULL, &b));
    va = yg_test_values(b);
    YG_EXPECT_CLOSE(a, s_six, 4, va, 0, 0);
    free(va);
    yg_release(a);
    yg_release(b);
    /* errors name the op and the values */
    YG_EXPECT_ERROR(yg_interpolate(x, to, 2, &(double){2.0}, YG_INTERPOLATION_MODE_NEAREST, false, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "interpolate: give either size or scale_factor, not both (size of 2 "
                    "entries, scale_factor given)");
    YG_EXPECT_ERROR(yg_interpolate(x, NULL, 0, NULL, YG_INTERPOLATION_MODE_NEAREST, false, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "interpolate: give either size or scale_factor, not neither (size of 0 "
                    "entries, scale_factor None)");
    YG_EXPECT_ERROR(yg_interpolate(x, NULL, 0, &(double){0}, YG_INTERPOLATION_MODE_NEAREST, false, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "interpolate: scale_factor must be positive, got 0");
    YG_EXPECT_ERROR(yg_interpolate(x, s, 3, NULL, YG_INTERPOLATION_MODE_NEAREST, false, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "interpolate: size must have 1 or 2 entries ([s] for [s, s], or [oh, ow]), got 3");
    YG_EXPECT_ERROR(yg_interpolate(x, to, 2, NULL, YG_INTERPOLATION_MODE_NEAREST, true, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "interpolate: align_corners applies to mode bilinear only");
    YG_EXPECT_ERROR(yg_interpolate(x, to, 2, NULL, (yg_interpolation_mode)2, false, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "interpolate: mode must be nearest (0) or bilinear (1), not 2");
    YG_EXPECT_ERROR(yg_interpolate(x, NULL, 0, &(double){1e300}, YG_INTERPOLATION_MODE_NEAREST, false, &y),
                    YG_ERR_SHAPE,
                    "interpolate: self [2, 3, 4, 5] times scale_factor 1e+300 overflows int64");
    YG_CHECK(yg_select(x, 0, 0, &x3));
    YG_CHECK(yg_select(x3, 0, 0, &a));
    YG_EXPECT_ERROR(yg_interpolate(a, to, 2, NULL, YG_INTERPOLATION_MODE_NEAREST, false, &y),
                    YG_ERR_SHAPE,
                    "interpolate: expected self of 3 or 4 dims ([C, H, W] or [N, C, H, W]), got [4, 5]");
    assert_null(y);
    yg_release(a);
    yg_release(x3);
    yg_release(x);
}

static void test_resampling_rejects_bad_arguments(void **state) {
    const int64_t s2[] = {3, 4}, s4[] = {1, 3, 2, 2}, s5[] = {1, 4, 3, 5}, o03[] = {0, 3};
    const int64_t o123[] = {1, 2, 3}, gs[] = {1, 2, 2, 2};
    yg_tensor *x2 = NULL, *x = NULL, *xi = NULL, *x5 = NULL, *g = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s2, 2, YG_FLOAT64, &x2));
    YG_CHECK(yg_tensor_zeros(s4, 4, YG_FLOAT32, &x));
    YG_CHECK(yg_tensor_zeros(s4, 4, YG_INT64, &xi));
    YG_CHECK(yg_tensor_zeros(s5, 4, YG_FLOAT64, &x5));
    YG_EXPECT_ERROR(
        yg_upsample_bilinear2d(x2, o03 + 1, 1, false, NULL, NULL, &y),
        YG_ERR_SHAPE,
        "upsample_bilinear2d: expected self of 3 or 4 dims ([C, H, W] or [N, C, H, W]), "
        "got [3, 4]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_upsample_bilinear2d(xi, o03 + 1, 1, false, NULL, NULL, &y),
                    YG_ERR_DTYPE,
                    "upsample_bilinear2d: unsupported dtype int64 for self");
    YG_EXPECT_ERROR(yg_upsample_bilinear2d(x, o03, 2, true, NULL, NULL, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "upsample_bilinear2d: output size must be at least 1, got 0 x 3");
    YG_EXPECT_ERROR(yg_upsample_bilinear2d(x, o123, 3, true, NULL, NULL, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "upsample_bilinear2d: output_size must have 0, 1 or 2 entries, got [1, 2, 3]");
    YG_EXPECT_ERROR(yg_upsample_bilinear2d(x, NULL, 0, false, NULL, &(double){2}, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "upsample_bilinear2d: output_size is empty, so scales_h must be given");
    YG_EXPECT_ERROR(yg_upsample_bilinear2d(x, NULL, 0, false, &(double){0}, &(double){2}, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "upsample_bilinear2d: scales_h must be positive and finite when given, got 0");
    YG_EXPECT_ERROR(yg_upsample_bilinear2d_backward(x, (const int64_t[]){1, 3, 1, 1}, 4, false,
                                                    NULL, &(double){-1}, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "upsample_bilinear2d_backward: scales_w must be positive and finite when "
                    "given, got -1");
    YG_EXPECT_ERROR(yg_upsample_bilinear2d(x, NULL, 0, false, &(double){2}, &(double){0.25}, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "upsample_bilinear2d: output size must be at least 1, got 4 x 0");
    assert_null(y);
    YG_CHECK(yg_tensor_zeros(gs, 4, YG_FLOAT32, &g));
    YG_EXPECT_ERROR(yg_upsample_bilinear2d_backward(g, s4, 4, false, NULL, NULL, &y),
                    YG_ERR_SHAPE,
                    "upsample_bilinear2d_backward: grad_output [1, 2, 2, 2] does not match the "
                    "leading dims of self_sizes [1, 3, 2, 2]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_pixel_shuffle(x, 0, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "pixel_shuffle: upscale_factor must be at least 1, got 0");
    YG_EXPECT_ERROR(yg_pixel_shuffle(x, 2, &y),
                    YG_ERR_SHAPE,
                    "pixel_shuffle: channels of self [1, 3, 2, 2] must be divisible by "
                    "upscale_factor^2 = 4");
    YG_EXPECT_ERROR(yg_pixel_shuffle(x2, 1, &y),
                    YG_ERR_SHAPE,
                    "pixel_shuffle: expected self of at least 3 dims ([*, C, H, W]), got [3, 4]");
    YG_EXPECT_ERROR(yg_pixel_unshuffle(x5, 2, &y),
                    YG_ERR_SHAPE,
                    "pixel_unshuffle: height and width of self [1, 4, 3, 5] must be divisible by "
                    "downscale_factor 2");
    YG_EXPECT_ERROR(yg_channel_shuffle(x5, 3, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "channel_shuffle: groups 3 must be positive and divide the 4 channels of self "
                    "[1, 4, 3, 5]");
    YG_EXPECT_ERROR(yg_channel_shuffle(x5, 0, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "channel_shuffle: groups 0 must be positive");
    YG_EXPECT_ERROR(yg_channel_shuffle(x2, 1, &y),
                    YG_ERR_SHAPE,
                    "channel_shuffle: expected self of at least 3 dims ([N, C, *]), got [3, 4]");
    assert_null(y);
    yg_release(g);
    yg_release(x2);
    yg_release(x);
    yg_release(xi);
    yg_release(x5);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upsample_bilinear2d_matches_naive_interpolation),
        cmocka_unit_test(test_upsample_bilinear2d_gives_pytorch_known_answers),
        cmocka_unit_test(test_upsample_bilinear2d_gradient_is_the_naive_adjoint),
        cmocka_unit_test(test_pixel_shuffle_and_unshuffle_match_naive_loops),
        cmocka_unit_test(test_channel_shuffle_matches_naive_loops),
        cmocka_unit_test(test_interpolate_is_the_upsample_op_of_its_mode),
        cmocka_unit_test(test_resampling_rejects_bad_arguments),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
