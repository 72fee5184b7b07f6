/*
 * bench_cat.c - time of yg_cat of n pieces against one yg_clone of its
 * result measured in the same run (the floor: one allocation and one
 * copy of every element).  Each piece is [rows, cols] float32; the pieces
 * are joined along dim 0 (each piece one contiguous run) and along dim 1
 * (each piece a run per row).  Output: one JSON line per (n, dim),
 *   {"bench":"cat","n":10,"dim":1,"rows":64,"cols":64,"cat_us":..,
 *    "clone_us":..,"ratio":1.1}
 * ratio is cat_us / clone_us; the former composite cat (a sum of n
 * zero-padded copies) grew as n.  Usage: bench_cat [repeats].
 */
#include "yagrad/yagrad.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Best-of-repeats seconds of yg_cat, and of yg_clone of its result. */
static int time_cat(yg_tensor *const *pieces,
                    int64_t n,
                    int64_t dim,
                    int repeats,
                    double *cat_s,
                    double *clone_s) {
    yg_tensor *y = NULL;
    *cat_s = 1e30;
    *clone_s = 1e30;
    for (int r = 0; r <= repeats; r++) {
        yg_tensor *c = NULL;
        yg_release(y);
        y = NULL;
        double t0 = now_s();
        if (yg_cat((const yg_tensor *const *)pieces, n, dim, &y) != YG_OK)
            goto fail;
        double t1 = now_s();
        if (yg_clone(y, &c) != YG_OK)
            goto fail;
        double t2 = now_s();
        yg_release(c);
        if (r > 0) { /* r == 0 warms the allocator's cache */
            *cat_s = t1 - t0 < *cat_s ? t1 - t0 : *cat_s;
            *clone_s = t2 - t1 < *clone_s ? t2 - t1 : *clone_s;
        }
    }
    yg_release(y);
    return 0;
fail:
    fprintf(stderr, "bench_cat: %s\n", yg_last_error());
    yg_release(y);
    return -1;
}

int main(int argc, char **argv) {
    const int64_t ns[] = {2, 10, 100};
    const int64_t sizes[2] = {64, 64};
    int repeats = argc > 1 ? atoi(argv[1]) : 50;
    int rc = 0;

    for (size_t k = 0; k < sizeof ns / sizeof ns[0] && rc == 0; k++) {
        int64_t n = ns[k];
        yg_tensor **pieces = calloc((size_t)n, sizeof *pieces);
        if (pieces == NULL)
            return 1;
        for (int64_t i = 0; i < n && rc == 0; i++)
            if (yg_tensor_full(sizes, 2, (double)i, YG_FLOAT32, &pieces[i]) != YG_OK)
                rc = 1;
        for (int64_t dim = 0; dim < 2 && rc == 0; dim++) {
            double cat_s, clone_s;
            if (time_cat(pieces, n, dim, repeats, &cat_s, &clone_s) != 0) {
                rc = 1;
                break;
            }
            printf("{\"bench\":\"cat\",\"n\":%lld,\"dim\":%lld,\"rows\":%lld,\"cols\":%lld,"
                   "\"cat_us\":%.2f,\"clone_us\":%.2f,\"ratio\":%.3f}\n",
                   (long long)n,
                   (long long)dim,
                   (long long)sizes[0],
                   (long long)sizes[1],
                   cat_s * 1e6,
                   clone_s * 1e6,
                   cat_s / clone_s);
        }
        for (int64_t i = 0; i < n; i++)
            yg_release(pieces[i]);
        free(pieces);
    }
    return rc;
}
