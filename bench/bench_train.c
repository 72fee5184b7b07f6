/*
 * bench_train.c - time of an MLP train step and of an LSTM cell, the
 * workloads of issue 10's table:
 *   mlp:  784-512-512-10, batch 128, linear/relu/cross_entropy, backward,
 *         SGD with momentum 0.9 (zero_grad sets .grad to none);
 *   lstm: lstm_cell batch 20, hidden 650 (input 650), forward alone and
 *         forward + backward of sum(hy) + sum(cy).
 * Prints one JSON line per workload with the median of `repeats` timed
 * runs (milliseconds) after a warm-up.
 * Usage: bench_train [repeats] [mlp|lstm_fwd|lstm_fwdbwd|all]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "yagrad/yagrad.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void check(yg_status st, const char *what)
{
    if (st != YG_OK) {
        fprintf(stderr, "bench_train: %s: %s\n", what, yg_last_error());
        exit(1);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static yg_tensor *randn(int64_t a, int64_t b, double scale, bool grad)
{
    yg_tensor *t = NULL, *s = NULL;
    int64_t sizes[2] = {a, b};
    int32_t nd = b > 0 ? 2 : 1;
    check(yg_randn(sizes, nd, NULL, NULL, NULL, &t), "randn");
    check(yg_mul_scalar(t, scale, &s), "mul_scalar");
    yg_release(t);
    if (grad)
        check(yg_tensor_set_requires_grad(s, true), "requires_grad");
    return s;
}

typedef struct mlp {
    yg_tensor *w[3], *b[3], *x, *y;
    yg_optimizer *opt;
} mlp;

static void mlp_init(mlp *m)
{
    int64_t dims[4] = {784, 512, 512, 10}, ysz[1] = {128};
    yg_sgd_options o = {.lr = 0.01, .momentum = 0.9};
    yg_tensor *params[6];
    for (int i = 0; i < 3; i++) {
        m->w[i] = randn(dims[i + 1], dims[i], 0.05, true);
        m->b[i] = randn(dims[i + 1], 0, 0.05, true);
        params[2 * i] = m->w[i];
        params[2 * i + 1] = m->b[i];
    }
    m->x = randn(128, 784, 1.0, false);
    check(yg_randint(0, 10, ysz, 1, NULL, NULL, NULL, &m->y), "randint");
    check(yg_optimizer_create_sgd(params, 6, &o, &m->opt), "sgd");
}

static void mlp_step(mlp *m)
{
    yg_tensor *h = yg_retain(m->x), *t = NULL, *loss = NULL;
    for (int i = 0; i < 3; i++) {
        check(yg_linear(h, m->w[i], m->b[i], &t), "linear");
        yg_release(h);
        h = t;
        if (i < 2) {
            check(yg_relu(h, &t), "relu");
            yg_release(h);
            h = t;
        }
    }
    check(yg_cross_entropy(h, m->y, NULL, 1, -100, &loss), "cross_entropy");
    yg_optimizer_zero_grad(m->opt);
    check(yg_backward(loss, NULL, false), "backward");
    check(yg_optimizer_step(m->opt), "step");
    yg_release(h);
    yg_release(loss);
}

typedef struct lstm {
    yg_tensor *x, *hx, *cx, *w_ih, *w_hh, *b_ih, *b_hh;
} lstm;

static void lstm_init(lstm *l)
{
    l->x = randn(20, 650, 1.0, false);
    l->hx = randn(20, 650, 1.0, false);
    l->cx = randn(20, 650, 1.0, false);
    l->w_ih = randn(2600, 650, 0.04, true);
    l->w_hh = randn(2600, 650, 0.04, true);
    l->b_ih = randn(2600, 0, 0.04, true);
    l->b_hh = randn(2600, 0, 0.04, true);
}

static void lstm_run(lstm *l, bool backward)
{
    yg_tensor *hy = NULL, *cy = NULL, *s1 = NULL, *s2 = NULL, *loss = NULL;
    check(yg_lstm_cell(l->x, l->hx, l->cx, l->w_ih, l->w_hh, l->b_ih, l->b_hh, &hy, &cy),
          "lstm_cell");
    if (backward) {
        yg_tensor *ps[4] = {l->w_ih, l->w_hh, l->b_ih, l->b_hh};
        for (int i = 0; i < 4; i++)
            yg_tensor_zero_grad(ps[i]);
        check(yg_sum(hy, &s1), "sum");
        check(yg_sum(cy, &s2), "sum");
        check(yg_add(s1, s2, 1.0, &loss), "add");
        check(yg_backward(loss, NULL, false), "backward");
    }
    yg_release(hy);
    yg_release(cy);
    yg_release(s1);
    yg_release(s2);
    yg_release(loss);
}

typedef void (*runner)(void *ctx, int which);

static void run_one(void *ctx, int which)
{
    if (which == 0)
        mlp_step(ctx);
    else
        lstm_run(ctx, which == 2);
}

static void timeit(const char *name, void *ctx, int which, int repeats)
{
    double *t = malloc((size_t)repeats * sizeof *t);
    for (int i = 0; i < 10; i++)
        run_one(ctx, which);
    for (int i = 0; i < repeats; i++) {
        double t0 = now();
        run_one(ctx, which);
        t[i] = (now() - t0) * 1e3;
    }
    qsort(t, (size_t)repeats, sizeof *t, cmp_double);
    printf("{\"bench\": \"%s\", \"median_ms\": %.4f, \"min_ms\": %.4f}\n", name, t[repeats / 2],
           t[0]);
    fflush(stdout);
    free(t);
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 100;
    const char *which = argc > 2 ? argv[2] : "all";
    bool all = strcmp(which, "all") == 0;
    mlp m;
    lstm l;

    yg_manual_seed(0);
    if (all || strcmp(which, "mlp") == 0) {
        mlp_init(&m);
        timeit("mlp_step", &m, 0, repeats);
    }
    if (all || strncmp(which, "lstm", 4) == 0) {
        lstm_init(&l);
        if (all || strcmp(which, "lstm_fwd") == 0)
            timeit("lstm_fwd", &l, 1, repeats);
        if (all || strcmp(which, "lstm_fwdbwd") == 0)
            timeit("lstm_fwdbwd", &l, 2, repeats);
    }
    return 0;
}
