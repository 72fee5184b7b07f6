/*
 * test_cuda.c - yagrad/cuda.h: devices, their caching allocator and
 * device tensors (yg_tensor_to_device, mixed-device refusals).
 *
 * test_cuda_state_is_reported runs everywhere and checks what this
 * machine is: built without CUDA, built with it but no device (every CI
 * machine), or a device; so do the to_device tests that need none.  The
 * others need a device; without one they
 * print "skipped: no CUDA device ..." (or "skipped: built without CUDA")
 * and CTest reports them as skipped (tests/CMakeLists.txt), never passed.
 */
#include "core/core.h"
#include "cuda/cuda.h"
#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_join_split.h"
#include "yagrad/ops_unary_math.h"
#include "yagrad/ops_views.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Skips the calling test when no device is usable, saying why. */
static void need_device(void) {
    if (yg_cuda_check() == YG_OK)
        return;
    const char *why = yg_last_error();
    printf("skipped: %s\n", strncmp(why, "cuda: ", 6) == 0 ? why + 6 : why);
    skip();
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
    void *ptr = (void *)1;
    YG_EXPECT_ERROR(yg__cuda_alloc("empty", 0, 16, &ptr), YG_ERR_DEVICE, "empty: ");
    assert_null(ptr);
    YG_EXPECT_ERROR(
        yg_cuda_get_device_properties(0, NULL), YG_ERR_INVALID_ARGUMENT, "out is NULL");
    yg_cuda_empty_cache(); /* harmless */
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
    enum { N = 1000 };
    void *p[N];
    yg_cuda_memory_stats m;
    for (int i = 0; i < N; i++)
        YG_CHECK(yg__cuda_alloc("test", 0, (size_t)(i % 97) * 1000 + 1, &p[i]));
    YG_CHECK(yg_cuda_memory_stats_get(0, &m));
    assert_true(m.num_cuda_mallocs < 40);
    assert_true(m.allocated_bytes > 0 && m.reserved_bytes >= m.allocated_bytes);
    for (int i = 0; i < N; i++)
        yg__cuda_free(0, p[i]);
    YG_CHECK(yg_cuda_memory_stats_get(0, &m));
    assert_int_equal(m.allocated_bytes, 0);
    void *huge = NULL;
    YG_EXPECT_ERROR(yg__cuda_alloc("empty", 0, (size_t)1 << 40, &huge),
                    YG_ERR_OUT_OF_MEMORY,
                    "empty: out of CUDA memory allocating 1099511627776 bytes on cuda:0");
    assert_null(huge);
    void *again = NULL;
    YG_CHECK(yg__cuda_alloc("test", 0, 4096, &again));
    yg__cuda_free(0, again);
    yg_cuda_empty_cache();
    YG_CHECK(yg_cuda_memory_stats_get(0, &m));
    assert_int_equal(m.reserved_bytes, 0);
    assert_int_equal(m.num_cuda_mallocs, m.num_cuda_frees);
    assert_true(m.num_ooms >= 1);
}

/* ---- device tensors ---- */

/* to_device within the CPU: t itself when contiguous, else a contiguous
 * copy; bad device values and grad-requiring inputs are refused. */
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
    YG_EXPECT_ERROR(yg_tensor_to_device(x, YG_CUDA, 0, &y),
                    YG_ERR_NOT_IMPLEMENTED,
                    "to_device: t requires grad, and autograd does not cross devices yet");
    YG_CHECK(yg_tensor_to_device(x, YG_CPU, 0, &y)); /* no copy: allowed */
    yg_release(y);
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
}

/* Ops refuse cuda tensors they have no kernel for, and tensors of two
 * devices, naming both; a non-contiguous cuda view cannot be copied yet. */
static void test_ops_refuse_device_tensors_with_messages(void **state) {
    (void)state;
    need_device();
    const int64_t s[] = {2, 3};
    int n = yg_cuda_device_count();
    char msg[128];
    yg_tensor *x = yg_test_rand(YG_FLOAT32, s, 2, -1, 1, 3), *d = NULL, *y = NULL, *t = NULL;
    YG_CHECK(yg_tensor_to_device(x, YG_CUDA, 0, &d));
    YG_EXPECT_ERROR(yg_exp(d, &y), YG_ERR_DEVICE, "exp: no kernel for device cuda");
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
    YG_EXPECT_ERROR(yg_tensor_to_device(t, YG_CPU, 0, &y),
                    YG_ERR_NOT_IMPLEMENTED,
                    "to_device: t is a non-contiguous view on cuda:0, which cannot be copied yet");
    snprintf(msg, sizeof msg, "to_device: device index %d out of range", n);
    YG_EXPECT_ERROR(yg_tensor_to_device(x, YG_CUDA, n, &y), YG_ERR_DEVICE, msg);
    yg_release(t);
    yg_release(d);
    yg_release(x);
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
        cmocka_unit_test(test_to_device_on_the_cpu),
        cmocka_unit_test(test_to_device_names_why_no_device_is_usable),
        cmocka_unit_test(test_to_device_round_trips),
        cmocka_unit_test(test_ops_refuse_device_tensors_with_messages),
        cmocka_unit_test(test_two_devices_are_refused_naming_both),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
