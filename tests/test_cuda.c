/*
 * test_cuda.c - yagrad/cuda.h: devices and their caching allocator.
 *
 * test_cuda_state_is_reported runs everywhere and checks what this
 * machine is: built without CUDA, built with it but no device (every CI
 * machine), or a device.  The others need a device; without one they
 * print "skipped: no CUDA device ..." (or "skipped: built without CUDA")
 * and CTest reports them as skipped (tests/CMakeLists.txt), never passed.
 */
#include "cuda/cuda.h"
#include "testutil.h"

#include <stdio.h>
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

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cuda_state_is_reported),
        cmocka_unit_test(test_device_properties_and_bad_indices),
        cmocka_unit_test(test_allocator_caches_device_memory),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
