/*
 * train_lstm_executor.c - train an LSTM cell through the graph executor.
 *
 *   train_lstm_executor [--graphs]
 *
 * The task: read a sequence of 8 numbers and predict their running mean
 * after the last one.  One step of the cell (lstm_cell, traced once) runs
 * through a yg_executor: its first call with weights that require grad
 * builds a plan in which lstm_cell is split into its parts and the
 * differentiable region becomes one prim::DifferentiableGraph node, whose
 * backward is the df graph generated from specs/derivatives.yaml.  The
 * readout and the loss are eager ops around it: eager and graph autograd
 * compose into one backward.  Adam updates the weights.  With --graphs the
 * program prints the plan and the region's forward (f) and backward (df)
 * graphs (docs/ir.md quotes them).  Ends with "final loss: <value>" and
 * exits 1 unless the loss fell below a tenth of its first value.
 */
#include "yagrad/jit.h"
#include "yagrad/optim.h"
#include "yagrad/yagrad.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCH  16
#define HIDDEN 8
#define STEPS  8
#define ITERS  300

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if ((x) != YG_OK) {                                                                        \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, yg_last_error());                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

typedef struct params {
    yg_tensor *w_ih, *w_hh, *b_ih, *b_hh, *w_out, *b_out;
} params;

/* One cell step: (x, h, c) -> (h', c'), weights read from ctx (they
 * become the graph's parameter inputs). */
static yg_status
cell_step(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    params *p = ctx;
    (void)n_in;
    (void)n_out;
    return yg_lstm_cell(in[0], in[1], in[2], p->w_ih, p->w_hh, p->b_ih, p->b_hh, &out[0], &out[1]);
}

static yg_tensor *weight(int64_t a, int64_t b, double scale, unsigned seed) {
    int64_t s[2] = {a, b};
    int64_t n = a * (b > 0 ? b : 1);
    float *v = malloc((size_t)n * sizeof *v);
    srand(seed);
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)(scale * (2.0 * rand() / RAND_MAX - 1.0));
    yg_tensor *t = NULL;
    CHECK(yg_tensor_from_data(v, s, b > 0 ? 2 : 1, YG_FLOAT32, &t));
    free(v);
    CHECK(yg_tensor_set_requires_grad(t, true));
    return t;
}

/* A batch: inputs [STEPS][BATCH, 1] and the running mean [BATCH, 1]. */
static void batch(yg_tensor **xs, yg_tensor **target, unsigned seed) {
    float x[STEPS][BATCH], mean[BATCH] = {0};
    int64_t s[2] = {BATCH, 1};
    srand(seed);
    for (int t = 0; t < STEPS; t++)
        for (int b = 0; b < BATCH; b++) {
            x[t][b] = (float)(2.0 * rand() / RAND_MAX - 1.0);
            mean[b] += x[t][b] / STEPS;
        }
    for (int t = 0; t < STEPS; t++)
        CHECK(yg_tensor_from_data(x[t], s, 2, YG_FLOAT32, &xs[t]));
    CHECK(yg_tensor_from_data(mean, s, 2, YG_FLOAT32, target));
}

static void print_region(yg_executor *e) {
    char *plan = NULL;
    CHECK(yg_executor_last_graph(e, &plan));
    printf("---- plan ----\n%s", plan);
    yg_string_release(plan);
}

int main(int argc, char **argv) {
    bool graphs = argc > 1 && strcmp(argv[1], "--graphs") == 0;
    params p = {
        .w_ih = weight(4 * HIDDEN, 1, 0.5, 1),
        .w_hh = weight(4 * HIDDEN, HIDDEN, 0.3, 2),
        .b_ih = weight(4 * HIDDEN, 0, 0.1, 3),
        .b_hh = weight(4 * HIDDEN, 0, 0.1, 4),
        .w_out = weight(1, HIDDEN, 0.3, 5),
        .b_out = weight(1, 0, 0.1, 6),
    };
    int64_t hs[2] = {BATCH, HIDDEN};
    yg_tensor *h0 = NULL, *c0 = NULL, *xs[STEPS] = {0}, *target = NULL;
    CHECK(yg_tensor_zeros(hs, 2, YG_FLOAT32, &h0));
    CHECK(yg_tensor_zeros(hs, 2, YG_FLOAT32, &c0));
    batch(xs, &target, 100);

    /* Trace one step; its graph takes (x, h, c, w_ih, w_hh, b_ih, b_hh). */
    yg_trace_result *tr = NULL;
    yg_tensor *ex[3] = {xs[0], h0, c0};
    CHECK(yg_trace(cell_step, &p, ex, 3, 2, NULL, &tr));
    yg_executor *e = NULL;
    CHECK(yg_executor_create(tr->graph, NULL, &e));

    yg_tensor *all[6] = {p.w_ih, p.w_hh, p.b_ih, p.b_hh, p.w_out, p.b_out};
    yg_optimizer *opt = NULL;
    yg_adam_options ao = {.lr = 0.02, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
    CHECK(yg_optimizer_create_adam(all, 6, &ao, &opt));
    double first = 0, last = 0;
    for (int it = 0; it < ITERS; it++) {
        yg_tensor *h = yg_retain(h0), *c = yg_retain(c0);
        for (int t = 0; t < STEPS; t++) {
            yg_tensor *in[7] = {xs[t], h, c, p.w_ih, p.w_hh, p.b_ih, p.b_hh}, *out[2];
            CHECK(yg_executor_run(e, in, 7, out, 2));
            yg_release(h);
            yg_release(c);
            h = out[0];
            c = out[1];
        }
        yg_tensor *pred = NULL, *loss = NULL;
        CHECK(yg_linear(h, p.w_out, p.b_out, &pred));
        CHECK(yg_mse_loss(pred, target, YG_REDUCTION_MEAN, &loss));
        double lv = *(const float *)yg_tensor_data(loss);
        if (it == 0)
            first = lv;
        last = lv;
        CHECK(yg_backward(loss, NULL, false));
        CHECK(yg_optimizer_step(opt));
        yg_optimizer_zero_grad(opt);
        if (it % 50 == 0)
            printf("iteration %3d: loss %.6f\n", it, lv);
        yg_release(pred);
        yg_release(loss);
        yg_release(h);
        yg_release(c);
        if (it % 20 == 19) { /* a new batch now and then */
            for (int t = 0; t < STEPS; t++)
                yg_release(xs[t]);
            yg_release(target);
            batch(xs, &target, 100 + (unsigned)it);
        }
    }
    yg_executor_stats s = yg_executor_get_stats(e);
    printf("executor: %lld runs, %lld plans built, %lld cache hits\n",
           (long long)s.runs,
           (long long)s.misses,
           (long long)s.hits);
    if (graphs)
        print_region(e);
    printf("final loss: %.6f (first %.6f)\n", last, first);
    int rc = last < 0.1 * first ? 0 : 1;
    yg_optimizer_release(opt);
    yg_executor_release(e);
    yg_trace_result_release(tr);
    for (int t = 0; t < STEPS; t++)
        yg_release(xs[t]);
    yg_release(target);
    yg_release(h0);
    yg_release(c0);
    for (int i = 0; i < 6; i++)
        yg_release(all[i]);
    return rc;
}
