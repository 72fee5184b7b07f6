/*
 * bench_mm.c - GFLOP/s of yg_mm (float32 and float64, 1 and 2 threads)
 * on the library's default path, against OpenBLAS's "Prescott" kernels
 * measured in the same run.
 *
 * Prescott is what Debian's OpenBLAS 0.3.21 falls back to on CPUs it does
 * not recognise; runtime/cpu/blas.c replaces it by default.  Forcing it
 * here (through the same exported gotoblas_dynamic_quit/init pair) shows
 * what the fix is worth on any machine, including ones that OpenBLAS
 * already detects correctly.  Output: one JSON line per measurement,
 *   {"bench":"mm","path":"default","dtype":"float32","n":1024,"threads":2,
 *    "gflops":207.1,"core":"SkylakeX"}
 * with path "prescott" for the reference; compare the two as a ratio.
 * Usage: bench_mm [n] [repeats].
 */
#include "yagrad/yagrad.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern void gotoblas_dynamic_init(void) __attribute__((weak));
extern void gotoblas_dynamic_quit(void) __attribute__((weak));

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Re-selects OpenBLAS's kernels as if OPENBLAS_CORETYPE were core. */
static int force_core(const char *core) {
    if (gotoblas_dynamic_init == NULL || gotoblas_dynamic_quit == NULL)
        return -1;
    const char *prev = getenv("OPENBLAS_CORETYPE");
    char *saved = prev ? strdup(prev) : NULL;
    setenv("OPENBLAS_CORETYPE", core, 1);
    gotoblas_dynamic_quit();
    gotoblas_dynamic_init();
    if (saved) {
        setenv("OPENBLAS_CORETYPE", saved, 1);
        free(saved);
    } else {
        unsetenv("OPENBLAS_CORETYPE");
    }
    return 0;
}

/* Best-of-repeats GFLOP/s of yg_mm(a, b); negative on failure. */
static double time_mm(const yg_tensor *a, const yg_tensor *b, int64_t n, int repeats) {
    double best = 1e30;
    for (int r = 0; r <= repeats; r++) {
        yg_tensor *c = NULL;
        double t0 = now_s();
        if (yg_mm(a, b, &c) != YG_OK) {
            fprintf(stderr, "bench_mm: %s\n", yg_last_error());
            return -1;
        }
        double t = now_s() - t0;
        yg_release(c);
        if (r > 0 && t < best) /* r == 0 warms up caches and threads */
            best = t;
    }
    return 2.0 * (double)n * (double)n * (double)n / best / 1e9;
}

static int make_inputs(int64_t n, yg_dtype dtype, yg_tensor **a, yg_tensor **b) {
    int64_t sizes[2] = {n, n};
    double *buf = malloc(sizeof(double) * (size_t)(n * n));
    yg_tensor *a64 = NULL, *b64 = NULL;
    int rc = -1;

    if (buf == NULL)
        return -1;
    srand(1);
    for (int64_t i = 0; i < n * n; i++)
        buf[i] = (double)rand() / RAND_MAX - 0.5;
    if (yg_tensor_from_data(buf, sizes, 2, YG_FLOAT64, &a64) != YG_OK)
        goto out;
    for (int64_t i = 0; i < n * n; i++)
        buf[i] = (double)rand() / RAND_MAX - 0.5;
    if (yg_tensor_from_data(buf, sizes, 2, YG_FLOAT64, &b64) != YG_OK)
        goto out;
    if (dtype == YG_FLOAT64) {
        *a = yg_retain(a64);
        *b = yg_retain(b64);
        rc = 0;
        goto out;
    }
    /* float32 copies through a float32 buffer. */
    {
        float *f = malloc(sizeof(float) * (size_t)(n * n));
        double *d = malloc(sizeof(double) * (size_t)(n * n));
        if (f == NULL || d == NULL) {
            free(f);
            free(d);
            goto out;
        }
        yg_status st1 = yg_tensor_to_f64(a64, d, n * n);
        for (int64_t i = 0; i < n * n; i++)
            f[i] = (float)d[i];
        yg_status st2 = yg_tensor_from_data(f, sizes, 2, YG_FLOAT32, a);
        yg_status st3 = yg_tensor_to_f64(b64, d, n * n);
        for (int64_t i = 0; i < n * n; i++)
            f[i] = (float)d[i];
        yg_status st4 = yg_tensor_from_data(f, sizes, 2, YG_FLOAT32, b);
        free(f);
        free(d);
        rc = st1 || st2 || st3 || st4 ? -1 : 0;
    }
out:
    free(buf);
    yg_release(a64);
    yg_release(b64);
    return rc;
}

static void run(const char *path, int64_t n, int repeats) {
    static const yg_dtype dtypes[] = {YG_FLOAT32, YG_FLOAT64};
    for (size_t di = 0; di < 2; di++) {
        yg_tensor *a = NULL, *b = NULL;
        if (make_inputs(n, dtypes[di], &a, &b) != 0) {
            fprintf(stderr, "bench_mm: cannot create inputs\n");
            return;
        }
        for (int threads = 1; threads <= 2; threads++) {
            omp_set_num_threads(threads);
            openblas_set_num_threads(threads);
            double gflops = time_mm(a, b, n, repeats);
            printf("{\"bench\":\"mm\",\"path\":\"%s\",\"dtype\":\"%s\",\"n\":%lld,\"threads\":%d,"
                   "\"gflops\":%.1f,\"core\":\"%s\"}\n",
                   path,
                   yg_dtype_name(dtypes[di]),
                   (long long)n,
                   threads,
                   gflops,
                   openblas_get_corename());
            fflush(stdout);
        }
        yg_release(a);
        yg_release(b);
    }
}

int main(int argc, char **argv) {
    int64_t n = argc > 1 ? atoll(argv[1]) : 1024;
    int repeats = argc > 2 ? atoi(argv[2]) : 5;
    char default_core[64];

    snprintf(default_core, sizeof default_core, "%s", openblas_get_corename());
    run("default", n, repeats);
    if (force_core("Prescott") != 0) {
        fprintf(stderr, "bench_mm: OpenBLAS is not a DYNAMIC_ARCH build; no reference core\n");
        return 0;
    }
    run("prescott", n, repeats);
    force_core(default_core);
    return 0;
}
