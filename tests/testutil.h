/*
 * testutil.h - helpers shared by the cmocka suites: building tensors from
 * literals, comparing tensors against reference values (printing the worst
 * element), and asserting on a failure's status and message.
 *
 * Each suite's main() calls yg_test_run(), which runs only the test named
 * in argv[1] when given: CMake registers every test function as its own
 * CTest entry, so failures list by behaviour name.
 */
#ifndef YAGRAD_TESTUTIL_H
#define YAGRAD_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* The public headers but the ops, whose sections each test includes as
 * it uses them (adding an op recompiles the tests of its section). */
#include "yagrad/autograd.h"
#include "yagrad/conv.h"
#include "yagrad/cpu.h"
#include "yagrad/cuda.h"
#include "yagrad/distributed.h"
#include "yagrad/jit.h"
#include "yagrad/onnx.h"
#include "yagrad/optim.h"
#include "yagrad/random.h"
#include "yagrad/status.h"
#include "yagrad/tensor.h"
#include "yagrad/version.h"

/* Runs group (all tests, or the one named by argv[1]). */
int yg_test_run(const char *group_name,
                const struct CMUnitTest *tests,
                size_t count,
                int argc,
                char **argv);
#define YG_TEST_RUN(tests, argc, argv)                                                             \
    yg_test_run(__FILE__, tests, sizeof(tests) / sizeof((tests)[0]), argc, argv)

/* Skips the calling test, which CTest runs alone in its process: prints
 * "skipped: <why>" and leaves with status 77 (SKIP_RETURN_CODE of the
 * tests that can skip), so no output pattern can turn a failure into a
 * skip.  For what the machine or the build lacks (cuDNN, NCCL, NVRTC). */
void yg_test_skip(const char *why);

/* yg_test_skip for a missing GPU (no device, or a build without CUDA):
 * with YG_REQUIRE_GPU=1 in the environment it fails the test instead,
 * printing why, so a GPU run cannot come out as all skipped.  why: the
 * CUDA status message (a leading "cuda: " is dropped). */
void yg_test_skip_no_gpu(const char *why);

/* Returns when a CUDA device is usable, else yg_test_skip_no_gpu with
 * the backend's reason. */
void yg_test_need_gpu(void);

/* Fails the test (printing the call and yg_last_error()) unless YG_OK. */
#define YG_CHECK(expr) yg_test_check((expr), #expr, __FILE__, __LINE__)
void yg_test_check(yg_status st, const char *expr, const char *file, int line);

/* Asserts that st is `expected` and the message contains each of the
 * NULL-terminated substrings. */
#define YG_EXPECT_ERROR(st, expected, ...)                                                         \
    yg_test_expect_error((st), (expected), __FILE__, __LINE__, __VA_ARGS__, (const char *)NULL)
void yg_test_expect_error(yg_status st, yg_status expected, const char *file, int line, ...);

/* A new float64/float32 tensor from values (row-major). */
yg_tensor *yg_test_tensor(yg_dtype dtype, const int64_t *sizes, int64_t ndim, const double *values);

/* A tensor with deterministic pseudo-random values in [lo, hi). */
yg_tensor *yg_test_rand(yg_dtype dtype, const int64_t *sizes, int64_t ndim, double lo, double hi,
                        uint64_t seed);

/* Asserts t has the given sizes and values within atol + rtol*|expected|;
 * prints the worst index and both values on failure. */
#define YG_EXPECT_CLOSE(t, sizes, ndim, values, atol, rtol)                                        \
    yg_test_expect_close((t), (sizes), (ndim), (values), (atol), (rtol), __FILE__, __LINE__)
void yg_test_expect_close(const yg_tensor *t,
                          const int64_t *sizes,
                          int64_t ndim,
                          const double *values,
                          double atol,
                          double rtol,
                          const char *file,
                          int line);

/* Elements of t as a malloc'd double array (caller frees). */
double *yg_test_values(const yg_tensor *t);

#endif /* YAGRAD_TESTUTIL_H */
