/*
 * test_cuda.c - yagrad/cuda.h: devices, their caching allocator and
 * device tensors (yg_tensor_to_device, mixed-device refusals).
 *
 * test_cuda_state_is_reported runs everywhere and checks what this
 * machine is: built without CUDA, built with it but no device (every CI
 * machine), or a device; so do the to_device tests that need none.  The
 * others need a device; without one they
 * print "skipped: no CUDA device ..." (or "skipped: built without CUDA")
 * and exit 77, which CTest reports as skipped, never passed (with
 * YG_REQUIRE_GPU=1 they fail: testutil.h).
 */
#include "core/backend.h"
#include "core/core.h"
#include "opinfo/opinfo.h"
#include "testutil.h"
#include "yagrad/autograd.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/optim.h"
#include "yagrad/ops_join_split.h"
#include "yagrad/ops_random.h"
#include "yagrad/ops_trigonometric.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_slicing.h"
#include "yagrad/ops_inplace_fill.h"
#include "yagrad/ops_creation.h"
#include "yagrad/ops_cumulative.h"
#include "yagrad/ops_dtype_conversion.h"
#include "yagrad/ops_extrema.h"
#include "yagrad/ops_statistics.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_losses.h"
#include "yagrad/ops_unary_math.h"
#include "yagrad/ops_views.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Skips the calling test when no device is usable, saying why. */
static void need_device(void) {
    yg_test_need_gpu();
}

static void test_cuda_state_is_reported(void **state) {
    (void)state;
    yg_cuda_device_properties p;
    yg_cuda_memory_stats m;
    if (yg_cuda_is_available()) {
        assert_true(yg_cuda_device_count() > 0);
        YG_CHECK(yg_cuda_check());
        printf("%d CUDA device(s)\n", yg_cuda_device_count());
        return;
    }
    assert_int_equal(yg_cuda_device_count(), 0);
    yg_status st = yg_cuda_check();
    assert_int_equal(st, YG_ERR_DEVICE);
    const char *why = yg_last_error();
    assert_true(strstr(why, "built without CUDA") != NULL || strstr(why, "no CUDA device") != NULL);
    printf("no device here: %s\n", why);
    /* Everything that needs a device says so, naming itself. */
    YG_EXPECT_ERROR(yg_cuda_get_device_properties(0, &p), YG_ERR_DEVICE, "cuda_get_device_properties: ");
    YG_EXPECT_ERROR(yg_cuda_synchronize(0), YG_ERR_DEVICE, "cuda_synchronize: ");
    YG_EXPECT_ERROR(yg_cuda_memory_stats_get(0, &m), YG_ERR_DEVICE, "cuda_memory_stats_get: ");
    yg_tensor *t = (yg_tensor *)&p;
    int64_t four = 4;
    YG_EXPECT_ERROR(yg__tensor_new_on("empty", &four, 1, YG_FLOAT32, YG_CUDA, 0, &t),
                    YG_ERR_DEVICE,
                    "empty: cuda: ");
    assert_null(t);
    YG_EXPECT_ERROR(
        yg_cuda_get_device_properties(0, NULL), YG_ERR_INVALID_ARGUMENT, "out is NULL");
    yg_cuda_empty_cache(); /* harmless */
    yg_cuda_release_all(false); /* so is this */
    yg_cuda_stream *stream = (yg_cuda_stream *)&p;
    yg_cuda_event *event = (yg_cuda_event *)&p;
    YG_EXPECT_ERROR(yg_cuda_stream_create(0, &stream), YG_ERR_DEVICE, "cuda_stream_create: ");
    assert_null(stream);
    YG_EXPECT_ERROR(yg_cuda_set_stream(0, NULL), YG_ERR_DEVICE, "cuda_set_stream: ");
    YG_EXPECT_ERROR(yg_cuda_event_create(0, &event), YG_ERR_DEVICE, "cuda_event_create: ");
    assert_null(event);
    assert_null(yg_cuda_get_stream(0));
}

static void test_device_properties_and_bad_indices(void **state) {
    (void)state;
    need_device();
    yg_cuda_device_properties p;
    int n = yg_cuda_device_count();
    for (int i = 0; i < n; i++) {
        YG_CHECK(yg_cuda_get_device_properties(i, &p));
        printf("cuda:%d: %s, sm_%d%d, %d SMs, %lld MiB\n",
               i,
               p.name,
               p.major,
               p.minor,
               p.multiprocessor_count,
               (long long)(p.total_memory >> 20));
        assert_true(p.name[0] != '\0');
        assert_true(p.major >= 5);
        assert_true(p.total_memory > 0);
        YG_CHECK(yg_cuda_synchronize(i));
    }
    char want[64];
    snprintf(want, sizeof want, "device index %d out of range", n);
    YG_EXPECT_ERROR(yg_cuda_get_device_properties(n, &p), YG_ERR_DEVICE, want);
    YG_EXPECT_ERROR(yg_cuda_synchronize(-1), YG_ERR_DEVICE, "device index -1 out of range");
}

/* Device memory through the cache: few cudaMallocs for many blocks, the
 * counters, a 1 TiB request refused with the sizes in the message and the
 * cache still usable, empty_cache giving everything back. */
static void test_allocator_caches_device_memory(void **state) {
    (void)state;
    need_device();
    const yg_device_backend *cuda = NULL;
    YG_CHECK(yg__backend("test", YG_CUDA, &cuda));
    enum { N = 1000 };
    void *p[N];
    yg_cuda_memory_stats m;
    for (int i = 0; i < N; i++)
        YG_CHECK(cuda->alloc("test", 0, (size_t)(i % 97) * 1000 + 1, &p[i]));
    YG_CHECK(yg_cuda_memory_stats_get(0, &m));
    assert_true(m.num_cuda_mallocs < 40);
    assert_true(m.allocated_bytes > 0 && m.reserved_bytes >= m.allocated_bytes);
    for (int i = 0; i < N; i++)
        cuda->free(0, p[i]);
    YG_CHECK(yg_cuda_memory_stats_get(0, &m));
    assert_int_equal(m.allocated_bytes, 0);
    void *huge = NULL;
    YG_EXPECT_ERROR(cuda->alloc("empty", 0, (size_t)1 << 40, &huge),
                    YG_ERR_OUT_OF_MEMORY,
                    "empty: out of CUDA memory allocating 1099511627776 bytes on cuda:0");
    assert_null(huge);
    void *again = NULL;
    YG_CHECK(cuda->alloc("test", 0, 4096, &again));
    cuda->free(0, again);
    yg_cuda_empty_cache();
    YG_CHECK(yg_cuda_memory_stats_get(0, &m));
    assert_int_equal(m.reserved_bytes, 0);
    assert_int_equal(m.num_cuda_mallocs, m.num_cuda_frees);
    assert_true(m.num_ooms >= 1);
}

/* ---- device tensors ---- */

/* to_device within the CPU: t itself when contiguous, else a contiguous
 * copy; bad device values are refused; a copy of a grad-requiring input
 * is the to_device op, whose backward brings the gradient back. */
static void test_to_device_on_the_cpu(void **state) {
    (void)state;
    const int64_t s[] = {2, 3};
    const double v[] = {1, 2, 3, 4, 5, 6}, vt[] = {1, 4, 2, 5, 3, 6};
    const int64_t st[] = {3, 2};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 2, v), *t = NULL, *y = NULL;
    YG_CHECK(yg_tensor_to_device(x, YG_CPU, 0, &y));
    assert_ptr_equal(y, x);
    assert_int_equal(yg_tensor_device_index(y), 0);
    yg_release(y);
    YG_CHECK(yg_transpose(x, 0, 1, &t));
    YG_CHECK(yg_tensor_to_device(t, YG_CPU, 5, &y)); /* the index means nothing on the CPU */
    assert_true(yg_tensor_is_contiguous(y));
    YG_EXPECT_CLOSE(y, st, 2, vt, 0, 0);
    yg_release(y);
    y = NULL;
    YG_EXPECT_ERROR(yg_tensor_to_device(x, (yg_device)7, 0, &y), YG_ERR_DEVICE,
                    "to_device: invalid device 7");
    assert_null(y);
    YG_EXPECT_ERROR(yg_tensor_to_device(NULL, YG_CPU, 0, &y), YG_ERR_INVALID_ARGUMENT, "to_device:");
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_tensor_to_device(x, YG_CPU, 0, &y)); /* no copy: x itself */
    assert_ptr_equal(y, x);
    yg_release(y);
    yg_tensor *xt = NULL, *sum = NULL, *g = NULL;
    const double ones[] = {1, 1, 1, 1, 1, 1};
    YG_CHECK(yg_transpose(x, 0, 1, &xt));
    YG_CHECK(yg_tensor_to_device(xt, YG_CPU, 0, &y)); /* a copy, recorded */
    assert_true(yg_tensor_requires_grad(y));
    YG_CHECK(yg_sum(y, &sum));
    YG_CHECK(yg_backward(sum, NULL, false));
    YG_CHECK(yg_tensor_grad(x, &g));
    YG_EXPECT_CLOSE(g, s, 2, ones, 0, 0);
    yg_release(g);
    yg_release(sum);
    yg_release(y);
    y = NULL;
    if (!yg_cuda_is_available()) {
        YG_EXPECT_ERROR(yg_tensor_to_device(x, YG_CUDA, 0, &y), YG_ERR_DEVICE, "to_device: ");
        assert_null(y);
    }
    /* The op itself: a new tensor even where self is already. */
    YG_CHECK(yg_to_device(x, YG_CPU, 0, &y));
    assert_true(y != x);
    yg_release(y);
    y = NULL;
    YG_EXPECT_ERROR(yg_to_device(x, (yg_device)7, 0, &y), YG_ERR_DEVICE,
                    "to_device: invalid device 7");
    YG_EXPECT_ERROR(yg_to_device(x, YG_CUDA, -1, &y), YG_ERR_DEVICE,
                    "to_device: device index -1 out of range");
    assert_null(y);
    yg_release(xt);
    yg_release(t);
    yg_release(x);
}

/* Without a usable device, a copy to one fails with the reason. */
static void test_to_device_names_why_no_device_is_usable(void **state) {
    (void)state;
    char why[512];
    const int64_t s[] = {4};
    yg_tensor *x = NULL, *y = NULL;
    if (yg_cuda_check() == YG_OK) {
        printf("a device is usable here: to_device_round_trips checks it\n");
        return;
    }
    snprintf(why, sizeof why, "to_device: %s", yg_last_error());
    YG_CHECK(yg_tensor_zeros(s, 1, YG_FLOAT32, &x));
    YG_EXPECT_ERROR(yg_tensor_to_device(x, YG_CUDA, 0, &y), YG_ERR_DEVICE, why);
    assert_null(y);
    yg_release(x);
}

/* H2D, D2D and D2H copies keep every value, for each dtype; a cuda tensor
 * reads back through yg_tensor_to_f64 and yg_tensor_item; its memory is
 * the allocator's. */
static void test_to_device_round_trips(void **state) {
    (void)state;
    need_device();
    const yg_dtype dts[] = {YG_FLOAT32, YG_FLOAT64, YG_INT64, YG_INT32, YG_BOOL};
    const int64_t s[] = {3, 5}, e[] = {0, 4};
    yg_cuda_memory_stats before, during;
    YG_CHECK(yg_cuda_memory_stats_get(0, &before));
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        yg_tensor *x = yg_test_rand(dts[k], s, 2, -3, 3, 11 + k), *d = NULL, *d2 = NULL, *h = NULL;
        double *want = yg_test_values(x), got[15];
        YG_CHECK(yg_tensor_to_device(x, YG_CUDA, 0, &d));
        assert_int_equal(yg_tensor_device(d), YG_CUDA);
        assert_int_equal(yg_tensor_device_index(d), 0);
        assert_int_equal(yg_tensor_dtype(d), dts[k]);
        YG_CHECK(yg_cuda_memory_stats_get(0, &during));
        assert_true(during.allocated_bytes > before.allocated_bytes);
        YG_CHECK(yg_tensor_to_device(d, YG_CUDA, 0, &d2)); /* already there: itself */
        assert_ptr_equal(d2, d);
        yg_release(d2);
        YG_CHECK(yg_tensor_to_device(d, YG_CPU, 0, &h));
        YG_EXPECT_CLOSE(h, s, 2, want, 0, 0);
        YG_CHECK(yg_tensor_to_f64(d, got, 15));
        assert_memory_equal(got, want, sizeof got);
        free(want);
        yg_release(h);
        yg_release(d);
        yg_release(x);
    }
    yg_tensor *sc = NULL, *dsc = NULL, *empty = NULL, *de = NULL;
    double item = 0;
    YG_CHECK(yg_tensor_scalar(2.5, YG_FLOAT64, &sc));
    YG_CHECK(yg_tensor_to_device(sc, YG_CUDA, 0, &dsc));
    YG_CHECK(yg_tensor_item(dsc, &item));
    assert_true(item == 2.5);
    yg_release(dsc);
    yg_release(sc);
    YG_CHECK(yg_tensor_zeros(e, 2, YG_FLOAT32, &empty));
    YG_CHECK(yg_tensor_to_device(empty, YG_CUDA, 0, &de));
    assert_int_equal(yg_tensor_numel(de), 0);
    yg_release(de);
    yg_release(empty);
    YG_CHECK(yg_cuda_memory_stats_get(0, &during));
    assert_int_equal(during.allocated_bytes, before.allocated_bytes);

    /* Gradients cross devices: sum(to_device(x)^2) on the GPU gives a CPU
     * leaf 2x, and a GPU leaf read on the CPU gets its gradient back on
     * the GPU. */
    const double v[] = {1, -2, 3, 0.5, 4, -1};
    const int64_t s6[] = {2, 3};
    yg_tensor *xc = yg_test_tensor(YG_FLOAT64, s6, 2, v), *xd = NULL, *sq = NULL, *l = NULL;
    yg_tensor *g = NULL, *xg = NULL, *back = NULL, *l2 = NULL, *g2 = NULL;
    YG_CHECK(yg_tensor_set_requires_grad(xc, true));
    YG_CHECK(yg_tensor_to_device(xc, YG_CUDA, 0, &xd));
    assert_int_equal(yg_tensor_device(xd), YG_CUDA);
    YG_CHECK(yg_mul(xd, xd, &sq));
    YG_CHECK(yg_sum(sq, &l));
    YG_CHECK(yg_backward(l, NULL, false));
    YG_CHECK(yg_tensor_grad(xc, &g));
    assert_int_equal(yg_tensor_device(g), YG_CPU);
    const double twice[] = {2, -4, 6, 1, 8, -2};
    YG_EXPECT_CLOSE(g, s6, 2, twice, 0, 0);
    YG_CHECK(yg_tensor_to_device(xc, YG_CUDA, 0, &xg)); /* detached below: a GPU leaf */
    YG_CHECK(yg_detach_(xg));
    YG_CHECK(yg_tensor_set_requires_grad(xg, true));
    YG_CHECK(yg_tensor_to_device(xg, YG_CPU, 0, &back));
    YG_CHECK(yg_sum(back, &l2));
    YG_CHECK(yg_backward(l2, NULL, false));
    YG_CHECK(yg_tensor_grad(xg, &g2));
    assert_int_equal(yg_tensor_device(g2), YG_CUDA);
    const double ones[] = {1, 1, 1, 1, 1, 1};
    YG_EXPECT_CLOSE(g2, s6, 2, ones, 0, 0);
    yg_tensor *all[] = {xc, xd, sq, l, g, xg, back, l2, g2};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        yg_release(all[k]);
}

/* Ops check CUDA tensors with the CPU's messages (the checks are the
 * device-neutral meta functions'), and refuse tensors of two devices,
 * naming both. */
static void test_ops_refuse_device_tensors_with_messages(void **state) {
    (void)state;
    need_device();
    const int64_t s[] = {2, 3};
    int n = yg_cuda_device_count();
    char msg[128];
    yg_tensor *x = yg_test_rand(YG_FLOAT32, s, 2, -1, 1, 3), *d = NULL, *y = NULL, *t = NULL;
    YG_CHECK(yg_tensor_to_device(x, YG_CUDA, 0, &d));
    YG_EXPECT_ERROR(yg_mm(d, d, &y), YG_ERR_SHAPE, "mm: cannot multiply self [2, 3] by mat2 [2, 3]");
    YG_EXPECT_ERROR(yg_add(d, x, 1, &y),
                    YG_ERR_DEVICE,
                    "add: expected all tensors on one device, but self is on cuda:0 and other on cpu");
    YG_EXPECT_ERROR(yg_add(x, d, 1, &y),
                    YG_ERR_DEVICE,
                    "add: expected all tensors on one device, but self is on cpu and other on cuda:0");
    YG_EXPECT_ERROR(yg_cat((const yg_tensor *const[]){x, d}, 2, 0, &y),
                    YG_ERR_DEVICE,
                    "cat: expected all tensors on one device, but tensors[0] is on cpu and "
                    "tensors[1] on cuda:0");
    assert_null(y);
    YG_CHECK(yg_transpose(d, 0, 1, &t)); /* views need no kernel */
    snprintf(msg, sizeof msg, "to_device: device index %d out of range", n);
    YG_EXPECT_ERROR(yg_tensor_to_device(x, YG_CUDA, n, &y), YG_ERR_DEVICE, msg);
    yg_release(t);
    yg_release(d);
    yg_release(x);
}

/* x's values on cuda:0 in x's own layout: its whole storage copied over
 * and viewed with x's sizes, strides and offset (to_device would make it
 * contiguous). */
static yg_tensor *device_like(const yg_tensor *x) {
    int64_t n = (int64_t)(x->storage->nbytes / yg_dtype_size(x->dtype)), one = 1;
    yg_tensor *flat = NULL, *dflat = NULL, *v = NULL;
    YG_CHECK(yg__tensor_view("test", x, &n, &one, 1, 0, &flat));
    YG_CHECK(yg_tensor_to_device(flat, YG_CUDA, 0, &dflat));
    YG_CHECK(yg__tensor_view("test", dflat, x->sizes, x->strides, x->ndim, x->offset, &v));
    yg_release(dflat);
    yg_release(flat);
    return v;
}

/* Whether a (from the GPU) equals b (from the CPU): dtype, sizes, and
 * values within rtol/atol for floating dtypes (NaN matching NaN), exactly
 * otherwise. */
static bool same_result(const yg_tensor *a, const yg_tensor *b, double tol, char *why, size_t n) {
    if (yg_tensor_dtype(a) != yg_tensor_dtype(b) || a->ndim != b->ndim ||
        memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->ndim) != 0) {
        snprintf(why, n, "dtype or sizes differ");
        return false;
    }
    yg_tensor *h = NULL;
    YG_CHECK(yg_tensor_to_device(a, YG_CPU, 0, &h));
    double *va = yg_test_values(h), *vb = yg_test_values(b);
    bool ok = true;
    for (int64_t i = 0; ok && i < yg_tensor_numel(b); i++) {
        bool nan = va[i] != va[i] && vb[i] != vb[i];
        double d = fabs(va[i] - vb[i]);
        if (!nan && !(va[i] == vb[i] || d <= tol + tol * fabs(vb[i]))) {
            snprintf(why, n, "element %lld: %.17g on cuda, %.17g on cpu", (long long)i, va[i],
                     vb[i]);
            ok = false;
        }
    }
    free(va);
    free(vb);
    yg_release(h);
    return ok;
}

/* Every OpInfo sample runs on cuda:0 as on the CPU: each dtype the op
 * claims (float32, float64, int64, int32, bool), contiguous and strided
 * inputs (transposed, every other element), 0-dim and empty variants.
 * Where the GPU has a result it must be the CPU's; where the CPU refuses,
 * the GPU must refuse with the same message.  Every op has a CUDA kernel
 * (itself or its parts): one that says "no kernel for device cuda" is
 * listed, and the test fails at the end. */
static void test_opinfo_samples_match_the_cpu(void **state) {
    (void)state;
    need_device();
    static const yg_dtype dts[] = {YG_FLOAT32, YG_FLOAT64, YG_INT64, YG_INT32, YG_BOOL};
    int runs = 0, ops = 0, without = 0, pointwise = 0, missing = 0;
    const char *last_op = "", *last_without = "";
    for (int i = 0; i < opinfo_sample_count(); i++) {
        const sample *s = opinfo_sample_at(i);
        const yg_op_info *op = opinfo_op(s->op);
        if (op == NULL)
            continue;
        bool is_pointwise = op->kind == YG_OP_KIND_POINTWISE;
        bool new_op = strcmp(last_op, s->op) != 0;
        last_op = s->op;
        bool ran = false;
        for (size_t k = 0; k < sizeof dts / sizeof *dts; k++) {
            yg_dtype dt = dts[k];
            if (!(op->dtypes & YG_DTYPE_BIT(dt)) ||
                ((s->flags & OPINFO_NO_DTYPE_SWEEP) && dt != YG_FLOAT64))
                continue;
            for (int variant = 0; variant < 4; variant++) {
                bool noncontig = variant == 1;
                int shape_mode = variant < 2 ? 0 : variant - 1;
                if (shape_mode != 0 && (!(is_pointwise || (s->flags & OPINFO_ANY_SHAPE)) ||
                                        (s->flags & OPINFO_FIXED_SHAPE)))
                    continue;
                yg_tensor *x[MAX_IN] = {NULL}, *xd[MAX_IN] = {NULL}, *yc = NULL, *yd = NULL;
                for (int j = 0; j < s->n_inputs; j++) {
                    x[j] = opinfo_make_input(s, j, dt, 7 + (uint64_t)j, noncontig, shape_mode);
                    xd[j] = device_like(x[j]);
                }
                yg_status sc = opinfo_call(s, x, &yc);
                char cpu_msg[512];
                snprintf(cpu_msg, sizeof cpu_msg, "%s", yg_last_error());
                yg_status sd = opinfo_call(s, xd, &yd);
                char why[256] = "";
                if (sd == YG_ERR_DEVICE && strstr(yg_last_error(), "no kernel for device cuda")) {
                    if (strcmp(last_without, s->op) != 0) {
                        printf("no CUDA kernel: %s: %s\n", s->op, yg_last_error());
                        missing++;
                    }
                    last_without = s->op;
                } else if (sc != sd) {
                    fail_msg("%s (%s, %s, variant %d): cpu gives %s, cuda %s: %s", s->op, s->what,
                             yg_dtype_name(dt), variant, yg_status_name(sc), yg_status_name(sd),
                             sd != YG_OK ? yg_last_error() : cpu_msg);
                } else if (sc != YG_OK) {
                    assert_string_equal(yg_last_error(), cpu_msg);
                    ran = true;
                } else if (yg_tensor_device(yd) != YG_CUDA ||
                           !same_result(yd, yc, dt == YG_FLOAT32 ? 1e-5 : 1e-12, why,
                                        sizeof why)) {
                    fail_msg("%s (%s, %s, variant %d): %s", s->op, s->what, yg_dtype_name(dt),
                             variant, yg_tensor_device(yd) != YG_CUDA ? "not on cuda" : why);
                } else {
                    ran = true;
                    runs++;
                }
                yg_release(yc);
                yg_release(yd);
                for (int j = 0; j < s->n_inputs; j++) {
                    yg_release(x[j]);
                    yg_release(xd[j]);
                }
            }
        }
        if (new_op) {
            ops += ran;
            pointwise += ran && is_pointwise;
            without += !ran;
        }
    }
    printf("%d runs of %d ops (%d of them pointwise) matched the cpu; %d ops ran no sample; "
           "%d have no CUDA kernel\n",
           runs, ops, pointwise, without, missing);
    assert_true(pointwise > 60);
    assert_int_equal(missing, 0);
}

/* Copies between every pair of dtypes on the GPU, from strided and
 * broadcast sources, give the CPU's values (the conversion rules of
 * core/convert.c: saturation, NaN to 0, wrap-around, rounding). */
static void test_copies_convert_as_the_cpu(void **state) {
    (void)state;
    need_device();
    const int64_t s[] = {3, 4};
    const double v[] = {0, -1.5, 2.5, 1e10, -1e10, NAN, INFINITY, -INFINITY, 65504.5, 1e-8, 3, 7};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 2, v);
    int pairs = 0;
    for (int a = 0; a < YG_DTYPE_COUNT_; a++) {
        yg_tensor *xa = NULL, *t = NULL;
        YG_CHECK(yg__tensor_contiguous_as(x, (yg_dtype)a, false, &xa));
        YG_CHECK(yg_transpose(xa, 0, 1, &t));
        yg_tensor *td = device_like(t);
        for (int b = 0; b < YG_DTYPE_COUNT_; b++, pairs++) {
            yg_tensor *yc = NULL, *yd = NULL;
            char why[256];
            YG_CHECK(yg__tensor_contiguous_as(t, (yg_dtype)b, false, &yc));
            YG_CHECK(yg__tensor_contiguous_as(td, (yg_dtype)b, false, &yd));
            if (!same_result(yd, yc, 0, why, sizeof why))
                fail_msg("%s -> %s: %s", yg_dtype_name((yg_dtype)a), yg_dtype_name((yg_dtype)b),
                         why);
            yg_release(yc);
            yg_release(yd);
        }
        yg_release(td);
        yg_release(t);
        yg_release(xa);
    }
    printf("%d dtype pairs copied on cuda:0 as on the cpu\n", pairs);
    yg_release(x);
}

/* Creation, fills, copy_ and views on cuda:0 give the CPU's values:
 * zeros/ones/full in every dtype, fill_ and zero_ of a transposed view,
 * copy_ from a broadcast source of another dtype, and views (select,
 * slice with a step, expand, chunk) gathered by contiguous. */
static void test_creation_fills_and_views_match_the_cpu(void **state) {
    (void)state;
    need_device();
    const int64_t s[] = {3, 5}, row[] = {5};
    const yg_device cuda = YG_CUDA;
    char why[256];
    for (int d = 0; d < YG_DTYPE_COUNT_; d++) {
        const yg_dtype dt = (yg_dtype)d;
        yg_tensor *c = NULL, *g = NULL;
        YG_CHECK(yg_full(s, 2, -2.75, &dt, NULL, &c));
        YG_CHECK(yg_full(s, 2, -2.75, &dt, &cuda, &g));
        assert_int_equal(yg_tensor_device(g), YG_CUDA);
        if (!same_result(g, c, 0, why, sizeof why))
            fail_msg("full %s: %s", yg_dtype_name(dt), why);
        yg_release(c);
        yg_release(g);
        YG_CHECK(yg_zeros(s, 2, &dt, &cuda, &g));
        YG_CHECK(yg_zeros(s, 2, &dt, NULL, &c));
        assert_true(same_result(g, c, 0, why, sizeof why));
        yg_release(c);
        yg_release(g);
    }
    yg_tensor *xc = yg_test_rand(YG_FLOAT64, s, 2, -1, 1, 11), *xg = device_like(xc);
    yg_tensor *rc = yg_test_rand(YG_FLOAT32, row, 1, -1, 1, 12), *rg = device_like(rc);
    yg_tensor *tc = NULL, *tg = NULL, *same = NULL;
    YG_CHECK(yg_transpose(xc, 0, 1, &tc));
    YG_CHECK(yg_transpose(xg, 0, 1, &tg));
    YG_CHECK(yg_fill_(tc, 0.5, &same));
    yg_release(same);
    YG_CHECK(yg_fill_(tg, 0.5, &same));
    yg_release(same);
    YG_CHECK(yg_copy_(xc, rc, &same)); /* [5] float32 broadcast into [3, 5] float64 */
    yg_release(same);
    YG_CHECK(yg_copy_(xg, rg, &same));
    yg_release(same);
    assert_true(same_result(xg, xc, 0, why, sizeof why));
    yg_tensor *vc[4] = {NULL}, *vg[4] = {NULL};
    const int64_t e[] = {2, 3, 5};
    YG_CHECK(yg_select(xc, 1, 2, &vc[0]));
    YG_CHECK(yg_select(xg, 1, 2, &vg[0]));
    YG_CHECK(yg_slice(xc, 1, 0, 5, 2, &vc[1]));
    YG_CHECK(yg_slice(xg, 1, 0, 5, 2, &vg[1]));
    YG_CHECK(yg_expand(xc, e, 3, &vc[2]));
    YG_CHECK(yg_expand(xg, e, 3, &vg[2]));
    YG_CHECK(yg_zero_(tc, &same));
    yg_release(same);
    YG_CHECK(yg_zero_(tg, &same));
    yg_release(same);
    YG_CHECK(yg_clone(xc, &vc[3]));
    YG_CHECK(yg_clone(xg, &vg[3]));
    for (int k = 0; k < 4; k++) {
        yg_tensor *cc = NULL, *cg = NULL;
        YG_CHECK(yg_contiguous(vc[k], &cc));
        YG_CHECK(yg_contiguous(vg[k], &cg));
        if (!same_result(cg, cc, 0, why, sizeof why))
            fail_msg("view %d: %s", k, why);
        yg_release(cc);
        yg_release(cg);
        yg_release(vc[k]);
        yg_release(vg[k]);
    }
    yg_release(tc);
    yg_release(tg);
    yg_release(rc);
    yg_release(rg);
    yg_release(xc);
    yg_release(xg);
}

/* mm and bmm through cuBLAS (row-major and transposed operands), sum
 * and mean over all dims and over lists of dims (long rows too, which
 * take two launches), and a backward through them, all on cuda:0, give
 * the CPU's values and gradients. */
static void test_products_sums_and_backward_match_the_cpu(void **state) {
    (void)state;
    need_device();
    char why[256];
    const int64_t sa[] = {7, 5}, sb[] = {5, 3}, sc[] = {4, 7, 5}, sd[] = {4, 5, 6};
    const int64_t sbig[] = {3, 100000}, dims[] = {0}, dims2[] = {0, 2};
    for (int f = 0; f < 2; f++) {
        yg_dtype dt = f == 0 ? YG_FLOAT32 : YG_FLOAT64;
        double tol = f == 0 ? 1e-5 : 1e-12;
        yg_tensor *a = yg_test_rand(dt, sa, 2, -1, 1, 21), *b = yg_test_rand(dt, sb, 2, -1, 1, 22);
        yg_tensor *c = yg_test_rand(dt, sc, 3, -1, 1, 23), *d = yg_test_rand(dt, sd, 3, -1, 1, 24);
        yg_tensor *big = yg_test_rand(dt, sbig, 2, -1, 1, 25);
        yg_tensor *ag = device_like(a), *bg = device_like(b), *cg = device_like(c);
        yg_tensor *dg = device_like(d), *bigg = device_like(big);
        yg_tensor *at = NULL, *atg = NULL, *yc[8] = {NULL}, *yg[8] = {NULL};
        YG_CHECK(yg_transpose(a, 0, 1, &at));
        YG_CHECK(yg_transpose(ag, 0, 1, &atg));
        YG_CHECK(yg_mm(a, b, &yc[0]));
        YG_CHECK(yg_mm(ag, bg, &yg[0]));
        YG_CHECK(yg_mm(at, a, &yc[1])); /* a transposed left operand */
        YG_CHECK(yg_mm(atg, ag, &yg[1]));
        YG_CHECK(yg_bmm(c, d, &yc[2]));
        YG_CHECK(yg_bmm(cg, dg, &yg[2]));
        YG_CHECK(yg_sum(big, &yc[3]));
        YG_CHECK(yg_sum(bigg, &yg[3]));
        YG_CHECK(yg_mean_dim(big, dims, 1, true, &yc[4]));
        YG_CHECK(yg_mean_dim(bigg, dims, 1, true, &yg[4]));
        YG_CHECK(yg_sum_dim(c, dims2, 2, false, &yc[5]));
        YG_CHECK(yg_sum_dim(cg, dims2, 2, false, &yg[5]));
        YG_CHECK(yg_mean(at, &yc[6]));
        YG_CHECK(yg_mean(atg, &yg[6]));
        for (int k = 0; k < 7; k++)
            if (!same_result(yg[k], yc[k], k == 3 ? 1e3 * tol : tol, why, sizeof why))
                fail_msg("%s result %d: %s", yg_dtype_name(dt), k, why);
        /* sum(tanh(a @ b + b[0])) backward, on each device */
        yg_tensor *lc = NULL, *lg = NULL, *gc = NULL, *gg = NULL;
        yg_tensor *ins[2][2] = {{a, b}, {ag, bg}}, **loss[2] = {&lc, &lg}, **grad[2] = {&gc, &gg};
        for (int dev = 0; dev < 2; dev++) {
            yg_tensor *x = ins[dev][0], *w = ins[dev][1], *m = NULL, *r = NULL, *h = NULL;
            yg_tensor *row0 = NULL;
            YG_CHECK(yg_tensor_set_requires_grad(x, true));
            YG_CHECK(yg_mm(x, w, &m));
            YG_CHECK(yg_select(w, 0, 0, &row0));
            YG_CHECK(yg_add(m, row0, 1, &r));
            YG_CHECK(yg_tanh(r, &h));
            YG_CHECK(yg_sum(h, loss[dev]));
            YG_CHECK(yg_backward(*loss[dev], NULL, false));
            YG_CHECK(yg_tensor_grad(x, grad[dev]));
            yg_release(m);
            yg_release(r);
            yg_release(h);
            yg_release(row0);
        }
        assert_int_equal(yg_tensor_device(gg), YG_CUDA);
        if (!same_result(lg, lc, tol, why, sizeof why) ||
            !same_result(gg, gc, tol, why, sizeof why))
            fail_msg("%s backward: %s", yg_dtype_name(dt), why);
        yg_tensor *all[] = {lc, lg, gc, gg, a, b, c, d, big, ag, bg, cg, dg, bigg, at, atg};
        for (size_t k = 0; k < sizeof all / sizeof *all; k++)
            yg_release(all[k]);
        for (int k = 0; k < 8; k++) {
            yg_release(yc[k]);
            yg_release(yg[k]);
        }
    }
}

/* Every sample test_gradcheck checks on the CPU, differentiated on cuda:0
 * in float64: the gradients of sum(v * f(x)) that a backward pass on the
 * GPU computes equal the CPU's, which test_gradcheck proves against
 * central differences, to 1e-10.  So every derivative formula (and every
 * composite op's chain) runs, and is checked, on the GPU's kernels; a
 * gradient that needs a kernel the GPU lacks fails. */
static void test_every_derivative_matches_the_cpu_on_the_gpu(void **state) {
    (void)state;
    need_device();
    int runs = 0, failures = 0;
    for (int i = 0; i < opinfo_sample_count(); i++) {
        const sample *s = opinfo_sample_at(i);
        if (!opinfo_is_differentiable(s))
            continue;
        const yg_derivative_info *entry = opinfo_derivative(s->op);
        if (entry != NULL && entry->n_inputs == 0)
            continue; /* nothing to differentiate: test_gradcheck's check */
        yg_tensor *x[2][MAX_IN] = {{NULL}}, *y[2] = {NULL}, *v[2] = {NULL};
        yg_status st[2] = {YG_OK, YG_OK};
        char msg[512] = "";
        for (int dev = 0; dev < 2; dev++) {
            for (int j = 0; j < s->n_inputs; j++) {
                yg_tensor *c = opinfo_make_input(s, j, YG_FLOAT64, 1000 + (uint64_t)i * 17 + j,
                                                 false, 0);
                if (dev == 0)
                    x[dev][j] = c;
                else {
                    YG_CHECK(yg_tensor_to_device(c, YG_CUDA, 0, &x[dev][j])); /* a leaf */
                    yg_release(c);
                }
                if (s->in[j].dtype == YG_FLOAT64 && !s->in[j].constant)
                    YG_CHECK(yg_tensor_set_requires_grad(x[dev][j], true));
            }
            st[dev] = opinfo_call(s, x[dev], &y[dev]);
            if (st[dev] == YG_OK) {
                yg_tensor *vc = yg_test_rand(YG_FLOAT64, yg_tensor_sizes(y[0]),
                                             yg_tensor_ndim(y[0]), -1, 1, 99 + (uint64_t)i);
                if (dev == 0)
                    v[dev] = vc;
                else {
                    YG_CHECK(yg_tensor_to_device(vc, YG_CUDA, 0, &v[dev]));
                    yg_release(vc);
                }
                st[dev] = yg_backward(y[dev], v[dev], false);
            }
            if (st[dev] != YG_OK)
                snprintf(msg, sizeof msg, "%s", yg_last_error());
        }
        if (st[0] != YG_OK || st[1] != YG_OK) {
            printf("%s (%s): %s on the %s\n", s->op, s->what, msg, st[0] != YG_OK ? "cpu" : "gpu");
            failures++;
        }
        for (int j = 0; j < s->n_inputs && st[0] == YG_OK && st[1] == YG_OK; j++) {
            if (s->in[j].dtype != YG_FLOAT64 || s->in[j].constant)
                continue;
            yg_tensor *gc = NULL, *gg = NULL;
            char why[256] = "no gradient";
            YG_CHECK(yg_tensor_grad(x[0][j], &gc));
            YG_CHECK(yg_tensor_grad(x[1][j], &gg));
            if ((gc == NULL) != (gg == NULL) ||
                (gc != NULL && (yg_tensor_device(gg) != YG_CUDA ||
                                !same_result(gg, gc, 1e-10, why, sizeof why)))) {
                printf("%s (%s): the gradient of input %d: %s\n", s->op, s->what, j, why);
                failures++;
            }
            yg_release(gc);
            yg_release(gg);
        }
        runs++;
        for (int dev = 0; dev < 2; dev++) {
            yg_release(y[dev]);
            yg_release(v[dev]);
            for (int j = 0; j < s->n_inputs; j++)
                yg_release(x[dev][j]);
        }
    }
    printf("%d differentiable samples ran backward on the gpu; %d differ from the cpu\n", runs,
           failures);
    assert_true(runs > 200);
    assert_int_equal(failures, 0);
}

/* Streams and events: work queued on a stream of this thread's choosing
 * is ordered by events, copies wait for the current stream, and the
 * refusals name the devices. */
static void test_streams_and_events_order_work(void **state) {
    (void)state;
    need_device();
    yg_cuda_stream *s1 = NULL, *s2 = NULL;
    yg_cuda_event *e = NULL, *t0 = NULL;
    const int64_t n[] = {1 << 20};
    YG_CHECK(yg_cuda_stream_create(0, &s1));
    YG_CHECK(yg_cuda_stream_create(0, &s2));
    YG_CHECK(yg_cuda_event_create(0, &e));
    YG_CHECK(yg_cuda_event_create(0, &t0));
    assert_null(yg_cuda_get_stream(0));
    assert_int_equal(yg_cuda_stream_device(s1), 0);

    /* y = x * 2 + 1 on s1, then z = y * 3 on s2 after an event. */
    yg_tensor *x = yg_test_rand(YG_FLOAT32, n, 1, -1, 1, 5), *xg = device_like(x);
    yg_tensor *y = NULL, *z = NULL, *zc = NULL, *yc = NULL, *want = NULL;
    YG_CHECK(yg_cuda_set_stream(0, s1));
    assert_ptr_equal(yg_cuda_get_stream(0), s1);
    YG_CHECK(yg_cuda_event_record(t0, NULL));
    YG_CHECK(yg_mul_scalar(xg, 2, &yc));
    YG_CHECK(yg_add_scalar(yc, 1, 1, &y));
    YG_CHECK(yg_cuda_event_record(e, NULL));
    YG_CHECK(yg_cuda_set_stream(0, s2));
    YG_CHECK(yg_cuda_stream_wait_event(NULL, e));
    YG_CHECK(yg_mul_scalar(y, 3, &z));
    YG_CHECK(yg_tensor_to_device(z, YG_CPU, 0, &zc)); /* waits for s2 */
    YG_CHECK(yg_cuda_set_stream(0, NULL));
    YG_CHECK(yg_cuda_event_synchronize(e));
    bool done = false;
    YG_CHECK(yg_cuda_event_query(e, &done));
    assert_true(done);
    double ms = -1;
    YG_CHECK(yg_cuda_event_elapsed_ms(t0, e, &ms));
    assert_true(ms >= 0);
    yg_tensor *x2 = NULL, *x21 = NULL;
    YG_CHECK(yg_mul_scalar(x, 2, &x2));
    YG_CHECK(yg_add_scalar(x2, 1, 1, &x21));
    YG_CHECK(yg_mul_scalar(x21, 3, &want));
    char why[256];
    if (!same_result(zc, want, 1e-6, why, sizeof why))
        fail_msg("two streams: %s", why);

    /* A large copy goes through the pinned staging buffers both ways. */
    const int64_t big[] = {3 * (1 << 20) + 17}; /* 12 MiB + 68 bytes */
    yg_tensor *b = yg_test_rand(YG_FLOAT32, big, 1, -1, 1, 6), *bg = NULL, *bc = NULL;
    YG_CHECK(yg_tensor_to_device(b, YG_CUDA, 0, &bg));
    YG_CHECK(yg_tensor_to_device(bg, YG_CPU, 0, &bc));
    assert_memory_equal(yg_tensor_data(bc), yg_tensor_data(b), (size_t)big[0] * sizeof(float));

    /* Refusals. */
    assert_int_equal(yg_cuda_set_stream(1 + yg_cuda_device_count(), NULL), YG_ERR_DEVICE);
    assert_non_null(strstr(yg_last_error(), "out of range"));
    assert_int_equal(yg_cuda_event_record(NULL, NULL), YG_ERR_INVALID_ARGUMENT);
    assert_string_equal(yg_last_error(), "cuda_event_record: event is NULL");

    yg_tensor *all[] = {x, xg, y, z, zc, yc, want, x2, x21, b, bg, bc};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        yg_release(all[k]);
    yg_cuda_event_destroy(e);
    yg_cuda_event_destroy(t0);
    yg_cuda_stream_destroy(s1);
    yg_cuda_stream_destroy(s2);
}

/* Issue 28, item 8: a stream current on another thread when it is
 * destroyed leaves that thread on the default stream, not on a dangling
 * pointer; the memory cached for the stream returns to use on the default
 * stream without a new cudaMalloc. */
typedef struct stream_holder {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int step; /* 1: the stream is current there; 2: destroyed; 3: checked */
    yg_cuda_stream *stream;
    yg_cuda_stream *after; /* what the thread saw once it was destroyed */
    yg_status st;
} stream_holder;

static void holder_step(stream_holder *h, int step) {
    pthread_mutex_lock(&h->lock);
    h->step = step;
    pthread_cond_broadcast(&h->cond);
    pthread_mutex_unlock(&h->lock);
}

static void holder_wait(stream_holder *h, int step) {
    pthread_mutex_lock(&h->lock);
    while (h->step < step)
        pthread_cond_wait(&h->cond, &h->lock);
    pthread_mutex_unlock(&h->lock);
}

static void *hold_stream(void *arg) {
    stream_holder *h = arg;
    h->st = yg_cuda_set_stream(0, h->stream);
    holder_step(h, 1);
    holder_wait(h, 2);
    h->after = yg_cuda_get_stream(0);
    holder_step(h, 3);
    return NULL;
}

static void test_destroying_a_stream_clears_it_on_every_thread(void **state) {
    (void)state;
    need_device();
    stream_holder h = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
    pthread_t th;
    yg_cuda_memory_stats m0, m1;
    const int64_t n[] = {1 << 20};
    YG_CHECK(yg_cuda_stream_create(0, &h.stream));
    h.after = h.stream;
    /* 4 MiB allocated on the stream, then released: cached for it */
    YG_CHECK(yg_cuda_set_stream(0, h.stream));
    yg_tensor *x = yg_test_rand(YG_FLOAT32, n, 1, -1, 1, 7), *xg = device_like(x), *y = NULL;
    yg_release(xg);
    assert_int_equal(pthread_create(&th, NULL, hold_stream, &h), 0);
    holder_wait(&h, 1);
    YG_CHECK(h.st);
    YG_CHECK(yg_cuda_memory_stats_get(0, &m0));
    yg_cuda_stream_destroy(h.stream);
    assert_null(yg_cuda_get_stream(0)); /* this thread's */
    holder_step(&h, 2);
    holder_wait(&h, 3);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_null(h.after); /* the other thread's */
    /* the same 4 MiB on the default stream reuse the dead stream's block */
    xg = device_like(x);
    YG_CHECK(yg_cuda_memory_stats_get(0, &m1));
    assert_int_equal(m1.num_cuda_mallocs, m0.num_cuda_mallocs);
    YG_CHECK(yg_mul_scalar(xg, 2, &y)); /* and kernels run on the default stream */
    YG_CHECK(yg_cuda_synchronize(0));
    yg_release(y);
    yg_release(xg);
    yg_release(x);
}

/* Issue 28, item 9: a copy from cuda:0 to cuda:1 waits for the work
 * queued on cuda:0's current stream (a user stream here, with a long
 * chain of kernels writing the source), and the source, released right
 * after, is not reused on cuda:0 before the copy has read it. */
static void test_copies_between_devices_wait_for_the_source_stream(void **state) {
    (void)state;
    need_device();
    char why[256];
    if (yg_cuda_device_count() < 2) {
        snprintf(why, sizeof why, "needs two CUDA devices, found %d", yg_cuda_device_count());
        yg_test_skip(why);
    }
    const int64_t n[] = {1 << 24};
    yg_cuda_stream *s0 = NULL;
    YG_CHECK(yg_cuda_stream_create(0, &s0));
    YG_CHECK(yg_cuda_set_stream(0, s0));
    yg_tensor *x = yg_test_rand(YG_FLOAT32, n, 1, -1, 1, 9), *y = device_like(x), *z = NULL;
    yg_tensor *zc = NULL, *want = NULL;
    for (int i = 0; i < 20; i++) { /* y = y * 1.5 - 0.25, twenty times */
        yg_tensor *t = NULL, *u = NULL;
        YG_CHECK(yg_mul_scalar(y, 1.5, &t));
        YG_CHECK(yg_sub_scalar(t, 0.25, 1, &u));
        yg_release(t);
        yg_release(y);
        y = u;
    }
    YG_CHECK(yg_tensor_to_device(y, YG_CUDA, 1, &z));
    yg_release(y); /* its block may serve s0's next allocation */
    yg_tensor *jg = device_like(x); /* overwrites what s0 reuses */
    YG_CHECK(yg_tensor_to_device(z, YG_CPU, 0, &zc));
    want = yg_retain(x);
    for (int i = 0; i < 20; i++) {
        yg_tensor *t = NULL, *u = NULL;
        YG_CHECK(yg_mul_scalar(want, 1.5, &t));
        YG_CHECK(yg_sub_scalar(t, 0.25, 1, &u));
        yg_release(t);
        yg_release(want);
        want = u;
    }
    if (!same_result(zc, want, 1e-6, why, sizeof why))
        fail_msg("cuda:0 -> cuda:1: %s", why);
    YG_CHECK(yg_cuda_set_stream(0, NULL));
    yg_tensor *all[] = {x, z, zc, want, jg};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        yg_release(all[k]);
    yg_cuda_stream_destroy(s0);
}

/* The view of case c (bmm's operands in one strided-batched cuBLAS call:
 * 0 as it is, 1 transposed matrices, 2 one matrix expanded over the
 * batch, 3 every other batch entry) applied to t, on t's device. */
static yg_tensor *bmm_view(int c, const yg_tensor *t) {
    yg_tensor *v = NULL;
    const int64_t s534[] = {5, 3, 4};
    if (c == 1)
        YG_CHECK(yg_transpose(t, 1, 2, &v));
    else if (c == 2)
        YG_CHECK(yg_expand(t, s534, 3, &v));
    else if (c == 3)
        YG_CHECK(yg_slice(t, 0, 0, 10, 2, &v));
    else
        v = yg_retain((yg_tensor *)t);
    return v;
}

/* Issue 28, item 12: bmm through cublas{S,D}gemmStridedBatched (and the
 * per-entry fallback for a mat2 without a unit stride) gives the CPU's
 * products for contiguous, transposed, expanded (batch stride 0) and
 * batch-strided operands. */
static void test_bmm_strided_batches_match_the_cpu(void **state) {
    (void)state;
    need_device();
    const int64_t sa[4][3] = {{5, 3, 4}, {5, 4, 3}, {1, 3, 4}, {10, 3, 4}};
    const int64_t s542[] = {5, 4, 2}, s544[] = {5, 4, 4};
    char why[256];
    for (int f = 0; f < 2; f++) {
        yg_dtype dt = f == 0 ? YG_FLOAT32 : YG_FLOAT64;
        for (int c = 0; c < 4; c++) {
            yg_tensor *a = yg_test_rand(dt, sa[c], 3, -1, 1, 71 + (uint64_t)c), *ad = device_like(a);
            /* case 3's mat2: every other column, no unit stride (copied) */
            yg_tensor *b = yg_test_rand(dt, c == 3 ? s544 : s542, 3, -1, 1, 81), *bd = device_like(b);
            yg_tensor *x = bmm_view(c, a), *xd = bmm_view(c, ad), *y = NULL, *yd = NULL;
            yg_tensor *want = NULL, *got = NULL;
            if (c == 3) {
                YG_CHECK(yg_slice(b, 2, 0, 4, 2, &y));
                YG_CHECK(yg_slice(bd, 2, 0, 4, 2, &yd));
            } else {
                y = yg_retain(b);
                yd = yg_retain(bd);
            }
            YG_CHECK(yg_bmm(x, y, &want));
            YG_CHECK(yg_bmm(xd, yd, &got));
            if (!same_result(got, want, f == 0 ? 1e-5 : 1e-12, why, sizeof why))
                fail_msg("bmm case %d (%s): %s", c, yg_dtype_name(dt), why);
            yg_tensor *all[] = {a, ad, b, bd, x, xd, y, yd, want, got};
            for (size_t k = 0; k < sizeof all / sizeof *all; k++)
                yg_release(all[k]);
        }
    }
}

/* Issue 28, item 3: yg_cuda_release_all gives back the cached segments
 * (the blocks in use stay), the cuBLAS handle and workspace and the
 * pinned staging buffers, and the next product, large copy and
 * allocation make them again. */
static void test_release_all_gives_back_the_caches_and_work_goes_on(void **state) {
    (void)state;
    need_device();
    const int64_t sq[] = {64, 64}, big[] = {1 << 20};
    yg_tensor *a = yg_test_rand(YG_FLOAT32, sq, 2, -1, 1, 91), *ad = device_like(a);
    yg_tensor *b = yg_test_rand(YG_FLOAT32, big, 1, -1, 1, 92), *bd = device_like(b);
    yg_tensor *p = NULL, *q = NULL, *pc = NULL, *want = NULL, *bc = NULL;
    yg_cuda_memory_stats m;
    char why[256];
    YG_CHECK(yg_mm(ad, ad, &p)); /* a cuBLAS handle and workspace */
    yg_release(bd);              /* 4 MiB cached, unused */
    yg_cuda_release_all(false);
    YG_CHECK(yg_cuda_memory_stats_get(0, &m));
    /* bd's 4 MiB segment went back; ad's and p's small segment stays */
    assert_true(m.reserved_bytes < (4 << 20));
    assert_true(m.allocated_bytes > 0);
    YG_CHECK(yg_mm(p, ad, &q)); /* made again */
    YG_CHECK(yg_mm(a, a, &want));
    yg_tensor *w2 = NULL;
    YG_CHECK(yg_mm(want, a, &w2));
    YG_CHECK(yg_tensor_to_device(q, YG_CPU, 0, &pc));
    if (!same_result(pc, w2, 1e-4, why, sizeof why))
        fail_msg("mm after release_all: %s", why);
    bd = device_like(b); /* staging made again */
    YG_CHECK(yg_tensor_to_device(bd, YG_CPU, 0, &bc));
    assert_memory_equal(yg_tensor_data(bc), yg_tensor_data(b), sizeof(float) << 20);
    yg_tensor *all[] = {a, ad, b, bd, p, q, pc, want, w2, bc};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        yg_release(all[k]);
}

/* Issue 28, item 11: the kernels' 64-bit index paths on a float32 tensor
 * of 2^31 + 17 elements (8 GiB; every other GPU test has fewer than 2^31
 * elements): full, fill_ on a view starting past 2^31, a pointwise
 * chain, sum (the chunked row reduction), argmax (an index past 2^31)
 * and a copy of the tail to the host.  Needs about 40 GiB of device
 * memory (argmax reads a float64 copy); skips on a smaller GPU. */
static void test_kernels_index_past_2_31_elements(void **state) {
    (void)state;
    need_device();
    yg_cuda_device_properties p;
    YG_CHECK(yg_cuda_get_device_properties(0, &p));
    if (p.total_memory < ((int64_t)48 << 30)) {
        char why[128];
        snprintf(why, sizeof why,
                 "needs 48 GiB of device memory for 2^31 + 17 elements, cuda:0 has %lld MiB",
                 (long long)(p.total_memory >> 20));
        yg_test_skip(why);
    }
    const int64_t n = ((int64_t)1 << 31) + 17, tail = 20;
    const yg_dtype f32 = YG_FLOAT32;
    const yg_device cuda = YG_CUDA;
    yg_tensor *x = NULL, *last3 = NULL, *filled = NULL, *t = NULL, *y = NULL, *s = NULL;
    yg_tensor *am = NULL, *yt = NULL, *host = NULL;
    double sum = 0, arg = 0;
    YG_CHECK(yg_full(&n, 1, 1.0, &f32, &cuda, &x));
    YG_CHECK(yg_slice(x, 0, n - 3, n, 1, &last3)); /* offset 2^31 + 14 */
    YG_CHECK(yg_fill_(last3, 2.0, &filled));
    YG_CHECK(yg_mul_scalar(x, 1.5, &t)); /* 1.5 ... 3 */
    yg_release(x);
    x = NULL;
    YG_CHECK(yg_add_scalar(t, 0.25, 1, &y)); /* 1.75 ... 3.25 */
    yg_release(t);
    YG_CHECK(yg_sum(y, &s));
    YG_CHECK(yg_tensor_item(s, &sum));
    double want = 1.75 * (double)(n - 3) + 3 * 3.25;
    printf("sum of 2^31 + 17 elements: %.1f (want %.1f)\n", sum, want);
    assert_true(fabs(sum - want) <= 1e-6 * want);
    YG_CHECK(yg_argmax(y, &am));
    YG_CHECK(yg_tensor_item(am, &arg));
    assert_true(arg == (double)(n - 3));
    YG_CHECK(yg_slice(y, 0, n - tail, n, 1, &yt));
    YG_CHECK(yg_tensor_to_device(yt, YG_CPU, 0, &host));
    const float *v = yg_tensor_data(host);
    for (int64_t i = 0; i < tail; i++)
        assert_true(v[i] == (i < tail - 3 ? 1.75f : 3.25f));
    yg_tensor *all[] = {last3, filled, y, s, am, yt, host};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        yg_release(all[k]);
}

/* Issue 28, item 12: nll_loss's reduced forms over a batch of 100003
 * (49 blocks of partial sums, then one adding them) and its backward (a
 * thread a sample over many blocks; the mean's total weight reduced the
 * same way) give the CPU's values, with class weights and an ignored
 * class, and repeat to the bit. */
static void test_nll_loss_of_a_large_batch_matches_the_cpu(void **state) {
    (void)state;
    need_device();
    enum { B = 100003, C = 10 };
    const int64_t ss[] = {B, C}, st[] = {B}, sw[] = {C};
    char why[256];
    static double tv[B];
    for (int i = 0; i < B; i++)
        tv[i] = (double)((i * 7) % C);
    yg_tensor *tf = yg_test_tensor(YG_FLOAT64, st, 1, tv), *t = NULL;
    YG_CHECK(yg_to_dtype(tf, YG_INT64, false, &t));
    yg_tensor *td = device_like(t);
    for (int f = 0; f < 2; f++) {
        yg_dtype dt = f == 0 ? YG_FLOAT32 : YG_FLOAT64;
        double tol = f == 0 ? 1e-5 : 1e-12;
        yg_tensor *x = yg_test_rand(dt, ss, 2, -3, 0, 111), *xd = device_like(x);
        yg_tensor *w = yg_test_rand(dt, sw, 1, 0.5, 2, 112), *wd = device_like(w);
        for (int r = 0; r < 3; r++) {
            yg_reduction red = r == 0 ? YG_REDUCTION_NONE : r == 1 ? YG_REDUCTION_MEAN
                                                                   : YG_REDUCTION_SUM;
            yg_tensor *y = NULL, *yd = NULL, *yd2 = NULL, *g = NULL, *gd = NULL, *gx = NULL;
            yg_tensor *gxd = NULL, *ydh = NULL;
            YG_CHECK(yg_nll_loss(x, t, w, red, 3, &y));
            YG_CHECK(yg_nll_loss(xd, td, wd, red, 3, &yd));
            YG_CHECK(yg_nll_loss(xd, td, wd, red, 3, &yd2));
            if (!same_result(yd, y, tol, why, sizeof why))
                fail_msg("nll_loss (%s, reduction %d): %s", yg_dtype_name(dt), r, why);
            YG_CHECK(yg_tensor_to_device(yd, YG_CPU, 0, &ydh));
            if (!same_result(yd2, ydh, 0, why, sizeof why))
                fail_msg("nll_loss (%s, reduction %d) does not repeat: %s", yg_dtype_name(dt), r,
                         why);
            g = yg_test_rand(dt, yg_tensor_sizes(y), yg_tensor_ndim(y), -1, 1, 113);
            gd = device_like(g);
            YG_CHECK(yg_nll_loss_backward(g, t, w, ss, 2, red, 3, &gx));
            YG_CHECK(yg_nll_loss_backward(gd, td, wd, ss, 2, red, 3, &gxd));
            if (!same_result(gxd, gx, tol, why, sizeof why))
                fail_msg("nll_loss_backward (%s, reduction %d): %s", yg_dtype_name(dt), r, why);
            yg_tensor *all[] = {y, yd, yd2, g, gd, gx, gxd, ydh};
            for (size_t k = 0; k < sizeof all / sizeof *all; k++)
                yg_release(all[k]);
        }
        yg_release(x);
        yg_release(xd);
        yg_release(w);
        yg_release(wd);
    }
    yg_release(tf);
    yg_release(t);
    yg_release(td);
}

/* The row gradients: prod's, norm's, amax/amin's (minmax_backward) and
 * cumprod's (and their second derivatives), by kind. */
enum { RG_PROD, RG_PROD_DOUBLE, RG_NORM, RG_AMAX, RG_AMIN, RG_CUMPROD, RG_CUMPROD_JVP,
       RG_CUMPROD_DOUBLE, RG_KINDS };

/* The CPU operands of kind for self x over dims (the scans: along
 * dims[0]): in[0] = x, in[1] = t (x's sizes: grad, or the scans'
 * grad_output), in[2] = grad_output (the reductions': a sum of t over
 * dims; the double-backward scan's: t + 1), in[3] = the forward result
 * (norm's, amax's or amin's; NULL for the others). */
static void row_grad_inputs(int kind, yg_tensor *x, yg_tensor *t, const int64_t *dims,
                            int64_t nd, bool keepdim, double p, yg_tensor **in) {
    in[0] = x;
    in[1] = t;
    in[2] = NULL;
    in[3] = NULL;
    if (kind < RG_CUMPROD)
        YG_CHECK(yg_sum_dim(t, dims, nd, keepdim, &in[2]));
    else
        YG_CHECK(yg_add_scalar(t, 1, 1, &in[2]));
    if (kind == RG_NORM)
        YG_CHECK(yg_norm(x, p, dims, nd, keepdim, &in[3]));
    else if (kind == RG_AMAX)
        YG_CHECK(yg_amax(x, dims, nd, keepdim, &in[3]));
    else if (kind == RG_AMIN)
        YG_CHECK(yg_amin(x, dims, nd, keepdim, &in[3]));
}

static yg_status row_grad(int kind, yg_tensor *const *in, const int64_t *dims, int64_t nd,
                          bool keepdim, double p, yg_tensor **out) {
    switch (kind) {
    case RG_PROD:
        return yg_prod_backward(in[2], in[0], dims, nd, keepdim, out);
    case RG_PROD_DOUBLE:
        return yg_prod_double_backward(in[1], in[2], in[0], dims, nd, keepdim, out);
    case RG_NORM:
        return yg_norm_backward(in[2], in[0], in[3], p, dims, nd, keepdim, out);
    case RG_AMAX:
    case RG_AMIN:
        return yg_minmax_backward(in[2], in[0], in[3], dims, nd, keepdim, out);
    case RG_CUMPROD:
        return yg_cumprod_backward(in[1], in[0], dims[0], out);
    case RG_CUMPROD_JVP:
        return yg_cumprod_jvp(in[1], in[0], dims[0], out);
    default:
        return yg_cumprod_double_backward(in[1], in[2], in[0], dims[0], out);
    }
}

/* The gradients of prod, norm, amax/amin and cumprod, and prod's and
 * cumprod's second derivatives, on cuda:0 give the CPU's values where
 * the OpInfo samples' random inputs do not reach: zeros (several in a
 * row or line), ties and a NaN at the extremum, p of 0, 1, 1.5, 2, 3 and
 * +-inf, lists of dims, negative dims, all dims, keepdim, a transposed
 * self and empty selfs (no launch).  The operands are made on the CPU
 * and copied, so the kernels alone are compared. */
/* Issue 28, item 12: scans of rows of 2048 elements or more run a block
 * per row (chunks, then the chunks' totals), products a block per row;
 * integers (wrapping) agree exactly, floats to rounding.  Values near 1
 * keep long products finite. */
static void test_long_scans_and_products_match_the_cpu(void **state) {
    (void)state;
    need_device();
    const int64_t sizes[2] = {3, 5000};
    char why[256];
    for (int f = 0; f < 3; f++) {
        yg_dtype dt = f == 0 ? YG_FLOAT32 : f == 1 ? YG_FLOAT64 : YG_INT64;
        double tol = f == 0 ? 1e-5 : f == 1 ? 1e-10 : 0;
        yg_tensor *r = yg_test_rand(YG_FLOAT64, sizes, 2, 0.999, 1.001, 120 + (uint64_t)f), *x = NULL;
        if (dt == YG_INT64) { /* small integers: products wrap, sums do not */
            yg_tensor *s = NULL;
            YG_CHECK(yg_mul_scalar(r, 3, &s));
            YG_CHECK(yg_to_dtype(s, YG_INT64, false, &x));
            yg_release(s);
        } else {
            YG_CHECK(yg_to_dtype(r, dt, false, &x));
        }
        yg_tensor *xd = device_like(x);
        for (int k = 0; k < 4; k++) {
            yg_tensor *y = NULL, *yd = NULL;
            const int64_t d1[1] = {1};
            if (k == 0) {
                YG_CHECK(yg_cumsum(x, 1, &y));
                YG_CHECK(yg_cumsum(xd, 1, &yd));
            } else if (k == 1) {
                YG_CHECK(yg_cumprod(x, 1, &y));
                YG_CHECK(yg_cumprod(xd, 1, &yd));
            } else if (k == 2) {
                YG_CHECK(yg_prod_dim(x, d1, 1, false, &y));
                YG_CHECK(yg_prod_dim(xd, d1, 1, false, &yd));
            } else {
                YG_CHECK(yg_prod(x, &y));
                YG_CHECK(yg_prod(xd, &yd));
            }
            if (!same_result(yd, y, tol, why, sizeof why))
                fail_msg("%s of [3, 5000] %s: %s", k == 0 ? "cumsum" : k == 1 ? "cumprod" : "prod",
                         yg_dtype_name(dt), why);
            yg_release(y);
            yg_release(yd);
        }
        yg_release(r);
        yg_release(x);
        yg_release(xd);
    }
}

static void test_row_gradients_match_the_cpu(void **state) {
    (void)state;
    need_device();
    char why[256];
    const int64_t sz[] = {3, 4, 5}, sz_empty[] = {3, 0, 5};
    const int64_t d1[] = {1}, d02[] = {0, 2}, dm1[] = {-1}, d0[] = {0}, d2[] = {2};
    const struct {
        const int64_t *dims;
        int64_t nd;
        bool keepdim;
    } cases[] = {{d1, 1, false}, {d02, 2, true}, {dm1, 1, false}, {NULL, 0, false},
                 {d0, 1, true},  {d2, 1, false}};
    const double ps[] = {2, 3, 1.5, 1, 0, INFINITY, -INFINITY};
    double v[60];
    /* steps of 0.25 in [-1.25, 1.25]: zeros and ties in every row */
    for (int i = 0; i < 60; i++)
        v[i] = (double)((i * 37) % 11 - 5) / 4;
    for (int f = 0; f < 2; f++) {
        yg_dtype dt = f == 0 ? YG_FLOAT32 : YG_FLOAT64;
        double tol = f == 0 ? 1e-5 : 1e-12;
        for (int shape = 0; shape < 4; shape++) {
            /* 0: zeros and ties; 1: transposed; 2: a NaN; 3: empty */
            double saved = v[7];
            if (shape == 2)
                v[7] = NAN;
            yg_tensor *base = shape == 3 ? yg_test_rand(dt, sz_empty, 3, -1, 1, 31)
                                         : yg_test_tensor(dt, sz, 3, v);
            yg_tensor *x = NULL, *t = NULL;
            v[7] = saved;
            if (shape == 1) {
                YG_CHECK(yg_transpose(base, 0, 2, &x));
            } else {
                x = base;
                base = NULL;
            }
            t = yg_test_rand(dt, x->sizes, x->ndim, -1, 1, 32 + (uint64_t)shape);
            for (int kind = 0; kind < RG_KINDS; kind++) {
                for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
                    bool scan = kind >= RG_CUMPROD;
                    if (scan && cases[c].nd != 1)
                        continue;
                    /* an empty reduced dim has no extremum (amax fails) */
                    if (shape == 3 && (kind == RG_AMAX || kind == RG_AMIN))
                        continue;
                    size_t np = kind == RG_NORM ? sizeof ps / sizeof *ps : 1;
                    for (size_t k = 0; k < np; k++) {
                        yg_tensor *in[4], *ind[4] = {NULL}, *yc = NULL, *yd = NULL;
                        row_grad_inputs(kind, x, t, cases[c].dims, cases[c].nd, cases[c].keepdim,
                                        ps[k], in);
                        for (int j = 0; j < 4; j++)
                            ind[j] = in[j] != NULL ? device_like(in[j]) : NULL;
                        yg_status sc = row_grad(kind, in, cases[c].dims, cases[c].nd,
                                                cases[c].keepdim, ps[k], &yc);
                        char cpu_msg[512];
                        snprintf(cpu_msg, sizeof cpu_msg, "%s", yg_last_error());
                        yg_status sd = row_grad(kind, ind, cases[c].dims, cases[c].nd,
                                                cases[c].keepdim, ps[k], &yd);
                        if (sc != sd)
                            fail_msg("row gradient %d (%s, shape %d, case %zu, p %g): cpu gives "
                                     "%s, cuda %s: %s",
                                     kind, yg_dtype_name(dt), shape, c, ps[k],
                                     yg_status_name(sc), yg_status_name(sd),
                                     sd != YG_OK ? yg_last_error() : cpu_msg);
                        if (sc != YG_OK)
                            assert_string_equal(yg_last_error(), cpu_msg);
                        else if (yg_tensor_device(yd) != YG_CUDA ||
                                 !same_result(yd, yc, tol, why, sizeof why))
                            fail_msg("row gradient %d (%s, shape %d, case %zu, p %g): %s", kind,
                                     yg_dtype_name(dt), shape, c, ps[k],
                                     yg_tensor_device(yd) != YG_CUDA ? "not on cuda" : why);
                        yg_release(yc);
                        yg_release(yd);
                        yg_release(in[2]);
                        yg_release(in[3]);
                        for (int j = 0; j < 4; j++)
                            yg_release(ind[j]);
                    }
                }
            }
            yg_release(t);
            yg_release(x);
            yg_release(base);
        }
    }
}

/* SGD with momentum and weight decay, Adam and AdamW take the op path on
 * GPU parameters (the fused loops are the CPU's) and reach the CPU's
 * values after five steps of the same gradients; clip_grad_norm reports
 * the CPU's norm and scales the same. */
static void test_optimizers_and_clipping_match_the_cpu(void **state) {
    (void)state;
    need_device();
    const int64_t s[] = {4, 3};
    char why[256];
    for (int kind = 0; kind < 3; kind++) {
        yg_tensor *p[2] = {yg_test_rand(YG_FLOAT64, s, 2, -1, 1, 31), NULL};
        p[1] = device_like(p[0]);
        yg_optimizer *opt[2] = {NULL, NULL};
        yg_sgd_options sgd = {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01};
        yg_adam_options adam = yg_adam_options_default();
        adam.lr = 0.05;
        adam.weight_decay = 0.01;
        double norm[2] = {0, 0};
        for (int dev = 0; dev < 2; dev++) {
            YG_CHECK(yg_tensor_set_requires_grad(p[dev], true));
            if (kind == 0)
                YG_CHECK(yg_optimizer_create_sgd(&p[dev], 1, &sgd, &opt[dev]));
            else if (kind == 1)
                YG_CHECK(yg_optimizer_create_adam(&p[dev], 1, &adam, &opt[dev]));
            else
                YG_CHECK(yg_optimizer_create_adamw(&p[dev], 1, &adam, &opt[dev]));
            for (int step = 0; step < 5; step++) {
                yg_tensor *sq = NULL, *l = NULL;
                YG_CHECK(yg_mul(p[dev], p[dev], &sq));
                YG_CHECK(yg_sum(sq, &l));
                YG_CHECK(yg_backward(l, NULL, false));
                YG_CHECK(yg_clip_grad_norm(&p[dev], 1, 1.5, &norm[dev]));
                YG_CHECK(yg_optimizer_step(opt[dev]));
                yg_optimizer_zero_grad(opt[dev]);
                yg_release(sq);
                yg_release(l);
            }
        }
        assert_true(fabs(norm[0] - norm[1]) <= 1e-12 * norm[0]);
        if (!same_result(p[1], p[0], 1e-12, why, sizeof why))
            fail_msg("optimizer %d: %s", kind, why);
        for (int dev = 0; dev < 2; dev++) {
            yg_optimizer_release(opt[dev]);
            yg_release(p[dev]);
        }
    }
}

/* 1000 training steps of a small MLP with Adam on cuda:0: after the first
 * steps have filled the caching allocator, the device memory in use and
 * reserved, and the number of cudaMalloc calls, stay where they were. */
static void test_training_steps_do_not_grow_device_memory(void **state) {
    (void)state;
    need_device();
    const int64_t sx[] = {64, 32}, s1[] = {32, 64}, s2[] = {64, 10}, sy[] = {64, 10};
    yg_tensor *x = NULL, *y = NULL, *w[2] = {NULL, NULL};
    yg_tensor *hx = yg_test_rand(YG_FLOAT32, sx, 2, -1, 1, 41);
    yg_tensor *hy = yg_test_rand(YG_FLOAT32, sy, 2, -1, 1, 42);
    yg_tensor *h1 = yg_test_rand(YG_FLOAT32, s1, 2, -0.2, 0.2, 43);
    yg_tensor *h2 = yg_test_rand(YG_FLOAT32, s2, 2, -0.2, 0.2, 44);
    YG_CHECK(yg_tensor_to_device(hx, YG_CUDA, 0, &x));
    YG_CHECK(yg_tensor_to_device(hy, YG_CUDA, 0, &y));
    YG_CHECK(yg_tensor_to_device(h1, YG_CUDA, 0, &w[0]));
    YG_CHECK(yg_tensor_to_device(h2, YG_CUDA, 0, &w[1]));
    for (int k = 0; k < 2; k++)
        YG_CHECK(yg_tensor_set_requires_grad(w[k], true));
    yg_optimizer *opt = NULL;
    yg_adam_options adam = yg_adam_options_default();
    adam.lr = 1e-3;
    YG_CHECK(yg_optimizer_create_adam(w, 2, &adam, &opt));
    yg_cuda_memory_stats warm, now;
    double first = 0, last = 0;
    for (int step = 0; step < 1000; step++) {
        yg_tensor *a = NULL, *h = NULL, *o = NULL, *d = NULL, *sq = NULL, *l = NULL;
        YG_CHECK(yg_mm(x, w[0], &a));
        YG_CHECK(yg_tanh(a, &h));
        YG_CHECK(yg_mm(h, w[1], &o));
        YG_CHECK(yg_sub(o, y, 1, &d));
        YG_CHECK(yg_mul(d, d, &sq));
        YG_CHECK(yg_mean(sq, &l));
        YG_CHECK(yg_backward(l, NULL, false));
        YG_CHECK(yg_optimizer_step(opt));
        yg_optimizer_zero_grad(opt);
        if (step == 0)
            YG_CHECK(yg_tensor_item(l, &first));
        if (step == 999)
            YG_CHECK(yg_tensor_item(l, &last));
        yg_tensor *all[] = {a, h, o, d, sq, l};
        for (size_t k = 0; k < sizeof all / sizeof *all; k++)
            yg_release(all[k]);
        if (step == 9)
            YG_CHECK(yg_cuda_memory_stats_get(0, &warm));
    }
    YG_CHECK(yg_cuda_memory_stats_get(0, &now));
    printf("loss %.4f -> %.4f; in use %lld bytes, reserved %lld, %lld cudaMalloc calls\n", first,
           last, (long long)now.allocated_bytes, (long long)now.reserved_bytes,
           (long long)now.num_cuda_mallocs);
    assert_true(last < first);
    assert_int_equal(now.allocated_bytes, warm.allocated_bytes);
    assert_int_equal(now.reserved_bytes, warm.reserved_bytes);
    assert_int_equal(now.num_cuda_mallocs, warm.num_cuda_mallocs);
    yg_optimizer_release(opt);
    yg_tensor *all[] = {x, y, w[0], w[1], hx, hy, h1, h2};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        yg_release(all[k]);
}

/* The random ops on cuda:0 draw the CPU's values for the same seed:
 * Philox counters and transforms are shared (core/rng.h), so rand,
 * randint and bernoulli agree bit for bit and randn to the last bits of
 * CUDA's double log and cos; both generators advance alike. */
static void test_random_ops_draw_the_cpu_values(void **state) {
    (void)state;
    need_device();
    const int64_t s[] = {257, 33};
    const yg_device cuda = YG_CUDA;
    char why[256];
    for (int f = 0; f < 2; f++) {
        const yg_dtype dt = f == 0 ? YG_FLOAT32 : YG_FLOAT64;
        yg_generator *g[2] = {NULL, NULL};
        yg_tensor *y[2][5] = {{NULL}};
        for (int dev = 0; dev < 2; dev++) {
            const yg_device *where = dev == 0 ? NULL : &cuda;
            YG_CHECK(yg_generator_create(1234, &g[dev]));
            YG_CHECK(yg_rand(s, 2, g[dev], &dt, where, &y[dev][0]));
            YG_CHECK(yg_randn(s, 2, g[dev], &dt, where, &y[dev][1]));
            YG_CHECK(yg_randint(-5, 1000, s, 2, g[dev], NULL, where, &y[dev][2]));
            YG_CHECK(yg_bernoulli_p(y[dev][0], 0.3, g[dev], &y[dev][3]));
            YG_CHECK(yg_bernoulli(y[dev][0], g[dev], &y[dev][4]));
        }
        for (int k = 0; k < 5; k++) {
            double tol = k != 1 ? 0 : (f == 0 ? 1e-6 : 1e-14);
            if (!same_result(y[1][k], y[0][k], tol, why, sizeof why))
                fail_msg("%s draw %d: %s", yg_dtype_name(dt), k, why);
        }
        assert_int_equal(yg_generator_offset(g[0]), yg_generator_offset(g[1]));
        for (int dev = 0; dev < 2; dev++) {
            for (int k = 0; k < 5; k++)
                yg_release(y[dev][k]);
            yg_generator_release(g[dev]);
        }
    }
}

/* The two-device check of the generated entry points, run here by
 * marking a cpu tensor's storage as cuda:1 for the duration of the calls
 * (nothing reads its data: the check comes first) and restoring it. */
static void test_two_devices_are_refused_naming_both(void **state) {
    (void)state;
    const int64_t s[] = {2, 3};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, s, 2, -1, 1, 5);
    yg_tensor *g = yg_test_rand(YG_FLOAT32, s, 2, -1, 1, 6), *y = NULL;
    g->storage->device = YG_CUDA;
    g->storage->device_index = 1;
    YG_EXPECT_ERROR(yg_add(x, g, 1, &y),
                    YG_ERR_DEVICE,
                    "add: expected all tensors on one device, but self is on cpu and other on cuda:1");
    YG_EXPECT_ERROR(yg_add(g, x, 1, &y),
                    YG_ERR_DEVICE,
                    "add: expected all tensors on one device, but self is on cuda:1 and other on cpu");
    YG_EXPECT_ERROR(yg_cat((const yg_tensor *const[]){x, x, g}, 3, 0, &y),
                    YG_ERR_DEVICE,
                    "cat: expected all tensors on one device, but tensors[0] is on cpu and "
                    "tensors[2] on cuda:1");
    /* a NULL optional tensor is skipped; the others still compared */
    YG_EXPECT_ERROR(yg__check_devices("linear",
                                      3,
                                      (const yg_tensor *const[]){NULL, x, g},
                                      (const char *const[]){"input", "weight", "bias"},
                                      NULL,
                                      0,
                                      NULL),
                    YG_ERR_DEVICE,
                    "linear: expected all tensors on one device, but weight is on cpu and bias on "
                    "cuda:1");
    assert_null(y);
    g->storage->device = YG_CPU;
    g->storage->device_index = 0;
    YG_CHECK(yg__check_devices("add", 2, (const yg_tensor *const[]){x, g},
                               (const char *const[]){"self", "other"}, NULL, 0, NULL));
    yg_release(g);
    yg_release(x);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cuda_state_is_reported),
        cmocka_unit_test(test_device_properties_and_bad_indices),
        cmocka_unit_test(test_allocator_caches_device_memory),
        cmocka_unit_test(test_release_all_gives_back_the_caches_and_work_goes_on),
        cmocka_unit_test(test_to_device_on_the_cpu),
        cmocka_unit_test(test_to_device_names_why_no_device_is_usable),
        cmocka_unit_test(test_to_device_round_trips),
        cmocka_unit_test(test_ops_refuse_device_tensors_with_messages),
        cmocka_unit_test(test_two_devices_are_refused_naming_both),
        cmocka_unit_test(test_opinfo_samples_match_the_cpu),
        cmocka_unit_test(test_copies_convert_as_the_cpu),
        cmocka_unit_test(test_creation_fills_and_views_match_the_cpu),
        cmocka_unit_test(test_products_sums_and_backward_match_the_cpu),
        cmocka_unit_test(test_bmm_strided_batches_match_the_cpu),
        cmocka_unit_test(test_nll_loss_of_a_large_batch_matches_the_cpu),
        cmocka_unit_test(test_long_scans_and_products_match_the_cpu),
        cmocka_unit_test(test_row_gradients_match_the_cpu),
        cmocka_unit_test(test_optimizers_and_clipping_match_the_cpu),
        cmocka_unit_test(test_random_ops_draw_the_cpu_values),
        cmocka_unit_test(test_every_derivative_matches_the_cpu_on_the_gpu),
        cmocka_unit_test(test_streams_and_events_order_work),
        cmocka_unit_test(test_destroying_a_stream_clears_it_on_every_thread),
        cmocka_unit_test(test_copies_between_devices_wait_for_the_source_stream),
        cmocka_unit_test(test_training_steps_do_not_grow_device_memory),
        cmocka_unit_test(test_kernels_index_past_2_31_elements),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
