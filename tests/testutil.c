/*
 * testutil.c - see testutil.h.
 */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void yg_test_skip(const char *why)
{
    printf("skipped: %s\n", why);
    fflush(stdout);
    fflush(stderr);
    /* _exit: no exit handlers (a leak checker would see cmocka's state) */
    _exit(77);
}

void yg_test_skip_no_gpu(const char *why)
{
    const char *v = getenv("YG_REQUIRE_GPU");

    if (strncmp(why, "cuda: ", 6) == 0)
        why += 6;
    if (v != NULL && strcmp(v, "0") != 0 && v[0] != '\0') {
        print_error("YG_REQUIRE_GPU=%s, but there is no usable GPU: %s\n", v, why);
        fail();
    }
    yg_test_skip(why);
}

void yg_test_need_gpu(void)
{
    if (yg_cuda_check() != YG_OK)
        yg_test_skip_no_gpu(yg_last_error());
}

int yg_test_run(const char *group_name, const struct CMUnitTest *tests, size_t count, int argc,
                char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    int rc = _cmocka_run_group_tests(group_name, tests, count, NULL, NULL);
    /* What the CUDA backend holds for reuse goes back, so that a leak
     * checker sees only real leaks; tests/cuda_memcheck.sh also has every
     * device reset (YG_CUDA_RESET_AT_EXIT=1), which compute-sanitizer's
     * leak check needs.  Loads nothing in a program that used no GPU. */
    const char *reset = getenv("YG_CUDA_RESET_AT_EXIT");
    yg_cuda_release_all(reset != NULL && strcmp(reset, "1") == 0);
    return rc;
}

void yg_test_check(yg_status st, const char *expr, const char *file, int line)
{
    if (st == YG_OK)
        return;
    print_error("%s:%d: %s failed with %s: %s\n", file, line, expr, yg_status_name(st),
                yg_last_error());
    _fail(file, line);
}

void yg_test_expect_error(yg_status st, yg_status expected, const char *file, int line, ...)
{
    va_list ap;
    const char *want;

    if (st != expected) {
        print_error("%s:%d: expected status %s, got %s (message: \"%s\")\n", file, line,
                    yg_status_name(expected), yg_status_name(st), yg_last_error());
        _fail(file, line);
    }
    va_start(ap, line);
    while ((want = va_arg(ap, const char *)) != NULL) {
        if (strstr(yg_last_error(), want) == NULL) {
            print_error("%s:%d: message \"%s\" does not contain \"%s\"\n", file, line,
                        yg_last_error(), want);
            va_end(ap);
            _fail(file, line);
        }
    }
    va_end(ap);
}

yg_tensor *yg_test_tensor(yg_dtype dtype, const int64_t *sizes, int64_t ndim, const double *values)
{
    yg_tensor *t = NULL;
    int64_t n = 1;
    for (int64_t i = 0; i < ndim; i++)
        n *= sizes[i];
    YG_CHECK(yg_tensor_empty(sizes, ndim, dtype, &t));
    for (int64_t i = 0; i < n; i++) {
        void *d = yg_tensor_data(t);
        switch (dtype) {
        case YG_FLOAT32:
            ((float *)d)[i] = (float)values[i];
            break;
        case YG_FLOAT64:
            ((double *)d)[i] = values[i];
            break;
        case YG_INT64:
            ((int64_t *)d)[i] = (int64_t)values[i];
            break;
        case YG_BOOL:
            ((unsigned char *)d)[i] = values[i] != 0;
            break;
        case YG_INT32:
            ((int32_t *)d)[i] = (int32_t)values[i];
            break;
        default:
            break;
        }
    }
    return t;
}

yg_tensor *yg_test_rand(yg_dtype dtype, const int64_t *sizes, int64_t ndim, double lo, double hi,
                        uint64_t seed)
{
    int64_t n = 1;
    double *v;
    yg_tensor *t;
    uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;

    for (int64_t i = 0; i < ndim; i++)
        n *= sizes[i];
    v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = lo + (hi - lo) * (double)(s >> 11) / 9007199254740992.0;
    }
    t = yg_test_tensor(dtype, sizes, ndim, v);
    free(v);
    return t;
}

double *yg_test_values(const yg_tensor *t)
{
    int64_t n = yg_tensor_numel(t);
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    YG_CHECK(yg_tensor_to_f64(t, v, n));
    return v;
}

void yg_test_expect_close(const yg_tensor *t, const int64_t *sizes, int64_t ndim,
                          const double *values, double atol, double rtol, const char *file,
                          int line)
{
    char a[128], b[128];
    int64_t n = 1, worst = -1;
    double worst_excess = 0;
    double *got;

    if (t == NULL) {
        print_error("%s:%d: tensor is NULL\n", file, line);
        _fail(file, line);
    }
    if (yg_tensor_ndim(t) != ndim ||
        (ndim > 0 && memcmp(yg_tensor_sizes(t), sizes, (size_t)ndim * sizeof(int64_t)) != 0)) {
        yg_tensor_format_sizes(t, a, sizeof a);
        snprintf(b, sizeof b, "(ndim %lld)", (long long)ndim);
        print_error("%s:%d: sizes %s differ from expected %s\n", file, line, a, b);
        _fail(file, line);
    }
    for (int64_t i = 0; i < ndim; i++)
        n *= sizes[i];
    got = yg_test_values(t);
    for (int64_t i = 0; i < n; i++) {
        double excess = fabs(got[i] - values[i]) - (atol + rtol * fabs(values[i]));
        if (isnan(got[i]) != isnan(values[i]))
            excess = INFINITY;
        if (excess > worst_excess) {
            worst_excess = excess;
            worst = i;
        }
    }
    if (worst >= 0) {
        print_error("%s:%d: element %lld is %.10g, expected %.10g (atol %g, rtol %g)\n", file,
                    line, (long long)worst, got[worst], values[worst], atol, rtol);
        free(got);
        _fail(file, line);
    }
    free(got);
}
