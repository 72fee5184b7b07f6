/*
 * bench_norms.c - layer_norm and batch_norm, forward and forward+backward
 * (float32), the workloads of issue 10's table:
 *   layer_norm over the last dim of 4096x1024 (weight and bias [1024]);
 *   batch_norm training on 32x64x56x56 (weight, bias, running statistics).
 * Forward runs with grad mode off; forward+backward records the graph with
 * input, weight and bias requiring grad and takes their gradients with
 * yg_grad (no .grad accumulation), the incoming gradient fixed.  Prints
 * one JSON line per workload: the median of the repeats, in ms.  Uses the
 * public API only, so the same file times an older build of the library
 * (bench/norms_vs_torch.py runs both and PyTorch, interleaved).
 * Usage: bench_norms [repeats]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "yagrad/yagrad.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void check(yg_status st, const char *what) {
    if (st != YG_OK) {
        fprintf(stderr, "bench_norms: %s: %s\n", what, yg_last_error());
        exit(1);
    }
}

static yg_tensor *rand_f32(const int64_t *sizes, int64_t n, bool requires_grad) {
    yg_dtype f32 = YG_FLOAT32;
    yg_tensor *t = NULL;
    check(yg_rand(sizes, n, NULL, &f32, NULL, &t), "rand");
    if (requires_grad)
        check(yg_tensor_set_requires_grad(t, true), "requires_grad");
    return t;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct work {
    bool batch; /* batch_norm, else layer_norm */
    bool backward;
    yg_tensor *x, *w, *b, *rm, *rv, *g;
} work;

static void run(const work *k) {
    const int64_t ns[] = {1024};
    yg_tensor *y = NULL, *grads[3] = {NULL, NULL, NULL};
    bool prev = yg_set_grad_enabled(k->backward);

    if (k->batch)
        check(yg_batch_norm(k->x, k->w, k->b, k->rm, k->rv, true, 0.1, 1e-5, &y), "batch_norm");
    else
        check(yg_layer_norm(k->x, ns, 1, k->w, k->b, 1e-5, &y), "layer_norm");
    if (k->backward) {
        const yg_tensor *in[3] = {k->x, k->w, k->b}, *outs[1] = {y}, *gs[1] = {k->g};
        check(yg_grad(outs, 1, gs, in, 3, false, false, false, grads), "grad");
    }
    yg_set_grad_enabled(prev);
    for (int i = 0; i < 3; i++)
        yg_release(grads[i]);
    yg_release(y);
}

static void bench(const char *name, const work *k, int repeats) {
    double *t = malloc(sizeof(double) * (size_t)repeats);
    run(k); /* warm the allocator's cache */
    for (int r = 0; r < repeats; r++) {
        double t0 = now();
        run(k);
        t[r] = now() - t0;
    }
    qsort(t, (size_t)repeats, sizeof(double), cmp);
    printf("{\"bench\": \"%s\", \"median_ms\": %.3f, \"min_ms\": %.3f}\n", name,
           1e3 * t[repeats / 2], 1e3 * t[0]);
    fflush(stdout);
    free(t);
}

int main(int argc, char **argv) {
    int repeats = argc > 1 ? atoi(argv[1]) : 20;
    const int64_t ls[] = {4096, 1024}, lw[] = {1024}, bs[] = {32, 64, 56, 56}, bc[] = {64};

    for (int backward = 0; backward < 2; backward++) {
        work ln = {false, backward, rand_f32(ls, 2, backward), rand_f32(lw, 1, backward),
                   rand_f32(lw, 1, backward), NULL, NULL, rand_f32(ls, 2, false)};
        bench(backward ? "layer_norm 4096x1024 fwd+bwd" : "layer_norm 4096x1024 fwd", &ln,
              repeats);
        work bn = {true, backward, rand_f32(bs, 4, backward), rand_f32(bc, 1, backward),
                   rand_f32(bc, 1, backward), rand_f32(bc, 1, false), rand_f32(bc, 1, false),
                   rand_f32(bs, 4, false)};
        bench(backward ? "batch_norm train 32x64x56x56 fwd+bwd" : "batch_norm train 32x64x56x56 fwd",
              &bn, repeats);
        const work *ks[2] = {&ln, &bn};
        for (int i = 0; i < 2; i++) {
            yg_release(ks[i]->x);
            yg_release(ks[i]->w);
            yg_release(ks[i]->b);
            yg_release(ks[i]->rm);
            yg_release(ks[i]->rv);
            yg_release(ks[i]->g);
        }
    }
    return 0;
}
