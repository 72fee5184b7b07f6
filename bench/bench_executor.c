/*
 * bench_executor.c - the graph executor against eager yagrad, interleaved
 * in one process (rounds alternate the two, medians compared):
 *   mlp_step      a training step of a 784-512-512-10 MLP on a batch of
 *                 128 (linear, relu, cross_entropy; forward, backward,
 *                 gradients cleared): eager ops vs the executor running
 *                 the traced loss (autodiff regions, one backward node
 *                 per region)
 *   node_overhead a chain of 1000 neg on a 1-element tensor, grad mode
 *                 off: per eager op vs per executor node (passes and
 *                 fusion off, so each node is dispatched)
 *   plan_lookup   a 10-input graph of one node: yg_executor_run minus
 *                 running the same graph with its compiled plan kept
 *                 (what the executor adds: input checks, spec, hash,
 *                 lookup under the lock)
 *   fuser_kernel  the first run of a fused 5-op chain (codegen and the
 *                 compiler, or a load from the disk cache when a previous
 *                 run left the kernel there: run twice to see both) and a
 *                 later run, on 4096 floats
 * Prints one JSON line per measurement with both medians and the ratio
 * executor / eager.  Usage: bench_executor [ROUNDS]
 */
#include "jit/ir/ir.h" /* yg__graph_freeze: the baseline keeps its plan too */
#include "yagrad/jit.h"
#include "yagrad/yagrad.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if ((x) != YG_OK) {                                                                        \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, yg_last_error());           \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

/* ---- MLP ---- */

typedef struct mlp {
    yg_tensor *w[6];
} mlp;

static yg_status
mlp_loss(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    mlp *m = ctx;
    yg_tensor *t[5] = {0};
    (void)n_in;
    (void)n_out;
    yg_status st = yg_linear(in[0], m->w[0], m->w[1], &t[0]);
    if (st == YG_OK)
        st = yg_relu(t[0], &t[1]);
    if (st == YG_OK)
        st = yg_linear(t[1], m->w[2], m->w[3], &t[2]);
    if (st == YG_OK)
        st = yg_relu(t[2], &t[3]);
    if (st == YG_OK)
        st = yg_linear(t[3], m->w[4], m->w[5], &t[4]);
    if (st == YG_OK)
        st = yg_cross_entropy(t[4], in[1], NULL, YG_REDUCTION_MEAN, -100, &out[0]);
    for (int i = 0; i < 5; i++)
        yg_release(t[i]);
    return st;
}

static yg_tensor *param(int64_t a, int64_t b, uint64_t seed) {
    int64_t s[2] = {a, b};
    yg_tensor *t = NULL;
    yg_tensor *u = NULL;
    (void)seed;
    CHECK(yg_rand(s, b > 0 ? 2 : 1, NULL, &(yg_dtype){YG_FLOAT32}, NULL, &u));
    CHECK(yg_mul_scalar(u, 0.05, &t));
    yg_release(u);
    CHECK(yg_tensor_set_requires_grad(t, true));
    return t;
}

static void zero_grads(mlp *m) {
    for (int i = 0; i < 6; i++)
        yg_tensor_zero_grad(m->w[i]);
}

static void step(mlp *m, yg_executor *e, yg_tensor *x, yg_tensor *y) {
    yg_tensor *loss = NULL;
    if (e == NULL) {
        yg_tensor *in[2] = {x, y};
        CHECK(mlp_loss(m, in, 2, &loss, 1));
    } else {
        yg_tensor *in[8] = {x, y, m->w[0], m->w[1], m->w[2], m->w[3], m->w[4], m->w[5]};
        CHECK(yg_executor_run(e, in, 8, &loss, 1));
    }
    CHECK(yg_backward(loss, NULL, false));
    yg_release(loss);
    zero_grads(m);
}

static void bench_mlp(int rounds) {
    mlp m;
    int64_t xs[2] = {128, 784}, ys[1] = {128};
    yg_tensor *x = NULL, *y = NULL;
    m.w[0] = param(512, 784, 1);
    m.w[1] = param(512, 0, 2);
    m.w[2] = param(512, 512, 3);
    m.w[3] = param(512, 0, 4);
    m.w[4] = param(10, 512, 5);
    m.w[5] = param(10, 0, 6);
    CHECK(yg_rand(xs, 2, NULL, &(yg_dtype){YG_FLOAT32}, NULL, &x));
    CHECK(yg_randint(0, 10, ys, 1, NULL, NULL, NULL, &y));
    yg_tensor *in[2] = {x, y};
    yg_trace_result *tr = NULL;
    yg_executor *e = NULL;
    CHECK(yg_trace(mlp_loss, &m, in, 2, 1, NULL, &tr));
    CHECK(yg_executor_create(tr->graph, NULL, &e));
    for (int i = 0; i < 3; i++) {
        step(&m, NULL, x, y);
        step(&m, e, x, y);
    }
    double *te = malloc((size_t)rounds * sizeof *te), *tj = malloc((size_t)rounds * sizeof *tj);
    for (int r = 0; r < rounds; r++) {
        double t0 = now();
        step(&m, NULL, x, y);
        double t1 = now();
        step(&m, e, x, y);
        double t2 = now();
        te[r] = t1 - t0;
        tj[r] = t2 - t1;
    }
    double me = median(te, rounds), mj = median(tj, rounds);
    printf("{\"bench\":\"executor\",\"workload\":\"mlp_step\",\"threads\":%d,\"rounds\":%d,"
           "\"eager_ms\":%.4f,\"executor_ms\":%.4f,\"ratio\":%.4f}\n",
           omp_get_max_threads(),
           rounds,
           me * 1e3,
           mj * 1e3,
           mj / me);
    free(te);
    free(tj);
    yg_executor_release(e);
    yg_trace_result_release(tr);
    for (int i = 0; i < 6; i++)
        yg_release(m.w[i]);
    yg_release(x);
    yg_release(y);
}

/* ---- per-node overhead ---- */

#define CHAIN 1000

static void bench_nodes(int rounds) {
    yg_graph *g = NULL;
    yg_ir_value *v = NULL;
    yg_ir_node *n = NULL;
    int64_t one = 1;
    yg_tensor *x = NULL;
    CHECK(yg_tensor_full(&one, 1, 1.5, YG_FLOAT32, &x));
    CHECK(yg_graph_create(&g));
    CHECK(yg_graph_add_input(g, NULL, "x", &v));
    for (int i = 0; i < CHAIN; i++) {
        CHECK(yg_graph_add_node(g, "neg", &v, 1, 1, &n));
        v = yg_ir_node_output(n, 0);
    }
    CHECK(yg_graph_set_outputs(g, &v, 1));
    yg_executor *e = NULL;
    /* Keep the chain as 1000 nodes: no passes, no fusion (which would make
     * it one kernel: the fused line below). */
    yg_executor_options opt = {.no_optimize = true, .no_fuse = true};
    CHECK(yg_executor_create(g, &opt, &e));
    bool prev = yg_set_grad_enabled(false);
    double *te = malloc((size_t)rounds * sizeof *te), *tj = malloc((size_t)rounds * sizeof *tj);
    for (int r = -3; r < rounds; r++) {
        double t0 = now();
        yg_tensor *cur = yg_retain(x);
        for (int i = 0; i < CHAIN; i++) {
            yg_tensor *next = NULL;
            CHECK(yg_neg(cur, &next));
            yg_release(cur);
            cur = next;
        }
        yg_release(cur);
        double t1 = now();
        yg_tensor *out = NULL;
        CHECK(yg_executor_run(e, &x, 1, &out, 1));
        yg_release(out);
        double t2 = now();
        if (r >= 0) {
            te[r] = (t1 - t0) / CHAIN;
            tj[r] = (t2 - t1) / CHAIN;
        }
    }
    yg_set_grad_enabled(prev);
    double me = median(te, rounds), mj = median(tj, rounds);
    printf("{\"bench\":\"executor\",\"workload\":\"node_overhead\",\"rounds\":%d,"
           "\"eager_us_per_op\":%.4f,\"executor_us_per_node\":%.4f,\"ratio\":%.4f}\n",
           rounds,
           me * 1e6,
           mj * 1e6,
           mj / me);
    free(te);
    free(tj);
    yg_executor_release(e);
    yg_graph_release(g);
    yg_release(x);
}

/* ---- plan lookup ---- */

static void bench_lookup(int rounds) {
    const char *text = "graph(%a : Tensor, %b : Tensor, %c : Tensor, %d : Tensor, %e : Tensor, "
                       "%f : Tensor, %g : Tensor, %h : Tensor, %i : Tensor, %j : Tensor):\n"
                       "  %y = stack[dim=0](%a, %b, %c, %d, %e, %f, %g, %h, %i, %j)\n"
                       "  return (%y)\n";
    yg_graph *g = NULL;
    yg_executor *e = NULL;
    yg_tensor *in[10];
    int64_t one = 1;
    CHECK(yg_graph_parse(text, (int64_t)strlen(text), &g));
    CHECK(yg_executor_create(g, NULL, &e));
    yg__graph_freeze(g);
    for (int i = 0; i < 10; i++)
        CHECK(yg_tensor_full(&one, 1, (double)i, YG_FLOAT32, &in[i]));
    const int reps = 2000;
    double *te = malloc((size_t)rounds * sizeof *te), *tj = malloc((size_t)rounds * sizeof *tj);
    for (int r = -3; r < rounds; r++) {
        double t0 = now();
        for (int k = 0; k < reps; k++) {
            yg_tensor *out = NULL;
            CHECK(yg_graph_run(g, in, 10, &out, 1));
            yg_release(out);
        }
        double t1 = now();
        for (int k = 0; k < reps; k++) {
            yg_tensor *out = NULL;
            CHECK(yg_executor_run(e, in, 10, &out, 1));
            yg_release(out);
        }
        double t2 = now();
        if (r >= 0) {
            te[r] = (t1 - t0) / reps;
            tj[r] = (t2 - t1) / reps;
        }
    }
    double me = median(te, rounds), mj = median(tj, rounds);
    printf("{\"bench\":\"executor\",\"workload\":\"plan_lookup\",\"inputs\":10,\"rounds\":%d,"
           "\"graph_run_us\":%.4f,\"executor_run_us\":%.4f,\"lookup_ns\":%.1f}\n",
           rounds,
           me * 1e6,
           mj * 1e6,
           (mj - me) * 1e9);
    free(te);
    free(tj);
    for (int i = 0; i < 10; i++)
        yg_release(in[i]);
    yg_executor_release(e);
    yg_graph_release(g);
}

/* ---- the fuser's compile and load times ---- */

static void bench_fuser_kernel(void) {
    const char *text = "graph(%x : Tensor(dtype=float32, sizes=[4096]),"
                       " %w : Tensor(dtype=float32, sizes=[4096])):\n"
                       "  %a = mul(%x, %w)\n"
                       "  %b = add[alpha=0.3](%a, %w)\n"
                       "  %c = tanh(%b)\n"
                       "  %d = sigmoid(%x)\n"
                       "  %e = mul(%c, %d)\n"
                       "  return (%e)\n";
    yg_graph *g = NULL;
    int64_t n = 4096;
    yg_tensor *x = NULL, *w = NULL, *y = NULL;
    CHECK(yg_graph_parse(text, (int64_t)strlen(text), &g));
    CHECK(yg_graph_fuse(g));
    CHECK(yg_tensor_full(&n, 1, 0.5, YG_FLOAT32, &x));
    CHECK(yg_tensor_full(&n, 1, 0.25, YG_FLOAT32, &w));
    yg_tensor *in[2] = {x, w};
    yg_fuser_stats before = yg_fuser_get_stats();
    double t0 = now();
    CHECK(yg_graph_run(g, in, 2, &y, 1));
    double t1 = now();
    yg_release(y);
    yg_fuser_stats after = yg_fuser_get_stats();
    double t2 = now();
    CHECK(yg_graph_run(g, in, 2, &y, 1));
    double t3 = now();
    yg_release(y);
    const char *how = after.kernels_compiled > before.kernels_compiled ? "compiled"
                      : after.disk_cache_hits > before.disk_cache_hits ? "disk_cache"
                                                                       : "memory";
    printf("{\"bench\":\"executor\",\"workload\":\"fuser_kernel\",\"first_run\":\"%s\","
           "\"first_run_ms\":%.3f,\"later_run_us\":%.3f,\"fallbacks\":%lld}\n",
           how, (t1 - t0) * 1e3, (t3 - t2) * 1e6, (long long)(after.fallbacks - before.fallbacks));
    yg_release(x);
    yg_release(w);
    yg_graph_release(g);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 21;
    if (rounds < 1)
        rounds = 21;
    bench_fuser_kernel();
    bench_mlp(rounds);
    bench_nodes(rounds);
    bench_lookup(rounds);
    return 0;
}
