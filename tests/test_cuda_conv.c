/*
 * test_cuda_conv.c - convolutions (the cudnn backend of runtime/conv/),
 * pooling, upsampling and batch_norm on CUDA tensors, against the CPU.
 *
 * test_cudnn_selection_is_reported and test_conv_flags_are_per_thread
 * run everywhere: the first checks what a convolution of CUDA operands
 * would run on (cudnn, or "built without cuDNN") through the dispatcher's
 * selection, which needs no device.  The others need a device; without
 * one they print "skipped: no CUDA device ..." (or "skipped: built
 * without CUDA") and exit 77, which CTest reports as skipped (with
 * YG_REQUIRE_GPU=1 they fail: testutil.h).
 *
 * Convolutions are compared within float tolerance (cuDNN sums in
 * another order); pooling must match the CPU to the bit (cuda/pool.cu
 * keeps cpu/pool.c's arithmetic and order), max pooling's indices
 * exactly; so must nearest upsampling, and bilinear upsampling too on
 * x86-64 (cuda/upsample.cu keeps cpu/upsample.c's products and sums
 * without FMA contraction, which a CPU build elsewhere may contract:
 * there within 1e-12, 1e-6 for float32); batch_norm within float
 * tolerance (its channel sums are added in another order).
 */
#include "conv/conv.h"
#include "testutil.h"
#include "yagrad/ops_average_pooling.h"
#include "yagrad/ops_adaptive_average_pooling.h"
#include "yagrad/ops_convolution.h"
#include "yagrad/ops_convolution_general.h"
#include "yagrad/ops_dtype_conversion.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_norms.h"
#include "yagrad/ops_norms_backward.h"
#include "yagrad/ops_pooling.h"
#include "yagrad/ops_resampling.h"
#include "yagrad/ops_views.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Skips the calling test when no device is usable, saying why (as
 * tests/test_cuda.c). */
static void need_device(void) {
    yg_test_need_gpu();
}

/* A new cuda:0 copy of t (NULL-safe). */
static yg_tensor *gpu(const yg_tensor *t) {
    yg_tensor *out = NULL;
    if (t != NULL)
        YG_CHECK(yg_tensor_to_device(t, YG_CUDA, 0, &out));
    return out;
}

/* Asserts the CUDA tensor got has the sizes and values of the cpu tensor
 * want within atol + rtol |want| (0, 0: bit for bit). */
static void expect_matches(const char *what,
                           const yg_tensor *got,
                           const yg_tensor *want,
                           double atol,
                           double rtol) {
    yg_tensor *host = NULL;
    assert_non_null(got);
    assert_non_null(want);
    assert_int_equal(yg_tensor_device(got), YG_CUDA);
    YG_CHECK(yg_tensor_to_device(got, YG_CPU, 0, &host));
    double *v = yg_test_values(want);
    printf("  %s\n", what);
    YG_EXPECT_CLOSE(host, yg_tensor_sizes(want), yg_tensor_ndim(want), v, atol, rtol);
    free(v);
    yg_release(host);
}

static void test_cudnn_selection_is_reported(void **state) {
    (void)state;
    yg_conv_params p;
    yg_conv_backend b = YG_CONV_BACKEND_NONE;
    memset(&p, 0, sizeof p);
    p.n_spatial = 2;
    p.batch = 1;
    p.groups = 1;
    p.cx = p.cy = 1;
    p.dtype = YG_FLOAT32;
    p.device = YG_CUDA;
    for (int i = 0; i < 3; i++)
        p.x[i] = p.y[i] = p.k[i] = p.stride[i] = p.dil[i] = 1;
    if (yg_conv_backend_available(YG_CONV_BACKEND_CUDNN)) {
        YG_CHECK(yg__conv_select(&p, true, &b));
        assert_int_equal(b, YG_CONV_BACKEND_CUDNN);
        /* even when the caller allows no choice: native cannot read device memory */
        YG_CHECK(yg__conv_select(&p, false, &b));
        assert_int_equal(b, YG_CONV_BACKEND_CUDNN);
        printf("CUDA convolutions run on cudnn\n");
    } else {
        YG_EXPECT_ERROR(yg__conv_select(&p, true, &b),
                        YG_ERR_NOT_IMPLEMENTED,
                        "backend cudnn: built without cuDNN");
        printf("CUDA convolutions say: %s\n", yg_last_error());
    }
    /* a forced cpu backend refuses CUDA operands, naming the device */
    YG_CHECK(yg_conv_force_backend(YG_CONV_BACKEND_NATIVE));
    YG_EXPECT_ERROR(yg__conv_select(&p, true, &b),
                    YG_ERR_DEVICE,
                    "backend native: needs cpu tensors, got input on cuda:0");
    YG_CHECK(yg_conv_force_backend(YG_CONV_BACKEND_NONE));
    /* and a forced cudnn refuses cpu operands (when built) */
    p.device = YG_CPU;
    YG_CHECK(yg_conv_force_backend(YG_CONV_BACKEND_CUDNN));
    if (yg_conv_backend_available(YG_CONV_BACKEND_CUDNN))
        YG_EXPECT_ERROR(yg__conv_select(&p, true, &b),
                        YG_ERR_DEVICE,
                        "backend cudnn: needs cuda tensors, got input on cpu");
    else
        YG_EXPECT_ERROR(yg__conv_select(&p, true, &b),
                        YG_ERR_NOT_IMPLEMENTED,
                        "backend cudnn: built without cuDNN");
    YG_CHECK(yg_conv_force_backend(YG_CONV_BACKEND_NONE));
}

static void test_conv_flags_are_per_thread(void **state) {
    (void)state;
    const int64_t xs[] = {1, 1, 3, 3}, ws[] = {1, 1, 2, 2}, one[] = {1, 1}, zero[] = {0, 0};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, xs, 4, -1, 1, 1);
    yg_tensor *w = yg_test_rand(YG_FLOAT64, ws, 4, -1, 1, 2), *y = NULL;
    assert_false(yg_conv_benchmark());
    assert_false(yg_conv_deterministic());
    yg_conv_set_benchmark(true);
    yg_conv_set_deterministic(true);
    assert_true(yg_conv_benchmark());
    assert_true(yg_conv_deterministic());
    /* the cpu backends ignore them */
    YG_CHECK(yg_convolution(x, w, NULL, one, 2, zero, 2, one, 2, false, zero, 2, 1, &y));
    yg_conv_set_benchmark(false);
    yg_conv_set_deterministic(false);
    assert_false(yg_conv_benchmark());
    assert_false(yg_conv_deterministic());
    yg_release(x);
    yg_release(w);
    yg_release(y);
}

/* One convolution geometry: input [n, c, sp...], weight [co, c / g (or
 * co / g when transposed), k...]. */
typedef struct conv_case {
    int nsp;
    int64_t n, c, co, sp, k, stride, pad, dil, groups;
    bool transposed;
    int64_t output_padding;
} conv_case;

static const conv_case conv_cases[] = {
    {2, 2, 3, 4, 7, 3, 1, 1, 1, 1, false, 0},
    {2, 3, 4, 6, 9, 3, 2, 0, 1, 2, false, 0},
    {2, 2, 4, 4, 8, 3, 1, 2, 2, 4, false, 0}, /* depthwise, dilated */
    {2, 1, 6, 3, 10, 5, 3, 2, 1, 3, false, 0},
    {2, 4, 8, 16, 5, 1, 1, 0, 1, 1, false, 0}, /* 1x1 */
    {1, 2, 3, 5, 12, 4, 2, 1, 1, 1, false, 0},
    {3, 1, 2, 3, 5, 3, 1, 1, 1, 1, false, 0},
    {2, 2, 4, 6, 5, 3, 2, 1, 1, 2, true, 1},
    {2, 0, 3, 4, 6, 3, 1, 1, 1, 1, false, 0}, /* empty batch */
};

/* The case's forward and fused backward on both devices, compared. */
static void run_conv_case(const conv_case *cc, yg_dtype dtype) {
    int n = cc->nsp;
    int64_t xs[5] = {cc->n, cc->c}, ws[5];
    int64_t stride[3], pad[3], dil[3], opad[3];
    double tol = dtype == YG_FLOAT64 ? 1e-10 : 1e-4;
    const bool mask[3] = {true, true, true};
    ws[0] = cc->transposed ? cc->c : cc->co;
    ws[1] = cc->transposed ? cc->co / cc->groups : cc->c / cc->groups;
    for (int i = 0; i < n; i++) {
        xs[2 + i] = cc->sp;
        ws[2 + i] = cc->k;
        stride[i] = cc->stride;
        pad[i] = cc->pad;
        dil[i] = cc->dil;
        opad[i] = cc->output_padding;
    }
    int64_t bs[1] = {cc->co};
    yg_tensor *x = yg_test_rand(dtype, xs, n + 2, -1, 1, 11);
    yg_tensor *w = yg_test_rand(dtype, ws, n + 2, -1, 1, 12);
    yg_tensor *b = yg_test_rand(dtype, bs, 1, -1, 1, 13);
    yg_tensor *dx = gpu(x), *dw = gpu(w), *db = gpu(b);
    yg_tensor *y = NULL, *dy = NULL, *gy = NULL, *dgy = NULL;
    yg_tensor *g[3] = {NULL, NULL, NULL}, *dg[3] = {NULL, NULL, NULL};
    printf("conv %dd n %lld c %lld -> %lld, size %lld, k %lld, stride %lld, pad %lld, dil %lld, "
           "groups %lld%s, %s\n",
           n,
           (long long)cc->n,
           (long long)cc->c,
           (long long)cc->co,
           (long long)cc->sp,
           (long long)cc->k,
           (long long)cc->stride,
           (long long)cc->pad,
           (long long)cc->dil,
           (long long)cc->groups,
           cc->transposed ? ", transposed" : "",
           yg_dtype_name(dtype));
    YG_CHECK(yg_convolution(
        x, w, b, stride, n, pad, n, dil, n, cc->transposed, opad, n, cc->groups, &y));
    YG_CHECK(yg_convolution(
        dx, dw, db, stride, n, pad, n, dil, n, cc->transposed, opad, n, cc->groups, &dy));
    /* cudnn, or native with a note when cuDNN has no algorithm for the
     * case (float64 under cuDNN 9 may have none: issue 28, item 6) */
    if (yg_conv_last_backend() != YG_CONV_BACKEND_CUDNN) {
        assert_int_equal(yg_conv_last_backend(), YG_CONV_BACKEND_NATIVE);
        assert_non_null(strstr(yg_conv_last_note(), "backend cudnn: "));
        printf("  fell back: %s\n", yg_conv_last_note());
    } else {
        assert_string_equal(yg_conv_last_note(), "");
    }
    expect_matches("output", dy, y, tol, tol);
    gy = yg_test_rand(dtype, yg_tensor_sizes(y), yg_tensor_ndim(y), -1, 1, 14);
    dgy = gpu(gy);
    YG_CHECK(yg_convolution_backward(gy,
                                     x,
                                     w,
                                     stride,
                                     n,
                                     pad,
                                     n,
                                     dil,
                                     n,
                                     cc->transposed,
                                     opad,
                                     n,
                                     cc->groups,
                                     mask,
                                     &g[0],
                                     &g[1],
                                     &g[2]));
    YG_CHECK(yg_convolution_backward(dgy,
                                     dx,
                                     dw,
                                     stride,
                                     n,
                                     pad,
                                     n,
                                     dil,
                                     n,
                                     cc->transposed,
                                     opad,
                                     n,
                                     cc->groups,
                                     mask,
                                     &dg[0],
                                     &dg[1],
                                     &dg[2]));
    expect_matches("grad_input", dg[0], g[0], tol, tol);
    expect_matches("grad_weight", dg[1], g[1], tol * 10, tol);
    expect_matches("grad_bias", dg[2], g[2], tol * 10, tol);
    yg_tensor *all[] = {x, w, b, dx, dw, db, y, dy, gy, dgy, g[0], g[1], g[2], dg[0], dg[1], dg[2]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        yg_release(all[i]);
}

static void test_conv_forward_and_backward_match_the_cpu(void **state) {
    (void)state;
    need_device();
    if (!yg_conv_backend_available(YG_CONV_BACKEND_CUDNN)) {
        /* test_cudnn_selection_is_reported checks the message */
        yg_test_skip("built without cuDNN");
    }
    for (size_t i = 0; i < sizeof conv_cases / sizeof conv_cases[0]; i++) {
        run_conv_case(&conv_cases[i], YG_FLOAT32);
        run_conv_case(&conv_cases[i], YG_FLOAT64);
    }
}

/* A cudnn backend that has no algorithm for anything. */
static yg_status refuse_forward(
    const yg_conv_params *p, const void *x, const void *w, const void *bias, void *y) {
    (void)x, (void)w, (void)bias, (void)y;
    return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                    "backend cudnn: no forward algorithm for this %s convolution (test)",
                    yg_dtype_name(p->dtype));
}

static yg_status refuse_data(
    const yg_conv_params *p, const void *y, const void *w, const void *bias, void *x) {
    (void)y, (void)w, (void)bias, (void)x;
    return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                    "backend cudnn: no backward data algorithm for this %s convolution (test)",
                    yg_dtype_name(p->dtype));
}

static yg_status refuse_weight(const yg_conv_params *p, const void *y, const void *x, void *w) {
    (void)y, (void)x, (void)w;
    return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                    "backend cudnn: no backward filter algorithm for this %s convolution (test)",
                    yg_dtype_name(p->dtype));
}

/* Issue 28, item 6: when cuDNN finds no algorithm (simulated by a cudnn
 * backend that refuses everything), an automatic choice runs native on
 * host copies, gives the CPU's values on the GPU and says so in
 * yg_conv_last_backend and yg_conv_last_note; a forced cudnn fails with
 * cuDNN's message. */
static void test_conv_without_a_cudnn_algorithm_falls_back_to_native(void **state) {
    (void)state;
    need_device();
    const yg_conv_impl *real = yg__conv_impl(YG_CONV_BACKEND_CUDNN);
    static const yg_conv_impl refusing = {
        .device = YG_CUDA,
        .forward = refuse_forward,
        .data = refuse_data,
        .weight = refuse_weight,
    };
    const int64_t xs[] = {2, 3, 7, 6}, ws[] = {4, 3, 3, 2}, bs[] = {4}, one[] = {1, 1};
    const bool mask[3] = {true, true, true};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, xs, 4, -1, 1, 51), *dx = gpu(x);
    yg_tensor *w = yg_test_rand(YG_FLOAT64, ws, 4, -1, 1, 52), *dw = gpu(w);
    yg_tensor *b = yg_test_rand(YG_FLOAT64, bs, 1, -1, 1, 53), *db = gpu(b);
    yg_tensor *y = NULL, *dy = NULL, *gy = NULL, *dgy = NULL;
    yg_tensor *g[3] = {NULL, NULL, NULL}, *dg[3] = {NULL, NULL, NULL};
    YG_CHECK(yg_convolution(x, w, b, one, 2, one, 2, one, 2, false, one, 2, 1, &y));
    yg__conv_register(YG_CONV_BACKEND_CUDNN, &refusing);
    yg_status st = yg_convolution(dx, dw, db, one, 2, one, 2, one, 2, false, one, 2, 1, &dy);
    yg_conv_backend ran = yg_conv_last_backend();
    char note[384];
    snprintf(note, sizeof note, "%s", yg_conv_last_note());
    gy = yg_test_rand(YG_FLOAT64, yg_tensor_sizes(y), 4, -1, 1, 54);
    dgy = gpu(gy);
    if (st == YG_OK)
        st = yg_convolution_backward(
            dgy, dx, dw, one, 2, one, 2, one, 2, false, one, 2, 1, mask, &dg[0], &dg[1], &dg[2]);
    /* forced, nothing falls back */
    yg_tensor *forced = NULL;
    YG_CHECK(yg_conv_force_backend(YG_CONV_BACKEND_CUDNN));
    yg_status fst = yg_convolution(dx, dw, db, one, 2, one, 2, one, 2, false, one, 2, 1, &forced);
    char forced_msg[384];
    snprintf(forced_msg, sizeof forced_msg, "%s", yg_last_error());
    YG_CHECK(yg_conv_force_backend(YG_CONV_BACKEND_NONE));
    yg__conv_register(YG_CONV_BACKEND_CUDNN, real);
    YG_CHECK(st);
    assert_int_equal(ran, YG_CONV_BACKEND_NATIVE);
    assert_string_equal(note,
                        "backend cudnn: no forward algorithm for this float64 convolution (test); "
                        "ran on native with host copies");
    assert_int_equal(yg_conv_last_backend(), YG_CONV_BACKEND_CUDNN); /* the forced call */
    assert_int_equal(fst, YG_ERR_NOT_IMPLEMENTED);
    assert_null(forced);
    assert_non_null(strstr(forced_msg, "backend cudnn: no forward algorithm"));
    expect_matches("output on native", dy, y, 1e-12, 1e-12);
    YG_CHECK(yg_convolution_backward(
        gy, x, w, one, 2, one, 2, one, 2, false, one, 2, 1, mask, &g[0], &g[1], &g[2]));
    expect_matches("grad_input on native", dg[0], g[0], 1e-12, 1e-12);
    expect_matches("grad_weight on native", dg[1], g[1], 1e-12, 1e-12);
    expect_matches("grad_bias", dg[2], g[2], 1e-12, 1e-12);
    yg_tensor *all[] = {x, dx, w, dw, b, db, y, dy, gy, dgy, g[0], g[1], g[2], dg[0], dg[1], dg[2]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        yg_release(all[i]);
}

/* benchmark (cudnnFind) and deterministic choices give the CPU's values
 * too, and deterministic weight gradients repeat to the bit. */
static void test_conv_benchmark_and_deterministic_choices(void **state) {
    (void)state;
    need_device();
    if (!yg_conv_backend_available(YG_CONV_BACKEND_CUDNN)) {
        yg_test_skip("built without cuDNN");
    }
    yg_conv_set_benchmark(true);
    run_conv_case(&conv_cases[0], YG_FLOAT32);
    run_conv_case(&conv_cases[1], YG_FLOAT64);
    yg_conv_set_benchmark(false);
    yg_conv_set_deterministic(true);
    run_conv_case(&conv_cases[1], YG_FLOAT32);
    const int64_t xs[] = {8, 16, 14, 14}, ws[] = {32, 16, 3, 3}, one[] = {1, 1};
    const bool mask[3] = {false, true, false};
    yg_tensor *hx = yg_test_rand(YG_FLOAT32, xs, 4, -1, 1, 21), *x = gpu(hx);
    yg_tensor *hw = yg_test_rand(YG_FLOAT32, ws, 4, -1, 1, 22), *w = gpu(hw);
    yg_tensor *y = NULL, *gy = NULL, *gw[2] = {NULL, NULL}, *gi = NULL, *gb = NULL;
    YG_CHECK(yg_convolution(x, w, NULL, one, 2, one, 2, one, 2, false, one, 2, 1, &y));
    YG_CHECK(yg_tensor_to_device(y, YG_CUDA, 0, &gy));
    for (int r = 0; r < 2; r++)
        YG_CHECK(yg_convolution_backward(
            gy, x, w, one, 2, one, 2, one, 2, false, one, 2, 1, mask, &gi, &gw[r], &gb));
    yg_tensor *first = NULL;
    YG_CHECK(yg_tensor_to_device(gw[0], YG_CPU, 0, &first));
    expect_matches("deterministic grad_weight repeats", gw[1], first, 0, 0);
    yg_conv_set_deterministic(false);
    yg_tensor *all[] = {hx, hw, x, w, y, gy, gw[0], gw[1], first};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        yg_release(all[i]);
}

/* The largest |a - b| over two cpu tensors of the same sizes, or
 * INFINITY when a value cannot be read (thread-safe: no cmocka). */
static double max_diff(const yg_tensor *a, const yg_tensor *b) {
    int64_t n = yg_tensor_numel(a);
    double *va = malloc((size_t)(n > 0 ? n : 1) * sizeof *va);
    double *vb = malloc((size_t)(n > 0 ? n : 1) * sizeof *vb);
    double worst = 0;
    if (va == NULL || vb == NULL || yg_tensor_numel(b) != n ||
        yg_tensor_to_f64(a, va, n) != YG_OK || yg_tensor_to_f64(b, vb, n) != YG_OK)
        worst = INFINITY;
    for (int64_t i = 0; worst < INFINITY && i < n; i++)
        worst = fabs(va[i] - vb[i]) > worst ? fabs(va[i] - vb[i]) : worst;
    free(va);
    free(vb);
    return worst;
}

/* One thread's share of the two-thread test: its own stream, made
 * current, and 20 rounds of mm (cuBLAS) and conv2d (cuDNN) of its own
 * operands, each result read back and compared with the CPU's. */
typedef struct stream_worker {
    uint64_t seed;
    yg_status st;
    char why[256];
    double worst_mm, worst_conv;
} stream_worker;

static void *stream_worker_run(void *arg) {
    stream_worker *w = arg;
    const int64_t sa[] = {96, 80}, sx[] = {4, 8, 20, 20}, sw[] = {16, 8, 3, 3}, one[] = {1, 1};
    yg_cuda_stream *s = NULL;
    yg_tensor *a = yg_test_rand(YG_FLOAT32, sa, 2, -1, 1, w->seed);
    yg_tensor *x = yg_test_rand(YG_FLOAT32, sx, 4, -1, 1, w->seed + 1);
    yg_tensor *k = yg_test_rand(YG_FLOAT32, sw, 4, -1, 1, w->seed + 2);
    yg_tensor *at = NULL, *mm_want = NULL, *conv_want = NULL, *ad = NULL, *atd = NULL;
    yg_tensor *xd = NULL, *kd = NULL;
    w->st = yg_cuda_stream_create(0, &s);
    if (w->st == YG_OK)
        w->st = yg_cuda_set_stream(0, s);
    if (w->st == YG_OK)
        w->st = yg_transpose(a, 0, 1, &at);
    if (w->st == YG_OK)
        w->st = yg_mm(a, at, &mm_want);
    if (w->st == YG_OK)
        w->st = yg_conv2d(x, k, NULL, one, 2, one, 2, one, 2, 1, &conv_want);
    if (w->st == YG_OK)
        w->st = yg_tensor_to_device(a, YG_CUDA, 0, &ad);
    if (w->st == YG_OK)
        w->st = yg_transpose(ad, 0, 1, &atd);
    if (w->st == YG_OK)
        w->st = yg_tensor_to_device(x, YG_CUDA, 0, &xd);
    if (w->st == YG_OK)
        w->st = yg_tensor_to_device(k, YG_CUDA, 0, &kd);
    for (int round = 0; round < 20 && w->st == YG_OK; round++) {
        yg_tensor *m = NULL, *c = NULL, *mh = NULL, *ch = NULL;
        w->st = yg_mm(ad, atd, &m);
        if (w->st == YG_OK)
            w->st = yg_conv2d(xd, kd, NULL, one, 2, one, 2, one, 2, 1, &c);
        if (w->st == YG_OK)
            w->st = yg_tensor_to_device(m, YG_CPU, 0, &mh); /* waits for s */
        if (w->st == YG_OK)
            w->st = yg_tensor_to_device(c, YG_CPU, 0, &ch);
        if (w->st == YG_OK) {
            double dm = max_diff(mh, mm_want), dc = max_diff(ch, conv_want);
            w->worst_mm = dm > w->worst_mm ? dm : w->worst_mm;
            w->worst_conv = dc > w->worst_conv ? dc : w->worst_conv;
        }
        yg_release(m);
        yg_release(c);
        yg_release(mh);
        yg_release(ch);
    }
    if (w->st != YG_OK)
        snprintf(w->why, sizeof w->why, "%s", yg_last_error());
    yg_tensor *all[] = {a, x, k, at, mm_want, conv_want, ad, atd, xd, kd};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        yg_release(all[i]);
    if (yg_cuda_set_stream(0, NULL) != YG_OK && w->st == YG_OK)
        w->st = YG_ERR_DEVICE;
    yg_cuda_stream_destroy(s);
    return NULL;
}

/* Issue 28, item 11: cuBLAS and cuDNN on user streams, from two threads
 * at once: each thread's stream has its own cuBLAS workspace and the
 * shared handles are used under their locks, so both threads' products
 * and convolutions give the CPU's values in every round. */
static void test_cublas_and_cudnn_run_on_user_streams_from_two_threads(void **state) {
    (void)state;
    need_device();
    if (!yg_conv_backend_available(YG_CONV_BACKEND_CUDNN))
        yg_test_skip("built without cuDNN");
    stream_worker w[2] = {{.seed = 101}, {.seed = 201}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, stream_worker_run, &w[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    for (int i = 0; i < 2; i++) {
        printf("thread %d: mm within %.3g, conv2d within %.3g of the cpu\n", i, w[i].worst_mm,
               w[i].worst_conv);
        if (w[i].st != YG_OK)
            fail_msg("thread %d: %s: %s", i, yg_status_name(w[i].st), w[i].why);
        assert_true(w[i].worst_mm <= 1e-4);
        assert_true(w[i].worst_conv <= 1e-4);
    }
}

/* Issue 28, item 11: TF32 is off by default (float32 products and
 * convolutions within float32's error of a float64 reference); on, they
 * stay within TF32's (10 mantissa bits: inputs rounded by up to 2^-11
 * relative); float64 ignores the switch (the same bits on and off). */
static void test_tf32_is_off_by_default_and_bounded_when_on(void **state) {
    (void)state;
    need_device();
    const int64_t sa[] = {128, 256}, sb[] = {256, 64}, sx[] = {2, 16, 12, 12},
                  sw[] = {8, 16, 3, 3}, one[] = {1, 1};
    bool cudnn = yg_conv_backend_available(YG_CONV_BACKEND_CUDNN);
    yg_cuda_device_properties p;
    YG_CHECK(yg_cuda_get_device_properties(0, &p));
    assert_false(yg_cuda_get_allow_tf32());
    yg_tensor *a64 = yg_test_rand(YG_FLOAT64, sa, 2, -1, 1, 301);
    yg_tensor *b64 = yg_test_rand(YG_FLOAT64, sb, 2, -1, 1, 302);
    yg_tensor *x64 = yg_test_rand(YG_FLOAT64, sx, 4, -1, 1, 303);
    yg_tensor *w64 = yg_test_rand(YG_FLOAT64, sw, 4, -1, 1, 304);
    yg_tensor *a = NULL, *b = NULL, *x = NULL, *w = NULL, *mref = NULL, *cref = NULL;
    YG_CHECK(yg_to_dtype(a64, YG_FLOAT32, false, &a));
    YG_CHECK(yg_to_dtype(b64, YG_FLOAT32, false, &b));
    YG_CHECK(yg_to_dtype(x64, YG_FLOAT32, false, &x));
    YG_CHECK(yg_to_dtype(w64, YG_FLOAT32, false, &w));
    YG_CHECK(yg_mm(a64, b64, &mref));
    YG_CHECK(yg_conv2d(x64, w64, NULL, one, 2, one, 2, one, 2, 1, &cref));
    yg_tensor *ad = gpu(a), *bd = gpu(b), *xd = gpu(x), *wd = gpu(w);
    yg_tensor *a64d = gpu(a64), *b64d = gpu(b64);
    double err_mm[2] = {0, 0}, err_conv[2] = {0, 0};
    yg_tensor *f64[2] = {NULL, NULL};
    for (int on = 0; on < 2; on++) {
        yg_tensor *m = NULL, *mh = NULL, *c = NULL, *ch = NULL, *md = NULL;
        yg_cuda_set_allow_tf32(on == 1);
        YG_CHECK(yg_mm(ad, bd, &m));
        YG_CHECK(yg_tensor_to_device(m, YG_CPU, 0, &mh));
        err_mm[on] = max_diff(mh, mref);
        if (cudnn) {
            YG_CHECK(yg_conv2d(xd, wd, NULL, one, 2, one, 2, one, 2, 1, &c));
            YG_CHECK(yg_tensor_to_device(c, YG_CPU, 0, &ch));
            err_conv[on] = max_diff(ch, cref);
        }
        YG_CHECK(yg_mm(a64d, b64d, &md));
        YG_CHECK(yg_tensor_to_device(md, YG_CPU, 0, &f64[on]));
        yg_release(m);
        yg_release(mh);
        yg_release(c);
        yg_release(ch);
        yg_release(md);
    }
    yg_cuda_set_allow_tf32(false);
    printf("sm_%d%d: mm error %.3g (TF32 off), %.3g (on); conv2d %.3g, %.3g%s\n", p.major, p.minor,
           err_mm[0], err_mm[1], err_conv[0], err_conv[1], cudnn ? "" : " (no cuDNN)");
    /* 256 products of values in [-1, 1]: float32 error ~1e-5, TF32's
     * ~1e-2 at worst */
    assert_true(err_mm[0] <= 1e-4);
    assert_true(err_mm[1] <= 5e-2);
    assert_true(err_conv[0] <= 1e-4);
    assert_true(err_conv[1] <= 5e-2);
    assert_memory_equal(yg_tensor_data(f64[0]), yg_tensor_data(f64[1]),
                        (size_t)yg_tensor_numel(f64[0]) * sizeof(double));
    yg_tensor *all[] = {a64, b64, x64, w64, a, b, x, w, mref, cref, ad, bd, xd, wd, a64d, b64d,
                        f64[0], f64[1]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        yg_release(all[i]);
}

/* max, average and adaptive average pooling and their gradients, bit for
 * bit, over paddings, strides, dilations and ceil_mode. */
static void test_pooling_matches_the_cpu_to_the_bit(void **state) {
    (void)state;
    need_device();
    const struct {
        int64_t k, s, p, d;
        bool ceil, cip;
    } cases[] = {
        {2, 2, 0, 1, false, true},
        {3, 2, 1, 1, true, true},
        {3, 2, 1, 1, true, false},
        {3, 1, 1, 2, false, true},
        {4, 3, 2, 1, true, false},
    };
    const yg_dtype dtypes[2] = {YG_FLOAT32, YG_FLOAT64};
    for (int t = 0; t < 2; t++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            const int64_t xs[] = {2, 3, 9, 11}, k[] = {cases[c].k}, s[] = {cases[c].s},
                          p[] = {cases[c].p}, d[] = {cases[c].d}, osize[] = {4, 5};
            yg_tensor *x = yg_test_rand(dtypes[t], xs, 4, -3, 3, 31 + c), *dx = gpu(x);
            yg_tensor *v = NULL, *i = NULL, *dv = NULL, *di = NULL, *gv = NULL, *dgv = NULL;
            yg_tensor *a = NULL, *da = NULL, *gx = NULL, *dgx = NULL;
            printf("pool k %lld s %lld p %lld d %lld%s%s, %s\n",
                   (long long)k[0],
                   (long long)s[0],
                   (long long)p[0],
                   (long long)d[0],
                   cases[c].ceil ? ", ceil_mode" : "",
                   cases[c].cip ? ", count_include_pad" : "",
                   yg_dtype_name(dtypes[t]));
            YG_CHECK(yg_max_pool2d_with_indices(x, k, 1, s, 1, p, 1, d, 1, cases[c].ceil, &v, &i));
            YG_CHECK(
                yg_max_pool2d_with_indices(dx, k, 1, s, 1, p, 1, d, 1, cases[c].ceil, &dv, &di));
            expect_matches("max_pool2d values", dv, v, 0, 0);
            expect_matches("max_pool2d indices", di, i, 0, 0);
            gv = yg_test_rand(dtypes[t], yg_tensor_sizes(v), 4, -1, 1, 41);
            dgv = gpu(gv);
            YG_CHECK(yg_max_pool2d_with_indices_backward(gv, i, xs, 4, &gx));
            YG_CHECK(yg_max_pool2d_with_indices_backward(dgv, di, xs, 4, &dgx));
            expect_matches("max_pool2d gradient", dgx, gx, 0, 0);
            yg_release(gv);
            yg_release(dgv);
            yg_release(gx);
            yg_release(dgx);
            gv = dgv = gx = dgx = NULL;
            YG_CHECK(yg_avg_pool2d(x, k, 1, s, 1, p, 1, cases[c].ceil, cases[c].cip, &a));
            YG_CHECK(yg_avg_pool2d(dx, k, 1, s, 1, p, 1, cases[c].ceil, cases[c].cip, &da));
            expect_matches("avg_pool2d", da, a, 0, 0);
            gv = yg_test_rand(dtypes[t], yg_tensor_sizes(a), 4, -1, 1, 42);
            dgv = gpu(gv);
            YG_CHECK(yg_avg_pool2d_backward(
                gv, xs, 4, k, 1, s, 1, p, 1, cases[c].ceil, cases[c].cip, &gx));
            YG_CHECK(yg_avg_pool2d_backward(
                dgv, xs, 4, k, 1, s, 1, p, 1, cases[c].ceil, cases[c].cip, &dgx));
            expect_matches("avg_pool2d gradient", dgx, gx, 0, 0);
            yg_tensor *all[] = {v, i, dv, di, gv, dgv, a, da, gx, dgx};
            for (size_t j = 0; j < sizeof all / sizeof all[0]; j++)
                yg_release(all[j]);
            a = da = gx = dgx = gv = dgv = NULL;
            YG_CHECK(yg_adaptive_avg_pool2d(x, osize, 2, &a));
            YG_CHECK(yg_adaptive_avg_pool2d(dx, osize, 2, &da));
            expect_matches("adaptive_avg_pool2d", da, a, 0, 0);
            gv = yg_test_rand(dtypes[t], yg_tensor_sizes(a), 4, -1, 1, 43);
            dgv = gpu(gv);
            YG_CHECK(yg_adaptive_avg_pool2d_backward(gv, xs, 4, &gx));
            YG_CHECK(yg_adaptive_avg_pool2d_backward(dgv, xs, 4, &dgx));
            expect_matches("adaptive_avg_pool2d gradient", dgx, gx, 0, 0);
            yg_tensor *rest[] = {x, dx, a, da, gv, dgv, gx, dgx};
            for (size_t j = 0; j < sizeof rest / sizeof rest[0]; j++)
                yg_release(rest[j]);
        }
}

/* A window of padding alone is refused on the GPU with the CPU's message. */
static void test_max_pool_refuses_a_window_of_padding_as_the_cpu(void **state) {
    (void)state;
    need_device();
    const int64_t xs[] = {1, 1, 2, 2}, k[] = {2}, s[] = {1}, p[] = {1}, d[] = {3};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, xs, 4, -1, 1, 51), *dx = gpu(x);
    yg_tensor *v = NULL, *i = NULL;
    yg_status st = yg_max_pool2d_with_indices(x, k, 1, s, 1, p, 1, d, 1, false, &v, &i);
    assert_int_equal(st, YG_ERR_SHAPE);
    char want[256];
    snprintf(want, sizeof want, "%s", yg_last_error());
    printf("cpu: %s\n", want);
    YG_EXPECT_ERROR(
        yg_max_pool2d_with_indices(dx, k, 1, s, 1, p, 1, d, 1, false, &v, &i), YG_ERR_SHAPE, want);
    assert_null(v);
    assert_null(i);
    yg_release(x);
    yg_release(dx);
}

/* One upsampling call: nearest or bilinear (align_corners, scales) from
 * in (ndim dims) to out (out_len entries; none: the scales decide). */
typedef struct resample_case {
    const char *what;
    bool bilinear, align;
    int ndim;
    int64_t in[4];
    int64_t out[2];
    int out_len;
    double sh, sw;
    bool transposed; /* inputs and gradients are transposed views */
} resample_case;

static const resample_case resample_cases[] = {
    {"nearest 5x7 -> 9x4", false, false, 4, {2, 3, 5, 7}, {9, 4}, 2, 0, 0, false},
    {"nearest 4x6 -> 8x13, 3-d, strided", false, false, 3, {3, 4, 6}, {8, 13}, 2, 0, 0, true},
    {"nearest 6x9 -> 4x3", false, false, 4, {1, 2, 6, 9}, {4, 3}, 2, 0, 0, false},
    {"nearest of no planes", false, false, 4, {0, 3, 4, 4}, {5, 6}, 2, 0, 0, false},
    {"bilinear 5x7 -> 9x4", true, false, 4, {2, 3, 5, 7}, {9, 4}, 2, 0, 0, false},
    {"bilinear 5x7 -> 9x11, align_corners", true, true, 4, {2, 3, 5, 7}, {9, 11}, 2, 0, 0, false},
    {"bilinear 4x6, scales, 3-d, strided", true, false, 3, {3, 4, 6}, {0}, 0, 1.7, 2.3, true},
    {"bilinear 4x6, scales, align, strided", true, true, 4, {2, 3, 4, 6}, {0}, 0, 1.7, 2.3, true},
    {"bilinear 3x4 -> 7x13, scales", true, false, 4, {2, 2, 3, 4}, {7, 13}, 2, 2.5, 3.5, false},
    {"bilinear 6x9 -> 1x1, align_corners", true, true, 4, {1, 2, 6, 9}, {1, 1}, 2, 0, 0, false},
    {"bilinear 9x8 -> 4x3", true, false, 4, {1, 2, 9, 8}, {4, 3}, 2, 0, 0, false},
    {"bilinear 1x1 -> 3x3", true, false, 4, {1, 1, 1, 1}, {3, 3}, 2, 0, 0, false},
    {"bilinear of no planes", true, false, 4, {0, 3, 4, 4}, {5, 6}, 2, 0, 0, false},
};

static yg_status resample(const resample_case *rc, const yg_tensor *x, yg_tensor **y) {
    if (!rc->bilinear)
        return yg_upsample_nearest2d(x, rc->out, rc->out_len, y);
    return yg_upsample_bilinear2d(x, rc->out, rc->out_len, rc->align, (rc->sh) > 0 ? &(double){rc->sh} : NULL, (rc->sw) > 0 ? &(double){rc->sw} : NULL, y);
}

static yg_status resample_backward(const resample_case *rc, const yg_tensor *g, yg_tensor **gx) {
    if (!rc->bilinear)
        return yg_upsample_nearest2d_backward(g, rc->in, rc->ndim, gx);
    return yg_upsample_bilinear2d_backward(g, rc->in, rc->ndim, rc->align, (rc->sh) > 0 ? &(double){rc->sh} : NULL, (rc->sw) > 0 ? &(double){rc->sw} : NULL, gx);
}

/* A random cpu tensor of sizes (ndim of them) and its cuda:0 copy; with
 * transposed, both are transposed views of the last two dims (of
 * contiguous tensors of the other order), so the kernels copy them. */
static void random_pair(yg_dtype dtype,
                        const int64_t *sizes,
                        int ndim,
                        bool transposed,
                        uint64_t seed,
                        yg_tensor **cpu,
                        yg_tensor **dev) {
    int64_t s[4];
    memcpy(s, sizes, sizeof(int64_t) * (size_t)ndim);
    if (!transposed) {
        *cpu = yg_test_rand(dtype, s, ndim, -2, 2, seed);
        *dev = gpu(*cpu);
        return;
    }
    s[ndim - 2] = sizes[ndim - 1];
    s[ndim - 1] = sizes[ndim - 2];
    yg_tensor *c = yg_test_rand(dtype, s, ndim, -2, 2, seed), *d = gpu(c);
    YG_CHECK(yg_transpose(c, ndim - 2, ndim - 1, cpu));
    YG_CHECK(yg_transpose(d, ndim - 2, ndim - 1, dev));
    assert_false(yg_tensor_is_contiguous(*dev));
    yg_release(c);
    yg_release(d);
}

/* upsample_nearest2d and upsample_bilinear2d and their gradients over 3-
 * and 4-d, strided and empty inputs, up and down, both align_corners
 * settings and explicit scales: the CPU's values (see the top). */
static void test_upsampling_matches_the_cpu(void **state) {
    (void)state;
    need_device();
    const yg_dtype dtypes[2] = {YG_FLOAT32, YG_FLOAT64};
    for (int t = 0; t < 2; t++)
        for (size_t c = 0; c < sizeof resample_cases / sizeof resample_cases[0]; c++) {
            const resample_case *rc = &resample_cases[c];
            double tol = 0;
#if !defined(__x86_64__)
            if (rc->bilinear)
                tol = dtypes[t] == YG_FLOAT64 ? 1e-12 : 1e-6;
#endif
            yg_tensor *x = NULL, *dx = NULL, *y = NULL, *dy = NULL, *g = NULL, *dg = NULL;
            yg_tensor *gx = NULL, *dgx = NULL;
            printf("%s, %s\n", rc->what, yg_dtype_name(dtypes[t]));
            random_pair(dtypes[t], rc->in, rc->ndim, rc->transposed, 71 + c, &x, &dx);
            YG_CHECK(resample(rc, x, &y));
            YG_CHECK(resample(rc, dx, &dy));
            expect_matches("forward", dy, y, tol, tol);
            random_pair(dtypes[t], yg_tensor_sizes(y), rc->ndim, rc->transposed, 81 + c, &g, &dg);
            YG_CHECK(resample_backward(rc, g, &gx));
            YG_CHECK(resample_backward(rc, dg, &dgx));
            expect_matches("gradient", dgx, gx, tol, tol);
            yg_tensor *all[] = {x, dx, y, dy, g, dg, gx, dgx};
            for (size_t j = 0; j < sizeof all / sizeof all[0]; j++)
                yg_release(all[j]);
        }
}

/* An empty grad_output plane: nearest's gradient is zeros (nothing
 * copied the input), bilinear's is refused with the CPU's message. */
static void test_upsampling_gradients_of_empty_planes_as_the_cpu(void **state) {
    (void)state;
    need_device();
    const int64_t gs[] = {1, 2, 0, 5}, xs[] = {1, 2, 3, 3};
    yg_tensor *g = yg_test_rand(YG_FLOAT32, gs, 4, -1, 1, 91), *dg = gpu(g);
    yg_tensor *gx = NULL, *dgx = NULL;
    YG_CHECK(yg_upsample_nearest2d_backward(g, xs, 4, &gx));
    YG_CHECK(yg_upsample_nearest2d_backward(dg, xs, 4, &dgx));
    expect_matches("nearest gradient", dgx, gx, 0, 0);
    yg_release(gx);
    yg_release(dgx);
    gx = dgx = NULL;
    yg_status st = yg_upsample_bilinear2d_backward(g, xs, 4, false, NULL, NULL, &gx);
    assert_int_equal(st, YG_ERR_SHAPE);
    char want[256];
    snprintf(want, sizeof want, "%s", yg_last_error());
    printf("cpu: %s\n", want);
    YG_EXPECT_ERROR(
        yg_upsample_bilinear2d_backward(dg, xs, 4, false, NULL, NULL, &dgx), YG_ERR_SHAPE, want);
    assert_null(dgx);
    yg_release(g);
    yg_release(dg);
}

/* native_batch_norm training (running statistics moved) and eval, and
 * its fused backward, against the CPU; [N, C, H, W] and [N, C]. */
static void test_batch_norm_matches_the_cpu(void **state) {
    (void)state;
    need_device();
    const int64_t shapes[2][4] = {{4, 3, 5, 6}, {16, 5, 0, 0}};
    const int ndims[2] = {4, 2};
    const yg_dtype dtypes[2] = {YG_FLOAT32, YG_FLOAT64};
    for (int t = 0; t < 2; t++)
        for (int sh = 0; sh < 2; sh++)
            for (int training = 1; training >= 0; training--) {
                const int64_t *xs = shapes[sh];
                int64_t cs[1] = {xs[1]};
                double tol = dtypes[t] == YG_FLOAT64 ? 1e-12 : 1e-5;
                yg_tensor *x = yg_test_rand(dtypes[t], xs, ndims[sh], -2, 3, 61), *dx = gpu(x);
                yg_tensor *w = yg_test_rand(dtypes[t], cs, 1, 0.5, 1.5, 62), *dw = gpu(w);
                yg_tensor *b = yg_test_rand(dtypes[t], cs, 1, -1, 1, 63), *db = gpu(b);
                /* running statistics in float32 whatever the input: state
                 * keeps its own dtype */
                yg_tensor *rm = yg_test_rand(YG_FLOAT32, cs, 1, -0.5, 0.5, 64), *drm = gpu(rm);
                yg_tensor *rv = yg_test_rand(YG_FLOAT32, cs, 1, 0.5, 2, 65), *drv = gpu(rv);
                yg_tensor *y = NULL, *sm = NULL, *si = NULL, *dy = NULL, *dsm = NULL, *dsi = NULL;
                printf("batch_norm %s, %s, %s\n",
                       ndims[sh] == 4 ? "[4, 3, 5, 6]" : "[16, 5]",
                       training ? "training" : "eval",
                       yg_dtype_name(dtypes[t]));
                YG_CHECK(yg_native_batch_norm(x, w, b, rm, rv, training, 0.1, 1e-5, &y, &sm, &si));
                YG_CHECK(yg_native_batch_norm(
                    dx, dw, db, drm, drv, training, 0.1, 1e-5, &dy, &dsm, &dsi));
                expect_matches("output", dy, y, tol, tol);
                expect_matches("save_mean", dsm, sm, tol, tol);
                expect_matches("save_invstd", dsi, si, tol, tol);
                expect_matches("running_mean", drm, rm, 1e-6, 1e-6);
                expect_matches("running_var", drv, rv, 1e-6, 1e-6);
                const bool mask[3] = {true, true, true};
                yg_tensor *g = yg_test_rand(dtypes[t], xs, ndims[sh], -1, 1, 66), *dg = gpu(g);
                yg_tensor *gr[3] = {NULL, NULL, NULL}, *dgr[3] = {NULL, NULL, NULL};
                YG_CHECK(yg_native_batch_norm_backward_fused(
                    g, x, w, sm, si, training, mask, &gr[0], &gr[1], &gr[2]));
                YG_CHECK(yg_native_batch_norm_backward_fused(
                    dg, dx, dw, dsm, dsi, training, mask, &dgr[0], &dgr[1], &dgr[2]));
                expect_matches("grad_input", dgr[0], gr[0], tol * 10, tol);
                expect_matches("grad_weight", dgr[1], gr[1], tol * 10, tol);
                expect_matches("grad_bias", dgr[2], gr[2], tol * 10, tol);
                yg_tensor *all[] = {x,  dx,  w,     dw,    b,     db,     rm,     drm,
                                    rv, drv, y,     sm,    si,    dy,     dsm,    dsi,
                                    g,  dg,  gr[0], gr[1], gr[2], dgr[0], dgr[1], dgr[2]};
                for (size_t j = 0; j < sizeof all / sizeof all[0]; j++)
                    yg_release(all[j]);
            }
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cudnn_selection_is_reported),
        cmocka_unit_test(test_conv_flags_are_per_thread),
        cmocka_unit_test(test_conv_forward_and_backward_match_the_cpu),
        cmocka_unit_test(test_conv_benchmark_and_deterministic_choices),
        cmocka_unit_test(test_conv_without_a_cudnn_algorithm_falls_back_to_native),
        cmocka_unit_test(test_cublas_and_cudnn_run_on_user_streams_from_two_threads),
        cmocka_unit_test(test_tf32_is_off_by_default_and_bounded_when_on),
        cmocka_unit_test(test_pooling_matches_the_cpu_to_the_bit),
        cmocka_unit_test(test_max_pool_refuses_a_window_of_padding_as_the_cpu),
        cmocka_unit_test(test_upsampling_matches_the_cpu),
        cmocka_unit_test(test_upsampling_gradients_of_empty_planes_as_the_cpu),
        cmocka_unit_test(test_batch_norm_matches_the_cpu),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
