/*
 * bench_cuda.c - issue 15's GPU figures, each against a reference measured
 * in the same run on the same device.
 *
 * Usage: bench_cuda [--reps R]
 *
 * Prints one JSON line per measurement:
 *   {"bench":"cuda","what":"add_f32_64M","median_us":..,"gbps":..,"of_copy":..}
 * copy_f32_64M (clone of 64M contiguous float32: the copy kernel reading
 * and writing each element once) is the bandwidth reference: of_copy is a
 * workload's
 * effective GB/s (the least bytes it must read and write over its median
 * time) over the copy's.  sgemm reports TFLOP/s; the allocator and the
 * per-op launch overhead report host microseconds.  Each timed rep ends
 * with yg_cuda_synchronize, so a time is the kernel's, not the launch's,
 * except for "launch_overhead_us", which times 1000 small adds without
 * synchronizing (the host side of an eager op) and divides.  h2d_/d2h_
 * lines time yg_tensor_to_device of 256 MiB of pageable host memory
 * (best of 5), through the pinned staging buffers and directly
 * (YG_CUDA_STAGING=0).
 *
 * Without a usable GPU it prints {"bench":"cuda","skipped":"<why>"} and
 * exits 0: there is nothing to measure.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "yagrad/yagrad.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        yg_status st_ = (expr);                                                                    \
        if (st_ != YG_OK) {                                                                        \
            fprintf(stderr,                                                                        \
                    "%s:%d: %s: %s\n",                                                             \
                    __FILE__,                                                                      \
                    __LINE__,                                                                      \
                    yg_status_name(st_),                                                           \
                    yg_last_error());                                                              \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static int reps = 20;

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef void (*work_fn)(void *ctx);

/* Median time of fn over reps runs (after 3 untimed), each synchronized. */
static double median_us(work_fn fn, void *ctx) {
    double *t = malloc((size_t)reps * sizeof *t);
    for (int i = 0; i < 3; i++)
        fn(ctx);
    CHECK(yg_cuda_synchronize(0));
    for (int i = 0; i < reps; i++) {
        double t0 = now_us();
        fn(ctx);
        CHECK(yg_cuda_synchronize(0));
        t[i] = now_us() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    double m = t[reps / 2];
    free(t);
    return m;
}

typedef struct ctx {
    yg_tensor *a, *b, *c, *w;
    int kind;
} ctx;

enum { CLONE, ADD, MUL, CHAIN, SOFTMAX, LAYER_NORM, MM, SUM };

static void run(void *p) {
    ctx *c = p;
    yg_tensor *y = NULL, *t1 = NULL, *t2 = NULL, *t3 = NULL, *t4 = NULL;
    const int64_t last[] = {1024};
    switch (c->kind) {
    case CLONE:
        CHECK(yg_clone(c->a, &y));
        break;
    case ADD:
        CHECK(yg_add(c->a, c->b, 1.0, &y));
        break;
    case MUL:
        CHECK(yg_mul(c->a, c->b, &y));
        break;
    case CHAIN: /* tanh(x * w + b) * sigmoid(x), eager: five kernels */
        CHECK(yg_mul(c->a, c->w, &t1));
        CHECK(yg_add(t1, c->b, 1.0, &t2));
        CHECK(yg_tanh(t2, &t3));
        CHECK(yg_sigmoid(c->a, &t4));
        CHECK(yg_mul(t3, t4, &y));
        break;
    case SOFTMAX:
        CHECK(yg_softmax(c->a, -1, &y));
        break;
    case LAYER_NORM:
        CHECK(yg_layer_norm(c->a, last, 1, c->w, c->b, 1e-5, &y));
        break;
    case MM:
        CHECK(yg_mm(c->a, c->b, &y));
        break;
    case SUM:
        CHECK(yg_sum(c->a, &y));
        break;
    }
    yg_release(y);
    yg_release(t1);
    yg_release(t2);
    yg_release(t3);
    yg_release(t4);
}

static yg_tensor *on_gpu(const int64_t *sizes, int64_t ndim, double lo, double hi) {
    const yg_device cuda = YG_CUDA;
    const yg_dtype f32 = YG_FLOAT32;
    yg_tensor *t = NULL, *s = NULL, *r = NULL;
    CHECK(yg_rand(sizes, ndim, NULL, &f32, &cuda, &t));
    CHECK(yg_mul_scalar(t, hi - lo, &s));
    CHECK(yg_add_scalar(s, lo, 1.0, &r));
    yg_release(t);
    yg_release(s);
    return r;
}

static void line(const char *what, double us, double bytes, double copy_gbps) {
    double gbps = bytes / (us * 1e3);
    printf(
        "{\"bench\":\"cuda\",\"what\":\"%s\",\"median_us\":%.2f,\"gbps\":%.1f,\"of_copy\":%.3f}\n",
        what,
        us,
        gbps,
        copy_gbps > 0 ? gbps / copy_gbps : 1.0);
}

int main(int argc, char **argv) {
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[++i]) > 0 ? atoi(argv[i]) : reps;
    if (yg_cuda_check() != YG_OK) {
        printf("{\"bench\":\"cuda\",\"skipped\":\"%s\"}\n", yg_last_error());
        return 0;
    }
    yg_cuda_device_properties p;
    CHECK(yg_cuda_get_device_properties(0, &p));
    printf("{\"bench\":\"cuda\",\"device\":\"%s\",\"sm\":\"%d%d\",\"sms\":%d}\n",
           p.name,
           p.major,
           p.minor,
           p.multiprocessor_count);

    const int64_t big[] = {64 << 20}, rows[] = {4096, 1024}, row[] = {1024};
    const double n = (double)big[0], f = 4.0;
    ctx c = {.a = on_gpu(big, 1, -2, 2), .b = on_gpu(big, 1, -1, 1), .w = on_gpu(big, 1, -1, 1)};
    c.kind = CLONE;
    double copy_us = median_us(run, &c), copy_gbps = 2 * n * f / (copy_us * 1e3);
    line("copy_f32_64M", copy_us, 2 * n * f, copy_gbps);
    c.kind = ADD;
    line("add_f32_64M", median_us(run, &c), 3 * n * f, copy_gbps);
    c.kind = MUL;
    line("mul_f32_64M", median_us(run, &c), 3 * n * f, copy_gbps);
    c.kind = CHAIN; /* the least traffic: x, w, b in, y out */
    line("chain_f32_64M_eager", median_us(run, &c), 4 * n * f, copy_gbps);
    c.kind = SUM;
    line("sum_f32_64M", median_us(run, &c), n * f, copy_gbps);
    yg_release(c.a);
    yg_release(c.b);
    yg_release(c.w);

    ctx s = {
        .a = on_gpu(rows, 2, -4, 4), .w = on_gpu(row, 1, 0.5, 1.5), .b = on_gpu(row, 1, -1, 1)};
    s.kind = SOFTMAX;
    line("softmax_4096x1024", median_us(run, &s), 2 * 4096.0 * 1024 * f, copy_gbps);
    s.kind = LAYER_NORM;
    line("layer_norm_4096x1024", median_us(run, &s), 2 * 4096.0 * 1024 * f, copy_gbps);
    yg_release(s.a);
    yg_release(s.w);
    yg_release(s.b);

    const int64_t sq[] = {4096, 4096};
    ctx m = {.a = on_gpu(sq, 2, -1, 1), .b = on_gpu(sq, 2, -1, 1), .kind = MM};
    double mm_us = median_us(run, &m);
    printf("{\"bench\":\"cuda\",\"what\":\"sgemm_4096\",\"median_us\":%.1f,\"tflops\":%.2f,"
           "\"tf32\":%s}\n",
           mm_us,
           2.0 * 4096 * 4096 * 4096 / (mm_us * 1e6),
           yg_cuda_get_allow_tf32() ? "true" : "false");
    yg_release(m.a);
    yg_release(m.b);

    /* Host <-> device copies of 256 MiB of pageable host memory, through
     * the pinned staging buffers and (YG_CUDA_STAGING=0) directly. */
    const int64_t hsz[] = {64 << 20};
    yg_tensor *host = NULL, *dev = NULL, *back = NULL;
    const yg_dtype f32 = YG_FLOAT32;
    CHECK(yg_zeros(hsz, 1, &f32, NULL, &host));
    for (int staged = 1; staged >= 0; staged--) {
        setenv("YG_CUDA_STAGING", staged ? "1" : "0", 1);
        double up = 1e300, down = 1e300;
        for (int i = 0; i < 5; i++) {
            double t = now_us();
            CHECK(yg_tensor_to_device(host, YG_CUDA, 0, &dev));
            up = fmin(up, now_us() - t);
            t = now_us();
            CHECK(yg_tensor_to_device(dev, YG_CPU, 0, &back));
            down = fmin(down, now_us() - t);
            yg_release(dev);
            yg_release(back);
        }
        printf("{\"bench\":\"cuda\",\"what\":\"h2d_256MiB%s\",\"best_us\":%.1f,\"gbps\":%.2f}\n",
               staged ? "_staged" : "_direct", up, 268435456.0 / (up * 1e3));
        printf("{\"bench\":\"cuda\",\"what\":\"d2h_256MiB%s\",\"best_us\":%.1f,\"gbps\":%.2f}\n",
               staged ? "_staged" : "_direct", down, 268435456.0 / (down * 1e3));
    }
    unsetenv("YG_CUDA_STAGING");
    yg_release(host);

    /* The caching allocator: an empty tensor made and freed, host side. */
    const int64_t small[] = {256};
    const yg_device cuda = YG_CUDA;
    yg_tensor *e = NULL;
    double t0 = now_us();
    for (int i = 0; i < 100000; i++) {
        CHECK(yg_empty(small, 1, NULL, &cuda, &e));
        yg_release(e);
    }
    printf("{\"bench\":\"cuda\",\"what\":\"alloc_free_pair_us\",\"value\":%.3f}\n",
           (now_us() - t0) / 100000);

    /* Per-op host overhead: 1000 adds of 256 elements, not synchronized. */
    yg_tensor *x = on_gpu(small, 1, -1, 1), *y = NULL;
    CHECK(yg_cuda_synchronize(0));
    t0 = now_us();
    for (int i = 0; i < 1000; i++) {
        CHECK(yg_add(x, x, 1.0, &y));
        yg_release(y);
    }
    double host_us = (now_us() - t0) / 1000;
    CHECK(yg_cuda_synchronize(0));
    printf("{\"bench\":\"cuda\",\"what\":\"launch_overhead_us\",\"value\":%.3f}\n", host_us);
    yg_release(x);
    return 0;
}
