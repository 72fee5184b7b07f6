/*
 * trace_lstm.c - trace the first step of an LSTM cell into a graph,
 * optimise it, and run it with the interpreter.
 *
 *   trace_lstm [DOT_FILE]
 *
 * The traced function is an inference step with its weights baked in (a
 * model compiled into the program as arrays) starting from the zero
 * state, so the tracer records the weights and h0 = c0 = 0 as constants.
 * It calls yg_lstm_cell and is traced through the composite, so the graph
 * holds the cell's parts (t, mm, add, slice, sigmoid, tanh, mul), and the
 * pipeline has work: constant propagation folds the transposed weights
 * and the whole h0 branch (mm(h0, w_hh^T) + b_hh), constant pooling merges
 * the two zero states, dce drops what is left unused.  The program prints
 * the graph before and after yg_graph_optimize, runs both with
 * yg_graph_run and compares them with the function run eagerly.  With
 * DOT_FILE it writes the optimised graph there as Graphviz
 * (docs/img/lstm_cell.svg is `dot -Tsvg` of it).  Ends with
 * "max difference: <value>"; exits 1 above 1e-6.
 */
#include "yagrad/yagrad.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define BATCH  2
#define INPUT  3
#define HIDDEN 2

/* The baked weights (main fills them). */
typedef struct cell {
    float w_ih[4 * HIDDEN * INPUT], w_hh[4 * HIDDEN * HIDDEN];
    float b_ih[4 * HIDDEN], b_hh[4 * HIDDEN];
} cell;

static void fill(float *v, int n, double scale) {
    for (int i = 0; i < n; i++)
        v[i] = (float)(scale * sin(0.7 * i + scale));
}

/* The function traced: one step from the zero state on input x. */
static yg_status
step(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    const cell *m = ctx;
    const int64_t sih[] = {4 * HIDDEN, INPUT}, shh[] = {4 * HIDDEN, HIDDEN};
    const int64_t sb[] = {4 * HIDDEN}, sh[] = {BATCH, HIDDEN};
    yg_tensor *w_ih = NULL, *w_hh = NULL, *b_ih = NULL, *b_hh = NULL, *h0 = NULL, *c0 = NULL;
    (void)n_in;
    (void)n_out;
    yg_status st = yg_tensor_from_data(m->w_ih, sih, 2, YG_FLOAT32, &w_ih);
    if (st == YG_OK)
        st = yg_tensor_from_data(m->w_hh, shh, 2, YG_FLOAT32, &w_hh);
    if (st == YG_OK)
        st = yg_tensor_from_data(m->b_ih, sb, 1, YG_FLOAT32, &b_ih);
    if (st == YG_OK)
        st = yg_tensor_from_data(m->b_hh, sb, 1, YG_FLOAT32, &b_hh);
    if (st == YG_OK)
        st = yg_tensor_zeros(sh, 2, YG_FLOAT32, &h0);
    if (st == YG_OK)
        st = yg_tensor_zeros(sh, 2, YG_FLOAT32, &c0);
    if (st == YG_OK)
        st = yg_lstm_cell(in[0], h0, c0, w_ih, w_hh, b_ih, b_hh, &out[0], &out[1]);
    yg_release(w_ih);
    yg_release(w_hh);
    yg_release(b_ih);
    yg_release(b_hh);
    yg_release(h0);
    yg_release(c0);
    return st;
}

static int print_graph(const char *title, const yg_graph *g) {
    char *text = NULL;
    if (yg_graph_print(g, &text) != YG_OK)
        return 1;
    printf("%s:\n%s\n", title, text);
    yg_string_release(text);
    return 0;
}

/* The largest |a - b| over the elements of two same-sized tensors. */
static double max_diff(const yg_tensor *a, const yg_tensor *b) {
    int64_t n = yg_tensor_numel(a);
    double *va = malloc((size_t)(n > 0 ? n : 1) * sizeof *va);
    double *vb = malloc((size_t)(n > 0 ? n : 1) * sizeof *vb);
    double worst = INFINITY;
    if (va != NULL && vb != NULL && yg_tensor_numel(b) == n &&
        yg_tensor_to_f64(a, va, n) == YG_OK && yg_tensor_to_f64(b, vb, n) == YG_OK) {
        worst = 0;
        for (int64_t i = 0; i < n; i++)
            worst = fmax(worst, fabs(va[i] - vb[i]));
    }
    free(va);
    free(vb);
    return worst;
}

/* Runs g on x and returns the worst difference from want. */
static double check(const yg_graph *g, yg_tensor *x, yg_tensor *const *want) {
    yg_tensor *got[2] = {NULL, NULL};
    double worst = INFINITY;
    if (yg_graph_run(g, &x, 1, got, 2) == YG_OK)
        worst = fmax(max_diff(got[0], want[0]), max_diff(got[1], want[1]));
    else
        fprintf(stderr, "%s\n", yg_last_error());
    yg_release(got[0]);
    yg_release(got[1]);
    return worst;
}

int main(int argc, char **argv) {
    const int64_t sx[] = {BATCH, INPUT};
    const float xs[BATCH * INPUT] = {0.5f, -1.0f, 0.25f, 1.5f, 0.0f, -0.75f};
    cell m;
    yg_tensor *x = NULL, *want[2] = {NULL, NULL};
    yg_trace_options options = {.trace_through_composites = true};
    yg_trace_result *r = NULL;
    yg_graph *opt = NULL;
    char *dot = NULL;
    int rc = 1;

    fill(m.w_ih, 4 * HIDDEN * INPUT, 0.5);
    fill(m.w_hh, 4 * HIDDEN * HIDDEN, 0.4);
    fill(m.b_ih, 4 * HIDDEN, 0.1);
    fill(m.b_hh, 4 * HIDDEN, 0.2);
    if (yg_tensor_from_data(xs, sx, 2, YG_FLOAT32, &x) != YG_OK ||
        step(&m, &x, 1, want, 2) != YG_OK || yg_trace(step, &m, &x, 1, 2, &options, &r) != YG_OK ||
        yg_graph_clone(r->graph, &opt) != YG_OK || yg_graph_optimize(opt) != YG_OK) {
        fprintf(stderr, "%s\n", yg_last_error());
        goto out;
    }
    if (print_graph("traced", r->graph) != 0 || print_graph("optimised", opt) != 0)
        goto out;
    double worst = fmax(check(r->graph, x, want), check(opt, x, want));
    if (argc > 1) {
        FILE *f = fopen(argv[1], "w");
        if (f == NULL || yg_graph_to_dot(opt, &dot) != YG_OK || fputs(dot, f) < 0) {
            fprintf(stderr, "cannot write %s\n", argv[1]);
            if (f != NULL)
                fclose(f);
            goto out;
        }
        fclose(f);
    }
    printf("nodes: %lld traced, %lld optimised\n",
           (long long)yg_graph_num_nodes(r->graph),
           (long long)yg_graph_num_nodes(opt));
    printf("max difference: %g\n", worst);
    rc = worst <= 1e-6 ? 0 : 1;
out:
    yg_string_release(dot);
    yg_graph_release(opt);
    yg_trace_result_release(r);
    yg_release(x);
    yg_release(want[0]);
    yg_release(want[1]);
    return rc;
}
