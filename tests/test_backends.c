/*
 * test_backends.c - the device registry (core/backend.h) and the CUDA
 * module it loads on first use: a program that never asks for a GPU maps
 * none of the GPU libraries, asking loads the module, and a module that
 * is missing or wrong is one clear status for every request.  The same
 * for the MPI module that yagrad/distributed.h loads.  Each test
 * runs in a process of its own (one CTest entry per test), so each sees
 * a process that has not loaded anything yet.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "testutil.h"
#include "core/backend.h"
#include "yagrad/conv.h"
#include "yagrad/cuda.h"
#include "yagrad/distributed.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_convolution.h"
#include "yagrad/ops_sums.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether a file whose name contains part is mapped into this process. */
static bool mapped(const char *part) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    bool found = false;
    assert_non_null(f);
    while (!found && fgets(line, sizeof line, f) != NULL)
        found = strstr(line, part) != NULL;
    fclose(f);
    return found;
}

static bool built_with_cuda(void) {
    return strstr(yg_build_info(), " cuda") != NULL;
}

static const char *const gpu_libraries[] = {
    "libyagrad_cuda", "libcublas", "libcudnn", "libnccl", "libcudart", "libcuda.so",
};

static bool built_with_mpi(void) {
    return strstr(yg_build_info(), " mpi") != NULL;
}

/* What the MPI module (loaded by the first call of yagrad/distributed.h)
 * brings. */
static const char *const mpi_libraries[] = {
    "libyagrad_mpi", "libmpi.so", "libopen-pal", "libopen-rte", "libhwloc",
};

/* Forward, backward and a convolution on the CPU, then: no GPU library
 * and no MPI library is in the process. */
static void test_a_cpu_program_maps_no_gpu_library(void **state) {
    (void)state;
    int64_t sizes[4] = {1, 2, 5, 5}, wsizes[4] = {3, 2, 3, 3}, stride[2] = {1, 1},
            pad[2] = {1, 1}, dil[2] = {1, 1};
    yg_tensor *x = NULL, *w = NULL, *y = NULL, *s = NULL, *z = NULL;
    YG_CHECK(yg_tensor_full(sizes, 4, 1.0, YG_FLOAT32, &x));
    YG_CHECK(yg_tensor_full(wsizes, 4, 0.5, YG_FLOAT32, &w));
    YG_CHECK(yg_tensor_set_requires_grad(w, true));
    YG_CHECK(yg_conv2d(x, w, NULL, stride, 2, pad, 2, dil, 2, 1, &y));
    YG_CHECK(yg_mul(y, y, &z));
    YG_CHECK(yg_sum(z, &s));
    YG_CHECK(yg_backward(s, NULL, false));
    assert_true(yg_conv_backend_available(YG_CONV_BACKEND_NATIVE));
    for (size_t i = 0; i < sizeof gpu_libraries / sizeof *gpu_libraries; i++)
        if (mapped(gpu_libraries[i]))
            fail_msg("%s is mapped into a program that never asked for a GPU",
                     gpu_libraries[i]);
    for (size_t i = 0; i < sizeof mpi_libraries / sizeof *mpi_libraries; i++)
        if (mapped(mpi_libraries[i]))
            fail_msg("%s is mapped into a program that made no process group",
                     mpi_libraries[i]);
    yg_release(x);
    yg_release(w);
    yg_release(y);
    yg_release(z);
    yg_release(s);
}

/* The first request for a GPU loads the module (in a build with CUDA),
 * whether or not the machine has one. */
static void test_asking_for_a_gpu_loads_the_module(void **state) {
    (void)state;
    assert_false(mapped("libyagrad_cuda"));
    int n = yg_cuda_device_count();
    printf("%d CUDA device(s): %s\n", n, yg_build_info());
    if (!built_with_cuda()) {
        assert_int_equal(n, 0);
        YG_EXPECT_ERROR(yg_cuda_check(), YG_ERR_DEVICE, "cuda: built without CUDA");
        assert_false(mapped("libyagrad_cuda"));
        return;
    }
    assert_true(mapped("libyagrad_cuda"));
    assert_true(mapped("libcublas"));
}

/* Every request of a process whose module cannot be loaded gets the
 * loader's reason, naming the request; the queries answer "none". */
static void test_a_missing_module_is_one_clear_status(void **state) {
    (void)state;
    int64_t n = 4;
    yg_tensor *t = NULL, *d = (yg_tensor *)&n;
    yg_cuda_stream *stream = (yg_cuda_stream *)&n;
    const char *why = built_with_cuda()
                          ? "cuda: its backend module could not be loaded "
                            "(/nonexistent/libyagrad_cuda.so.0.2: cannot open shared object file"
                          : "cuda: built without CUDA";
    char want[256];

    assert_int_equal(setenv("YG_CUDA_MODULE", "/nonexistent/libyagrad_cuda.so.0.2", 1), 0);
    YG_CHECK(yg_tensor_full(&n, 1, 1.0, YG_FLOAT32, &t));
    snprintf(want, sizeof want, "to_device: %s", why);
    YG_EXPECT_ERROR(yg_tensor_to_device(t, YG_CUDA, 0, &d), YG_ERR_DEVICE, want);
    assert_null(d);
    snprintf(want, sizeof want, "cuda_stream_create: %s", why);
    YG_EXPECT_ERROR(yg_cuda_stream_create(0, &stream), YG_ERR_DEVICE, want);
    assert_null(stream);
    YG_EXPECT_ERROR(yg_cuda_check(), YG_ERR_DEVICE, why);
    assert_int_equal(yg_cuda_device_count(), 0);
    assert_false(yg_cuda_is_available());
    assert_false(yg_conv_backend_available(YG_CONV_BACKEND_CUDNN));
    assert_null(yg_cuda_get_stream(0));
    yg_cuda_empty_cache(); /* nothing to give back, and no load */
    assert_false(mapped("libcublas"));
    yg_release(t);
}

/* A file that loads but is not the module (here the C math library) is
 * refused as such. */
static void test_a_module_that_registers_nothing_is_refused(void **state) {
    (void)state;
    if (!built_with_cuda()) {
        YG_EXPECT_ERROR(yg_cuda_check(), YG_ERR_DEVICE, "cuda: built without CUDA");
        return;
    }
    assert_int_equal(setenv("YG_CUDA_MODULE", "libm.so.6", 1), 0);
    YG_EXPECT_ERROR(yg_cuda_check(),
                    YG_ERR_DEVICE,
                    "cuda: its backend module libm.so.6 loaded but registered nothing");
    assert_int_equal(yg_cuda_device_count(), 0);
}

/* The CUDA kernels of the dispatch tables are found in the module by
 * name (what the generated tables' CUDA entries do): softmax's is there
 * and the answer is kept; a name that is not there is an internal error
 * naming the op and the name; without CUDA, the one clear status. */
static void test_module_kernels_are_found_by_name(void **state) {
    (void)state;
    yg_kernel_ref softmax = {"yg__cuda_softmax_out", NULL};
    yg_kernel_ref missing = {"yg__cuda_no_such_kernel", NULL};
    yg_kernel_fn fn = NULL, again = NULL;
    if (!built_with_cuda()) {
        YG_EXPECT_ERROR(yg__backend_kernel("softmax", YG_CUDA, &softmax, &fn),
                        YG_ERR_DEVICE,
                        "softmax: cuda: built without CUDA");
        assert_null(fn);
        return;
    }
    assert_int_equal(yg__backend_kernel("softmax", YG_CUDA, &softmax, &fn), YG_OK);
    assert_non_null(fn);
    assert_true(atomic_load(&softmax.fn) == fn);
    assert_int_equal(yg__backend_kernel("softmax", YG_CUDA, &softmax, &again), YG_OK);
    assert_true(again == fn);
    YG_EXPECT_ERROR(yg__backend_kernel("amax", YG_CUDA, &missing, &fn),
                    YG_ERR_INTERNAL,
                    "amax: the cuda backend has no yg__cuda_no_such_kernel");
    assert_null(fn);
}

/* The first call of yagrad/distributed.h loads the MPI module (in a
 * build with MPI), and MPI with it. */
static void test_asking_for_process_groups_loads_the_mpi_module(void **state) {
    (void)state;
    assert_false(mapped("libmpi.so"));
    bool available = yg_distributed_is_available();
    if (!built_with_mpi()) {
        assert_false(available);
        assert_false(mapped("libyagrad_mpi"));
        return;
    }
    assert_true(available);
    assert_true(mapped("libyagrad_mpi"));
    assert_true(mapped("libmpi.so"));
}

/* A process whose MPI module cannot be loaded: every request says why,
 * naming itself; no group exists. */
static void test_a_missing_mpi_module_is_one_clear_status(void **state) {
    (void)state;
    yg_process_group *pg = (yg_process_group *)&pg;
    yg_work *work = (yg_work *)&work;
    const char *why = built_with_mpi()
                          ? "yagrad's MPI backend module could not be loaded "
                            "(/nonexistent/libyagrad_mpi.so.0.2: cannot open shared object file"
                          : "yagrad was built without MPI";
    char want[256];

    assert_int_equal(setenv("YG_MPI_MODULE", "/nonexistent/libyagrad_mpi.so.0.2", 1), 0);
    snprintf(want, sizeof want, "process_group_create: %s", why);
    YG_EXPECT_ERROR(yg_process_group_create(NULL, &pg), YG_ERR_NOT_IMPLEMENTED, want);
    assert_null(pg);
    assert_false(yg_distributed_is_available());
    snprintf(want, sizeof want, "barrier: process group is NULL (%s", why);
    YG_EXPECT_ERROR(yg_process_group_barrier(NULL, &work), YG_ERR_INVALID_ARGUMENT, want);
    assert_null(work);
    assert_int_equal(yg_process_group_world_size(NULL), 0);
    assert_false(mapped("libmpi.so"));
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_cpu_program_maps_no_gpu_library),
        cmocka_unit_test(test_asking_for_a_gpu_loads_the_module),
        cmocka_unit_test(test_a_missing_module_is_one_clear_status),
        cmocka_unit_test(test_a_module_that_registers_nothing_is_refused),
        cmocka_unit_test(test_module_kernels_are_found_by_name),
        cmocka_unit_test(test_asking_for_process_groups_loads_the_mpi_module),
        cmocka_unit_test(test_a_missing_mpi_module_is_one_clear_status),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
