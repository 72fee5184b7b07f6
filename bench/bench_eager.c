/*
 * bench_eager.c - one eager CPU workload of issue 10's table, timed in
 * yagrad; bench/bench_eager_torch.py runs the same workload in PyTorch and
 * bench/compare_torch.py runs both, interleaved, and prints the ratios.
 *
 * Usage: bench_eager [--check] [--reps R] WORKLOAD     (--list names them)
 *
 * Prints one JSON line:
 *   {"bench":"eager","impl":"yagrad","workload":"softmax_fwd","threads":2,
 *    "reps":20,"median_us":..,"p10_us":..,"p90_us":..,"gbps":..}
 * The times are per rep (per op or per node for the overhead_* workloads,
 * which run OVERHEAD_OPS of them per rep), after WARMUP untimed reps that
 * fill the allocator's cache.  gbps, for memory-bound workloads, is the
 * least number of bytes the workload must read and write (each workload's
 * comment says which arrays) over the median time.  The thread count is
 * OpenMP's (OMP_NUM_THREADS); triad, the bandwidth reference, is a plain C
 * loop over that many threads and prints "impl":"c".
 *
 * Inputs are exact functions of the element index (fill_pattern), computed
 * the same way by the Python side, so both see bit-identical data.  Every
 * *_fwdbwd workload runs backward from its output y with a fixed gradient
 * g (the gradient of (y * g).sum()), never from sum(y): the gradient of
 * sum(softmax(x)) or sum(layer_norm(x)) with respect to x is zero, which
 * would time and check nothing.  With --check the line also carries
 * "check": {name: [sum, sum of |.|, sum of squares]} (float64) of the
 * outputs and gradients of the first rep, which compare_torch.py --check
 * compares against PyTorch's (the sum of squares tells softmax outputs
 * apart, whose rows all sum to 1).
 */
#include "yagrad/jit.h"
#include "yagrad/optim.h"
#include "yagrad/yagrad.h"

#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Untimed reps before the timed ones (the allocator's cache, page faults,
 * OpenBLAS's buffers). */
#define WARMUP 3
/* Ops (or nodes) per rep of the overhead_* workloads: enough that the
 * clock's resolution and the loop around them do not show. */
#define OVERHEAD_OPS 1000
/* Outputs and gradients a workload may check. */
#define MAX_CHECKS 16

typedef struct check_entry {
    const char *name;
    double sum;
    double asum;
    double sumsq;
} check_entry;

/* One run: what the command line asked for and what the workload
 * measured.  Samples are seconds per rep, already divided by ops_per_rep. */
typedef struct bench {
    const char *workload;
    int reps;
    bool check;
    double *samples;
    int n_samples;
    double ops_per_rep;
    double bytes; /* per op; 0 for workloads that are not memory-bound */
    double flops; /* per op; 0 for workloads that are not compute-bound */
    const char *impl;
    check_entry checks[MAX_CHECKS];
    int n_checks;
} bench;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what) {
    fprintf(stderr, "bench_eager: %s: %s\n", what, yg_last_error());
    exit(1);
}

/* Exits naming what failed unless st is YG_OK: a benchmark has nothing to
 * clean up that the process exit would not. */
static void ok(yg_status st, const char *what) {
    if (st != YG_OK)
        die(what);
}

/* Records the time of rep i (seconds, for the whole rep); warm-up reps are
 * dropped. */
static void record(bench *b, int i, double seconds) {
    if (i >= WARMUP)
        b->samples[b->n_samples++] = seconds / b->ops_per_rep;
}

static int total_reps(const bench *b) {
    return WARMUP + b->reps;
}

/* Adds [sum, sum |.|, sum of squares] of t (float64 accumulation) under name when --check
 * is on and rep is the first one. */
static void check_tensor(bench *b, int rep, const char *name, const yg_tensor *t) {
    if (!b->check || rep != 0)
        return;
    if (b->n_checks >= MAX_CHECKS) {
        fprintf(stderr, "bench_eager: too many checks\n");
        exit(1);
    }
    int64_t n = yg_tensor_numel(t);
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (v == NULL) {
        fprintf(stderr, "bench_eager: out of memory\n");
        exit(1);
    }
    ok(yg_tensor_to_f64(t, v, n), "to_f64");
    check_entry e = {name, 0, 0, 0};
    for (int64_t i = 0; i < n; i++) {
        e.sum += v[i];
        e.asum += fabs(v[i]);
        e.sumsq += v[i] * v[i];
    }
    free(v);
    b->checks[b->n_checks++] = e;
}

/* The gradient of leaf t, checked under name. */
static void check_grad(bench *b, int rep, const char *name, const yg_tensor *t) {
    yg_tensor *g = NULL;
    if (!b->check || rep != 0)
        return;
    ok(yg_tensor_grad(t, &g), "grad");
    if (g == NULL) {
        fprintf(stderr, "bench_eager: %s has no gradient\n", name);
        exit(1);
    }
    check_tensor(b, rep, name, g);
    yg_release(g);
}

/*
 * A float32 tensor whose element i (row-major) is
 *   (((i * 2654435761 + seed * 1013904223) mod 2^32) / 2^32 - 0.5) * scale
 *   + offset,
 * computed in float64 and rounded once to float32: a spread of values in
 * [offset - scale/2, offset + scale/2) that Python computes bit for bit
 * the same with int64 and float64 torch ops.  Keep numel below 2^31 so the
 * product stays exact in int64 there.
 */
static yg_tensor *
fill_pattern(const int64_t *sizes, int64_t ndim, uint64_t seed, double scale, double offset) {
    yg_tensor *t = NULL;
    ok(yg_tensor_empty(sizes, ndim, YG_FLOAT32, &t), "empty");
    float *p = yg_tensor_data(t);
    int64_t n = yg_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        uint64_t h = ((uint64_t)i * 2654435761u + seed * 1013904223u) & 0xffffffffu;
        double u = (double)h / 4294967296.0 - 0.5;
        p[i] = (float)(u * scale + offset);
    }
    return t;
}

static yg_tensor *leaf(yg_tensor *t, bool requires_grad) {
    ok(yg_tensor_set_requires_grad(t, requires_grad), "set_requires_grad");
    return t;
}

/* ---- op overhead ------------------------------------------------------- */

/* OVERHEAD_OPS adds of two one-element tensors per rep, each result
 * released at once; with requires_grad each add records a node. */
static void wl_overhead_add(bench *b, bool requires_grad) {
    const int64_t s[] = {1};
    yg_tensor *x = leaf(fill_pattern(s, 1, 1, 1, 0), requires_grad);
    yg_tensor *w = leaf(fill_pattern(s, 1, 2, 1, 0), requires_grad);
    b->ops_per_rep = OVERHEAD_OPS;
    for (int r = 0; r < total_reps(b); r++) {
        double t0 = now_s();
        for (int k = 0; k < OVERHEAD_OPS; k++) {
            yg_tensor *y = NULL;
            ok(yg_add(x, w, 1.0, &y), "add");
            yg_release(y);
        }
        record(b, r, now_s() - t0);
    }
    yg_release(w);
    yg_release(x);
}

static void wl_overhead_plain(bench *b) {
    wl_overhead_add(b, false);
}

static void wl_overhead_autograd(bench *b) {
    wl_overhead_add(b, true);
}

/* A chain y = y * 1 of OVERHEAD_OPS nodes from a one-element leaf; only
 * the backward is timed, per node. */
static void wl_overhead_backward(bench *b) {
    const int64_t s[] = {1};
    yg_tensor *x = leaf(fill_pattern(s, 1, 1, 1, 0), true);
    b->ops_per_rep = OVERHEAD_OPS;
    for (int r = 0; r < total_reps(b); r++) {
        yg_tensor *y = yg_retain(x);
        for (int k = 0; k < OVERHEAD_OPS; k++) {
            yg_tensor *next = NULL;
            ok(yg_mul_scalar(y, 1.0, &next), "mul_scalar");
            yg_release(y);
            y = next;
        }
        yg_tensor_zero_grad(x);
        double t0 = now_s();
        ok(yg_backward(y, NULL, false), "backward");
        record(b, r, now_s() - t0);
        check_grad(b, r, "x.grad", x);
        yg_release(y);
    }
    yg_release(x);
}

/* ---- MLP train step ---------------------------------------------------- */

/* 784-512-512-10, batch 128, cross_entropy (mean) on labels i % 10, SGD
 * lr 0.01 momentum 0.9.  One rep: zero_grad, forward, backward, step.
 * Weights are uniform in +-1/sqrt(fan_in), as nn.Linear's. */
static void wl_mlp_step(bench *b) {
    const int64_t dims[] = {784, 512, 512, 10};
    const int64_t batch = 128;
    const char *grad_names[] = {"w1.grad", "b1.grad", "w2.grad", "b2.grad", "w3.grad", "b3.grad"};
    yg_tensor *params[6];
    for (int l = 0; l < 3; l++) {
        const int64_t ws[] = {dims[l + 1], dims[l]};
        double scale = 2.0 / sqrt((double)dims[l]);
        params[2 * l] = leaf(fill_pattern(ws, 2, 10 + (uint64_t)l, scale, 0), true);
        params[2 * l + 1] = leaf(fill_pattern(&ws[0], 1, 20 + (uint64_t)l, scale, 0), true);
    }
    const int64_t xs[] = {batch, dims[0]};
    yg_tensor *x = fill_pattern(xs, 2, 1, 2, 0);
    int64_t labels[128];
    for (int64_t i = 0; i < batch; i++)
        labels[i] = i % 10;
    yg_tensor *target = NULL;
    ok(yg_tensor_from_data(labels, &batch, 1, YG_INT64, &target), "target");
    yg_optimizer *opt = NULL;
    yg_sgd_options o = {.lr = 0.01, .momentum = 0.9};
    ok(yg_optimizer_create_sgd(params, 6, &o, &opt), "sgd");

    for (int r = 0; r < total_reps(b); r++) {
        yg_tensor *h = yg_retain(x), *loss = NULL;
        double t0 = now_s();
        yg_optimizer_zero_grad(opt);
        for (int l = 0; l < 3; l++) {
            yg_tensor *z = NULL;
            ok(yg_linear(h, params[2 * l], params[2 * l + 1], &z), "linear");
            yg_release(h);
            h = z;
            if (l < 2) {
                ok(yg_relu(z, &h), "relu");
                yg_release(z);
            }
        }
        ok(yg_cross_entropy(h, target, NULL, YG_REDUCTION_MEAN, -100, &loss), "cross_entropy");
        ok(yg_backward(loss, NULL, false), "backward");
        if (b->check && r == 0) {
            check_tensor(b, r, "loss", loss);
            for (int p = 0; p < 6; p++)
                check_grad(b, r, grad_names[p], params[p]);
        }
        ok(yg_optimizer_step(opt), "step");
        record(b, r, now_s() - t0);
        yg_release(loss);
        yg_release(h);
    }
    /* The momentum steps: the weights after the last rep (WARMUP + reps
     * steps, the same count as PyTorch's when both get the same --reps). */
    const char *final_names[] = {"w1.final", "w2.final", "w3.final"};
    for (int l = 0; l < 3; l++)
        check_tensor(b, 0, final_names[l], params[2 * l]);
    yg_optimizer_release(opt);
    yg_release(target);
    yg_release(x);
    for (int p = 0; p < 6; p++)
        yg_release(params[p]);
}

/* ---- a small CNN's training step ---------------------------------------- */

/* Batch 64 of 3x32x32: conv3x3(3->32, pad 1, bias) -> batch_norm
 * (training) -> relu -> max_pool2d(2, 2), the same block 32->64, flatten
 * -> linear(4096->10) -> cross_entropy; SGD lr 0.01; one step = zero_grad,
 * forward, backward, step (issue 29's model). */
static void wl_cnn_step(bench *b) {
    const int64_t batch = 64, ch[3] = {3, 32, 64};
    const char *names[] = {"c1.w.grad", "c1.b.grad", "bn1.w.grad", "bn1.b.grad",
                           "c2.w.grad", "c2.b.grad", "bn2.w.grad", "bn2.b.grad",
                           "fc.w.grad", "fc.b.grad"};
    yg_tensor *p[10], *running[4];
    for (int l = 0; l < 2; l++) {
        const int64_t ws[4] = {ch[l + 1], ch[l], 3, 3}, cs[1] = {ch[l + 1]};
        double scale = 2.0 / sqrt((double)(ch[l] * 9));
        p[4 * l] = leaf(fill_pattern(ws, 4, 30 + (uint64_t)l, scale, 0), true);
        p[4 * l + 1] = leaf(fill_pattern(cs, 1, 40 + (uint64_t)l, scale, 0), true);
        p[4 * l + 2] = leaf(fill_pattern(cs, 1, 50 + (uint64_t)l, 0.2, 1), true);
        p[4 * l + 3] = leaf(fill_pattern(cs, 1, 60 + (uint64_t)l, 0.2, 0), true);
        running[2 * l] = fill_pattern(cs, 1, 70 + (uint64_t)l, 0, 0);
        running[2 * l + 1] = fill_pattern(cs, 1, 80 + (uint64_t)l, 0, 1);
    }
    const int64_t fs[2] = {10, 4096}, fb[1] = {10};
    p[8] = leaf(fill_pattern(fs, 2, 90, 2.0 / 64, 0), true);
    p[9] = leaf(fill_pattern(fb, 1, 91, 2.0 / 64, 0), true);
    const int64_t xs[4] = {batch, 3, 32, 32};
    yg_tensor *x = fill_pattern(xs, 4, 1, 2, 0), *target = NULL;
    int64_t labels[64];
    for (int64_t i = 0; i < batch; i++)
        labels[i] = i % 10;
    ok(yg_tensor_from_data(labels, &batch, 1, YG_INT64, &target), "target");
    yg_optimizer *opt = NULL;
    yg_sgd_options o = {.lr = 0.01};
    ok(yg_optimizer_create_sgd(p, 10, &o, &opt), "sgd");
    const int64_t one[2] = {1, 1}, two[2] = {2, 2}, zero[2] = {0, 0};

    for (int r = 0; r < total_reps(b); r++) {
        yg_tensor *h = yg_retain(x), *loss = NULL, *flat = NULL, *logits = NULL;
        double t0 = now_s();
        yg_optimizer_zero_grad(opt);
        for (int l = 0; l < 2; l++) {
            yg_tensor *c = NULL, *n = NULL, *a = NULL, *m = NULL;
            ok(yg_conv2d(h, p[4 * l], p[4 * l + 1], one, 2, one, 2, one, 2, 1, &c), "conv2d");
            ok(yg_batch_norm(c, p[4 * l + 2], p[4 * l + 3], running[2 * l], running[2 * l + 1],
                             true, 0.1, 1e-5, &n),
               "batch_norm");
            ok(yg_relu(n, &a), "relu");
            ok(yg_max_pool2d(a, two, 2, two, 2, zero, 2, one, 2, false, &m), "max_pool2d");
            yg_release(h);
            yg_release(c);
            yg_release(n);
            yg_release(a);
            h = m;
        }
        ok(yg_flatten(h, 1, -1, &flat), "flatten");
        ok(yg_linear(flat, p[8], p[9], &logits), "linear");
        ok(yg_cross_entropy(logits, target, NULL, YG_REDUCTION_MEAN, -100, &loss), "cross_entropy");
        ok(yg_backward(loss, NULL, false), "backward");
        if (b->check && r == 0) {
            check_tensor(b, r, "loss", loss);
            /* not the convolutions' bias gradients: batch_norm follows,
             * so they are 0 in exact arithmetic and float32 noise (1e-7)
             * on either side, which no checksum can compare */
            for (int k = 0; k < 10; k++)
                if (k != 1 && k != 5)
                    check_grad(b, r, names[k], p[k]);
        }
        ok(yg_optimizer_step(opt), "step");
        record(b, r, now_s() - t0);
        yg_release(loss);
        yg_release(logits);
        yg_release(flat);
        yg_release(h);
    }
    yg_optimizer_release(opt);
    yg_release(target);
    yg_release(x);
    for (int k = 0; k < 10; k++)
        yg_release(p[k]);
    for (int k = 0; k < 4; k++)
        yg_release(running[k]);
}

/* ---- LSTM cell --------------------------------------------------------- */

/* lstm_cell, batch 20, input and hidden 650.  fwd: nothing requires grad.
 * fwdbwd: all seven inputs require grad and yg_grad takes the gradients of
 * (hy, cy) with fixed (g_h, g_c) with respect to all of them (PyTorch:
 * torch.autograd.grad).  lstm_*: the lstm_cell op (two products and the
 * handwritten gate kernel); lstm_fused_*: the cell written as ops, traced
 * once and run by the graph executor (its gates one fusion group forward
 * and one backward), against the same PyTorch lstm_cell. */
static yg_executor *lstm_exec;

/* The cell as a user writes it with ops (and as PyTorch's fuser
 * benchmarks script it): in = input, hx, cx, w_ih, w_hh, b_ih, b_hh;
 * out = hy, cy. */
static yg_status lstm_of_ops(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out,
                             int64_t n_out) {
    yg_tensor *gi = NULL, *gh = NULL, *gates = NULL, **ch = NULL, *act[4] = {NULL};
    yg_tensor *fc = NULL, *ig = NULL, *tc = NULL;
    int64_t n_ch = 0;
    (void)ctx;
    (void)n_in;
    (void)n_out;
    ok(yg_linear(in[0], in[3], in[5], &gi), "linear");
    ok(yg_linear(in[1], in[4], in[6], &gh), "linear");
    ok(yg_add(gi, gh, 1.0, &gates), "add");
    ok(yg_chunk(gates, 4, 1, &ch, &n_ch), "chunk");
    ok(yg_sigmoid(ch[0], &act[0]), "sigmoid");
    ok(yg_sigmoid(ch[1], &act[1]), "sigmoid");
    ok(yg_tanh(ch[2], &act[2]), "tanh");
    ok(yg_sigmoid(ch[3], &act[3]), "sigmoid");
    ok(yg_mul(act[1], in[2], &fc), "mul");
    ok(yg_mul(act[0], act[2], &ig), "mul");
    ok(yg_add(fc, ig, 1.0, &out[1]), "add");
    ok(yg_tanh(out[1], &tc), "tanh");
    ok(yg_mul(act[3], tc, &out[0]), "mul");
    yg_release_list(ch, n_ch);
    for (int i = 0; i < 4; i++)
        yg_release(act[i]);
    yg_release(gi);
    yg_release(gh);
    yg_release(gates);
    yg_release(fc);
    yg_release(ig);
    yg_release(tc);
    return YG_OK;
}

static void wl_lstm(bench *b, bool backward, bool fused) {
    const int64_t n = 20, hid = 650;
    const int64_t xs[] = {n, hid}, ws[] = {4 * hid, hid}, bs[] = {4 * hid};
    const double wscale = 2.0 / sqrt((double)hid);
    const char *names[] = {
        "input.grad", "hx.grad", "cx.grad", "w_ih.grad", "w_hh.grad", "b_ih.grad", "b_hh.grad"};
    yg_tensor *in[7] = {
        leaf(fill_pattern(xs, 2, 1, 2, 0), backward),
        leaf(fill_pattern(xs, 2, 2, 2, 0), backward),
        leaf(fill_pattern(xs, 2, 3, 2, 0), backward),
        leaf(fill_pattern(ws, 2, 4, wscale, 0), backward),
        leaf(fill_pattern(ws, 2, 5, wscale, 0), backward),
        leaf(fill_pattern(bs, 1, 6, wscale, 0), backward),
        leaf(fill_pattern(bs, 1, 7, wscale, 0), backward),
    };
    yg_tensor *g[2] = {fill_pattern(xs, 2, 8, 2, 0), fill_pattern(xs, 2, 9, 2, 0)};
    yg_trace_result *tr = NULL;

    if (fused) {
        ok(yg_trace(lstm_of_ops, NULL, in, 7, 2, NULL, &tr), "trace");
        ok(yg_executor_create(tr->graph, NULL, &lstm_exec), "executor_create");
    }
    for (int r = 0; r < total_reps(b); r++) {
        yg_tensor *out[2] = {NULL, NULL}, *grads[7] = {NULL};
        double t0 = now_s();
        if (fused)
            ok(yg_executor_run(lstm_exec, in, 7, out, 2), "executor_run");
        else
            ok(yg_lstm_cell(in[0], in[1], in[2], in[3], in[4], in[5], in[6], &out[0], &out[1]),
               "lstm_cell");
        if (backward)
            ok(yg_grad((const yg_tensor *const *)out,
                       2,
                       (const yg_tensor *const *)g,
                       (const yg_tensor *const *)in,
                       7,
                       false,
                       false,
                       false,
                       grads),
               "grad");
        record(b, r, now_s() - t0);
        check_tensor(b, r, "hy", out[0]);
        check_tensor(b, r, "cy", out[1]);
        for (int i = 0; i < 7 && backward; i++) {
            check_tensor(b, r, names[i], grads[i]);
            yg_release(grads[i]);
        }
        yg_release(out[0]);
        yg_release(out[1]);
    }
    yg_executor_release(lstm_exec);
    lstm_exec = NULL;
    yg_trace_result_release(tr);
    for (int i = 0; i < 7; i++)
        yg_release(in[i]);
    yg_release(g[0]);
    yg_release(g[1]);
}

static void wl_lstm_fwd(bench *b) {
    wl_lstm(b, false, false);
}

static void wl_lstm_fwdbwd(bench *b) {
    wl_lstm(b, true, false);
}

static void wl_lstm_fused_fwd(bench *b) {
    wl_lstm(b, false, true);
}

static void wl_lstm_fused_fwdbwd(bench *b) {
    wl_lstm(b, true, true);
}

/* ---- backward from y with a fixed g, shared by the fwdbwd workloads ---- */

/* Clears the leaves' gradients (untimed), then times f's forward and
 * backward(y, g); checks y and the leaves' gradients.  f returns y. */
typedef yg_tensor *(*forward_fn)(yg_tensor *const *in);

static void run_fwd_or_fwdbwd(bench *b,
                              forward_fn f,
                              yg_tensor *const *in,
                              const char *const *grad_names,
                              int n_in,
                              const yg_tensor *g) {
    for (int r = 0; r < total_reps(b); r++) {
        for (int i = 0; i < n_in && g != NULL; i++)
            yg_tensor_zero_grad(in[i]);
        double t0 = now_s();
        yg_tensor *y = f(in);
        if (g != NULL)
            ok(yg_backward(y, g, false), "backward");
        record(b, r, now_s() - t0);
        check_tensor(b, r, "y", y);
        for (int i = 0; i < n_in && g != NULL; i++)
            check_grad(b, r, grad_names[i], in[i]);
        yg_release(y);
    }
}

/* ---- the 16M-element pointwise chain ----------------------------------- */

#define CHAIN_N (16 * 1024 * 1024)

/* y = tanh(x * w + b) * sigmoid(x), five ops as written. */
static yg_tensor *chain_forward(yg_tensor *const *in) {
    yg_tensor *xw = NULL, *z = NULL, *t = NULL, *s = NULL, *y = NULL;
    ok(yg_mul(in[0], in[1], &xw), "mul");
    ok(yg_add(xw, in[2], 1.0, &z), "add");
    ok(yg_tanh(z, &t), "tanh");
    ok(yg_sigmoid(in[0], &s), "sigmoid");
    ok(yg_mul(t, s, &y), "mul");
    yg_release(s);
    yg_release(t);
    yg_release(z);
    yg_release(xw);
    return y;
}

/* Bytes: forward reads x, w, b and writes y (4 arrays); backward at least
 * reads g, x, w, b and writes the three gradients (7 more). */
static void wl_chain(bench *b, bool backward) {
    const int64_t s[] = {CHAIN_N};
    const char *names[] = {"x.grad", "w.grad", "b.grad"};
    yg_tensor *in[3] = {leaf(fill_pattern(s, 1, 1, 4, 0), backward),
                        leaf(fill_pattern(s, 1, 2, 2, 0), backward),
                        leaf(fill_pattern(s, 1, 3, 2, 0), backward)};
    yg_tensor *g = backward ? fill_pattern(s, 1, 4, 2, 0) : NULL;
    b->bytes = (backward ? 11.0 : 4.0) * 4.0 * CHAIN_N;
    run_fwd_or_fwdbwd(b, chain_forward, in, names, 3, g);
    for (int i = 0; i < 3; i++)
        yg_release(in[i]);
    yg_release(g);
}

static void wl_chain_fwd(bench *b) {
    wl_chain(b, false);
}

static void wl_chain_fwdbwd(bench *b) {
    wl_chain(b, true);
}


/* ---- the same through the graph executor (fused) ----------------------- */

/* The workload's function traced once and run by an executor: forward
 * only, one fusion group; with backward, an autodiff region whose f and
 * df are fused.  Plans and kernels are built in the untimed warm-up reps. */
static yg_executor *fused_exec;

static yg_status trace_chain(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out,
                             int64_t n_out) {
    (void)ctx;
    (void)n_in;
    (void)n_out;
    out[0] = chain_forward(in);
    return YG_OK;
}

static yg_tensor *chain_fused_forward(yg_tensor *const *in) {
    yg_tensor *y = NULL;
    ok(yg_executor_run(fused_exec, in, 3, &y, 1), "executor_run");
    return y;
}

static void wl_chain_fused(bench *b, bool backward) {
    const int64_t s[] = {CHAIN_N};
    const char *names[] = {"x.grad", "w.grad", "b.grad"};
    yg_tensor *in[3] = {leaf(fill_pattern(s, 1, 1, 4, 0), backward),
                        leaf(fill_pattern(s, 1, 2, 2, 0), backward),
                        leaf(fill_pattern(s, 1, 3, 2, 0), backward)};
    yg_tensor *g = backward ? fill_pattern(s, 1, 4, 2, 0) : NULL;
    yg_trace_result *tr = NULL;
    ok(yg_trace(trace_chain, NULL, in, 3, 1, NULL, &tr), "trace");
    ok(yg_executor_create(tr->graph, NULL, &fused_exec), "executor_create");
    b->bytes = (backward ? 11.0 : 4.0) * 4.0 * CHAIN_N;
    run_fwd_or_fwdbwd(b, chain_fused_forward, in, names, 3, g);
    yg_executor_release(fused_exec);
    fused_exec = NULL;
    yg_trace_result_release(tr);
    for (int i = 0; i < 3; i++)
        yg_release(in[i]);
    yg_release(g);
}

static void wl_chain_fused_fwd(bench *b) {
    wl_chain_fused(b, false);
}

static void wl_chain_fused_fwdbwd(bench *b) {
    wl_chain_fused(b, true);
}
/* ---- softmax, log_softmax, layer_norm over [4096, 1024] ---------------- */

static const int64_t rows_cols[] = {4096, 1024};

static yg_tensor *softmax_forward(yg_tensor *const *in) {
    yg_tensor *y = NULL;
    ok(yg_softmax(in[0], 1, &y), "softmax");
    return y;
}

static yg_tensor *log_softmax_forward(yg_tensor *const *in) {
    yg_tensor *y = NULL;
    ok(yg_log_softmax(in[0], 1, &y), "log_softmax");
    return y;
}

static yg_tensor *layer_norm_forward(yg_tensor *const *in) {
    yg_tensor *y = NULL;
    ok(yg_layer_norm(in[0], &rows_cols[1], 1, in[1], in[2], 1e-5, &y), "layer_norm");
    return y;
}

/* Bytes: forward reads x and writes y; backward at least reads g and y (or
 * x) and writes x's gradient: 2 and 5 arrays of x's size.  The same count
 * for layer_norm and batch_norm (their weight and bias are small). */
static double norm_bytes(int64_t numel, bool backward) {
    return (backward ? 5.0 : 2.0) * 4.0 * (double)numel;
}

static void wl_rows(bench *b, forward_fn f, bool affine, bool backward) {
    const char *names[] = {"x.grad", "weight.grad", "bias.grad"};
    yg_tensor *in[3] = {leaf(fill_pattern(rows_cols, 2, 1, 8, 0), backward), NULL, NULL};
    int n_in = 1;
    if (affine) {
        in[1] = leaf(fill_pattern(&rows_cols[1], 1, 2, 0.2, 1), backward);
        in[2] = leaf(fill_pattern(&rows_cols[1], 1, 3, 0.2, 0), backward);
        n_in = 3;
    }
    yg_tensor *g = backward ? fill_pattern(rows_cols, 2, 4, 2, 0) : NULL;
    b->bytes = norm_bytes(rows_cols[0] * rows_cols[1], backward);
    run_fwd_or_fwdbwd(b, f, in, names, n_in, g);
    for (int i = 0; i < 3; i++)
        yg_release(in[i]);
    yg_release(g);
}

static void wl_softmax_fwd(bench *b) {
    wl_rows(b, softmax_forward, false, false);
}

static void wl_softmax_fwdbwd(bench *b) {
    wl_rows(b, softmax_forward, false, true);
}

/* softmax(x * 0.125) over rows: the scaled scores of attention.  Eager:
 * two ops; fused: the executor's group anchored by the softmax (x read
 * once).  Bytes: x and y. */
static yg_tensor *scaled_softmax_forward(yg_tensor *const *in) {
    yg_tensor *s = NULL, *y = NULL;
    ok(yg_mul_scalar(in[0], 0.125, &s), "mul_scalar");
    ok(yg_softmax(s, 1, &y), "softmax");
    yg_release(s);
    return y;
}

static yg_status trace_scaled_softmax(void *ctx, yg_tensor *const *in, int64_t n_in,
                                      yg_tensor **out, int64_t n_out) {
    (void)ctx;
    (void)n_in;
    (void)n_out;
    out[0] = scaled_softmax_forward(in);
    return YG_OK;
}

static yg_tensor *scaled_softmax_fused_forward(yg_tensor *const *in) {
    yg_tensor *y = NULL;
    ok(yg_executor_run(fused_exec, in, 1, &y, 1), "executor_run");
    return y;
}

static void wl_scaled_softmax_fwd(bench *b) {
    wl_rows(b, scaled_softmax_forward, false, false);
}

static void wl_scaled_softmax_fused_fwd(bench *b) {
    yg_tensor *x = fill_pattern(rows_cols, 2, 1, 8, 0);
    yg_trace_result *tr = NULL;
    ok(yg_trace(trace_scaled_softmax, NULL, &x, 1, 1, NULL, &tr), "trace");
    ok(yg_executor_create(tr->graph, NULL, &fused_exec), "executor_create");
    yg_release(x);
    wl_rows(b, scaled_softmax_fused_forward, false, false);
    yg_executor_release(fused_exec);
    fused_exec = NULL;
    yg_trace_result_release(tr);
}

/* layer_norm(x + r) over rows, affine: a transformer's add & norm.
 * Eager: two ops; fused: the executor's group anchored by the layer_norm
 * (x and r read once, no sum written).  in = x, weight, bias, r.  Bytes:
 * x, r and y. */
static yg_tensor *add_layer_norm_forward(yg_tensor *const *in) {
    yg_tensor *s = NULL, *y = NULL;
    ok(yg_add(in[0], in[3], 1.0, &s), "add");
    ok(yg_layer_norm(s, &rows_cols[1], 1, in[1], in[2], 1e-5, &y), "layer_norm");
    yg_release(s);
    return y;
}

static yg_status trace_add_layer_norm(void *ctx, yg_tensor *const *in, int64_t n_in,
                                      yg_tensor **out, int64_t n_out) {
    (void)ctx;
    (void)n_in;
    (void)n_out;
    out[0] = add_layer_norm_forward(in);
    return YG_OK;
}

static yg_tensor *add_layer_norm_fused_forward(yg_tensor *const *in) {
    yg_tensor *y = NULL;
    ok(yg_executor_run(fused_exec, in, 4, &y, 1), "executor_run");
    return y;
}

static void wl_add_layer_norm(bench *b, bool fused) {
    yg_tensor *in[4] = {fill_pattern(rows_cols, 2, 1, 8, 0),
                        fill_pattern(&rows_cols[1], 1, 2, 0.2, 1),
                        fill_pattern(&rows_cols[1], 1, 3, 0.2, 0),
                        fill_pattern(rows_cols, 2, 5, 2, 0)};
    yg_trace_result *tr = NULL;
    if (fused) {
        ok(yg_trace(trace_add_layer_norm, NULL, in, 4, 1, NULL, &tr), "trace");
        ok(yg_executor_create(tr->graph, NULL, &fused_exec), "executor_create");
    }
    b->bytes = 3.0 * 4.0 * (double)(rows_cols[0] * rows_cols[1]);
    run_fwd_or_fwdbwd(
        b, fused ? add_layer_norm_fused_forward : add_layer_norm_forward, in, NULL, 0, NULL);
    yg_executor_release(fused_exec);
    fused_exec = NULL;
    yg_trace_result_release(tr);
    for (int i = 0; i < 4; i++)
        yg_release(in[i]);
}

static void wl_add_layer_norm_fwd(bench *b) {
    wl_add_layer_norm(b, false);
}

static void wl_add_layer_norm_fused_fwd(bench *b) {
    wl_add_layer_norm(b, true);
}

static void wl_log_softmax_fwd(bench *b) {
    wl_rows(b, log_softmax_forward, false, false);
}

static void wl_log_softmax_fwdbwd(bench *b) {
    wl_rows(b, log_softmax_forward, false, true);
}

static void wl_layer_norm_fwd(bench *b) {
    wl_rows(b, layer_norm_forward, true, false);
}

static void wl_layer_norm_fwdbwd(bench *b) {
    wl_rows(b, layer_norm_forward, true, true);
}

/* ---- batch_norm, train mode, [32, 64, 56, 56] -------------------------- */

/* in: x, weight, bias, running_mean, running_var (the last two updated in
 * place each rep, momentum 0.1). */
static yg_tensor *batch_norm_forward(yg_tensor *const *in) {
    yg_tensor *y = NULL;
    ok(yg_batch_norm(in[0], in[1], in[2], in[3], in[4], true, 0.1, 1e-5, &y), "batch_norm");
    return y;
}

static void wl_batch_norm(bench *b, bool backward) {
    const int64_t s[] = {32, 64, 56, 56}, c[] = {64};
    const char *names[] = {"x.grad", "weight.grad", "bias.grad"};
    yg_tensor *in[5] = {leaf(fill_pattern(s, 4, 1, 8, 0), backward),
                        leaf(fill_pattern(c, 1, 2, 0.2, 1), backward),
                        leaf(fill_pattern(c, 1, 3, 0.2, 0), backward),
                        NULL,
                        NULL};
    ok(yg_tensor_zeros(c, 1, YG_FLOAT32, &in[3]), "zeros");
    ok(yg_tensor_full(c, 1, 1.0, YG_FLOAT32, &in[4]), "full");
    yg_tensor *g = backward ? fill_pattern(s, 4, 4, 2, 0) : NULL;
    b->bytes = norm_bytes(32 * 64 * 56 * 56, backward);
    run_fwd_or_fwdbwd(b, batch_norm_forward, in, names, backward ? 3 : 0, g);
    if (b->check) { /* after WARMUP + reps updates */
        check_tensor(b, 0, "running_mean", in[3]);
        check_tensor(b, 0, "running_var", in[4]);
    }
    for (int i = 0; i < 5; i++)
        yg_release(in[i]);
    yg_release(g);
}

static void wl_batch_norm_fwd(bench *b) {
    wl_batch_norm(b, false);
}

static void wl_batch_norm_fwdbwd(bench *b) {
    wl_batch_norm(b, true);
}

/* ---- max pooling ---------------------------------------------------------- */

/* max_pool2d(2, 2) of [64, 32, 32, 32] (the cnn_step's first pooling);
 * bytes: the input read, the values and int64 indices written (and, with
 * the backward, the gradient read and the input's gradient written). */
static yg_tensor *max_pool_forward(yg_tensor *const *in) {
    const int64_t two[2] = {2, 2}, zero[2] = {0, 0}, one[2] = {1, 1};
    yg_tensor *y = NULL;
    ok(yg_max_pool2d(in[0], two, 2, two, 2, zero, 2, one, 2, false, &y), "max_pool2d");
    return y;
}

static void wl_max_pool(bench *b, bool backward) {
    const int64_t s[] = {64, 32, 32, 32}, gs[] = {64, 32, 16, 16};
    const char *names[] = {"x.grad"};
    yg_tensor *in[1] = {leaf(fill_pattern(s, 4, 1, 8, 0), backward)};
    yg_tensor *g = backward ? fill_pattern(gs, 4, 4, 2, 0) : NULL;
    const double n = 64.0 * 32 * 32 * 32, m = n / 4;
    b->bytes = 4 * n + 12 * m + (backward ? 4 * m + 8 * m + 4 * n : 0);
    run_fwd_or_fwdbwd(b, max_pool_forward, in, names, backward ? 1 : 0, g);
    yg_release(in[0]);
    yg_release(g);
}

static void wl_max_pool_fwd(bench *b) {
    wl_max_pool(b, false);
}

static void wl_max_pool_fwdbwd(bench *b) {
    wl_max_pool(b, true);
}

/* ---- index-adds: embedding's gradient and index_add ---------------------- */

/* embedding_bwd: the gradient of a [50304, 768] embedding (GPT-2's) from
 * [4, 64] tokens, grad [4, 64, 768]: zeros, then each token's row added
 * (PyTorch: the same embedding op's backward).  index_add: zeros [4096,
 * 512] with 16384 rows of a [16384, 512] source added at an index with
 * repeats (yagrad: index_select_backward; PyTorch: index_add_ on zeros).
 * Bytes: the result written, the rows read and written, the source read. */
static void wl_index_add_common(bench *b, bool embedding) {
    const int64_t rows = embedding ? 50304 : 4096, dim = embedding ? 768 : 512;
    const int64_t n = embedding ? 256 : 16384;
    int64_t *ids = malloc((size_t)n * sizeof *ids);
    for (int64_t i = 0; i < n; i++)
        ids[i] = (int64_t)(((uint64_t)i * 2654435761u) % (uint64_t)rows);
    yg_tensor *idx = NULL, *g = NULL;
    const int64_t gs[2] = {n, dim}, ws[2] = {rows, dim};
    ok(yg_tensor_from_data(ids, &n, 1, YG_INT64, &idx), "index");
    g = fill_pattern(gs, 2, 3, 2, 0);
    b->bytes = 4.0 * (double)(rows * dim) + 4.0 * 3 * (double)(n * dim);
    for (int r = 0; r < total_reps(b); r++) {
        yg_tensor *out = NULL;
        double t0 = now_s();
        if (embedding)
            ok(yg_embedding_backward(g, idx, ws, 2, -1, &out), "embedding_backward");
        else
            ok(yg_index_select_backward(g, ws, 2, 0, idx, &out), "index_select_backward");
        record(b, r, now_s() - t0);
        check_tensor(b, r, "y", out);
        yg_release(out);
    }
    yg_release(idx);
    yg_release(g);
    free(ids);
}

static void wl_embedding_bwd(bench *b) {
    wl_index_add_common(b, true);
}

static void wl_index_add(bench *b) {
    wl_index_add_common(b, false);
}

/* ---- triad: the bandwidth reference ------------------------------------ */

/* a = b + s * c over CHAIN_N floats, a plain C loop over OpenMP's threads
 * (the ones the library uses), first touched by the same threads.  Bytes:
 * 3 arrays (write-allocate traffic for a not counted, as STREAM does). */
static void wl_triad(bench *b) {
    const int64_t n = CHAIN_N;
    float *a = malloc((size_t)n * sizeof *a), *x = malloc((size_t)n * sizeof *x),
          *y = malloc((size_t)n * sizeof *y);
    if (a == NULL || x == NULL || y == NULL) {
        fprintf(stderr, "bench_eager: out of memory\n");
        exit(1);
    }
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        a[i] = 0.0f;
        x[i] = 1.0f;
        y[i] = 2.0f;
    }
    const float s = 3.0f;
    b->impl = "c";
    b->bytes = 3.0 * 4.0 * (double)n;
    for (int r = 0; r < total_reps(b); r++) {
        double t0 = now_s();
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++)
            a[i] = x[i] + s * y[i];
        record(b, r, now_s() - t0);
    }
    if (b->check) {
        check_entry e = {"a", 0, 0, 0};
        for (int64_t i = 0; i < n; i++) {
            e.sum += a[i];
            e.asum += fabsf(a[i]);
            e.sumsq += (double)a[i] * a[i];
        }
        b->checks[b->n_checks++] = e;
    }
    free(y);
    free(x);
    free(a);
}

/* ---- convolutions, float32, NCHW --------------------------------------- */

/* The shape of one conv workload; transposed convolutions take a weight of
 * [c_in, c_out / groups, k, k] as PyTorch's do. */
typedef struct conv_shape {
    int64_t n, c_in, c_out, h, w, k, stride, padding, groups;
    bool transposed;
} conv_shape;

/* The output's spatial size along a dimension of size in. */
static int64_t conv_out_size(const conv_shape *s, int64_t in) {
    if (s->transposed)
        return (in - 1) * s->stride - 2 * s->padding + s->k;
    return (in + 2 * s->padding - s->k) / s->stride + 1;
}

/* Multiply-adds of the forward: one per output element (of the ordinary
 * convolution, the input one for a transposed one) per input channel of
 * its group per kernel tap.  FLOPs are twice that; bias adds not counted. */
static double conv_macs(const conv_shape *s) {
    int64_t oh = conv_out_size(s, s->h), ow = conv_out_size(s, s->w);
    double big = s->transposed ? (double)(s->c_in * s->h * s->w) : (double)(s->c_out * oh * ow);
    double per = s->transposed ? (double)(s->c_out / s->groups) : (double)(s->c_in / s->groups);
    return (double)s->n * big * per * (double)(s->k * s->k);
}

/* The shape conv_forward runs: run_fwd_or_fwdbwd's forward_fn takes only
 * the inputs, and one process runs one workload. */
static const conv_shape *cur_conv;

/* in: x, weight, bias. */
static yg_tensor *conv_forward(yg_tensor *const *in) {
    const conv_shape *s = cur_conv;
    const int64_t st[] = {s->stride, s->stride}, pad[] = {s->padding, s->padding}, dil[] = {1, 1},
                  opad[] = {0, 0};
    yg_tensor *y = NULL;
    if (s->transposed)
        ok(yg_conv_transpose2d(in[0], in[1], in[2], st, 2, pad, 2, opad, 2, s->groups, dil, 2, &y),
           "conv_transpose2d");
    else
        ok(yg_conv2d(in[0], in[1], in[2], st, 2, pad, 2, dil, 2, s->groups, &y), "conv2d");
    return y;
}

/* x (seed 1, values in +-1), weight (seed 2, +-1/sqrt(fan_in) as
 * nn.Conv2d's), bias (seed 3); fwdbwd: all three require grad and g is
 * seed 4.  FLOPs: forward 2 * macs; fwdbwd 6 * macs (the data and weight
 * gradients are a forward's worth each). */
static void wl_conv(bench *b, const conv_shape *s, bool backward) {
    const int64_t xs[] = {s->n, s->c_in, s->h, s->w};
    const int64_t ws[] = {s->transposed ? s->c_in : s->c_out,
                          s->transposed ? s->c_out / s->groups : s->c_in / s->groups,
                          s->k,
                          s->k};
    const int64_t bs[] = {s->c_out};
    const int64_t ys[] = {s->n, s->c_out, conv_out_size(s, s->h), conv_out_size(s, s->w)};
    const char *names[] = {"x.grad", "weight.grad", "bias.grad"};
    double fan_in = (double)(ws[1] * s->k * s->k);
    yg_tensor *in[3] = {leaf(fill_pattern(xs, 4, 1, 2, 0), backward),
                        leaf(fill_pattern(ws, 4, 2, 2 / sqrt(fan_in), 0), backward),
                        leaf(fill_pattern(bs, 1, 3, 2 / sqrt(fan_in), 0), backward)};
    yg_tensor *g = backward ? fill_pattern(ys, 4, 4, 2, 0) : NULL;
    cur_conv = s;
    b->flops = (backward ? 6.0 : 2.0) * conv_macs(s);
    run_fwd_or_fwdbwd(b, conv_forward, in, names, 3, g);
    for (int i = 0; i < 3; i++)
        yg_release(in[i]);
    yg_release(g);
}

/* ResNet's 3x3 stage-1 layer; its 1x1 bottleneck reduction (N32: 103 MB of
 * input); MobileNet's depthwise 3x3; a DCGAN/U-Net-like decoder
 * upsampling, 4x4 stride 2 padding 1: 28x28 -> 56x56, C128 -> 64. */
static const conv_shape conv3x3 = {32, 64, 64, 56, 56, 3, 1, 1, 1, false};
static const conv_shape conv1x1 = {32, 256, 64, 56, 56, 1, 1, 0, 1, false};
static const conv_shape depthwise3x3 = {32, 64, 64, 56, 56, 3, 1, 1, 64, false};
static const conv_shape conv_transpose = {32, 128, 64, 28, 28, 4, 2, 1, 1, true};

static void wl_conv3x3_fwd(bench *b) {
    wl_conv(b, &conv3x3, false);
}

static void wl_conv3x3_fwdbwd(bench *b) {
    wl_conv(b, &conv3x3, true);
}

static void wl_conv1x1_fwd(bench *b) {
    wl_conv(b, &conv1x1, false);
}

static void wl_depthwise3x3_fwd(bench *b) {
    wl_conv(b, &depthwise3x3, false);
}

static void wl_conv_transpose2d_fwd(bench *b) {
    wl_conv(b, &conv_transpose, false);
}

/* ---- causal attention ---------------------------------------------------- */

/* scaled_dot_product_attention, causal, of q, k, v [1, 12, T, 64] (GPT-2
 * small's heads): yagrad runs flash_attention (tiles, memory linear in
 * T), PyTorch 1.13 its _scaled_dot_product_attention (the [T, T] scores
 * materialised).  attention is T = 1024; attention_long, T = 4096, is for
 * the peak RSS figure (docs/benchmarks.md).  flops: the products a causal
 * forward and backward need, 6 gemms of 2 T^2 E over half the matrix. */
static yg_tensor *attention_forward(yg_tensor *const *in) {
    yg_tensor *y = NULL;
    ok(yg_scaled_dot_product_attention(in[0], in[1], in[2], NULL, true, NULL, &y), "sdpa");
    return y;
}

static void wl_attention_t(bench *b, int64_t t) {
    const int64_t s[] = {1, 12, t, 64};
    const char *names[] = {"q.grad", "k.grad", "v.grad"};
    yg_tensor *in[3] = {leaf(fill_pattern(s, 4, 1, 2, 0), true),
                        leaf(fill_pattern(s, 4, 2, 2, 0), true),
                        leaf(fill_pattern(s, 4, 3, 2, 0), true)};
    yg_tensor *g = fill_pattern(s, 4, 4, 2, 0);
    b->flops = 6.0 * (double)t * (double)t * 64 * 12;
    run_fwd_or_fwdbwd(b, attention_forward, in, names, 3, g);
    for (int i = 0; i < 3; i++)
        yg_release(in[i]);
    yg_release(g);
}

static void wl_attention(bench *b) {
    wl_attention_t(b, 1024);
}

static void wl_attention_long(bench *b) {
    wl_attention_t(b, 4096);
}

/* ---- fma_peak: the compute reference ----------------------------------- */

/* FMA_CHAINS independent accumulators per thread: more than the FMA
 * latency (4 cycles) times the FMA units (2) of current x86 cores, and with
 * the two constants 14 registers, within AVX2's 16.  FMA_ITERS iterations
 * per thread per rep: 3.2 GFLOP at AVX-512, ~20 ms a core at 150 GFLOP/s. */
#define FMA_CHAINS 12
#define FMA_ITERS  (1L << 23)

/* Each returns the sum of its accumulators so that nothing is optimised
 * away; a, c are 1 + tiny and -tiny-ish so the values stay finite. */
__attribute__((target("avx512f"))) static float fma_loop_avx512(long iters, float seed) {
    __m512 acc[FMA_CHAINS];
    const __m512 a = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    for (int j = 0; j < FMA_CHAINS; j++)
        acc[j] = _mm512_set1_ps(seed + (float)j);
    for (long i = 0; i < iters; i++)
        for (int j = 0; j < FMA_CHAINS; j++)
            acc[j] = _mm512_fmadd_ps(acc[j], a, c);
    float sum = 0;
    for (int j = 0; j < FMA_CHAINS; j++)
        sum += _mm512_reduce_add_ps(acc[j]);
    return sum;
}

__attribute__((target("avx2,fma"))) static float fma_loop_avx2(long iters, float seed) {
    __m256 acc[FMA_CHAINS];
    const __m256 a = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
    float lanes[8], sum = 0;
    for (int j = 0; j < FMA_CHAINS; j++)
        acc[j] = _mm256_set1_ps(seed + (float)j);
    for (long i = 0; i < iters; i++)
        for (int j = 0; j < FMA_CHAINS; j++)
            acc[j] = _mm256_fmadd_ps(acc[j], a, c);
    for (int j = 0; j < FMA_CHAINS; j++) {
        _mm256_storeu_ps(lanes, acc[j]);
        for (int l = 0; l < 8; l++)
            sum += lanes[l];
    }
    return sum;
}

/* The widest FMA the CPU has, over OpenMP's threads; "impl":"c".  Prints
 * "gflops" as every compute-bound workload does, with the vector width in
 * "isa" on stderr.  A machine without AVX2/FMA gets no peak (exit 1). */
static void wl_fma_peak(bench *b) {
    __builtin_cpu_init();
    bool avx512 = __builtin_cpu_supports("avx512f");
    if (!avx512 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
        fprintf(stderr, "bench_eager: fma_peak needs AVX2 and FMA\n");
        exit(1);
    }
    int lanes = avx512 ? 16 : 8;
    fprintf(stderr, "bench_eager: fma_peak with %s\n", avx512 ? "avx512f" : "avx2+fma");
    b->impl = "c";
    b->flops = 2.0 * lanes * FMA_CHAINS * (double)FMA_ITERS * omp_get_max_threads();
    double total = 0;
    for (int r = 0; r < total_reps(b); r++) {
        double t0 = now_s(), sum = 0;
#pragma omp parallel reduction(+ : sum)
        sum += avx512 ? fma_loop_avx512(FMA_ITERS, (float)omp_get_thread_num())
                      : fma_loop_avx2(FMA_ITERS, (float)omp_get_thread_num());
        record(b, r, now_s() - t0);
        total += sum;
    }
    if (b->check) {
        check_entry e = {"acc", total, fabs(total), total * total};
        b->checks[b->n_checks++] = e;
    }
}

/* ---- driver ------------------------------------------------------------ */

typedef struct workload {
    const char *name;
    void (*run)(bench *b);
    int default_reps;
} workload;

/* Default reps keep each workload near a second or two in yagrad today. */
static const workload workloads[] = {
    {"overhead_plain", wl_overhead_plain, 100},
    {"overhead_autograd", wl_overhead_autograd, 100},
    {"overhead_backward", wl_overhead_backward, 100},
    {"mlp_step", wl_mlp_step, 50},
    {"cnn_step", wl_cnn_step, 20},
    {"lstm_fwd", wl_lstm_fwd, 50},
    {"lstm_fwdbwd", wl_lstm_fwdbwd, 50},
    {"lstm_fused_fwd", wl_lstm_fused_fwd, 50},
    {"lstm_fused_fwdbwd", wl_lstm_fused_fwdbwd, 50},
    {"chain_fwd", wl_chain_fwd, 10},
    {"chain_fwdbwd", wl_chain_fwdbwd, 10},
    {"chain_fused_fwd", wl_chain_fused_fwd, 10},
    {"chain_fused_fwdbwd", wl_chain_fused_fwdbwd, 10},
    {"softmax_fwd", wl_softmax_fwd, 20},
    {"softmax_fwdbwd", wl_softmax_fwdbwd, 20},
    {"scaled_softmax_fwd", wl_scaled_softmax_fwd, 20},
    {"scaled_softmax_fused_fwd", wl_scaled_softmax_fused_fwd, 20},
    {"log_softmax_fwd", wl_log_softmax_fwd, 20},
    {"log_softmax_fwdbwd", wl_log_softmax_fwdbwd, 20},
    {"layer_norm_fwd", wl_layer_norm_fwd, 20},
    {"add_layer_norm_fwd", wl_add_layer_norm_fwd, 20},
    {"add_layer_norm_fused_fwd", wl_add_layer_norm_fused_fwd, 20},
    {"layer_norm_fwdbwd", wl_layer_norm_fwdbwd, 20},
    {"batch_norm_fwd", wl_batch_norm_fwd, 10},
    {"batch_norm_fwdbwd", wl_batch_norm_fwdbwd, 10},
    {"max_pool_fwd", wl_max_pool_fwd, 20},
    {"max_pool_fwdbwd", wl_max_pool_fwdbwd, 20},
    {"embedding_bwd", wl_embedding_bwd, 20},
    {"index_add", wl_index_add, 20},
    {"triad", wl_triad, 20},
    {"conv3x3_fwd", wl_conv3x3_fwd, 10},
    {"conv3x3_fwdbwd", wl_conv3x3_fwdbwd, 5},
    {"conv1x1_fwd", wl_conv1x1_fwd, 10},
    {"depthwise3x3_fwd", wl_depthwise3x3_fwd, 10},
    {"conv_transpose2d_fwd", wl_conv_transpose2d_fwd, 10},
    {"attention", wl_attention, 20},
    {"attention_long", wl_attention_long, 3},
    {"fma_peak", wl_fma_peak, 20},
};

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of the sorted v[0..n), interpolating linearly between
 * neighbours (numpy's default; bench_eager_torch.py does the same). */
static double quantile(const double *v, int n, double q) {
    double pos = q * (double)(n - 1);
    int lo = (int)pos;
    int hi = lo + 1 < n ? lo + 1 : lo;
    return v[lo] + (v[hi] - v[lo]) * (pos - (double)lo);
}

static void print_result(bench *b) {
    qsort(b->samples, (size_t)b->n_samples, sizeof *b->samples, compare_double);
    double med = quantile(b->samples, b->n_samples, 0.5);
    printf("{\"bench\":\"eager\",\"impl\":\"%s\",\"workload\":\"%s\",\"threads\":%d,\"reps\":%d,"
           "\"median_us\":%.3f,\"p10_us\":%.3f,\"p90_us\":%.3f",
           b->impl,
           b->workload,
           omp_get_max_threads(),
           b->reps,
           med * 1e6,
           quantile(b->samples, b->n_samples, 0.1) * 1e6,
           quantile(b->samples, b->n_samples, 0.9) * 1e6);
    if (b->bytes > 0)
        printf(",\"gbps\":%.2f", b->bytes / med * 1e-9);
    if (b->flops > 0)
        printf(",\"gflops\":%.2f", b->flops / med * 1e-9);
    if (b->check) {
        printf(",\"check\":{");
        for (int i = 0; i < b->n_checks; i++)
            printf("%s\"%s\":[%.10g,%.10g,%.10g]",
                   i ? "," : "",
                   b->checks[i].name,
                   b->checks[i].sum,
                   b->checks[i].asum,
                   b->checks[i].sumsq);
        printf("}");
    }
    printf("}\n");
}

static void usage(void) {
    fprintf(stderr, "usage: bench_eager [--check] [--reps R] WORKLOAD | --list\n");
    exit(2);
}

int main(int argc, char **argv) {
    bench b = {.impl = "yagrad", .ops_per_rep = 1};
    const workload *w = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--check") == 0) {
            b.check = true;
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            b.reps = atoi(argv[++i]);
            if (b.reps < 1)
                usage();
        } else if (strcmp(argv[i], "--list") == 0) {
            for (size_t k = 0; k < sizeof workloads / sizeof workloads[0]; k++)
                printf("%s\n", workloads[k].name);
            return 0;
        } else if (w == NULL && argv[i][0] != '-') {
            for (size_t k = 0; k < sizeof workloads / sizeof workloads[0]; k++)
                if (strcmp(argv[i], workloads[k].name) == 0)
                    w = &workloads[k];
            if (w == NULL) {
                fprintf(stderr, "bench_eager: unknown workload %s (--list names them)\n", argv[i]);
                return 2;
            }
        } else {
            usage();
        }
    }
    if (w == NULL)
        usage();
    b.workload = w->name;
    if (b.reps == 0)
        b.reps = w->default_reps;
    b.samples = malloc((size_t)b.reps * sizeof *b.samples);
    if (b.samples == NULL)
        return 1;
    w->run(&b);
    print_result(&b);
    free(b.samples);
    return 0;
}
