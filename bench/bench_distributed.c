/*
 * bench_distributed.c - yagrad/distributed.h against raw MPI, in the
 * same run.  Run under mpirun (2 ranks, 1 thread each):
 *
 *   OMP_NUM_THREADS=1 mpirun -np 2 build/release/bench/bench_distributed [reps]
 *
 * Prints JSON lines from rank 0:
 *   {"bench": "all_reduce", "mb": M, "yagrad_ms": .., "mpi_allreduce_ms": ..,
 *    "mpi_iallreduce_ms": .., "yagrad_vs_mpi": ..}
 *      float32 sum of M MiB (1..64), medians over reps, interleaved: through
 *      yagrad (blocking call: its communication thread's MPI_Iallreduce
 *      polled by MPI_Test), raw MPI_Allreduce, and raw MPI_Iallreduce +
 *      MPI_Wait (what yagrad's thread runs, without the queue);
 *   {"bench": "mlp_step", "bucket_mb": B, "backward_ms": .., "ddp_ms": ..,
 *    "comm_ms": .., "hidden_fraction": ..}
 *      MLP 784-512-512-10 (float32, batch 64 per rank): backward alone
 *      (sync off), backward + yg_ddp_finish, and a blocking all_reduce of
 *      all gradients after backward; hidden_fraction = 1 - (ddp - backward)
 *      / comm, the share of communication overlap hid.
 */
#include "yagrad/yagrad.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        yg_status st_ = (expr);                                                                    \
        if (st_ != YG_OK) {                                                                        \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, yg_last_error());                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

static void bench_all_reduce(yg_process_group *pg, int reps) {
    double *ty = malloc((size_t)reps * sizeof *ty), *tm = malloc((size_t)reps * sizeof *tm);
    double *ti = malloc((size_t)reps * sizeof *ti);
    for (int64_t mb = 1; mb <= 64; mb *= 2) {
        int64_t n = mb * 1024 * 1024 / 4, sizes[1] = {n};
        yg_tensor *t = NULL;
        float *raw = malloc((size_t)n * sizeof *raw);
        CHECK(yg_tensor_full(sizes, 1, 1.0, YG_FLOAT32, &t));
        for (int64_t i = 0; i < n; i++)
            raw[i] = 1.0f;
        for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
            double t0, t1, t2, t3;
            MPI_Request req;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = now_ms();
            CHECK(yg_process_group_all_reduce(pg, t, YG_REDUCE_SUM, NULL));
            t1 = now_ms();
            MPI_Allreduce(MPI_IN_PLACE, raw, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            t2 = now_ms();
            MPI_Iallreduce(MPI_IN_PLACE, raw, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            t3 = now_ms();
            if (r >= 0) {
                ty[r] = t1 - t0;
                tm[r] = t2 - t1;
                ti[r] = t3 - t2;
            }
        }
        if (yg_process_group_rank(pg) == 0) {
            double y = median(ty, reps), m = median(tm, reps), i = median(ti, reps);
            printf("{\"bench\": \"all_reduce\", \"mb\": %lld, \"yagrad_ms\": %.3f, "
                   "\"mpi_allreduce_ms\": %.3f, \"mpi_iallreduce_ms\": %.3f, "
                   "\"yagrad_vs_mpi\": %.3f}\n",
                   (long long)mb,
                   y,
                   m,
                   i,
                   y / m);
            fflush(stdout);
        }
        yg_release(t);
        free(raw);
    }
    free(ty);
    free(tm);
    free(ti);
}

static yg_tensor *param(int64_t rows, int64_t cols, uint64_t seed) {
    int64_t sizes[2] = {rows, cols}, n = rows * (cols > 0 ? cols : 1);
    float *v = malloc((size_t)n * sizeof *v);
    yg_tensor *t = NULL;
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)(sin((double)(seed * 7919 + (uint64_t)i)) * 0.05);
    CHECK(yg_tensor_from_data(v, sizes, cols > 0 ? 2 : 1, YG_FLOAT32, &t));
    CHECK(yg_tensor_set_requires_grad(t, true));
    free(v);
    return t;
}

static yg_tensor *mlp_loss(yg_tensor **p, const yg_tensor *x) {
    yg_tensor *h = NULL, *a = NULL, *cur = yg_retain((yg_tensor *)x), *loss = NULL;
    for (int l = 0; l < 3; l++) {
        CHECK(yg_linear(cur, p[2 * l], p[2 * l + 1], &h));
        yg_release(cur);
        if (l == 2) {
            cur = h;
            break;
        }
        CHECK(yg_relu(h, &a));
        yg_release(h);
        cur = a;
    }
    CHECK(yg_mean(cur, &loss));
    yg_release(cur);
    return loss;
}

static void bench_mlp(yg_process_group *pg, int reps, int64_t bucket_bytes) {
    const int64_t dims[4] = {784, 512, 512, 10};
    int64_t xs[2] = {64, 784}, total = 0;
    yg_tensor *p[6], *x = NULL, *flat = NULL;
    yg_ddp_options opts = {.bucket_bytes = bucket_bytes};
    yg_ddp *ddp = NULL;
    double *tb = malloc((size_t)reps * sizeof *tb), *td = malloc((size_t)reps * sizeof *td);
    double *tc = malloc((size_t)reps * sizeof *tc);

    for (int l = 0; l < 3; l++) {
        p[2 * l] = param(dims[l + 1], dims[l], (uint64_t)l);
        p[2 * l + 1] = param(dims[l + 1], 0, (uint64_t)l + 10);
        total += dims[l + 1] * dims[l] + dims[l + 1];
    }
    CHECK(yg_tensor_full(xs, 2, 0.5, YG_FLOAT32, &x));
    CHECK(yg_tensor_zeros(&total, 1, YG_FLOAT32, &flat));
    CHECK(yg_ddp_create(pg, p, 6, &opts, &ddp));
    for (int r = -2; r < reps; r++) {
        yg_tensor *loss;
        double t0, t1;
        /* backward alone (hooks return at once with sync off) */
        yg_ddp_set_sync(ddp, false);
        loss = mlp_loss(p, x);
        CHECK(yg_process_group_barrier(pg, NULL));
        t0 = now_ms();
        CHECK(yg_backward(loss, NULL, false));
        t1 = now_ms();
        yg_release(loss);
        for (int k = 0; k < 6; k++)
            yg_tensor_zero_grad(p[k]);
        if (r >= 0)
            tb[r] = t1 - t0;
        /* communication alone: every gradient's bytes, after backward */
        CHECK(yg_process_group_barrier(pg, NULL));
        t0 = now_ms();
        CHECK(yg_process_group_all_reduce(pg, flat, YG_REDUCE_SUM, NULL));
        t1 = now_ms();
        if (r >= 0)
            tc[r] = t1 - t0;
        /* backward with bucketed all-reduce, and the wait for the rest */
        yg_ddp_set_sync(ddp, true);
        loss = mlp_loss(p, x);
        CHECK(yg_process_group_barrier(pg, NULL));
        t0 = now_ms();
        CHECK(yg_backward(loss, NULL, false));
        CHECK(yg_ddp_finish(ddp));
        t1 = now_ms();
        yg_release(loss);
        for (int k = 0; k < 6; k++)
            yg_tensor_zero_grad(p[k]);
        if (r >= 0)
            td[r] = t1 - t0;
    }
    if (yg_process_group_rank(pg) == 0) {
        double b = median(tb, reps), d = median(td, reps), c = median(tc, reps);
        printf("{\"bench\": \"mlp_step\", \"bucket_mb\": %.2f, \"buckets\": %lld, "
               "\"grad_mb\": %.2f, \"backward_ms\": %.3f, \"ddp_ms\": %.3f, \"comm_ms\": %.3f, "
               "\"hidden_fraction\": %.3f}\n",
               (double)bucket_bytes / (1 << 20),
               (long long)yg_ddp_bucket_count(ddp),
               (double)total * 4 / (1 << 20),
               b,
               d,
               c,
               1.0 - (d - b) / c);
        fflush(stdout);
    }
    yg_ddp_release(ddp);
    for (int k = 0; k < 6; k++)
        yg_release(p[k]);
    yg_release(x);
    yg_release(flat);
    free(tb);
    free(td);
    free(tc);
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 20;
    yg_process_group *pg = NULL;

    if (reps < 1)
        reps = 1;
    CHECK(yg_process_group_create(NULL, &pg)); /* initialises MPI */
    bench_all_reduce(pg, reps);
    bench_mlp(pg, reps, 25 << 20);
    bench_mlp(pg, reps, 1 << 20);
    bench_mlp(pg, reps, 256 << 10);
    yg_process_group_release(pg);
    return 0;
}
