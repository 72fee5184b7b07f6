/*
 * bench_autograd.c - per-node cost of the autograd engine.
 *
 * A chain of N tiny ops (y = y * 1 on a one-element float32 tensor) is
 * run three ways in the same process:
 *   - forward with grad mode off (the reference: kernel + dispatch only),
 *   - forward recording a node per op,
 *   - backward over the recorded chain.
 * Record overhead per node = (recording - reference) / N; backward per
 * node = backward / N.  Several N show whether cost stays O(N).
 * Prints one JSON line per N.
 *
 * Then views of b = x * 1 ([2, 3]): recording y = v2 * 1 on a view whose
 * history is current (the version check per edge), and writing row 0
 * through another view v1 in place before each such record, so v2's
 * history is regenerated every time.  One more JSON line.
 * Usage: bench_autograd [repeats]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "yagrad/yagrad.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_autograd: %s: %s\n", what, yg_last_error());
    exit(1);
}

/* Runs the chain; returns its end (new ref).  *seconds gets the time. */
static yg_tensor *chain(yg_tensor *x, int64_t n, double *seconds)
{
    yg_tensor *cur = yg_retain(x), *next = NULL;
    double t0 = now();
    for (int64_t i = 0; i < n; i++) {
        if (yg_mul_scalar(cur, 1.0, &next) != YG_OK)
            die("mul_scalar");
        yg_release(cur);
        cur = next;
    }
    *seconds = now() - t0;
    return cur;
}

/* Records y = v * 1 n times (released at once), writing w *= 1 in place
 * before each when w is not NULL.  Returns seconds. */
static double record_on_view(yg_tensor *v, yg_tensor *w, int64_t n)
{
    double t0 = now();
    for (int64_t i = 0; i < n; i++) {
        yg_tensor *y = NULL, *same = NULL;
        if (w != NULL && yg_mul_scalar_(w, 1.0, &same) != YG_OK)
            die("mul_scalar_");
        yg_release(same);
        if (yg_mul_scalar(v, 1.0, &y) != YG_OK)
            die("mul_scalar on a view");
        yg_release(y);
    }
    return now() - t0;
}

static void bench_views(int repeats)
{
    const int64_t s[] = {2, 3};
    const int64_t n = 10000;
    double best_cur = 1e9, best_stale = 1e9;
    yg_tensor *x = NULL, *b = NULL, *v1 = NULL, *v2 = NULL;

    if (yg_tensor_full(s, 2, 1.0, YG_FLOAT32, &x) != YG_OK ||
        yg_tensor_set_requires_grad(x, true) != YG_OK)
        die("setup");
    for (int r = 0; r < repeats; r++) {
        double t;
        if (yg_mul_scalar(x, 1.0, &b) != YG_OK || yg_select(b, 0, 0, &v1) != YG_OK ||
            yg_slice(b, 1, 0, 2, 1, &v2) != YG_OK)
            die("views");
        t = record_on_view(v2, NULL, n);
        best_cur = t < best_cur ? t : best_cur;
        t = record_on_view(v2, v1, n);
        best_stale = t < best_stale ? t : best_stale;
        yg_release(v2);
        yg_release(v1);
        yg_release(b);
    }
    printf("{\"bench\":\"autograd_view\",\"n\":%lld,\"record_on_current_view_ns\":%.1f,"
           "\"write_then_record_on_stale_view_ns\":%.1f}\n",
           (long long)n, 1e9 * best_cur / (double)n, 1e9 * best_stale / (double)n);
    yg_release(x);
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 5;
    const int64_t ns[] = {1000, 10000, 100000};
    const int64_t size[] = {1};

    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        int64_t n = ns[k];
        double best_ref = 1e9, best_rec = 1e9, best_bwd = 1e9;
        for (int r = 0; r < repeats; r++) {
            yg_tensor *x = NULL, *y = NULL;
            double t_ref, t_rec, t_bwd, t0;
            if (yg_tensor_full(size, 1, 1.0, YG_FLOAT32, &x) != YG_OK ||
                yg_tensor_set_requires_grad(x, true) != YG_OK)
                die("setup");
            bool prev = yg_set_grad_enabled(false);
            y = chain(x, n, &t_ref);
            yg_set_grad_enabled(prev);
            yg_release(y);
            y = chain(x, n, &t_rec);
            t0 = now();
            if (yg_backward(y, NULL, false) != YG_OK)
                die("backward");
            t_bwd = now() - t0;
            best_bwd = t_bwd < best_bwd ? t_bwd : best_bwd;
            best_ref = t_ref < best_ref ? t_ref : best_ref;
            best_rec = t_rec < best_rec ? t_rec : best_rec;
            yg_release(y);
            yg_release(x);
        }
        printf("{\"bench\":\"autograd_chain\",\"n\":%lld,\"forward_nograd_ns_per_op\":%.1f,"
               "\"forward_record_ns_per_op\":%.1f,\"record_overhead_ns_per_node\":%.1f,"
               "\"backward_ns_per_node\":%.1f}\n",
               (long long)n, 1e9 * best_ref / (double)n, 1e9 * best_rec / (double)n,
               1e9 * (best_rec - best_ref) / (double)n, 1e9 * best_bwd / (double)n);
    }
    bench_views(repeats);
    return 0;
}
