/*
 * bench_gemm_half.c - yg_mm in bfloat16 and float16 against float32 on
 * the CPU, on GPT-2-like shapes and a square, interleaved in one
 * process: each round times one product per dtype on the same values
 * (the float32 operands rounded to the 16-bit dtype), and the medians
 * over the rounds are compared.
 *
 * bfloat16 goes to oneDNN's bf16 matmul primitive (runtime/cpu/blas.c;
 * run with ONEDNN_VERBOSE=1 to see which kernel, e.g.
 * brg:avx512_core_amx_bf16); float16 converts to float32, runs the
 * float32 gemm and rounds (so it is slower than float32 by the
 * conversions).  Threads: OMP_NUM_THREADS (the bench reports it).
 *
 * Output: one JSON line per shape and 16-bit dtype,
 *   {"bench":"gemm_half","shape":"gpt2_fc_fwd","m":256,"n":3072,"k":768,
 *    "tb":"N","dtype":"bfloat16","threads":2,"half_us":..,"float32_us":..,
 *    "half_gflops":..,"float32_gflops":..,"speedup":..,"max_rel_diff":..}
 * speedup is float32 time / 16-bit time (above 1: the 16-bit product is
 * faster); max_rel_diff is max |half - float32| / max |float32|.
 * Usage: bench_gemm_half [ROUNDS] (default 20).
 */
#include "yagrad/yagrad.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void ok(yg_status st, const char *what) {
    if (st != YG_OK) {
        fprintf(stderr, "bench_gemm_half: %s: %s\n", what, yg_last_error());
        exit(1);
    }
}

/* A float32 [rows, cols] tensor of a fixed pattern in [-0.5, 0.5),
 * rounded through dtype so both sides multiply the same values. */
static yg_tensor *pattern(int64_t rows, int64_t cols, int seed, yg_dtype dtype) {
    int64_t sizes[2] = {rows, cols};
    float *buf = malloc(sizeof(float) * (size_t)(rows * cols));
    yg_tensor *t = NULL, *h = NULL, *f = NULL;
    if (buf == NULL) {
        fprintf(stderr, "bench_gemm_half: out of memory\n");
        exit(1);
    }
    for (int64_t i = 0; i < rows * cols; i++)
        buf[i] = (float)((i * 7919 + seed * 104729) % 1000) / 1000.0f - 0.5f;
    ok(yg_tensor_from_data(buf, sizes, 2, YG_FLOAT32, &t), "from_data");
    free(buf);
    ok(yg_to_dtype(t, dtype, false, &h), "to half");
    ok(yg_to_dtype(h, YG_FLOAT32, false, &f), "to float32");
    yg_release(t);
    yg_release(h);
    return f;
}

typedef struct shape {
    const char *name;
    int64_t m, n, k;
    bool tb;
} shape;

/* x, or its t() view when trans (x w^T: w stored [n, k]). */
static yg_tensor *maybe_t(yg_tensor *x, bool trans) {
    yg_tensor *t = NULL;
    if (!trans)
        return x;
    ok(yg_t(x, &t), "t");
    yg_release(x);
    return t;
}

static double max_abs(const float *p, int64_t n) {
    double m = 0;
    for (int64_t i = 0; i < n; i++)
        m = fmax(m, fabs((double)p[i]));
    return m;
}

static void run(const shape *s, yg_dtype dtype, int rounds) {
    yg_tensor *a = pattern(s->m, s->k, 1, dtype), *ah = NULL, *bh = NULL, *b = NULL;
    yg_tensor *bs = s->tb ? pattern(s->n, s->k, 2, dtype) : pattern(s->k, s->n, 2, dtype);
    double *th = malloc(sizeof(double) * (size_t)rounds),
           *tf = malloc(sizeof(double) * (size_t)rounds);
    double diff = 0;
    int64_t mn = s->m * s->n;

    if (th == NULL || tf == NULL) {
        fprintf(stderr, "bench_gemm_half: out of memory\n");
        exit(1);
    }
    ok(yg_to_dtype(a, dtype, false, &ah), "to half");
    ok(yg_to_dtype(bs, dtype, false, &bh), "to half");
    b = maybe_t(bs, s->tb);
    bh = maybe_t(bh, s->tb);
    for (int r = -2; r < rounds; r++) { /* two untimed rounds warm up */
        yg_tensor *yh = NULL, *yf = NULL;
        double t0 = now_s();
        ok(yg_mm(ah, bh, &yh), "mm half");
        double t1 = now_s();
        ok(yg_mm(a, b, &yf), "mm float32");
        double t2 = now_s();
        if (r >= 0) {
            th[r] = t1 - t0;
            tf[r] = t2 - t1;
        } else if (r == -1) {
            yg_tensor *y32 = NULL;
            ok(yg_to_dtype(yh, YG_FLOAT32, false, &y32), "to float32");
            const float *ph = yg_tensor_data(y32), *pf = yg_tensor_data(yf);
            for (int64_t i = 0; i < mn; i++)
                diff = fmax(diff, fabs((double)ph[i] - (double)pf[i]));
            diff /= max_abs(pf, mn);
            yg_release(y32);
        }
        yg_release(yh);
        yg_release(yf);
    }
    qsort(th, (size_t)rounds, sizeof *th, cmp);
    qsort(tf, (size_t)rounds, sizeof *tf, cmp);
    double mh = th[rounds / 2], mf = tf[rounds / 2], flop = 2.0 * (double)mn * (double)s->k;
    printf("{\"bench\":\"gemm_half\",\"shape\":\"%s\",\"m\":%lld,\"n\":%lld,\"k\":%lld,"
           "\"tb\":\"%c\",\"dtype\":\"%s\",\"threads\":%d,\"half_us\":%.1f,\"float32_us\":%.1f,"
           "\"half_gflops\":%.1f,\"float32_gflops\":%.1f,\"speedup\":%.2f,"
           "\"max_rel_diff\":%.2e}\n",
           s->name,
           (long long)s->m,
           (long long)s->n,
           (long long)s->k,
           s->tb ? 'T' : 'N',
           yg_dtype_name(dtype),
           omp_get_max_threads(),
           mh * 1e6,
           mf * 1e6,
           flop / mh / 1e9,
           flop / mf / 1e9,
           mf / mh,
           diff);
    fflush(stdout);
    free(th);
    free(tf);
    yg_release(a);
    yg_release(b);
    yg_release(ah);
    yg_release(bh);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    static const shape shapes[] = {
        /* GPT-2 124M at B*T = 256 rows: the fc layer forward (weights
         * stored [in, out]) and as a linear layer, x w^T */
        {"gpt2_fc_fwd", 256, 3072, 768, false},
        {"gpt2_fc_linear", 256, 3072, 768, true},
        {"gpt2_proj_fwd", 256, 768, 3072, false},
        {"square_1024", 1024, 1024, 1024, false},
    };
    static const yg_dtype dtypes[] = {YG_BFLOAT16, YG_FLOAT16};
    if (rounds < 1) {
        fprintf(stderr, "usage: bench_gemm_half [ROUNDS >= 1]\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (size_t d = 0; d < 2; d++)
            run(&shapes[i], dtypes[d], rounds);
    return 0;
}
