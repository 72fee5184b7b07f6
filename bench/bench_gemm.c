/*
 * bench_gemm.c - yg_mm in float32 on the shapes of training (an LSTM
 * cell's three products, an MLP layer's, a convolution's im2col ones, a
 * square) against OpenBLAS's cblas_sgemm on the same buffers, interleaved
 * in one process: each round times one yg_mm and one cblas_sgemm, and the
 * medians over the rounds are compared.
 *
 * yg_mm takes the library's default path (runtime/cpu/blas.c: oneDNN's
 * sgemm for products of at least 2^18 multiply-adds when built with
 * oneDNN, OpenBLAS below that or with YG_GEMM=openblas), so the ratio is
 * what that choice is worth against OpenBLAS alone, including yg_mm's
 * own costs (checks, the result's allocation).  Operands marked T are
 * transposed views (what linear layers and mm's backward pass), read in
 * place by both sides.
 *
 * Output: one JSON line per shape,
 *   {"bench":"gemm","shape":"lstm_dw","m":2600,"n":650,"k":20,"ta":"T",
 *    "tb":"N","threads":2,"yagrad_us":..,"openblas_us":..,"ratio":..,
 *    "yagrad_gflops":..,"max_abs_diff":..}
 * ratio is yagrad / openblas (lower is better for yagrad); max_abs_diff
 * compares the two results.  Usage: bench_gemm [ROUNDS] (default 30).
 */
#include "yagrad/yagrad.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
        fprintf(stderr, "bench_gemm: %s: %s\n", what, yg_last_error());
        exit(1);
    }
}

/* A float32 [rows, cols] tensor of a fixed pattern in [-0.5, 0.5). */
static yg_tensor *pattern(int64_t rows, int64_t cols, int seed) {
    int64_t sizes[2] = {rows, cols};
    float *buf = malloc(sizeof(float) * (size_t)(rows * cols));
    yg_tensor *t = NULL;
    if (buf == NULL) {
        fprintf(stderr, "bench_gemm: out of memory\n");
        exit(1);
    }
    for (int64_t i = 0; i < rows * cols; i++)
        buf[i] = (float)((i * 7919 + seed * 104729) % 1000) / 1000.0f - 0.5f;
    ok(yg_tensor_from_data(buf, sizes, 2, YG_FLOAT32, &t), "from_data");
    free(buf);
    return t;
}

/* An operand [rows, cols] of the product: stored as [cols, rows] and
 * transposed (a view) when trans, else stored as it is. */
static yg_tensor *operand(int64_t rows, int64_t cols, bool trans, int seed) {
    yg_tensor *s = NULL, *t = NULL;
    if (!trans)
        return pattern(rows, cols, seed);
    s = pattern(cols, rows, seed);
    ok(yg_t(s, &t), "t");
    yg_release(s);
    return t;
}

typedef struct shape {
    const char *name;
    int64_t m, n, k;
    bool ta, tb;
} shape;

static void run(const shape *s, int rounds) {
    yg_tensor *a = operand(s->m, s->k, s->ta, 1), *b = operand(s->k, s->n, s->tb, 2);
    const float *pa = yg_tensor_data(a), *pb = yg_tensor_data(b);
    int lda = s->ta ? (int)s->m : (int)s->k, ldb = s->tb ? (int)s->k : (int)s->n;
    float *c = malloc(sizeof(float) * (size_t)(s->m * s->n));
    double *ty = malloc(sizeof(double) * (size_t)rounds), *tb = malloc(sizeof(double) * (size_t)rounds);
    double diff = 0;

    if (c == NULL || ty == NULL || tb == NULL) {
        fprintf(stderr, "bench_gemm: out of memory\n");
        exit(1);
    }
    for (int r = -3; r < rounds; r++) { /* three untimed rounds warm up */
        yg_tensor *y = NULL;
        double t0 = now_s();
        ok(yg_mm(a, b, &y), "mm");
        double t1 = now_s();
        cblas_sgemm(CblasRowMajor,
                    s->ta ? CblasTrans : CblasNoTrans,
                    s->tb ? CblasTrans : CblasNoTrans,
                    (int)s->m,
                    (int)s->n,
                    (int)s->k,
                    1.0f,
                    pa,
                    lda,
                    pb,
                    ldb,
                    0.0f,
                    c,
                    (int)s->n);
        double t2 = now_s();
        if (r >= 0) {
            ty[r] = t1 - t0;
            tb[r] = t2 - t1;
        } else if (r == -1) {
            const float *py = yg_tensor_data(y);
            for (int64_t i = 0; i < s->m * s->n; i++)
                diff = fmax(diff, fabs((double)py[i] - (double)c[i]));
        }
        yg_release(y);
    }
    qsort(ty, (size_t)rounds, sizeof *ty, cmp);
    qsort(tb, (size_t)rounds, sizeof *tb, cmp);
    double my = ty[rounds / 2], mb = tb[rounds / 2];
    printf("{\"bench\":\"gemm\",\"shape\":\"%s\",\"m\":%lld,\"n\":%lld,\"k\":%lld,\"ta\":\"%c\","
           "\"tb\":\"%c\",\"threads\":%d,\"yagrad_us\":%.1f,\"openblas_us\":%.1f,\"ratio\":%.3f,"
           "\"yagrad_gflops\":%.1f,\"max_abs_diff\":%.2e}\n",
           s->name,
           (long long)s->m,
           (long long)s->n,
           (long long)s->k,
           s->ta ? 'T' : 'N',
           s->tb ? 'T' : 'N',
           omp_get_max_threads(),
           my * 1e6,
           mb * 1e6,
           my / mb,
           2.0 * (double)s->m * (double)s->n * (double)s->k / my / 1e9,
           diff);
    fflush(stdout);
    free(c);
    free(ty);
    free(tb);
    yg_release(a);
    yg_release(b);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 30;
    static const shape shapes[] = {
        /* LSTM cell, batch 20, hidden 650: x w^T, dgates w, dgates^T x */
        {"lstm_fwd", 20, 2600, 650, false, true},
        {"lstm_dx", 20, 650, 2600, false, false},
        {"lstm_dw", 2600, 650, 20, true, false},
        /* MLP 784-512 layer, batch 128: forward, input and weight grads */
        {"mlp_fwd", 128, 512, 784, false, true},
        {"mlp_dx", 128, 784, 512, false, false},
        {"mlp_dw", 512, 784, 128, true, false},
        /* a 3x3 convolution 64 -> 64 channels on 56x56 as im2col */
        {"conv_fwd", 64, 3136, 576, false, false},
        {"conv_dw", 64, 576, 3136, false, true},
        {"conv_dcol", 576, 3136, 64, true, false},
        /* GPT-2 124M at B*T = 256 rows, weights stored [in, out]: the
         * fc layer forward, input and weight gradients; the tied head
         * x wte^T and its two gradients */
        {"gpt2_fc_fwd", 256, 3072, 768, false, false},
        {"gpt2_fc_dx", 256, 768, 3072, false, true},
        {"gpt2_fc_dw", 768, 3072, 256, true, false},
        {"gpt2_head_fwd", 256, 50304, 768, false, true},
        {"gpt2_head_dx", 256, 768, 50304, false, false},
        {"gpt2_head_dw", 50304, 768, 256, true, false},
        {"square_1024", 1024, 1024, 1024, false, false},
        {"small_32", 32, 32, 32, false, false},
    };
    if (rounds < 1) {
        fprintf(stderr, "usage: bench_gemm [ROUNDS >= 1]\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        run(&shapes[i], rounds);
    return 0;
}
